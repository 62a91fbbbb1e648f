package schedule

import (
	"errors"
	"strings"
	"testing"
)

// vtCase is a generator with the error Verify must report (want == "" means
// the schedules are correct).
type vtCase struct {
	name string
	spec Spec
	opt  Options
	gen  Generator
	want string
}

func vtRun(t *testing.T, cases []vtCase) {
	t.Helper()
	for _, c := range cases {
		err := Verify(&c.spec, c.gen, c.opt)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want == "":
		case err == nil:
			t.Errorf("%s: accepted", c.name)
		case !errors.Is(err, ErrVerify):
			t.Errorf("%s: %v does not wrap ErrVerify", c.name, err)
		case !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: %v lacks %q", c.name, err, c.want)
		}
	}
}

// vtExchange is a correct 2-rank allreduce: swap, then combine in rank order.
func vtExchange(mutate func(b *Builder, tmp Region)) Generator {
	return func(b *Builder) {
		n := 3
		r, peer := b.Rank(), 1-b.Rank()
		tmp := b.Alloc(n)
		b.Copy(RecvBuf(0, n), SendBuf(0, n))
		b.EndRound()
		if mutate != nil {
			mutate(b, tmp)
			return
		}
		b.Exchange(peer, SendBuf(0, n), tmp)
		b.ReduceOrdered(RecvBuf(0, n), tmp, peer < r)
	}
}

func TestVerifyRejectsMore(t *testing.T) {
	ar2 := Spec{Coll: Allreduce, Size: 2, Count: 3}
	ag3 := Spec{Coll: Allgather, Size: 3, Count: 2}
	vtRun(t, []vtCase{
		{"exchange is correct", ar2, Options{Ordered: true}, vtExchange(nil), ""},
		{"deadlock: both receive first", ar2, Options{}, vtExchange(func(b *Builder, tmp Region) {
			b.Recv(1-b.Rank(), tmp)
			b.EndRound()
			b.Send(1-b.Rank(), SendBuf(0, 3))
		}), "deadlock"},
		{"deadlock: receive from the wrong rank", Spec{Coll: Allreduce, Size: 3, Count: 1}, Options{}, func(b *Builder) {
			switch b.Rank() {
			case 0:
				b.Send(1, SendBuf(0, 1))
			case 1:
				b.Recv(2, RecvBuf(0, 1))
			}
		}, "deadlock"},
		{"unmatched send left over", ar2, Options{}, vtExchange(func(b *Builder, tmp Region) {
			if b.Rank() == 0 {
				b.Send(1, SendBuf(0, 3))
			}
		}), "deadlock"},
		{"double contribution", ar2, Options{}, vtExchange(func(b *Builder, tmp Region) {
			b.Exchange(1-b.Rank(), SendBuf(0, 3), tmp)
			b.Reduce(RecvBuf(0, 3), tmp)
			b.Reduce(RecvBuf(0, 3), SendBuf(0, 3)) // own input again
		}), "combined twice"},
		{"wrong element combined", ar2, Options{}, vtExchange(func(b *Builder, tmp Region) {
			b.Exchange(1-b.Rank(), SendBuf(0, 3), tmp)
			b.Reduce(RecvBuf(0, 2), tmp.Sub(1, 2))
		}), "element 0 combined with element 1"},
		{"missing contribution", ar2, Options{}, vtExchange(func(b *Builder, tmp Region) {
			b.Exchange(1-b.Rank(), SendBuf(0, 3), tmp)
			b.Reduce(RecvBuf(0, 2), tmp.Sub(0, 2))
		}), "E2+1{0}]"},
		{"reduction of undefined data", ar2, Options{}, vtExchange(func(b *Builder, tmp Region) {
			b.Reduce(RecvBuf(0, 3), tmp) // tmp never received
		}), "want"},
		{"rank order broken", ar2, Options{Ordered: true}, vtExchange(func(b *Builder, tmp Region) {
			b.Exchange(1-b.Rank(), SendBuf(0, 3), tmp)
			b.Reduce(RecvBuf(0, 3), tmp) // rank 1 puts rank 0 on the right
		}), "want"},
		{"reduce in a data-movement collective", ag3, Options{}, func(b *Builder) {
			b.Copy(RecvBuf(0, 2), SendBuf(0, 2))
			b.Reduce(RecvBuf(2, 2), SendBuf(0, 2))
		}, "does not reduce"},
		{"recv overlapping send in one round", ag3, Options{}, func(b *Builder) {
			P, r := b.Size(), b.Rank()
			b.Send((r+1)%P, RecvBuf(0, 4))
			b.Recv((r+P-1)%P, RecvBuf(2, 4))
		}, "overlaps"},
		{"builder error surfaces", ag3, Options{}, func(b *Builder) {
			if b.Rank() == 2 {
				b.Failf("no schedule for rank %d", b.Rank())
			}
		}, "no schedule for rank 2"},
		{"message order between a pair", Spec{Coll: Allgather, Size: 2, Count: 2}, Options{}, func(b *Builder) {
			// Two messages 0→1 in one round: they match in posting order,
			// so swapping the receives swaps the data.
			r := b.Rank()
			b.Copy(RecvBuf(2*r, 2), SendBuf(0, 2))
			b.EndRound()
			if r == 0 {
				b.Send(1, SendBuf(0, 1))
				b.Send(1, SendBuf(1, 1))
				b.EndRound()
				b.Recv(1, RecvBuf(2, 2))
			} else {
				b.Recv(0, RecvBuf(1, 1))
				b.Recv(0, RecvBuf(0, 1))
				b.EndRound()
				b.Send(0, SendBuf(0, 2))
			}
		}, "want"},
		// The two cases below are shaped alike (rank 0 sends, rank 1
		// receives); they are table rows with their own expectations.
		{"exscan result of rank 0 is free", Spec{Coll: Exscan, Size: 2, Count: 1}, Options{Ordered: true}, func(b *Builder) {
			if b.Rank() == 0 {
				b.Send(1, SendBuf(0, 1))
			} else {
				b.Recv(0, RecvBuf(0, 1))
			}
		}, ""},
		{"scan of rank 0 is its input", Spec{Coll: Scan, Size: 2, Count: 1}, Options{Ordered: true}, func(b *Builder) {
			if b.Rank() == 0 {
				b.Send(1, SendBuf(0, 1))
			} else {
				b.Recv(0, RecvBuf(0, 1))
				b.Reduce(RecvBuf(0, 1), SendBuf(0, 1))
			}
		}, "rank 0"},
	})
}

func TestVerifyBarrier(t *testing.T) {
	spec := Spec{Coll: Barrier, Size: 4}
	tok := RecvBuf(0, 0)
	// gather to rank 0, then (unless skipped) release.
	star := func(release bool) Generator {
		return func(b *Builder) {
			if b.Rank() == 0 {
				for q := 1; q < b.Size(); q++ {
					b.Recv(q, tok)
				}
				b.EndRound()
				if release {
					for q := 1; q < b.Size(); q++ {
						b.Send(q, tok)
					}
				}
				return
			}
			b.Send(0, tok)
			if release {
				b.EndRound()
				b.Recv(0, tok)
			}
		}
	}
	vtRun(t, []vtCase{
		{"star barrier", spec, Options{}, star(true), ""},
		{"gather without release", spec, Options{}, star(false), "knowing only"},
		{"no messages", spec, Options{}, func(b *Builder) {}, "knowing only"},
		{"barrier of one rank", Spec{Coll: Barrier, Size: 1}, Options{}, func(b *Builder) {}, ""},
		// Knowledge travels with the message as of the start of its round:
		// rank 1 sends in the same round it first hears from rank 2.
		{"knowledge is not instantaneous", Spec{Coll: Barrier, Size: 3}, Options{}, func(b *Builder) {
			switch b.Rank() {
			case 0:
				b.Recv(1, tok)
				b.EndRound()
				b.Send(1, tok)
				b.Send(2, tok)
			case 1:
				b.Recv(2, tok)
				b.Send(0, tok)
				b.EndRound()
				b.Recv(0, tok)
			case 2:
				b.Send(1, tok)
				b.EndRound()
				b.Recv(0, tok)
			}
		}, "knowing only"},
	})
}

func TestValidateMatchOnly(t *testing.T) {
	spec := &Spec{Coll: Allgather, Size: 3, Count: 2}
	// Wrong data but matching messages: Validate passes, Verify does not.
	gen := func(b *Builder) {
		P, r := b.Size(), b.Rank()
		b.Send((r+1)%P, RecvBuf(0, 2))
		b.Recv((r+P-1)%P, RecvBuf(2, 2))
	}
	if err := Validate(spec, gen); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if err := Verify(spec, gen, Options{}); err == nil {
		t.Fatal("Verify accepted wrong data")
	}
	bad := func(b *Builder) {
		P, r := b.Size(), b.Rank()
		b.Send((r+1)%P, RecvBuf(0, 2))
		b.Recv((r+P-1)%P, RecvBuf(2, 1+r%2))
	}
	if err := Validate(spec, bad); err == nil || !strings.Contains(err.Error(), "matches a send") {
		t.Fatalf("Validate of mismatched lengths: %v", err)
	}
	inPlaceV := &Spec{Coll: Alltoallv, Size: 1, Matrix: [][]int{{1}}, InPlace: true}
	if err := Validate(inPlaceV, func(*Builder) {}); !errors.Is(err, ErrSpec) {
		t.Fatalf("in-place alltoallv: %v", err)
	}
}

// TestVerifyZeroLength checks that empty messages are dropped on both sides
// consistently, so a schedule whose blocks are all empty still matches.
func TestVerifyZeroLength(t *testing.T) {
	for _, n := range []int{0, 1} {
		spec := &Spec{Coll: Allgather, Size: 4, Count: n}
		if err := Verify(spec, ringAllgather(n, nil), Options{}); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
	}
	// Only one side's message is empty: the other side waits forever.
	spec := &Spec{Coll: Allgatherv, Size: 2, Counts: []int{0, 1}}
	gen := func(b *Builder) {
		if b.Rank() == 0 {
			b.Send(1, SendBuf(0, 0)) // dropped
			b.Recv(1, RecvBuf(0, 1))
			return
		}
		tmp := b.Alloc(1)
		b.Copy(RecvBuf(0, 1), SendBuf(0, 1))
		b.EndRound()
		b.Send(0, SendBuf(0, 1))
		b.Recv(0, tmp) // expects a message rank 0 never sends
	}
	if err := Verify(spec, gen, Options{}); err == nil || !strings.Contains(err.Error(), "rank 1 waits") {
		t.Fatalf("one-sided empty message: %v", err)
	}
}

// TestFromSchedules replays materialised schedules.
func TestFromSchedules(t *testing.T) {
	spec := &Spec{Coll: Allgather, Size: 3, Count: 2}
	ss := make([]*Schedule, 3)
	for r := range ss {
		b := NewBuilder(r, 3)
		ringAllgather(2, nil)(b)
		s, err := b.Schedule()
		if err != nil {
			t.Fatal(err)
		}
		ss[r] = s
	}
	if err := Verify(spec, FromSchedules(ss), Options{}); err != nil {
		t.Fatal(err)
	}
	ss[0], ss[1] = ss[1], ss[0]
	if err := Verify(spec, FromSchedules(ss), Options{}); err == nil || !strings.Contains(err.Error(), "given for rank") {
		t.Fatalf("swapped schedules: %v", err)
	}
}

// vtRaw wraps single-rank raw schedules that bypass the Builder's checks.
func vtRaw(scratch int, ops ...Op) Generator {
	return FromSchedules([]*Schedule{{Rank: 0, Size: 1, Scratch: scratch, Rounds: []Round{ops}}})
}

// TestVerifyRawSchedulesKnownBugs pins verifier gaps for schedules that do
// not come from a Builder (FromSchedules, e.g. decoded ones): the verifier
// relies on checks only the Builder makes.
func TestVerifyRawSchedulesKnownBugs(t *testing.T) {
	one := Spec{Coll: Allreduce, Size: 1, Count: 1}
	vtRun(t, []vtCase{
		{"invalid space", one, Options{}, vtRaw(4,
			Op{Kind: OpCopy, Dst: Region{Space: 5, Len: 1}, Src: SendBuf(0, 1)}), "space"},
		{"write to the send buffer", one, Options{}, vtRaw(0,
			Op{Kind: OpCopy, Dst: RecvBuf(0, 1), Src: SendBuf(0, 1)},
			Op{Kind: OpCopy, Dst: SendBuf(0, 1), Src: RecvBuf(0, 1)}), "read-only"},
		{"copy lengths differ", Spec{Coll: Allgather, Size: 1, Count: 1}, Options{}, vtRaw(3,
			Op{Kind: OpCopy, Dst: RecvBuf(0, 1), Src: ScratchBuf(0, 3)}), "length"},
	})
}

// TestCheckRoundEmptyRecvHidesOverlap pins a bug in builder.go's checkRound:
// receives are sorted by offset and only neighbours are compared, so an empty
// receive (kept after KeepEmpty) sorted between two overlapping receives
// hides their overlap.
func TestCheckRoundEmptyRecvHidesOverlap(t *testing.T) {
	b := NewBuilder(0, 2)
	b.KeepEmpty()
	b.Recv(1, RecvBuf(0, 10))
	b.Recv(1, RecvBuf(2, 0))
	b.Recv(1, RecvBuf(5, 1))
	if _, err := b.Schedule(); err == nil {
		t.Fatal("overlapping receives accepted")
	}
}

// TestEmptyRegionBoundsAgree pins an inconsistency: the Builder accepts an
// empty region whose offset lies past the end of its buffer (kept with
// KeepEmpty), but the verifier's bounds check rejects the same region.
func TestEmptyRegionBoundsAgree(t *testing.T) {
	gen := func(b *Builder) {
		b.Exchange(1-b.Rank(), RecvBuf(3, 0), RecvBuf(3, 0))
	}
	b := NewBuilder(0, 2)
	b.SetBounds(0, 0)
	b.KeepEmpty()
	gen(b)
	_, berr := b.Schedule()
	verr := Verify(&Spec{Coll: Barrier, Size: 2}, gen, Options{})
	if (berr == nil) != (verr == nil) {
		t.Fatalf("builder: %v; verifier: %v", berr, verr)
	}
}

// TestFromSchedulesShort pins a bug: FromSchedules indexes the slice by rank
// without checking, so too few (or nil) schedules panic inside Verify.
func TestFromSchedulesShort(t *testing.T) {
	for _, ss := range [][]*Schedule{{{Rank: 0, Size: 2}}, {nil}} {
		spec := &Spec{Coll: Allreduce, Size: 2}
		if err := Verify(spec, FromSchedules(ss), Options{}); err == nil {
			t.Errorf("%d schedules for 2 ranks accepted", len(ss))
		}
	}
}
