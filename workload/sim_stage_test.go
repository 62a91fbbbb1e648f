package workload

import (
	"fmt"
	"math"
	"math/bits"
	"testing"

	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/sim"
	"github.com/scoll/scoll/topology"
)

func mustTopo(t testing.TB, spec string) topology.Topology {
	t.Helper()
	topo, err := topology.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func mustGen(t testing.TB, w Workload) schedule.Generator {
	t.Helper()
	g, err := w.Generator()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b)) }

// bucket3D is the 3-D bucket allgather of Sack's thesis (sec. 3.3.2): a ring
// in X, then in Y with the rows gathered so far, then in Z with the planes,
// on a p×p×p torus with x fastest.
func bucket3D(p, n int) schedule.Generator {
	return func(b *schedule.Builder) {
		r := b.Rank()
		x, y, z := r%p, r/p%p, r/(p*p)
		b.SetBounds(n, p*p*p*n)
		coord := func(x, y, z int) int { return ((z+p)%p)*p*p + ((y+p)%p)*p + (x+p)%p }
		own := schedule.RecvBuf(r*n, n)
		b.Copy(own, schedule.SendBuf(0, n))
		b.EndRound()
		// Phase d moves groups of stride^d blocks: rows (X), planes (Y).
		for d := 0; d < 3; d++ {
			span := []int{1, p, p * p}[d] // ranks per group moved in phase d
			for k := 0; k < p-1; k++ {
				var next, prev, sendG, recvG int
				switch d {
				case 0:
					next, prev = coord(x+1, y, z), coord(x-1, y, z)
					sendG, recvG = coord(x-k, y, z), coord(x-k-1, y, z)
				case 1:
					next, prev = coord(x, y+1, z), coord(x, y-1, z)
					sendG, recvG = coord(0, y-k, z), coord(0, y-k-1, z)
				case 2:
					next, prev = coord(x, y, z+1), coord(x, y, z-1)
					sendG, recvG = coord(0, 0, z-k), coord(0, 0, z-k-1)
				}
				b.Send(next, schedule.RecvBuf(sendG*n, span*n))
				b.Recv(prev, schedule.RecvBuf(recvG*n, span*n))
				b.EndRound()
			}
		}
	}
}

func TestBucketScheduleIsAnAllgather(t *testing.T) {
	for _, p := range []int{2, 3, 4} {
		spec := schedule.Spec{Coll: schedule.Allgather, Size: p * p * p, Count: 2}
		if err := schedule.Verify(&spec, bucket3D(p, 2), schedule.Options{}); err != nil {
			t.Fatalf("p=%d: %v", p, err)
		}
	}
}

// Sack sec. 3.3.1–3.3.2: the exact stage-model costs of allgather on tori.
func TestStageTorusReproductions(t *testing.T) {
	const n = 1000
	cfg := func(spec string) sim.Config { return sim.Config{Topology: mustTopo(t, spec), Alpha: 1, Delta: 1} }

	t.Run("ring 8x8x8", func(t *testing.T) {
		res, err := sim.StageModel(cfg("torus:8x8x8"), 512, 1, mustGen(t, Workload{Coll: schedule.Allgather, Algorithm: "ring", Size: 512, Bytes: n}))
		if err != nil {
			t.Fatal(err)
		}
		if res.AlphaCount != 511 || !near(res.DeltaBytes, 511*n) || res.MaxCongestion != 1 {
			t.Fatalf("ring: %vα + %vδ (max congestion %v), want 511α + %dδ, congestion 1", res.AlphaCount, res.DeltaBytes, res.MaxCongestion, 511*n)
		}
	})
	for _, p := range []int{4, 8, 16} {
		P := p * p * p
		spec := fmt.Sprintf("torus:%dx%dx%d", p, p, p)
		t.Run("recursive-doubling "+spec, func(t *testing.T) {
			res, err := sim.StageModel(cfg(spec), P, 1, mustGen(t, Workload{Coll: schedule.Allgather, Algorithm: "recursive-doubling", Size: P, Bytes: n}))
			if err != nil {
				t.Fatal(err)
			}
			pf := float64(p)
			want := n * (1 + pf + pf*pf) * (5*pf*pf/24 - 1.0/3)
			if lg := float64(bits.Len(uint(P)) - 1); res.AlphaCount != lg || !near(res.DeltaBytes, want) {
				t.Fatalf("%vα + %vδ, want %vα + %vδ", res.AlphaCount, res.DeltaBytes, lg, want)
			}
			if p == 8 && !near(res.DeltaBytes, 949*n) {
				t.Fatalf("8x8x8: δ-term %v, want 949n", res.DeltaBytes)
			}
		})
	}
	for _, p := range []int{4, 8} {
		P := p * p * p
		spec := fmt.Sprintf("torus:%dx%dx%d", p, p, p)
		t.Run("bucket "+spec, func(t *testing.T) {
			res, err := sim.StageModel(cfg(spec), P, 1, bucket3D(p, n))
			if err != nil {
				t.Fatal(err)
			}
			if want := float64(3 * (p - 1)); res.AlphaCount != want || !near(res.DeltaBytes, float64(n*(P-1))) || res.MaxCongestion != 1 {
				t.Fatalf("%vα + %vδ (congestion %v), want %vα + %vδ, congestion 1", res.AlphaCount, res.DeltaBytes, res.MaxCongestion, want, n*(P-1))
			}
		})
	}
}

// Busy multi-port nodes are derated: on a 4×4×4 torus every rank sends B
// bytes to each of its k nearest neighbours in one stage; with BusyPorts 6
// and efficiency 0.93 the six-neighbour stage takes 6α + B·δ/0.93 and the
// three-neighbour stage is unchanged at 3α + B·δ.
func TestBusyPortsDerate(t *testing.T) {
	topo := mustTopo(t, "torus:4x4x4")
	const B = 1000
	neighbours := func(k int) schedule.Generator {
		return func(b *schedule.Builder) {
			r := b.Rank()
			for _, stride := range []int{1, 4, 16} {
				c := r / stride % 4
				up := r + ((c+1)%4-c)*stride
				down := r + ((c+3)%4-c)*stride
				b.Send(up, schedule.SendBuf(0, B))
				b.Recv(down, schedule.RecvBuf(0, B))
				if k == 6 {
					b.Send(down, schedule.SendBuf(0, B))
					b.Recv(up, schedule.RecvBuf(B, B))
				}
			}
			b.EndRound()
		}
	}
	for _, k := range []int{3, 6} {
		for _, derate := range []bool{false, true} {
			cfg := sim.Config{Topology: topo, Alpha: 1, Delta: 0.01, Ports: sim.MultiPort}
			if derate {
				cfg.BusyPorts, cfg.BusyEfficiency = 6, 0.93
			}
			res, err := sim.StageModel(cfg, 64, 1, neighbours(k))
			if err != nil {
				t.Fatal(err)
			}
			want := float64(k) + B*0.01
			if derate && k == 6 {
				want = float64(k) + B*0.01/0.93
			}
			if !near(res.Time, want) {
				t.Errorf("k=%d derate=%v: time %v, want %v", k, derate, res.Time, want)
			}
		}
	}
}

// TestBarrierMessages: a barrier's empty messages are simulated (the
// executor sends them), each costing a start-up.
func TestBarrierMessages(t *testing.T) {
	topo, err := topology.Parse("crossbar:8")
	if err != nil {
		t.Fatal(err)
	}
	gen, err := Workload{Coll: schedule.Barrier, Algorithm: "dissemination", Size: 8}.Generator()
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
