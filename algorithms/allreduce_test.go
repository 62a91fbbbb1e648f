package algorithms

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/schedule"

	"github.com/scoll/scoll/internal/sweep"
)

// verifyOne proves one algorithm on one call, with the ordering the
// algorithm promises.
func verifyOne(t *testing.T, c schedule.Collective, name string, prm Params) {
	t.Helper()
	in := mustLookup(t, c, name)
	if err := in.Check(&prm); err != nil {
		t.Fatalf("%s/%s: Check: %v", c, name, err)
	}
	err := schedule.Verify(&prm.Spec, in.Generator(prm), schedule.Options{Ordered: !prm.Commutative})
	if err != nil {
		t.Fatalf("%s/%s P=%d n=%d inplace=%v commutative=%v segment=%d: %v",
			c, name, prm.Size, prm.Count, prm.InPlace, prm.Commutative, prm.Segment, err)
	}
}

// TestVerifyLarge proves the logarithmic algorithms of this family by
// symbolic execution at sizes far beyond the test matrix, non-powers of two
// included, and with rank order kept where the algorithm promises it: 4,096
// and 5,096 ranks (-short: 4,096 only), 32,768 and 32,765 with -tags long.
func TestVerifyLarge(t *testing.T) {
	// maxP bounds the sizes a case runs at: the verifier's cost grows with
	// the size of the rank sets a message carries, which distance halving
	// (strided sets) and long vectors make large.
	cases := []struct {
		coll  schedule.Collective
		name  string
		comm  bool
		count func(P int) int
		maxP  int
	}{
		{schedule.Allreduce, "rabenseifner", false, func(P int) int { return 3 }, 1 << 15},
		{schedule.Allreduce, "rabenseifner", false, func(P int) int { return P + 5 }, 5096},
		{schedule.Allreduce, "reduce-bcast", false, func(P int) int { return 3 }, 1 << 15},
		{schedule.ReduceScatterBlock, "recursive-halving", true, func(P int) int { return 1 }, 4096},
		{schedule.ReduceScatterBlock, "reduce-scatter", false, func(P int) int { return 1 }, 1 << 15},
		{schedule.Allgather, "bruck", true, func(P int) int { return 1 }, 1 << 15},
		{schedule.Allgather, "recursive-doubling", true, func(P int) int { return 1 }, 1 << 15},
	}
	for _, P := range sweep.More([]int{4096, 4096 + 1000}, 32768, 32768-3) {
		if testing.Short() && P > 4096 {
			continue
		}
		for _, c := range cases {
			if P > c.maxP || c.name == "recursive-doubling" && !isPow2(P) {
				continue
			}
			for _, inPlace := range []bool{false, true} {
				n := c.count(P)
				t.Run(fmt.Sprintf("%s/%s/P=%d/n=%d/inplace=%v", c.coll, c.name, P, n, inPlace), func(t *testing.T) {
					verifyOne(t, c.coll, c.name, Params{
						Spec:        schedule.Spec{Coll: c.coll, Size: P, Count: n, InPlace: inPlace},
						Commutative: c.comm, ElemSize: 8,
					})
				})
			}
		}
	}
}

// TestVerifySegmented proves the segmented rings (TestVerifyAll runs them
// unsegmented) for segment lengths below, at and above the block length.
func TestVerifySegmented(t *testing.T) {
	for _, c := range []schedule.Collective{schedule.Allreduce, schedule.ReduceScatterBlock, schedule.ReduceScatter} {
		for _, P := range []int{1, 2, 3, 5, 8, 13} {
			for _, n := range []int{0, 1, 7, 3*P + 2} {
				for _, seg := range []int{1, 2, 3, 5, 100} {
					for _, inPlace := range []bool{false, true} {
						s := schedule.Spec{Coll: c, Size: P, Count: n, InPlace: inPlace}
						if c == schedule.ReduceScatter {
							s.Counts = make([]int, P)
							for i := range s.Counts {
								s.Counts[i] = (3*i + n) % (n + 3)
							}
						}
						verifyOne(t, c, "ring", Params{Spec: s, Commutative: true, Segment: seg, ElemSize: 4})
					}
				}
			}
		}
	}
}

// opCounts returns rank prm.Rank's schedule of c/name and how many
// operations of each kind it holds.
func opCounts(t *testing.T, c schedule.Collective, name string, prm Params) (*schedule.Schedule, map[schedule.Kind]int) {
	t.Helper()
	s, err := mustLookup(t, c, name).Schedule(&prm)
	if err != nil {
		t.Fatalf("%s/%s: %v", c, name, err)
	}
	n := map[schedule.Kind]int{}
	for _, rd := range s.Rounds {
		for _, o := range rd {
			n[o.Kind]++
		}
	}
	return s, n
}

// TestRingAllreduceNoCopies checks the ring allreduce's promise: no element is
// copied and no scratch is needed, in place or not (partials combine as they
// are received), and every received partial is combined on arrival.
func TestRingAllreduceNoCopies(t *testing.T) {
	for _, P := range []int{2, 3, 7, 16} {
		n := 10*P + 3
		blk := (n + P - 1) / P
		for _, seg := range []int{0, 4} {
			for _, inPlace := range []bool{false, true} {
				for r := range P {
					prm := Params{Spec: schedule.Spec{Coll: schedule.Allreduce, Size: P, Count: n, InPlace: inPlace},
						Rank: r, Commutative: true, Segment: seg}
					s, n := opCounts(t, schedule.Allreduce, "ring", prm)
					copies, msgs, scratch := n[schedule.OpCopy], s.Messages(), s.Scratch
					S := redscatSegments(blk, seg)
					wantScratch := 0
					if fused := n[schedule.OpRecvReduce]; fused != (P-1)*S {
						t.Errorf("P=%d r=%d: %d fused receives, want %d", P, r, fused, (P-1)*S)
					}
					if copies != 0 || scratch != wantScratch || msgs != 2*(P-1)*S {
						t.Errorf("P=%d r=%d seg=%d inplace=%v: %d copies, %d scratch (want %d), %d messages (want %d)",
							P, r, seg, inPlace, copies, scratch, wantScratch, msgs, 2*(P-1)*S)
					}
				}
			}
		}
	}
}

// TestReduceScatterRingCopies: the in-place ring reduce-scatter lands the
// result at the start of the buffer without a copy on every rank but the two
// whose block or last sent block is the first one.
func TestReduceScatterRingCopies(t *testing.T) {
	const P, n = 8, 5
	for r := range P {
		for _, inPlace := range []bool{false, true} {
			prm := Params{Spec: schedule.Spec{Coll: schedule.ReduceScatterBlock, Size: P, Count: n, InPlace: inPlace},
				Rank: r, Commutative: true}
			_, n := opCounts(t, schedule.ReduceScatterBlock, "ring", prm)
			copies := n[schedule.OpCopy]
			want := 0
			if inPlace && r == P-1 {
				want = 1
			}
			if copies != want {
				t.Errorf("r=%d inplace=%v: %d copies, want %d", r, inPlace, copies, want)
			}
		}
	}
}

// TestCheckRequirements checks that algorithms that combine out of rank order
// refuse non-commutative operators, that the order-keeping ones accept them,
// and that recursive doubling refuses a non-power-of-two allgather.
func TestCheckRequirements(t *testing.T) {
	needComm := []algRef{
		{schedule.Allreduce, "ring"},
		{schedule.ReduceScatterBlock, "ring"}, {schedule.ReduceScatter, "ring"},
		{schedule.ReduceScatterBlock, "recursive-halving"}, {schedule.ReduceScatter, "recursive-halving"},
	}
	ordered := []algRef{
		{schedule.Allreduce, "rabenseifner"}, {schedule.Allreduce, "reduce-bcast"},
		{schedule.Allreduce, "allgather-reduce"},
		{schedule.ReduceScatterBlock, "pairwise"}, {schedule.ReduceScatter, "pairwise"},
		{schedule.ReduceScatterBlock, "reduce-scatter"}, {schedule.ReduceScatter, "reduce-scatter"},
	}
	for _, a := range append(needComm, ordered...) {
		in := mustLookup(t, a.coll, a.name)
		s := schedule.Spec{Coll: a.coll, Size: 6, Count: 4}
		if a.coll == schedule.ReduceScatter {
			s.Counts = []int{1, 2, 3, 4, 5, 6}
		}
		if err := in.Check(&Params{Spec: s, Commutative: true}); err != nil {
			t.Errorf("%s/%s refuses a commutative operator: %v", a.coll, a.name, err)
		}
		err := in.Check(&Params{Spec: s, Commutative: false})
		if slices.Contains(needComm, a) {
			if !errors.Is(err, errs.Unsupported) {
				t.Errorf("%s/%s accepts a non-commutative operator (err %v)", a.coll, a.name, err)
			}
		} else if err != nil {
			t.Errorf("%s/%s refuses a non-commutative operator: %v", a.coll, a.name, err)
		}
	}
	for _, c := range []schedule.Collective{schedule.Allgather, schedule.Allgatherv} {
		in, _ := Lookup(c, "recursive-doubling")
		s := schedule.Spec{Coll: c, Size: 6, Count: 2, Counts: make([]int, 6)}
		if err := in.Check(&Params{Spec: s}); !errors.Is(err, errs.Unsupported) {
			t.Errorf("%s/recursive-doubling accepts 6 ranks (err %v)", c, err)
		}
		s.Size, s.Counts = 8, make([]int, 8)
		if err := in.Check(&Params{Spec: s}); err != nil {
			t.Errorf("%s/recursive-doubling refuses 8 ranks: %v", c, err)
		}
	}
}

// TestRoundCounts pins the number of rounds (the α term) of the logarithmic
// algorithms, which is what they are chosen for.
func TestRoundCounts(t *testing.T) {
	rounds := func(c schedule.Collective, name string, P, r, n int) int {
		in, _ := Lookup(c, name)
		s, err := in.Schedule(&Params{Spec: schedule.Spec{Coll: c, Size: P, Count: n}, Rank: r, Commutative: true})
		if err != nil {
			t.Fatal(err)
		}
		return len(s.Rounds)
	}
	for _, P := range []int{2, 4, 8, 64} {
		lg := ceilLog2(P)
		for _, tc := range []struct {
			c    schedule.Collective
			name string
			want int
		}{
			{schedule.Allreduce, "rabenseifner", 2 * lg},
			{schedule.Allreduce, "allgather-reduce", lg + 1},
			{schedule.ReduceScatterBlock, "recursive-halving", lg}, // lands in place: no copy round
			{schedule.Allgather, "recursive-doubling", lg},
			{schedule.ReduceScatterBlock, "pairwise", P - 1},
			{schedule.Allgather, "bruck", lg + 1},
			{schedule.Allgather, "neighbor-exchange", P / 2},
		} {
			if got := rounds(tc.c, tc.name, P, P-1, 3*P); got != tc.want {
				t.Errorf("%s/%s P=%d: %d rounds, want %d", tc.c, tc.name, P, got, tc.want)
			}
		}
	}
}

// TestCostsAgree checks that each cost's α term is the rounds of messages on
// the critical path for powers of two, where the formulas are exact.
func TestCostsAgree(t *testing.T) {
	for _, P := range []int{2, 8, 32} {
		lg := float64(ceilLog2(P))
		for _, tc := range []struct {
			c     schedule.Collective
			name  string
			alpha float64
		}{
			{schedule.Allreduce, "ring", 2 * float64(P-1)},
			{schedule.Allreduce, "rabenseifner", 2 * lg},
			{schedule.Allreduce, "reduce-bcast", 2 * lg},
			{schedule.Allreduce, "allgather-reduce", lg},
			{schedule.ReduceScatterBlock, "recursive-halving", lg},
			{schedule.ReduceScatterBlock, "pairwise", float64(P - 1)},
			{schedule.Allgather, "bruck", lg},
			{schedule.Allgather, "neighbor-exchange", float64(P / 2)},
		} {
			in, _ := Lookup(tc.c, tc.name)
			got := in.Cost(&Params{Spec: schedule.Spec{Coll: tc.c, Size: P, Count: 100}, ElemSize: 4})
			if got.Alpha != tc.alpha || got.Beta <= 0 {
				t.Errorf("%s/%s P=%d: cost %+v, want α=%v and β>0", tc.c, tc.name, P, got, tc.alpha)
			}
		}
	}
}
