package schedule

import (
	"errors"
	"strings"
	"testing"
)

// ringAllgather is a hand-written correct schedule used as the base of the
// mutation tests below.
func ringAllgather(n int, mutate func(b *Builder, k int) bool) Generator {
	return func(b *Builder) {
		P, r := b.Size(), b.Rank()
		blk := func(i int) Region { return RecvBuf(((i%P)+P)%P*n, n) }
		b.Copy(blk(r), SendBuf(0, n))
		b.EndRound()
		for k := 0; k < P-1; k++ {
			if mutate != nil && mutate(b, k) {
				continue
			}
			b.Send((r+1)%P, blk(r-k))
			b.Recv((r-1+P)%P, blk(r-k-1))
			b.EndRound()
		}
	}
}

func TestVerifyAcceptsRing(t *testing.T) {
	for _, p := range []int{1, 2, 3, 8, 17} {
		s := &Spec{Coll: Allgather, Size: p, Count: 3}
		if err := Verify(s, ringAllgather(3, nil), Options{}); err != nil {
			t.Fatalf("P=%d: %v", p, err)
		}
	}
}

func TestVerifyRejects(t *testing.T) {
	spec := &Spec{Coll: Allgather, Size: 5, Count: 2}
	cases := []struct {
		name string
		gen  Generator
		want string
	}{
		{"missing step", ringAllgather(2, func(b *Builder, k int) bool { return k == 3 }), "holds"},
		{"one rank skips a step", ringAllgather(2, func(b *Builder, k int) bool { return k == 1 && b.Rank() == 2 }), "deadlock"},
		{"wrong block", ringAllgather(2, func(b *Builder, k int) bool {
			if k != 0 {
				return false
			}
			P, r := b.Size(), b.Rank()
			b.Send((r+1)%P, RecvBuf(r*2, 2))
			b.Recv((r-1+P)%P, RecvBuf(((r+1)%P)*2, 2))
			b.EndRound()
			return true
		}), ""},
		{"length mismatch", ringAllgather(2, func(b *Builder, k int) bool {
			if k != 0 || b.Rank() != 0 {
				return false
			}
			b.Send(1, RecvBuf(0, 1))
			b.Recv(4, RecvBuf(8, 2))
			b.EndRound()
			return true
		}), "matches a send"},
		{"out of range", func(b *Builder) { b.Copy(RecvBuf(9, 2), SendBuf(0, 2)) }, "out of range"},
		{"write to send buffer", func(b *Builder) { b.Copy(SendBuf(0, 2), RecvBuf(0, 2)) }, "read-only"},
	}
	for _, c := range cases {
		err := Verify(spec, c.gen, Options{})
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if !errors.Is(err, ErrVerify) {
			t.Errorf("%s: %v does not wrap ErrVerify", c.name, err)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v lacks %q", c.name, err, c.want)
		}
	}
}

func TestVerifyReduction(t *testing.T) {
	// Naive allreduce: everyone sends to rank 0, which reduces in order and
	// sends back.
	naive := func(double, reverse bool) Generator {
		return func(b *Builder) {
			P, r, n := b.Size(), b.Rank(), 2
			b.Copy(RecvBuf(0, n), SendBuf(0, n))
			b.EndRound()
			if r == 0 {
				tmp := b.Alloc(n * P)
				for q := 1; q < P; q++ {
					b.Recv(q, tmp.Sub(q*n, n))
				}
				b.EndRound()
				order := []int{}
				for q := 1; q < P; q++ {
					order = append(order, q)
				}
				if double {
					order = append(order, 1)
				}
				for _, q := range order {
					if reverse {
						b.ReduceLeft(RecvBuf(0, n), tmp.Sub(q*n, n))
					} else {
						b.Reduce(RecvBuf(0, n), tmp.Sub(q*n, n))
					}
				}
				b.EndRound()
				for q := 1; q < P; q++ {
					b.Send(q, RecvBuf(0, n))
				}
			} else {
				b.Send(0, RecvBuf(0, n))
				b.EndRound()
				b.Recv(0, RecvBuf(0, n))
			}
			b.EndRound()
		}
	}
	s := &Spec{Coll: Allreduce, Size: 4, Count: 2}
	if err := Verify(s, naive(false, false), Options{Ordered: true}); err != nil {
		t.Fatal(err)
	}
	if err := Verify(s, naive(true, false), Options{}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("double contribution: %v", err)
	}
	if err := Verify(s, naive(false, true), Options{}); err != nil {
		t.Fatalf("commutative reversed: %v", err)
	}
	if err := Verify(s, naive(false, true), Options{Ordered: true}); err == nil {
		t.Fatal("reversed order accepted as ordered")
	}
}

// chainAllreduce reduces along a chain with fused receive-reduce operations
// (rank r combines the prefix of ranks < r with its own input), then
// broadcasts back down the chain.
func chainAllreduce(wrongOrder bool) Generator {
	return func(b *Builder) {
		P, r, n := b.Size(), b.Rank(), 3
		buf := RecvBuf(0, n)
		if r == 0 {
			b.Copy(buf, SendBuf(0, n))
			b.EndRound()
		} else {
			// msg holds ranks < r: it is the left operand.
			b.RecvReduce(r-1, buf, SendBuf(0, n), wrongOrder)
			b.EndRound()
		}
		if r < P-1 {
			b.Send(r+1, buf)
			b.EndRound()
			b.Recv(r+1, buf)
			b.EndRound()
		}
		if r > 0 {
			b.Send(r-1, buf)
			b.EndRound()
		}
	}
}

func TestVerifyRecvReduce(t *testing.T) {
	for _, p := range []int{1, 2, 5} {
		s := &Spec{Coll: Allreduce, Size: p, Count: 3}
		if err := Verify(s, chainAllreduce(false), Options{Ordered: true}); err != nil {
			t.Fatalf("P=%d: %v", p, err)
		}
	}
	s := &Spec{Coll: Allreduce, Size: 3, Count: 3}
	if err := Verify(s, chainAllreduce(true), Options{Ordered: true}); err == nil {
		t.Fatal("out-of-order recvreduce accepted as ordered")
	}
	if err := Verify(s, chainAllreduce(true), Options{}); err != nil {
		t.Fatalf("commutative: %v", err)
	}
	g := &Spec{Coll: Allgather, Size: 2, Count: 1}
	err := Verify(g, func(b *Builder) {
		if b.Rank() == 0 {
			b.Send(1, SendBuf(0, 1))
		} else {
			b.RecvReduce(0, RecvBuf(0, 1), SendBuf(0, 1), true)
		}
	}, Options{})
	if err == nil || !strings.Contains(err.Error(), "does not reduce") {
		t.Fatalf("recvreduce in allgather: %v", err)
	}
}

func TestRecvReduceOverlap(t *testing.T) {
	b := NewBuilder(0, 3)
	b.RecvReduce(1, RecvBuf(0, 4), RecvBuf(0, 4), true) // in place: fine
	b.Recv(2, RecvBuf(4, 2))
	b.EndRound()
	if b.Err() != nil {
		t.Fatal(b.Err())
	}
	b.RecvReduce(1, RecvBuf(0, 4), RecvBuf(2, 4), true)
	if b.Err() == nil {
		t.Fatal("partly overlapping local operand accepted")
	}
	b = NewBuilder(0, 3)
	b.RecvReduce(1, RecvBuf(0, 2), ScratchBuf(0, 2), true)
	if b.Err() == nil {
		t.Fatal("unallocated scratch accepted")
	}
	b = NewBuilder(0, 3)
	b.Recv(2, RecvBuf(8, 2))
	b.RecvReduce(1, RecvBuf(0, 2), RecvBuf(8, 2), true) // reads what another receive writes
	b.EndRound()
	if b.Err() == nil {
		t.Fatal("local operand overlapping another receive accepted")
	}
}

// directReduceScatter is a correct reduce-scatter of n-element blocks: every
// rank sends block q of its input to rank q, then sums what it received
// into its own block. mutate may replace rank r's reduction of the block
// from rank q (return true when it did).
func directReduceScatter(n int, mutate func(b *Builder, q int, own, got Region) bool) Generator {
	return func(b *Builder) {
		P, r := b.Size(), b.Rank()
		tmp := b.Alloc(P * n)
		for q := range P {
			if q != r {
				b.Send(q, SendBuf(q*n, n))
				b.Recv(q, tmp.Sub(q*n, n))
			}
		}
		own := RecvBuf(0, n)
		b.Copy(own, SendBuf(r*n, n))
		for q := range P {
			if q == r || mutate != nil && mutate(b, q, own, tmp.Sub(q*n, n)) {
				continue
			}
			b.Reduce(own, tmp.Sub(q*n, n))
		}
	}
}

// TestVerifyFingerprint shows that fingerprint tracking rejects what exact
// tracking rejects in a result: a contribution reduced twice, one missing,
// both at once (the right number of contributions, the wrong ones) and data
// of the wrong element or in the wrong place. Exact tracking reports a
// duplicate where it happens, fingerprints where it lands.
func TestVerifyFingerprint(t *testing.T) {
	spec := Spec{Coll: ReduceScatterBlock, Size: 6, Count: 3}
	// reduceTwice makes rank r reduce the block from q twice.
	reduceTwice := func(r, q int) func(b *Builder, q int, own, got Region) bool {
		return func(b *Builder, qq int, own, got Region) bool {
			if b.Rank() == r && qq == q {
				b.Reduce(own, got)
				b.Reduce(own, got)
				return true
			}
			return false
		}
	}
	skip := func(r, q int) func(b *Builder, q int, own, got Region) bool {
		return func(b *Builder, qq int, own, got Region) bool { return b.Rank() == r && qq == q }
	}
	wrongDest := func(b *Builder) {
		// rank 4 rotates its result by one element on the way out
		P, r, n := b.Size(), b.Rank(), 3
		if r != 4 {
			directReduceScatter(n, nil)(b)
			return
		}
		tmp := b.Alloc((P + 1) * n)
		for q := range P {
			if q != r {
				b.Send(q, SendBuf(q*n, n))
				b.Recv(q, tmp.Sub(q*n, n))
			}
		}
		acc := tmp.Sub(P*n, n)
		b.Copy(acc, SendBuf(r*n, n))
		for q := range P {
			if q != r {
				b.Reduce(acc, tmp.Sub(q*n, n))
			}
		}
		b.EndRound()
		b.Copy(RecvBuf(1, 2), acc.Sub(0, 2))
		b.Copy(RecvBuf(0, 1), acc.Sub(2, 1))
	}
	cases := []struct {
		name      string
		gen       Generator
		exact, fp string // the error each mode must report; "" accepts
	}{
		{"direct reduce-scatter", directReduceScatter(3, nil), "", ""},
		{"contribution reduced twice", directReduceScatter(3, reduceTwice(2, 4)),
			"rank 4 combined twice", "7 contributions of 6 ranks: some combined twice"},
		{"contribution missing", directReduceScatter(3, skip(1, 3)),
			"rank 1: recv[0:3] holds [E3+3{0..2,4..5}]", "rank 1: recv[0:3] holds [E3+3{5 contributions"},
		{"one twice, one missing", directReduceScatter(3, func(b *Builder, q int, own, got Region) bool {
			return skip(1, 3)(b, q, own, got) || reduceTwice(1, 2)(b, q, own, got)
		}), "rank 2 combined twice", "rank 1: recv[0:3] holds [E3+3{6 contributions"},
		{"another rank's block", directReduceScatter(3, func(b *Builder, q int, own, got Region) bool {
			if b.Rank() == 0 && q == 4 { // rank 5's block in place of rank 4's
				b.Reduce(own, got.Sub(got.Len, got.Len))
				return true
			}
			return false
		}), "rank 5 combined twice", "rank 0: recv[0:3] holds [E0+3{6 contributions"},
		{"wrong element", directReduceScatter(3, func(b *Builder, q int, own, got Region) bool {
			if b.Rank() == 3 && q == 0 {
				b.Reduce(own.Sub(0, 2), got.Sub(1, 2))
				b.Reduce(own.Sub(2, 1), got.Sub(0, 1))
				return true
			}
			return false
		}), "element 9 combined with element 10", "element 9 combined with element 10"},
		{"wrong place", wrongDest, "rank 4: recv[0:3] holds [E14+1", "rank 4: recv[0:3] holds [E14+1"},
	}
	for seed := range uint64(20) {
		for _, c := range cases {
			vtRun(t, []vtCase{
				{c.name + " (exact)", spec, Options{Seed: seed}, c.gen, c.exact},
				{c.name + " (fingerprint)", spec, Options{Fingerprint: true, Seed: seed}, c.gen, c.fp},
			})
		}
	}
	// Order needs exact tracking: Fingerprint leaves ordered reductions to it.
	ar := &Spec{Coll: Allreduce, Size: 3, Count: 3}
	if err := Verify(ar, chainAllreduce(true), Options{Ordered: true, Fingerprint: true}); err == nil {
		t.Fatal("out-of-order recvreduce accepted as ordered with Fingerprint")
	}
	if err := Verify(ar, chainAllreduce(true), Options{Fingerprint: true}); err != nil {
		t.Fatalf("commutative with Fingerprint: %v", err)
	}
}

// TestVerifyFingerprintUnusedDuplicate pins the documented difference of
// fingerprint tracking: a duplicate in a partial result that no result
// buffer receives is not reported.
func TestVerifyFingerprintUnusedDuplicate(t *testing.T) {
	spec := &Spec{Coll: ReduceScatterBlock, Size: 3, Count: 2}
	gen := func(b *Builder) {
		directReduceScatter(2, nil)(b)
		b.EndRound()
		junk := b.Alloc(2)
		b.Copy(junk, SendBuf(0, 2))
		b.Reduce(junk, SendBuf(0, 2)) // this rank's input twice, then dropped
	}
	if err := Verify(spec, gen, Options{}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("exact: %v", err)
	}
	if err := Verify(spec, gen, Options{Fingerprint: true}); err != nil {
		t.Fatalf("fingerprint: %v", err)
	}
}
