package workload

import (
	"errors"
	"testing"

	"github.com/scoll/scoll/model"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/sim"
	"github.com/scoll/scoll/topology"
)

// TestEvaluateArrivals: together, the arrival time is the critical path;
// with one rank late by δ every reduce ends at least δ after the earliest
// arrival, and the clairvoyant reduce, scheduled for the arrivals, ends
// before the binomial tree.
func TestEvaluateArrivals(t *testing.T) {
	p, err := model.ParamsByName("curie")
	if err != nil {
		t.Fatal(err)
	}
	const P, bytes, late = 16, 1 << 16, 400e-6
	rows, err := EvaluateArrivals(schedule.Reduce, P, bytes, p, make([]float64, P))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Critical > 0 && r.Arrival != r.Critical {
			t.Fatalf("%s: balanced arrival time %g, critical path %g", r.Algorithm, r.Arrival, r.Critical)
		}
	}
	a := make([]float64, P)
	for r := range a {
		a[r] = 1 // any origin
	}
	a[P-1] += late
	rows, err = EvaluateArrivals(schedule.Reduce, P, bytes, p, a)
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]float64{}
	for _, r := range rows {
		if r.Arrival < late {
			t.Fatalf("%s ends %g after the first arrival, before the late rank arrives (%g)", r.Algorithm, r.Arrival, late)
		}
		at[r.Algorithm] = r.Arrival
	}
	if !(at["clairvoyant"] < at["binomial"]) {
		t.Fatalf("clairvoyant %g, binomial %g", at["clairvoyant"], at["binomial"])
	}
	if _, err := EvaluateArrivals(schedule.Reduce, P, bytes, p, a[:3]); !errors.Is(err, model.ErrArgument) {
		t.Fatalf("short arrival vector: %v", err)
	}
}

// TestFlowArrivals: the flow simulator starts each rank at its arrival;
// the clairvoyant reduce's schedule follows the workload's arrivals.
func TestFlowArrivals(t *testing.T) {
	topo, err := topology.Parse("torus:4x4")
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.FlowConfig{Config: sim.Config{Topology: topo, Alpha: 1e-6, Delta: 1e-9}}
	a := make([]float64, 16)
	a[5] = 1e-3
	for _, alg := range []string{"binomial", "clairvoyant"} {
		w := Workload{Coll: schedule.Reduce, Algorithm: alg, Size: 16, Bytes: 1 << 16, Arrivals: a}
		gen, err := w.Generator()
		if err != nil {
			t.Fatal(err)
		}
		c := cfg
		c.Arrival = a
		res, err := sim.FlowModel(c, 16, 1, gen)
		if err != nil {
			t.Fatal(err)
		}
		if res.Time < 1e-3 {
			t.Fatalf("%s ends at %g, before rank 5 arrives", alg, res.Time)
		}
	}
}
