package model

import (
	"testing"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/schedule"
)

// TestEvaluateSkipsLargeCriticalPath checks that a row whose rounds hold
// more messages than the limit has no critical path and charges static
// energy over the round-synchronous time.
func TestEvaluateSkipsLargeCriticalPath(t *testing.T) {
	p := infiniband()
	in, _ := algorithms.Lookup(schedule.Allgather, "linear")
	ap := algorithms.Params{Spec: schedule.Spec{Coll: schedule.Allgather, Size: 8, Count: 10}, Commutative: true, ElemSize: 4}
	// 8 ranks with 14 messages and a copy in their one round: 120 operations.
	for _, tc := range []struct {
		limit int64
		want  bool
	}{{120, true}, {119, false}} {
		r, err := evaluateGenerator(in.Name, 8, 4, in.Generator(ap), p, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if r.Counts.Total.RoundOps != 120 || (r.Critical > 0) != tc.want || (r.CriticalLogGP > 0) != tc.want {
			t.Errorf("limit %d: round operations %d, critical %g %g", tc.limit, r.Counts.Total.RoundOps, r.Critical, r.CriticalLogGP)
		}
		time := r.Counted
		if tc.want {
			time = r.Critical
		}
		if r.Energy != Energy(r.Counts, p, time) {
			t.Errorf("limit %d: energy %g, want %g", tc.limit, r.Energy, Energy(r.Counts, p, time))
		}
	}
}

// TestRunCountsAsCount checks that the one-pass evaluation counts exactly
// what Count counts, for every registered algorithm.
func TestRunCountsAsCount(t *testing.T) {
	p := infiniband()
	for c := schedule.Collective(0); c < schedule.NumCollectives; c++ {
		if c.Vector() {
			continue
		}
		for _, P := range []int{1, 5, 8, 13} {
			ap := algorithms.Params{Spec: schedule.Spec{Coll: c, Size: P, Count: 1000}, Commutative: true, ElemSize: 4}
			if c == schedule.Barrier {
				ap.Count = 0
			}
			for _, in := range algorithms.List(c) {
				if in.Check(&ap) != nil {
					continue
				}
				gen := in.Generator(ap)
				if c == schedule.Barrier {
					g := gen
					gen = func(b *schedule.Builder) { b.KeepEmpty(); g(b) }
				}
				want, err := Count(P, 4, gen)
				if err != nil {
					t.Fatal(err)
				}
				got, _, ok, err := run(P, 4, gen, p, -1, nil)
				if err != nil || !ok || got != want {
					t.Errorf("%s/%s P=%d: run counts %+v (ok %v, %v), Count %+v", c, in.Name, P, got, ok, err, want)
				}
			}
		}
	}
}
