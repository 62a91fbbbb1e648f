package sim

import (
	"fmt"
	"math/bits"
	"testing"

	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/topology"
)

// ringExchange: every rank sends to r+1 and r−1 (mod P) in one round, the
// ring of Fig. 5.
func ringExchange(b *schedule.Builder) {
	p, r := b.Size(), b.Rank()
	for _, peer := range []int{(r + 1) % p, (r + p - 1) % p} {
		b.Send(peer, schedule.SendBuf(0, 1))
		b.Recv(peer, schedule.RecvBuf(0, 1))
	}
	b.EndRound()
}

// butterflyThenGather: lg P rounds of exchanges across bit s (P a power of
// two), then a round in which every rank sends twice to rank 0: a stage
// with multiplicity and a fan-in.
func butterflyThenGather(b *schedule.Builder) {
	p, r := b.Size(), b.Rank()
	for s := range bits.Len(uint(p)) - 1 {
		b.Send(r^1<<s, schedule.SendBuf(0, 1))
		b.Recv(r^1<<s, schedule.RecvBuf(0, 1))
		b.EndRound()
	}
	for range 2 {
		if r != 0 {
			b.Send(0, schedule.SendBuf(0, 1))
		} else {
			for q := 1; q < p; q++ {
				b.Recv(q, schedule.RecvBuf(0, 1))
			}
		}
	}
	b.EndRound()
}

func mapping(t *testing.T, topo topology.Topology, spec string, ranks int) topology.Mapping {
	t.Helper()
	m, err := topology.ParseMapping(spec, topo, ranks)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestEmbedRingFig5: a ring exchange on a 2-D mesh (ring mapping) and a
// hypercube (gray mapping) has dilation 1, congestion 1 and one stage of
// congestion 1; placed in XYZ order it stretches.
func TestEmbedRingFig5(t *testing.T) {
	for _, c := range []struct {
		topo, mapping string
		dilation      int
		congestion    float64
	}{
		{"mesh:4x4", "ring", 1, 1},
		{"mesh:6x3", "ring", 1, 1},
		{"hypercube:5", "gray", 1, 1},
		{"mesh:4x4", "xyz", 6, 2},
		{"mesh:5x5", "ring", 2, 2}, // the jump (1,3)→(0,4) shares the link (0,3)→(0,4) with a ring edge
	} {
		topo, err := topology.Parse(c.topo)
		if err != nil {
			t.Fatal(err)
		}
		n := topo.Nodes()
		res, err := Embed(Config{Topology: topo, Mapping: mapping(t, topo, c.mapping, n)}, n, ringExchange)
		if err != nil {
			t.Fatal(err)
		}
		g := res.Graph
		if g.Load != 1 || g.Dilation != c.dilation || g.Congestion != c.congestion || g.Edges != 2*n || res.Messages != int64(2*n) ||
			len(res.StageCongestion) != 1 || res.MaxStageCongestion != c.congestion {
			t.Errorf("%s %s: %+v, want dilation %d, congestion %g", c.topo, c.mapping, res, c.dilation, c.congestion)
		}
	}
}

// TestEmbedStageCongestionMatchesStageModel: stage by stage, the congestion
// Embed counts is the stage model's MaxCongestion (floored at 1 where the
// stage has messages), on split routes (torus halves), fan-ins, repeated
// messages and every mapping.
func TestEmbedStageCongestionMatchesStageModel(t *testing.T) {
	for _, spec := range []string{"torus:4x4", "mesh:4x4", "hypercube:4", "torus:8x2", "clos:R=8,T=4,mu=0.5"} {
		topo, err := topology.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, ms := range []string{"xyz", "gray", "ring", "random:3"} {
			if _, ok := topo.(topology.Grid); !ok && (ms == "gray" || ms == "ring") {
				continue
			}
			for gi, gen := range []schedule.Generator{ringExchange, butterflyThenGather} {
				name := fmt.Sprintf("%s %s gen %d", spec, ms, gi)
				cfg := Config{Topology: topo, Mapping: mapping(t, topo, ms, 16), Stages: true}
				emb, err := Embed(cfg, 16, gen)
				if err != nil {
					t.Fatal(err)
				}
				st, err := StageModel(cfg, 16, 1, gen)
				if err != nil {
					t.Fatal(err)
				}
				if len(st.Stages) != len(emb.StageCongestion) {
					t.Fatalf("%s: %d stages, the stage model %d", name, len(emb.StageCongestion), len(st.Stages))
				}
				for s, ss := range st.Stages {
					want := 0.0
					if ss.Messages > 0 {
						want = max(1, emb.StageCongestion[s])
					}
					if ss.MaxCongestion != want {
						t.Errorf("%s stage %d: congestion %g (floored %g), the stage model %g", name, s, emb.StageCongestion[s], want, ss.MaxCongestion)
					}
				}
				if max(1, emb.MaxStageCongestion) != st.MaxCongestion {
					t.Errorf("%s: max stage congestion %g, the stage model %g", name, emb.MaxStageCongestion, st.MaxCongestion)
				}
			}
		}
	}
}

// TestEmbedCountsOnce: the graph counts a pair once, a stage every message.
func TestEmbedCountsOnce(t *testing.T) {
	topo, err := topology.Parse("mesh:16")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Embed(Config{Topology: topo}, 16, butterflyThenGather)
	if err != nil {
		t.Fatal(err)
	}
	// The gather round: 15 ranks send twice to rank 0 over the link 1→0;
	// the graph has each pair r→0 once (those of ranks 1, 2, 4 and 8 are
	// butterfly edges too).
	edges := map[[2]int]bool{}
	for r := range 16 {
		for s := range 4 {
			edges[[2]int{r, r ^ 1<<s}] = true
		}
		if r > 0 {
			edges[[2]int{r, 0}] = true
		}
	}
	// The naive reference: on a line, the link i+1→i carries the edges
	// a→b with b ≤ i < a, the link i→i+1 those with a ≤ i < b.
	naive := 0
	for i := range 15 {
		down, up := 0, 0
		for e := range edges {
			if e[1] <= i && i < e[0] {
				down++
			}
			if e[0] <= i && i < e[1] {
				up++
			}
		}
		naive = max(naive, down, up)
	}
	if last := res.StageCongestion[len(res.StageCongestion)-1]; last != 30 || res.Graph.Congestion != float64(naive) {
		t.Errorf("gather stage congestion %g (want 30), graph congestion %g (want %d)", last, res.Graph.Congestion, naive)
	}
	if res.Messages != 4*16+30 || res.Graph.Edges != len(edges) {
		t.Errorf("messages %d (want 94), edges %d (want %d)", res.Messages, res.Graph.Edges, len(edges))
	}
	if _, err := Embed(Config{}, 2, ringExchange); err == nil {
		t.Error("no topology: no error")
	}
}
