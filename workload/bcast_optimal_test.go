package workload

import (
	"testing"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/sweep"
	"github.com/scoll/scoll/model"
	"github.com/scoll/scoll/schedule"
)

// TestBcastOptimalNearBound: with its default packet count under each
// preset's α and β, the optimal bcast's α-β critical path is within 3 % of
// the round-optimal bound min over n of (n + ⌈lg p⌉ − 1)(α + βs/n), and
// never below it, for p from 2 to 1000 (4096 with -tags long) and s from
// 8 B to 64 MiB.
func TestBcastOptimalNearBound(t *testing.T) {
	in, _ := algorithms.Lookup(schedule.Bcast, algorithms.Optimal)
	ps := sweep.More([]int{2, 3, 5, 7, 13, 64, 100, 1000}, 4096)
	sizes := []int{8, 1000, 1 << 16, 1 << 20, 64 << 20}
	if testing.Short() {
		ps, sizes = []int{2, 7, 100}, []int{8, 1 << 16, 64 << 20}
	}
	worst := 1.0
	for _, name := range model.Presets() {
		par, err := model.ParamsByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if par.Alpha <= 0 || par.Beta <= 0 {
			continue
		}
		for _, P := range ps {
			for _, s := range sizes {
				if P == 4096 && s == 64<<20 && name != model.Presets()[0] {
					continue // one preset suffices at the largest call
				}
				ap := algorithms.Params{Spec: schedule.Spec{Coll: schedule.Bcast, Size: P, Count: s / 4}, ElemSize: 4,
					Commutative: true, Machine: algorithms.Machine{Alpha: par.Alpha, Beta: par.Beta, Gamma: par.Gamma}}
				c, err := model.CriticalPath(P, 4, Generator(in, ap), par)
				if err != nil {
					t.Fatal(err)
				}
				bound, _ := model.BcastRoundOptimal(par.Alpha, par.Beta, P, float64(s))
				r := c.AlphaBetaGamma / bound
				worst = max(worst, r)
				if r > 1.03 || r < 1-1e-9 {
					t.Errorf("%s P=%d s=%d: critical path %g s, bound %g s (ratio %.4f)", name, P, s, c.AlphaBetaGamma, bound, r)
				}
			}
		}
	}
	t.Logf("worst ratio to the round-optimal bound: %.4f", worst)
}
