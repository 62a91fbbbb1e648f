package model_test

import (
	"errors"
	"math"
	"testing"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/model"
	"github.com/scoll/scoll/schedule"
)

// TestCriticalPathHand evaluates handSchedule by hand.
func TestCriticalPathHand(t *testing.T) {
	g := handSchedule
	p := model.Params{Alpha: 1, Beta: 10, Gamma: 100, L: 1000, O: 100, GPerByte: 1}
	c, err := model.CriticalPath(2, 8, g, p)
	if err != nil {
		t.Fatal(err)
	}
	// α-β-γ: round 0 of both ranks starts at 0; A completes at 1 + 320, B at
	// 1 + 160. Rank 0 then copies (160): 481; rank 1 reduces (3200): 3521.
	// C leaves rank 1 at 3521 and arrives at 3521 + 1 + 160 = 3682 (rank 0
	// waits from 481); rank 0 combines it (1600): 5282.
	// LogGP: both ranks send at 0 (CPU busy until o = 100); A and B arrive
	// at o + L = 1100 and take their receivers' CPU for o + (B−1)·G: rank 1
	// has A at 1231, then reduces (3200) until 4431 and sends C, which
	// arrives at 5531; rank 0 has it at 5531 + 100 + 15 = 5646 and combines
	// it (1600): 7246. The copy is free.
	if want := (model.Critical{AlphaBetaGamma: 5282, LogGP: 7246}); !near(c.AlphaBetaGamma, want.AlphaBetaGamma) || !near(c.LogGP, want.LogGP) {
		t.Errorf("CriticalPath = %+v, want %+v", c, want)
	}
}

// TestCriticalPathPorts checks that a port carries its round's messages one
// after the other, in posting order.
func TestCriticalPathPorts(t *testing.T) {
	p := model.Params{Alpha: 1, Beta: 0.5, L: 10, O: 1, G: 3, GPerByte: 0.5}
	// Linear broadcast of 4 bytes on 5 ranks: the root's 4 sends end at
	// 4·(1 + 2); the last leaf gets its message then.
	c, err := model.CriticalPath(5, 4, gen(t, schedule.Bcast, "linear", 5, 1), p)
	if err != nil {
		t.Fatal(err)
	}
	// LogGP: the root's sends start g + (4−1)·G = 4.5 apart, the last at
	// 13.5; it arrives o + L later and takes the leaf's CPU for o + 3·G:
	// 13.5 + 11 + 2.5 = 27.
	if !near(c.AlphaBetaGamma, 12) || !near(c.LogGP, 27) {
		t.Errorf("linear bcast: %+v, want α-β-γ 12, LogGP 27", c)
	}
}

// TestCriticalPathMatchesRegisteredCost checks the α, β and γ terms one at a
// time (the others zero), β with the copies the schedules do (which the
// registered costs mostly leave out; see the package documentation).
func TestCriticalPathMatchesRegisteredCost(t *testing.T) {
	sweepExact(t, true, func(t *testing.T, coll schedule.Collective, name string, P, cnt int, cost algorithms.Cost) {
		g := gen(t, coll, name, P, cnt)
		cnts := count(t, coll, name, P, cnt)
		for _, tc := range []struct {
			p    model.Params
			want float64
		}{
			{model.Params{Alpha: 1}, cost.Alpha},
			{model.Params{Beta: 1}, cost.Beta + float64(cnts.CritCopied)},
			{model.Params{Gamma: 1}, cost.Gamma},
		} {
			c, err := model.CriticalPath(P, 4, g, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if !near(c.AlphaBetaGamma, tc.want) {
				t.Errorf("P=%d count=%d %+v: critical path %g, registered %g", P, cnt, tc.p, c.AlphaBetaGamma, tc.want)
			}
		}
	})
}

// TestCriticalPathChains checks the two cases the round-synchronous view
// gets wrong.
func TestCriticalPathChains(t *testing.T) {
	p := model.Params{Alpha: 1, Beta: 1e-3}
	// A chain pipeline of S = 4 full 64 KiB segments on P ranks takes
	// P + S − 2 steps of α + 65536β, as registered.
	in, _ := algorithms.Lookup(schedule.Bcast, "pipeline")
	for _, P := range []int{2, 3, 8, 17} {
		ap := algorithms.Params{Spec: schedule.Spec{Coll: schedule.Bcast, Size: P, Count: 4 * 16384}, ElemSize: 4}
		c, err := model.CriticalPath(P, 4, gen(t, schedule.Bcast, "pipeline", P, 4*16384), p)
		if err != nil {
			t.Fatal(err)
		}
		want := float64(P+4-2) * (1 + 65.536)
		if reg := in.Cost(&ap).Time(p.Alpha, p.Beta, 0); !near(c.AlphaBetaGamma, want) || !near(reg, want) {
			t.Errorf("pipeline P=%d: critical path %g, registered %g, want %g", P, c.AlphaBetaGamma, reg, want)
		}
	}
	// The two-tree broadcast with full segments on a power of two ranks.
	tt, _ := algorithms.Lookup(schedule.Bcast, "two-tree")
	for _, P := range []int{2, 4, 8, 16} {
		cnt := 6 * 16384 // 3 segments a tree
		ap := algorithms.Params{Spec: schedule.Spec{Coll: schedule.Bcast, Size: P, Count: cnt}, ElemSize: 4}
		c, err := model.CriticalPath(P, 4, gen(t, schedule.Bcast, "two-tree", P, cnt), p)
		if err != nil {
			t.Fatal(err)
		}
		if reg := tt.Cost(&ap).Time(p.Alpha, p.Beta, 0); !near(c.AlphaBetaGamma, reg) {
			t.Errorf("two-tree P=%d: critical path %g, registered %g", P, c.AlphaBetaGamma, reg)
		}
	}
	// A ring allreduce of 2 elements on 64 ranks: 62 blocks are empty, yet
	// each of the other two passes 63 hops twice, one after the other.
	g := gen(t, schedule.Allreduce, "ring", 64, 2)
	c, err := model.CriticalPath(64, 4, g, model.Params{Alpha: 1})
	if err != nil {
		t.Fatal(err)
	}
	cnt, _ := model.Count(64, 4, g)
	if c.AlphaBetaGamma != 126 || cnt.CritMsgs >= 126 {
		t.Errorf("sparse ring: critical path %g start-ups (want 126), round-synchronous %d", c.AlphaBetaGamma, cnt.CritMsgs)
	}
}

// TestCriticalPathArrivals starts the ranks of a two-rank exchange at
// different times: each message completes only when both ends have posted
// it, so a late rank delays the early one, and zero arrivals give
// CriticalPath's result.
func TestCriticalPathArrivals(t *testing.T) {
	g := func(b *schedule.Builder) {
		peer := 1 - b.Rank()
		b.Send(peer, schedule.SendBuf(0, 1)) // 8 B
		b.Recv(peer, schedule.RecvBuf(0, 1))
		b.EndRound()
		if b.Rank() == 0 {
			b.Send(1, schedule.SendBuf(0, 1))
		} else {
			b.Recv(0, schedule.RecvBuf(0, 1))
		}
		b.EndRound()
	}
	p := model.Params{Alpha: 1, Beta: 0.5, L: 1, O: 1, G: 1, GPerByte: 0}
	base, err := model.CriticalPath(2, 8, g, p)
	if err != nil {
		t.Fatal(err)
	}
	same, err := model.CriticalPathArrivals(2, 8, g, p, []float64{0, 0})
	if err != nil || same != base {
		t.Fatalf("zero arrivals: %+v, %v; CriticalPath gives %+v", same, err, base)
	}
	// α-β-γ: a message costs 1 + 0.5·8 = 5. Rank 1 arrives at 100: the
	// exchange ends at 105 on both, the second message at 110.
	late, err := model.CriticalPathArrivals(2, 8, g, p, []float64{0, 100})
	if err != nil {
		t.Fatal(err)
	}
	if late.AlphaBetaGamma != 110 {
		t.Errorf("α-β-γ with rank 1 at 100: %g, want 110", late.AlphaBetaGamma)
	}
	// LogGP: a message costs L + 2o = 3.
	if late.LogGP != 106 {
		t.Errorf("LogGP with rank 1 at 100: %g, want 106", late.LogGP)
	}
	for _, bad := range [][]float64{{0}, {0, -1}, {0, math.Inf(1)}, {math.NaN(), 0}} {
		if _, err := model.CriticalPathArrivals(2, 8, g, p, bad); !errors.Is(err, model.ErrArgument) {
			t.Errorf("arrivals %v: %v, want ErrArgument", bad, err)
		}
	}
}

// nativeCopies lists the native paths whose stand-in schedules copy on the
// critical path more than the round-synchronous count sees (Counts.CritCopied),
// so that only their α and γ terms are exact: the chain scatter packs the
// blocks it forwards on every rank that forwards.
var nativeCopies = map[string]bool{"scatter/chain": true}

// TestNativeCosts checks that every native path's registered cost is what
// the critical path charges for its stand-in schedule (the schedule the
// simulators replay): each is in exact with an exact critical path, or in
// nativeCopies and exact in α and γ.
func TestNativeCosts(t *testing.T) {
	listed := map[string]bool{}
	for _, x := range exact {
		if x.critical == always {
			listed[x.coll.String()+"/"+x.name] = true
		}
	}
	for c := range schedule.NumCollectives {
		for _, in := range algorithms.List(c) {
			name := c.String() + "/" + in.Name
			if in.Path == algorithms.Messages || listed[name] {
				continue
			}
			if !nativeCopies[name] {
				t.Errorf("%s: a native path whose cost is not checked against its stand-in (add it to exact)", name)
				continue
			}
			for _, P := range []int{1, 2, 3, 5, 8, 13, 16, 33} {
				for _, root := range []int{0, P / 2, P - 1} {
					ap := algorithms.Params{Spec: schedule.Spec{Coll: c, Size: P, Count: 48, Root: root}, Commutative: true, ElemSize: 4}
					cost := in.Cost(&ap)
					for _, tc := range []struct {
						p    model.Params
						want float64
					}{{model.Params{Alpha: 1}, cost.Alpha}, {model.Params{Gamma: 1}, cost.Gamma}} {
						got, err := model.CriticalPath(P, 4, in.Generator(ap), tc.p)
						if err != nil {
							t.Fatal(err)
						}
						if !near(got.AlphaBetaGamma, tc.want) {
							t.Errorf("%s P=%d root=%d %+v: critical path %g, registered %g", name, P, root, tc.p, got.AlphaBetaGamma, tc.want)
						}
					}
				}
			}
		}
	}
}
