package workload

import (
	"bytes"
	"math"
	"math/bits"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/scoll/scoll/internal/golden"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/sim"
)

// On a crossbar nothing is congested, so the flow model equals the α-β
// closed forms exactly.
func TestFlowCrossbarClosedForms(t *testing.T) {
	const alpha, delta, n = 2e-6, 1e-9, 4096.0
	for _, P := range []int{2, 8, 64} {
		topo := mustTopo(t, "crossbar:"+itoaT(P))
		lg := float64(bits.Len(uint(P)) - 1)
		for _, tc := range []struct {
			coll schedule.Collective
			alg  string
			want float64
		}{
			{schedule.Allgather, "ring", float64(P-1) * (alpha + n*delta)},
			{schedule.Allgather, "recursive-doubling", lg*alpha + float64(P-1)*n*delta},
			{schedule.Bcast, "binomial", lg * (alpha + n*delta)},
		} {
			for _, ports := range []sim.Ports{sim.SinglePort, sim.MultiPort} {
				cfg := sim.FlowConfig{Config: sim.Config{Topology: topo, Alpha: alpha, Delta: delta, Ports: ports}}
				res, err := sim.FlowModel(cfg, P, 1, mustGen(t, Workload{Coll: tc.coll, Algorithm: tc.alg, Size: P, Bytes: int(n)}))
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(res.Time-tc.want) > 1e-9*tc.want {
					t.Errorf("P=%d %s/%s ports=%v: flow %.9g s, closed form %.9g s", P, tc.coll, tc.alg, ports, res.Time, tc.want)
				}
				if res.MaxCongestion != 1 {
					t.Errorf("P=%d %s/%s ports=%v: crossbar congestion %v, want 1", P, tc.coll, tc.alg, ports, res.MaxCongestion)
				}
				st, err := sim.StageModel(cfg.Config, P, 1, mustGen(t, Workload{Coll: tc.coll, Algorithm: tc.alg, Size: P, Bytes: int(n)}))
				if err != nil {
					t.Fatal(err)
				}
				if tc.coll == schedule.Allgather && math.Abs(st.Time-tc.want) > 1e-9*tc.want {
					t.Errorf("P=%d %s/%s: stage %.9g s, closed form %.9g s", P, tc.coll, tc.alg, st.Time, tc.want)
				}
			}
		}
	}
}

// Two flows sharing one link get half of it each: on a 4-node ring, ranks
// 0 and 1 both send to rank 2 (a fan-in over link 1→2).
func TestFlowMaxMinSharing(t *testing.T) {
	topo := mustTopo(t, "mesh:4")
	gen := func(b *schedule.Builder) {
		switch b.Rank() {
		case 0, 1:
			b.Send(2, schedule.SendBuf(0, 1000))
		case 2:
			b.Recv(0, schedule.RecvBuf(0, 1000))
			b.Recv(1, schedule.RecvBuf(1000, 1000))
		}
		b.EndRound()
	}
	res, err := sim.FlowModel(sim.FlowConfig{Config: sim.Config{Topology: topo, Delta: 1, Ports: sim.MultiPort}}, 4, 1, gen)
	if err != nil {
		t.Fatal(err)
	}
	if res.Time != 2000 || res.MaxCongestion != 2 {
		t.Fatalf("two 1000-byte flows over one link took %v with congestion %v, want 2000 and 2", res.Time, res.MaxCongestion)
	}
	// Single-port: rank 2 receives one at a time as well.
	res, err = sim.FlowModel(sim.FlowConfig{Config: sim.Config{Topology: topo, Delta: 1, Ports: sim.SinglePort}}, 4, 1, gen)
	if err != nil || res.Time != 2000 {
		t.Fatalf("single-port: %v, %v; want 2000", res.Time, err)
	}
}

// Properties over topologies and algorithms: more bandwidth is never
// slower, congestion is never below 1, and runs are deterministic.
func TestModelProperties(t *testing.T) {
	topos := []string{"torus:4x4x4", "mesh:4x4x4", "clos:R=16,T=4,mu=0.5", "hypercube:6", "dragonfly:g=5,a=4,p=4", "crossbar:64"}
	algs := []struct {
		coll schedule.Collective
		name string
	}{
		{schedule.Allgather, "ring"}, {schedule.Allgather, "bruck"}, {schedule.Allreduce, "rabenseifner"},
		{schedule.Bcast, "binomial"}, {schedule.Alltoall, "pairwise"}, {schedule.ReduceScatterBlock, "recursive-halving"},
	}
	for _, ts := range topos {
		topo := mustTopo(t, ts)
		P := min(topo.Nodes(), 64)
		for _, a := range algs {
			gen, err := Workload{Coll: a.coll, Algorithm: a.name, Size: P, Bytes: 3000}.Generator()
			if err != nil {
				t.Fatalf("%s %s/%s: %v", ts, a.coll, a.name, err)
			}
			for _, ports := range []sim.Ports{sim.SinglePort, sim.MultiPort} {
				base := sim.Config{Topology: topo, Alpha: 1e-6, Delta: 1e-9, Ports: ports, Stages: true}
				fast := base
				fast.Delta /= 2
				s1, err1 := sim.StageModel(base, P, 4, gen)
				s2, err2 := sim.StageModel(fast, P, 4, gen)
				f1, err3 := sim.FlowModel(sim.FlowConfig{Config: base}, P, 4, gen)
				f2, err4 := sim.FlowModel(sim.FlowConfig{Config: fast}, P, 4, gen)
				f3, err5 := sim.FlowModel(sim.FlowConfig{Config: base}, P, 4, gen)
				for _, err := range []error{err1, err2, err3, err4, err5} {
					if err != nil {
						t.Fatalf("%s %s/%s: %v", ts, a.coll, a.name, err)
					}
				}
				if s2.Time > s1.Time || f2.Time > f1.Time {
					t.Errorf("%s %s/%s ports=%v: more bandwidth slower: stage %g→%g, flow %g→%g", ts, a.coll, a.name, ports, s1.Time, s2.Time, f1.Time, f2.Time)
				}
				if f1.Time != f3.Time {
					t.Errorf("%s %s/%s: flow model not deterministic: %g vs %g", ts, a.coll, a.name, f1.Time, f3.Time)
				}
				for _, st := range s1.Stages {
					if st.Messages > 0 && st.MaxCongestion < 1 {
						t.Errorf("%s %s/%s: stage %d congestion %g < 1", ts, a.coll, a.name, st.Stage, st.MaxCongestion)
					}
				}
				if f1.Bytes > 0 && f1.MaxCongestion < 1 {
					t.Errorf("%s %s/%s: flow model congestion %g < 1", ts, a.coll, a.name, f1.MaxCongestion)
				}
				if f1.Messages != s1.Messages || f1.Bytes != s1.Bytes {
					t.Errorf("%s %s/%s: models count %d/%d messages, %d/%d bytes", ts, a.coll, a.name, s1.Messages, f1.Messages, s1.Bytes, f1.Bytes)
				}
			}
		}
	}
}

// TestStageTableGolden pins the per-stage table of recursive doubling on
// an 8×8×8 torus (go test ./workload -update rewrites it).
func TestStageTableGolden(t *testing.T) {
	for _, tc := range []struct{ file, topo, alg string }{
		{"rd_torus8x8x8.golden", "torus:8x8x8", "recursive-doubling"},
		{"rd_clos512.golden", "clos:R=32,T=16,mu=0.25", "recursive-doubling"},
		{"ring_torus4x4x4.golden", "torus:4x4x4", "ring"},
	} {
		topo := mustTopo(t, tc.topo)
		res, err := sim.StageModel(sim.Config{Topology: topo, Alpha: 6.29e-6, Delta: 1 / 375e6, Stages: true}, topo.Nodes(), 1,
			mustGen(t, Workload{Coll: schedule.Allgather, Algorithm: tc.alg, Size: topo.Nodes(), Bytes: 1024}))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := sim.WriteStageTable(&buf, res.Stages); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", "sim", tc.file), buf.Bytes())
	}
}

func TestConfigErrors(t *testing.T) {
	gen := mustGen(t, Workload{Coll: schedule.Allgather, Algorithm: "ring", Size: 8, Bytes: 8})
	for _, cfg := range []sim.Config{
		{},
		{Topology: mustTopo(t, "crossbar:4")},
		{Topology: mustTopo(t, "crossbar:8"), Alpha: -1},
		{Topology: mustTopo(t, "crossbar:8"), BusyPorts: 6},
		{Topology: mustTopo(t, "crossbar:8"), BusyPorts: 6, BusyEfficiency: 1.5},
	} {
		if _, err := sim.StageModel(cfg, 8, 1, gen); err == nil {
			t.Errorf("sim.StageModel accepted %+v", cfg)
		}
		if _, err := sim.FlowModel(sim.FlowConfig{Config: cfg}, 8, 1, gen); err == nil {
			t.Errorf("sim.FlowModel accepted %+v", cfg)
		}
	}
	if _, err := (Workload{Coll: schedule.Allgather, Algorithm: "nope", Size: 8}).Generator(); err == nil {
		t.Error("unknown algorithm accepted")
	}
	if _, err := (Workload{Coll: schedule.Allgather, Algorithm: "recursive-doubling", Size: 6}).Generator(); err == nil {
		t.Error("power-of-two algorithm accepted 6 ranks")
	}
}

func itoaT(i int) string { return strconv.Itoa(i) }

// The speed targets: recursive-doubling allgather on 32,768 ranks (a
// 32×32×32 torus) and ring allgather on 4,096 ranks, under both models.
// Run with go test ./sim -run X -bench Sim -benchtime 1x.
func BenchmarkSim(b *testing.B) {
	for _, tc := range []struct {
		name, topo, alg string
	}{
		{"rd-32k", "torus:32x32x32", "recursive-doubling"},
		{"ring-4k", "torus:16x16x16", "ring"},
	} {
		topo := mustTopo(b, tc.topo)
		P := topo.Nodes()
		gen := mustGen(b, Workload{Coll: schedule.Allgather, Algorithm: tc.alg, Size: P, Bytes: 1024})
		cfg := sim.Config{Topology: topo, Alpha: 6.29e-6, Delta: 1 / 375e6}
		b.Run(tc.name+"/stage", func(b *testing.B) {
			for range b.N {
				if _, err := sim.StageModel(cfg, P, 1, gen); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"/flow", func(b *testing.B) {
			for range b.N {
				if _, err := sim.FlowModel(sim.FlowConfig{Config: cfg}, P, 1, gen); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
