package workload

import (
	"testing"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/model"
	"github.com/scoll/scoll/schedule"
)

// TestFibonacciNotSlower: built for a preset's L, o, g, the fibonacci
// bcast is never slower than the binomial tree on that preset's LogGP
// critical path, for P = 2 … 64 and one 8-byte item.
func TestFibonacciNotSlower(t *testing.T) {
	for _, name := range model.Presets() {
		p, err := model.ParamsByName(name)
		if err != nil {
			t.Fatal(err)
		}
		lp := algorithms.LogP{L: p.L, O: p.O, G: p.G}
		if algorithms.CheckLogP(lp) != nil {
			continue
		}
		for P := 2; P <= 64; P++ {
			time := func(alg string) float64 {
				in, _ := algorithms.Lookup(schedule.Bcast, alg)
				ap := algorithms.Params{Spec: schedule.Spec{Coll: schedule.Bcast, Size: P, Count: 8}, ElemSize: 1, Commutative: true, LogP: &lp}
				c, err := model.CriticalPath(P, 1, Generator(in, ap), p)
				if err != nil {
					t.Fatal(err)
				}
				return c.LogGP
			}
			if f, b := time("fibonacci"), time("binomial"); f > b*(1+1e-12) {
				t.Errorf("%s P=%d: fibonacci %g, binomial %g", name, P, f, b)
			}
		}
	}
}
