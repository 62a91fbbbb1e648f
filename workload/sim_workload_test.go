package workload_test

import (
	"testing"

	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/sim"
	"github.com/scoll/scoll/topology"
	"github.com/scoll/scoll/workload"
)

// TestBarrierMessages: a barrier's empty messages are simulated (the
// executor sends them), each costing a start-up.
func TestBarrierMessages(t *testing.T) {
	topo, err := topology.Parse("crossbar:8")
	if err != nil {
		t.Fatal(err)
	}
	gen, err := workload.Workload{Coll: schedule.Barrier, Algorithm: "dissemination", Size: 8}.Generator()
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.StageModel(sim.Config{Topology: topo, Alpha: 1}, 8, 1, gen)
	if err != nil {
		t.Fatal(err)
	}
	// Dissemination: lg 8 = 3 rounds of one message per rank.
	if res.Messages != 24 || res.NumStages != 3 || res.Time != 3 {
		t.Fatalf("got %d messages in %d stages, time %g; want 24, 3, 3", res.Messages, res.NumStages, res.Time)
	}
}
