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
