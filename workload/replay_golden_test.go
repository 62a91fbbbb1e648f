package workload

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/model"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/sim"
	"github.com/scoll/scoll/topology"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// The users of the schedule replay (the verifier, the stage and flow
// simulators, the critical-path model) are pinned on every registered
// algorithm: testdata/replay/<coll>-<name>.txt holds what each of them
// says about the algorithm's schedules at a small size. A change to the
// replay that changes any result shows here; rerun with -update only for
// a deliberate change, and review the diff.

// replayCase is the call the golden results of algorithm in are taken
// from: the first of P = 5, 4, 6, 8 it takes, 3 elements per block, the
// last rank as root, counts 1, 2, 3, 1, 2, ... for the vector
// collectives.
func replayCase(in *algorithms.Info) (algorithms.Params, bool) {
	for _, p := range []int{5, 4, 6, 8} {
		spec := schedule.Spec{Coll: in.Coll, Size: p, Count: 3}
		if in.Coll.Rooted() {
			spec.Root = p - 1
		}
		if in.Coll == schedule.Barrier {
			spec.Count = 0
		}
		if in.Coll.Vector() {
			spec.Count = 0
			if in.Coll == schedule.Alltoallv {
				spec.Matrix = make([][]int, p)
				for i := range spec.Matrix {
					spec.Matrix[i] = make([]int, p)
					for j := range p {
						spec.Matrix[i][j] = (i+2*j)%4 + i%2
					}
				}
			} else {
				spec.Counts = make([]int, p)
				for i := range spec.Counts {
					spec.Counts[i] = i%3 + 1
				}
			}
		}
		ap := algorithms.Params{Spec: spec, Commutative: true, ElemSize: 4}
		if spec.Check() == nil && in.Check(&ap) == nil {
			return ap, true
		}
	}
	return algorithms.Params{}, false
}

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
		res, err = sim.FlowModel(sim.FlowConfig{Config: cfg, HopLatency: 0.1e-6}, size, ap.ElemSize, gen)
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
	dir := filepath.Join("testdata", "replay")
	seen := map[string]bool{}
	for c := range schedule.NumCollectives {
		for _, in := range algorithms.List(c) {
			ap, ok := replayCase(in)
			if !ok {
				t.Errorf("%s/%s takes none of the golden calls", c, in.Name)
				continue
			}
			name := fmt.Sprintf("%s-%s.txt", c, in.Name)
			seen[name] = true
			t.Run(name, func(t *testing.T) {
				got := replayResults(t, in, ap)
				path := filepath.Join(dir, name)
				if *update {
					if err := os.MkdirAll(dir, 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (go test -run ReplayGolden -update creates it)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs:\nwant:\n%s\ngot:\n%s", path, want, got)
				}
			})
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			if *update {
				os.Remove(f)
				continue
			}
			t.Errorf("%s pins no registered algorithm (go test -run ReplayGolden -update removes it)", f)
		}
	}
}
