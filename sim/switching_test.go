package sim

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/topology"
)

func TestParseSwitching(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want Switching
		str  string
	}{
		{"", Switching{}, "cut-through"},
		{"cut-through", Switching{}, "cut-through"},
		{"Wormhole", Switching{}, "cut-through"},
		{"store-and-forward", Switching{Mode: StoreAndForward}, "store-and-forward"},
		{"saf", Switching{Mode: StoreAndForward}, "store-and-forward"},
		{"packet:4K", Switching{Mode: Packet, PacketSize: 4096}, "packet:4K"},
		{"packet:1000", Switching{Mode: Packet, PacketSize: 1000}, "packet:1000"},
		{"packet:2m", Switching{Mode: Packet, PacketSize: 2 << 20}, "packet:2M"},
		{"packet:1536", Switching{Mode: Packet, PacketSize: 1536}, "packet:1536"},
		{"packet:3G", Switching{Mode: Packet, PacketSize: 3 << 30}, "packet:3G"},
	} {
		got, err := ParseSwitching(tc.spec)
		if err != nil || got != tc.want || got.String() != tc.str {
			t.Errorf("ParseSwitching(%q) = %+v (%q), %v; want %+v (%q)", tc.spec, got, got, err, tc.want, tc.str)
		}
		if back, err := ParseSwitching(got.String()); err != nil || back != got {
			t.Errorf("ParseSwitching(%q) = %+v, %v; want %+v", got.String(), back, err, got)
		}
	}
	for _, bad := range []string{"packet", "packet:", "packet:0", "packet:-4", "packet:4X", "packet:9999999999G", "store", "circuit"} {
		if sw, err := ParseSwitching(bad); !errors.Is(err, ErrConfig) {
			t.Errorf("ParseSwitching(%q) = %+v, %v; want an ErrConfig", bad, sw, err)
		}
	}
	topo, err := topology.Parse("mesh:4")
	if err != nil {
		t.Fatal(err)
	}
	gen := oneMessage(0, 3, 8)
	for _, sw := range []Switching{{Mode: Packet}, {Mode: CutThrough, PacketSize: 8}, {Mode: Packet + 1}} {
		cfg := Config{Topology: topo, Switching: sw}
		if _, err := StageModel(cfg, 4, 1, gen); !errors.Is(err, ErrConfig) {
			t.Errorf("StageModel accepted switching %+v: %v", sw, err)
		}
		if _, err := FlowModel(FlowConfig{Config: cfg}, 4, 1, gen); !errors.Is(err, ErrConfig) {
			t.Errorf("FlowModel accepted switching %+v: %v", sw, err)
		}
	}
}

// oneMessage is the schedule in which rank src sends n bytes to rank dst.
func oneMessage(src, dst, n int) schedule.Generator {
	return func(b *schedule.Builder) {
		switch b.Rank() {
		case src:
			b.Send(dst, schedule.SendBuf(0, n))
		case dst:
			b.Recv(src, schedule.RecvBuf(0, n))
		default:
			return
		}
		b.EndRound()
	}
}

// closedForm is the time of one message of s bytes over d hops alone on
// the network (Heath and Solomonik's notes, sec. 4.2.2, and packet
// switching's pipeline).
func closedForm(sw Switching, alpha, beta, th float64, s int64, d int) float64 {
	D := float64(d)
	switch sw.Mode {
	case StoreAndForward:
		return (alpha + beta*float64(s)) * D
	case Packet:
		b := float64(sw.PacketSize)
		k := math.Ceil(float64(s) / b)
		return alpha + (D+k-1)*(th+beta*b)
	}
	return alpha + beta*float64(s) + th*D
}

// TestSwitchingClosedForms sends one message alone over D hops of a line
// (a 1-D mesh), a ring and a hypercube and checks that both models, with
// either node model, charge each switching mode's closed form.
func TestSwitchingClosedForms(t *testing.T) {
	const alpha, beta, th = 2e-6, 1e-9, 3e-7
	modes := []Switching{{}, {Mode: StoreAndForward}, {Mode: Packet, PacketSize: 4096}, {Mode: Packet, PacketSize: 1000}, {Mode: Packet, PacketSize: 1 << 20}}
	for _, tc := range []struct {
		spec     string
		src, dst int
		hops     int
	}{
		{"mesh:8", 0, 7, 7},
		{"mesh:8", 6, 2, 4},
		{"mesh:8", 3, 4, 1},
		{"torus:8", 1, 5, 4}, // half the ring: split over both ways
		{"hypercube:4", 0, 15, 4},
		{"hypercube:4", 5, 6, 2},
		{"hypercube:6", 0, 63, 6},
	} {
		topo, err := topology.Parse(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []int64{1, 4096, 10000, 1 << 20} {
			gen := oneMessage(tc.src, tc.dst, int(s))
			for _, sw := range modes {
				want := closedForm(sw, alpha, beta, th, s, tc.hops)
				for _, ports := range []Ports{SinglePort, MultiPort} {
					cfg := Config{Topology: topo, Alpha: alpha, Delta: beta, HopLatency: th, Switching: sw, Ports: ports}
					name := fmt.Sprintf("%s %d→%d, %d B, %s, ports %s", tc.spec, tc.src, tc.dst, s, sw, ports)
					st, err := StageModel(cfg, topo.Nodes(), 1, gen)
					if err != nil {
						t.Fatal(err)
					}
					fl, err := FlowModel(FlowConfig{Config: cfg}, topo.Nodes(), 1, gen)
					if err != nil {
						t.Fatal(err)
					}
					if !closeTo(st.Time, want) {
						t.Errorf("%s: stage model %.12g s, want %.12g", name, st.Time, want)
					}
					if !closeTo(fl.Time, want) {
						t.Errorf("%s: flow model %.12g s, want %.12g", name, fl.Time, want)
					}
				}
			}
		}
	}
}

func closeTo(got, want float64) bool { return math.Abs(got-want) <= 1e-12*max(math.Abs(want), 1e-9) }

// TestStoreAndForwardShares checks that the hops of a store-and-forward
// message are links of their own: two messages over the same line, one
// hop apart, share no link at any moment in either model (each takes its
// closed form) while under cut-through they share the middle link.
func TestStoreAndForwardShares(t *testing.T) {
	topo, err := topology.Parse("mesh:4")
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	// Rank 0 sends to 3 and rank 1 to 2, together: under cut-through both
	// cross link 1→2 at the same time (half rate each); store-and-forward
	// moves 0's message over 0→1 while 1's crosses 1→2, then 0's takes
	// 1→2 as 1's ends, so neither waits.
	gen := func(b *schedule.Builder) {
		switch b.Rank() {
		case 0:
			b.Send(3, schedule.SendBuf(0, n))
		case 1:
			b.Send(2, schedule.SendBuf(0, n))
		case 2:
			b.Recv(1, schedule.RecvBuf(0, n))
		case 3:
			b.Recv(0, schedule.RecvBuf(0, n))
		}
		b.EndRound()
	}
	cfg := FlowConfig{Config: Config{Topology: topo, Alpha: 0, Delta: 1, Ports: MultiPort}}
	ct, err := FlowModel(cfg, 4, 1, gen)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Switching = Switching{Mode: StoreAndForward}
	saf, err := FlowModel(cfg, 4, 1, gen)
	if err != nil {
		t.Fatal(err)
	}
	if !closeTo(ct.Time, 2*n) || !closeTo(saf.Time, 3*n) || ct.MaxCongestion != 2 || saf.MaxCongestion != 1 {
		t.Errorf("flow model: cut-through %g s (congestion %g), store-and-forward %g s (congestion %g); want %d (2) and %d (1)",
			ct.Time, ct.MaxCongestion, saf.Time, saf.MaxCongestion, 2*n, 3*n)
	}
	ct, err = StageModel(Config{Topology: topo, Delta: 1, Ports: MultiPort}, 4, 1, gen)
	if err != nil {
		t.Fatal(err)
	}
	saf, err = StageModel(cfg.Config, 4, 1, gen)
	if err != nil {
		t.Fatal(err)
	}
	if !closeTo(ct.Time, 2*n) || !closeTo(saf.Time, 3*n) || ct.MaxCongestion != 2 || saf.MaxCongestion != 1 {
		t.Errorf("stage model: cut-through %g s (congestion %g), store-and-forward %g s (congestion %g); want %d (2) and %d (1)",
			ct.Time, ct.MaxCongestion, saf.Time, saf.MaxCongestion, 2*n, 3*n)
	}
}
