package sim

import (
	"math"
	"testing"

	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/topology"
)

// The flow and stage models on registered algorithms are tested in package
// workload, which combines them; these tests use hand-written schedules.

func crossbar2(t *testing.T) topology.Topology {
	t.Helper()
	topo, err := topology.NewCrossbar(2)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// TestFlowArrivals starts ranks at their own times: a message moves as
// soon as its sender arrives (sends are eager), a receive completes when
// its rank has arrived and the message is there, and the result is the
// last rank's end on the common clock.
func TestFlowArrivals(t *testing.T) {
	const alpha, delta, n = 1e-6, 1e-9, 1000
	gen := func(b *schedule.Builder) {
		if b.Rank() == 0 {
			b.Send(1, schedule.SendBuf(0, n))
		} else {
			b.Recv(0, schedule.RecvBuf(0, n))
		}
		b.EndRound()
	}
	cfg := FlowConfig{Config: Config{Topology: crossbar2(t), Alpha: alpha, Delta: delta}}
	msg := alpha + n*delta
	for _, tc := range []struct {
		arrival []float64
		want    float64
	}{
		{nil, msg},
		{[]float64{0, 0}, msg},
		{[]float64{0, 1e-3}, 1e-3},       // the message waits for its receiver
		{[]float64{1e-3, 0}, 1e-3 + msg}, // the receiver waits for the sender
		{[]float64{2e-6, 1e-6}, 2e-6 + msg},
	} {
		cfg.Arrival = tc.arrival
		res, err := FlowModel(cfg, 2, 1, gen)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(res.Time-tc.want) > 1e-15 {
			t.Errorf("arrivals %v: time %g, want %g", tc.arrival, res.Time, tc.want)
		}
	}
	for _, bad := range [][]float64{{0}, {0, -1}, {math.NaN(), 0}, {0, math.Inf(1)}} {
		cfg.Arrival = bad
		if _, err := FlowModel(cfg, 2, 1, gen); err == nil {
			t.Errorf("arrivals %v accepted", bad)
		}
	}
}
