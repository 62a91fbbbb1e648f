package workload

import (
	"fmt"
	"testing"

	"github.com/scoll/scoll/model"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/sim"
	"github.com/scoll/scoll/topology"
)

// TestMeshTreeCongestionFree: the mesh bcast and reduce on a mesh and a
// torus of the grid's shape load no link with two messages of a stage
// (stage model, dimension-order routing); the bcast's critical path is the
// farthest rank's distance in messages, one more per dimension with two
// equally long sides (single-port), and the reduce's at most one more per
// dimension.
func TestMeshTreeCongestionFree(t *testing.T) {
	for _, c := range []struct {
		dims []int
		root int
	}{{[]int{4, 4}, 5}, {[]int{8, 4, 2}, 0}, {[]int{5, 3}, 7}, {[]int{3, 3, 3}, 13}} {
		P := 1
		spec := ""
		for i, d := range c.dims {
			P *= d
			if i > 0 {
				spec += "x"
			}
			spec += fmt.Sprint(d)
		}
		for _, kind := range []string{"mesh", "torus"} {
			topo, err := topology.Parse(kind + ":" + spec)
			if err != nil {
				t.Fatal(err)
			}
			for _, coll := range []schedule.Collective{schedule.Bcast, schedule.Reduce} {
				gen, err := Workload{Coll: coll, Algorithm: "mesh", Size: P, Bytes: 64, Root: c.root, Grid: c.dims}.Generator()
				if err != nil {
					t.Fatal(err)
				}
				res, err := sim.StageModel(sim.Config{Topology: topo, Alpha: 1e-6, Delta: 1e-9}, P, 1, gen)
				if err != nil {
					t.Fatal(err)
				}
				if res.MaxCongestion > 1 {
					t.Errorf("%s %s:%s root %d: congestion %g", coll, kind, spec, c.root, res.MaxCongestion)
				}
				h, s := 0, 1
				for _, d := range c.dims {
					x := c.root / s % d
					h += max(x, d-1-x)
					if x > 0 && x == d-1-x {
						h++ // two equally long sides: one message after the other
					}
					s *= d
				}
				cp, err := model.CriticalPath(P, 1, gen, model.Params{Alpha: 1})
				if err != nil {
					t.Fatal(err)
				}
				if coll == schedule.Bcast && cp.AlphaBetaGamma != float64(h) || cp.AlphaBetaGamma < float64(h) || cp.AlphaBetaGamma > float64(h+len(c.dims)) {
					t.Errorf("%s %s:%s root %d: critical path %g messages, height %d", coll, kind, spec, c.root, cp.AlphaBetaGamma, h)
				}
			}
		}
	}
}
