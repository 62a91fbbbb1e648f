package model_test

import (
	"testing"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/model"
	"github.com/scoll/scoll/schedule"
)

// marendicCase evaluates reduce/name on P ranks and count 4-byte elements
// with a commutative operator (and radix vector ks): its registered cost
// and its critical path under p, and under α, β and γ alone.
type marendicCase struct {
	cost           float64
	crit           float64
	alpha, gamma   float64 // critical path with only α, only γ
	costA, costG   float64 // registered α and γ terms
	copyFree, done bool
}

func evalMarendic(t *testing.T, name string, P, count int, ks []int, p model.Params) marendicCase {
	t.Helper()
	in, ok := algorithms.Lookup(schedule.Reduce, name)
	if !ok {
		t.Fatalf("no reduce/%s", name)
	}
	ap := algorithms.Params{Spec: schedule.Spec{Coll: schedule.Reduce, Size: P, Count: count}, Commutative: true, ElemSize: 4, RadixVector: ks}
	g := in.Generator(ap)
	crit := func(q model.Params) float64 {
		c, err := model.CriticalPath(P, 4, g, q)
		if err != nil {
			t.Fatal(err)
		}
		return c.AlphaBetaGamma
	}
	cnt, err := model.Count(P, 4, g)
	if err != nil {
		t.Fatal(err)
	}
	c := in.Cost(&ap)
	return marendicCase{
		cost: c.Time(p.Alpha, p.Beta, p.Gamma), crit: crit(p),
		alpha: crit(model.Params{Alpha: p.Alpha}), gamma: crit(model.Params{Gamma: p.Gamma}),
		costA: c.Alpha * p.Alpha, costG: c.Gamma * p.Gamma, copyFree: cnt.Total.BytesCopied == 0, done: true,
	}
}

// curie is Marendic et al.'s machine (their Fig. 10).
var curie = model.Params{Alpha: 2.66e-6, Beta: 4.8179e-10, Gamma: 1.6654e-10}

// TestMarendicButterflyIsRabenseifner: reduce/rabenseifner's registered
// cost is Table 3's Butterfly row on a power of two ranks, and its schedule's
// critical path has the row's α and γ terms (its β term adds the copies of
// the kept halves).
func TestMarendicButterflyIsRabenseifner(t *testing.T) {
	for _, P := range []int{2, 8, 128} {
		m := 4 * 1024 * P
		e := evalMarendic(t, "rabenseifner", P, m/4, nil, curie)
		_, row, _ := model.Marendic("rabenseifner", curie, P, float64(m))
		if !near(e.cost, row) || !near(e.alpha, e.costA) || !near(e.gamma, e.costG) {
			t.Errorf("P=%d: cost %g, critical α %g γ %g; row %g, registered α %g γ %g", P, e.cost, e.alpha, e.gamma, row, e.costA, e.costG)
		}
	}
	// Off powers of two the fold adds α + mβ + mγ, which the row (valid
	// only on powers of two) does not have.
	e := evalMarendic(t, "rabenseifner", 6, 6*1024, nil, curie)
	if _, row, _ := model.Marendic("rabenseifner", curie, 6, 4*6*1024); !(e.cost > row) {
		t.Errorf("P=6: cost %g not above the row %g", e.cost, row)
	}
}

// TestMarendicParallelRing: the registered cost and the schedule's critical
// path are the Parallel Ring row, on powers of two ranks (the row's
// (P−1)/P·m gather bytes are the binomial gather's there).
func TestMarendicParallelRing(t *testing.T) {
	for _, P := range []int{2, 4, 16, 128} {
		m := 4 * 256 * P
		e := evalMarendic(t, "parallel-ring", P, m/4, nil, curie)
		_, row, _ := model.Marendic("parallel-ring", curie, P, float64(m))
		if !near(e.cost, row) || !near(e.crit, row) || !e.copyFree {
			t.Errorf("P=%d: cost %g, critical path %g (copy-free %v), row %g", P, e.cost, e.crit, e.copyFree, row)
		}
	}
}

// TestMarendicRadixK: the registered cost and the critical path are the
// Radix-k row for the default vectors and explicit ones ({4, 4, 8} on 128
// ranks, Marendic et al.'s), and {2, …, 2} is the butterfly.
func TestMarendicRadixK(t *testing.T) {
	for _, c := range []struct {
		P  int
		ks []int
	}{{8, nil}, {16, nil}, {128, nil}, {128, []int{4, 4, 8}}, {128, []int{8, 4, 4}}, {64, []int{2, 2, 2, 2, 2, 2}}, {32, []int{2, 16}}} {
		m := 4 * 64 * c.P
		ks := c.ks
		if ks == nil {
			ks = algorithms.DefaultRadixVector(c.P, 0)
		}
		e := evalMarendic(t, "radix-k", c.P, m/4, c.ks, curie)
		_, row, _ := model.Marendic("radix-k", curie, c.P, float64(m), ks...)
		if !near(e.cost, row) || !near(e.crit, row) || !e.copyFree {
			t.Errorf("P=%d k=%v: cost %g, critical path %g (copy-free %v), row %g", c.P, ks, e.cost, e.crit, e.copyFree, row)
		}
	}
	if a, b := model.MarendicRadixK(curie, 64, 4e6, []int{2, 2, 2, 2, 2, 2}), model.MarendicButterfly(curie, 64, 4e6); !near(a, b) {
		t.Errorf("radix-k [2 …] %g, butterfly %g", a, b)
	}
}

// TestMarendicLinearPipeline: at the optimal segment count the registered
// cost of reduce/linear-pipeline is the Linear pipeline row, and its default
// segment count is that optimum (algorithms.OptSegments equals NOpt with
// n = P − 1 hops); the critical path has the row's α and γ terms (its β
// term adds the per-segment copies of the rank's own input).
func TestMarendicLinearPipeline(t *testing.T) {
	// InProcess: (P−2)·m·(β+γ)/α = 126·25200·3.75e-10/3e-7 = 63² on 128
	// ranks: 63 segments of 100 elements.
	ip := algorithms.InProcess
	p := model.Params{Alpha: ip.Alpha, Beta: ip.Beta, Gamma: ip.Gamma}
	const P, m = 128, 25200
	if n := model.NOpt(P-1, m, p.Alpha, p.Beta, p.Gamma); !near(n, 63) || !near(algorithms.OptSegments(P-1, m, ip), n) {
		t.Fatalf("N_opt = %g, OptSegments %g, want 63", n, algorithms.OptSegments(P-1, m, ip))
	}
	e := evalMarendic(t, "linear-pipeline", P, m/4, nil, p)
	_, row, _ := model.Marendic("linear-pipeline", p, P, m)
	if !near(e.cost, row) || !near(e.alpha, e.costA) || !near(e.gamma, e.costG) || !near(e.costA, float64(P-2+63)*p.Alpha) {
		t.Errorf("cost %g, row %g; critical α %g γ %g, registered α %g γ %g", e.cost, row, e.alpha, e.gamma, e.costA, e.costG)
	}
	if !(e.crit > row) {
		t.Errorf("critical path %g not above the row %g by its copies", e.crit, row)
	}
}

// TestMarendicTwoTree: Table 3's Two-tree row is its source's bound, not
// the schedule's time: on a power of two ranks, at the segment count best
// for it, the registered two-tree costs (D + S − 1)·2(α + 2sβ + sγ) with
// D = n, which is within the row's order but not equal to it; the critical
// path has its α and γ terms, and the registered cost, which charges the
// copy of the rank's own segment each step, is the critical path's time.
func TestMarendicTwoTree(t *testing.T) {
	const P = 128 // n = 7, D = 7
	ip := algorithms.InProcess
	p := model.Params{Alpha: ip.Alpha, Beta: ip.Beta, Gamma: ip.Gamma}
	// Half of m bytes in S = √(6·(m/2)(β+γ)/α) segments: m/2 = 6·10^4·... choose
	// (m/2)·6·1.25e-3 = 30²: m/2 = 120000 bytes, 30 segments of 1000 elements.
	const m = 240000
	e := evalMarendic(t, "two-tree", P, m/4, nil, p)
	steps := float64(7 + 30 - 1)
	s := float64(m / 2 / 30)
	want := steps * 2 * (p.Alpha + 2*s*p.Beta + s*p.Gamma)
	_, row, _ := model.Marendic("two-tree", p, P, m)
	if !near(e.cost, want) || !near(e.alpha, e.costA) || !near(e.gamma, e.costG) {
		t.Errorf("cost %g, want %g; critical α %g γ %g, registered α %g γ %g", e.cost, want, e.alpha, e.gamma, e.costA, e.costG)
	}
	if e.crit > 1.02*e.cost || e.cost > 1.02*e.crit {
		t.Errorf("registered cost %g, critical path %g", e.cost, e.crit)
	}
	if near(e.cost, row) || e.cost > 2*row || row > 2*e.cost {
		t.Errorf("cost %g against the row %g: equal, or not within a factor 2", e.cost, row)
	}
}
