package workload_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/registrytest"
	"github.com/scoll/scoll/model"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/sim"
	"github.com/scoll/scoll/topology"
)

// The users of the schedule replay (the verifier, the stage and flow
// simulators, the critical-path model) are pinned on every registered
// algorithm: testdata/replay/<coll>-<name>.txt holds what each of them
// says about the algorithm's schedules at a small size. A change to the
// replay that changes any result shows here; rerun with -update only for
// a deliberate change, and review the diff.

// replayResults renders what every replay user says about the algorithm's
// schedules for ap.
func replayResults(t *testing.T, in *algorithms.Info, ap algorithms.Params) []byte {
	t.Helper()
	var buf bytes.Buffer
	spec := ap.Spec
	size := spec.Size
	gen := in.Generator(ap)
	if spec.Coll == schedule.Barrier {
		g := gen
		gen = func(b *schedule.Builder) { b.KeepEmpty(); g(b) }
	}
	fmt.Fprintf(&buf, "# %s %s, P=%d, count=%d, root=%d, counts=%v, matrix=%v\n",
		in.Coll, in.Name, size, spec.Count, spec.Root, spec.Counts, spec.Matrix)
	say := func(what string, err error) {
		if err != nil {
			fmt.Fprintf(&buf, "%s: error: %v\n", what, err)
		} else {
			fmt.Fprintf(&buf, "%s: ok\n", what)
		}
	}
	say("verify", schedule.Verify(&spec, gen, schedule.Options{}))
	say("verify fingerprint", schedule.Verify(&spec, gen, schedule.Options{Fingerprint: true, Seed: 7}))
	say("validate", schedule.Validate(&spec, gen))

	p, err := model.ParamsByName("infiniband")
	if err != nil {
		t.Fatal(err)
	}
	p.Gamma = 0.25e-9
	c, err := model.CriticalPath(size, ap.ElemSize, gen, p)
	if err != nil {
		fmt.Fprintf(&buf, "critical: error: %v\n", err)
	} else {
		fmt.Fprintf(&buf, "critical: abg %.12g loggp %.12g\n", c.AlphaBetaGamma, c.LogGP)
	}
	cnt, err := model.Count(size, ap.ElemSize, gen)
	if err != nil {
		fmt.Fprintf(&buf, "count: error: %v\n", err)
	} else {
		fmt.Fprintf(&buf, "count: total %+v max %+v rounds %d comm %d critmsgs %d critbytes %d\n",
			cnt.Total, cnt.Max, cnt.Rounds, cnt.CommRounds, cnt.CritMsgs, cnt.CritBytes)
	}

	ring, err := topology.NewTorus(size)
	if err != nil {
		t.Fatal(err)
	}
	for _, ports := range []sim.Ports{sim.SinglePort, sim.MultiPort} {
		cfg := sim.Config{Topology: ring, Alpha: 1e-6, Delta: 1e-9, Ports: ports}
		res, err := sim.StageModel(cfg, size, ap.ElemSize, gen)
		writeSim(&buf, fmt.Sprintf("stage ports=%s", ports), res, err)
		cfg.HopLatency = 0.1e-6 // the flow model's only: the stage model's golden results have none
		res, err = sim.FlowModel(sim.FlowConfig{Config: cfg}, size, ap.ElemSize, gen)
		writeSim(&buf, fmt.Sprintf("flow ports=%s", ports), res, err)
	}
	return buf.Bytes()
}

func writeSim(buf *bytes.Buffer, what string, res sim.Result, err error) {
	if err != nil {
		fmt.Fprintf(buf, "%s: error: %v\n", what, err)
		return
	}
	fmt.Fprintf(buf, "%s: time %.12g alpha %.12g delta %.12g congestion %.12g stages %d messages %d bytes %d\n",
		what, res.Time, res.AlphaCount, res.DeltaBytes, res.MaxCongestion, res.NumStages, res.Messages, res.Bytes)
}

// TestReplayGolden compares every registered algorithm's replay results
// with testdata/replay (a missing file fails too).
func TestReplayGolden(t *testing.T) {
	registrytest.Golden(t, filepath.Join("testdata", "replay"), replayResults)
}
