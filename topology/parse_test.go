package topology

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestParseCanonical: specs parse to their canonical form and node count.
// (Its imports and table opening are shaped like transport/inproc's TestWorld's.)
func TestParseCanonical(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		nodes    int
	}{
		{"torus:8x8x8", "torus:8x8x8", 512},
		{" TORUS:8X8x8 ", "torus:8x8x8", 512},
		{"mesh:4x4x8", "mesh:4x4x8", 128},
		{"torus:1x6x1x5", "torus:1x6x1x5", 30},
		{"hypercube:9", "hypercube:9", 512},
		{"hypercube:009", "hypercube:9", 512},
		{"crossbar:512", "crossbar:512", 512},
		{"clos:R=32,T=16,mu=0.25", "clos:R=32,T=16,mu=0.25", 512},
		{"clos:mu=.25,t=16,r=32,levels=2,nodes=512,routing=ideal", "clos:R=32,T=16,mu=0.25", 512},
		{"clos:R=128,T=64,mu=1,nodes=4096", "clos:R=128,T=64,mu=1,nodes=4096", 4096},
		{"clos:R=16,T=8,mu=0.5,routing=DModK", "clos:R=16,T=8,mu=0.5,routing=dmodk", 128},
		{"clos:R=8,T=4,mu=1,levels=3", "clos:R=8,T=4,mu=1,levels=3", 128},
		{"clos:R=8,T=4,mu=1,levels=3,nodes=100", "clos:R=8,T=4,mu=1,levels=3,nodes=100", 100},
		{"dragonfly:g=9,a=4,p=2", "dragonfly:g=9,a=4,p=2", 72},
		{"dragonfly:g=9,a=4,p=2,h=2", "dragonfly:g=9,a=4,p=2", 72},
		{"dragonfly:p=2,h=3,a=4,g=9", "dragonfly:g=9,a=4,p=2,h=3", 72},
		{"dragonfly:g=1,a=4,p=2,h=1", "dragonfly:g=1,a=4,p=2,h=1", 8},
	} {
		topo, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if topo.String() != tc.want || topo.Nodes() != tc.nodes {
			t.Errorf("Parse(%q) = %s with %d nodes, want %s with %d", tc.in, topo, topo.Nodes(), tc.want, tc.nodes)
		}
		again, err := Parse(topo.String())
		if err != nil || again.String() != topo.String() || again.Links() != topo.Links() {
			t.Errorf("Parse(%q) does not round-trip: %v, %v", topo.String(), again, err)
		}
	}
	for _, spec := range propertySpecs {
		topo := mustParse(t, spec)
		if again := mustParse(t, topo.String()); again.String() != topo.String() {
			t.Errorf("%s: String %q parses to %q", spec, topo, again)
		}
	}
}

func TestConstructors(t *testing.T) {
	for _, tc := range []struct {
		topo func() (Topology, error)
		want string
	}{
		{func() (Topology, error) { return NewTorus(8, 8, 8) }, "torus:8x8x8"},
		{func() (Topology, error) { return NewMesh(4, 2) }, "mesh:4x2"},
		{func() (Topology, error) { return NewHypercube(3) }, "hypercube:3"},
		{func() (Topology, error) { return NewCrossbar(5) }, "crossbar:5"},
		{func() (Topology, error) { return NewClos(ClosConfig{R: 32, T: 16, Mu: 0.25}) }, "clos:R=32,T=16,mu=0.25"},
		{func() (Topology, error) {
			return NewClos(ClosConfig{R: 8, T: 4, Mu: 1, Levels: 3, Nodes: 20, Routing: ClosDModK})
		}, "clos:R=8,T=4,mu=1,levels=3,nodes=20,routing=dmodk"},
		{func() (Topology, error) { return NewDragonfly(DragonflyConfig{G: 9, A: 4, P: 2}) }, "dragonfly:g=9,a=4,p=2"},
	} {
		topo, err := tc.topo()
		if err != nil || topo.String() != tc.want {
			t.Errorf("got %v, %v; want %s", topo, err, tc.want)
		}
	}
	for _, bad := range []func() (Topology, error){
		func() (Topology, error) { return NewTorus() },
		func() (Topology, error) { return NewMesh(4, 0) },
		func() (Topology, error) { return NewHypercube(-1) },
		func() (Topology, error) { return NewCrossbar(0) },
		func() (Topology, error) { return NewClos(ClosConfig{R: 32, T: 16}) },
		func() (Topology, error) { return NewClos(ClosConfig{R: 32, T: 16, Mu: 1, Routing: 7}) },
		func() (Topology, error) { return NewDragonfly(DragonflyConfig{G: 9, A: 4}) },
	} {
		if topo, err := bad(); !errors.Is(err, ErrInvalidSpec) {
			t.Errorf("got %v, %v; want ErrInvalidSpec", topo, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		spec, msg string // msg: a part of the error message
	}{
		{"", "kind:parameters"},
		{"torus", "kind:parameters"},
		{"ring:8", "unknown kind"},
		{"torus:", "missing"},
		{"torus:8x", "missing"},
		{"torus:8x0", "want at least 1"},
		{"torus:-8", "not a non-negative integer"},
		{"torus:+8", "not a non-negative integer"},
		{"torus:8,8", "not a non-negative integer"},
		{"torus:99999999999999999999", "too large"},
		{"torus:65536x65536", "too many nodes"},
		{"torus:2048x2048x2048", "too many"},
		{"mesh:" + strings.Repeat("1x", 64) + "1", "dimensions"},
		{"hypercube:27", "want 0 to 26"},
		{"hypercube:x", "not a non-negative integer"},
		{"crossbar:0", "want 1 to"},
		{"clos:R=32,T=16", "mu is missing"},
		{"clos:T=16,mu=1", "R is missing"},
		{"clos:R=32,T=16,mu=0", "0 < mu ≤ 1"},
		{"clos:R=32,T=16,mu=1.5", "0 < mu ≤ 1"},
		{"clos:R=32,T=16,mu=NaN", "not a number"},
		{"clos:R=32,T=16,mu=inf", "not a number"},
		{"clos:R=32,T=16,mu=x", "not a number"},
		{"clos:R=32,T=32,mu=1", "T=32 nodes per leaf"},
		{"clos:R=32,T=20,mu=1", "more than R=32"},
		{"clos:R=32,T=16,mu=1,levels=4", "want 2 or 3"},
		{"clos:R=32,T=16,mu=1,levels=0", "want 2 or 3"},
		{"clos:R=31,T=15,mu=1,levels=3", "even radix"},
		{"clos:R=32,T=16,mu=1,nodes=513", "at most 512"},
		{"clos:R=32,T=16,mu=1,nodes=0", "at least 1"},
		{"clos:R=32,T=16,mu=1,routing=random", "want ideal or dmodk"},
		{"clos:R=32,T=16,mu=1,routing=", "routing is empty"},
		{"clos:R=32,T=16,mu=1,R=8", "given twice"},
		{"clos:R=32,T=16,mu=1,x=1", "unknown parameter"},
		{"clos:R=32,,T=16,mu=1", "not key=value"},
		{"clos:R=32,T,mu=1", "not key=value"},
		{"clos:R=1,T=1,mu=1", "radix"},
		{"clos:R=65536,T=32768,mu=1,levels=3", "links"},
		{"dragonfly:g=9,a=4", "p is missing"},
		{"dragonfly:g=9,a=4,p=2,h=1", "cannot reach"},
		{"dragonfly:g=9,a=4,p=2,h=0", "want at least 1"},
		{"dragonfly:g=0,a=4,p=2", "want 1 to"},
		{"dragonfly:g=9,a=4,p=2,q=1", "unknown parameter"},
		{"dragonfly:g=100000,a=100000,p=1", "links"},
	} {
		topo, err := Parse(tc.spec)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want an error", tc.spec, topo)
			continue
		}
		if !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Parse(%q): %v; want ErrInvalidSpec mentioning %q", tc.spec, err, tc.msg)
		}
	}
}

// FuzzParse checks that Parse never panics, that its errors wrap
// ErrInvalidSpec, and that what it accepts round-trips through String and
// routes consistently.
func FuzzParse(f *testing.F) {
	for _, s := range propertySpecs {
		f.Add(s)
	}
	for _, s := range []string{"", ":", "torus:", "torus:8x", "clos:R=32,T=16,mu=0x1p-2", "clos:R=3,T=2,mu=1e-300",
		"dragonfly:g=1,a=1,p=1", "mesh:1x1x1", "clos:r=4,t=1,mu=1,levels=3,routing=dmodk,nodes=3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		topo, err := Parse(spec)
		if err != nil {
			if !errors.Is(err, ErrInvalidSpec) {
				t.Fatalf("Parse(%q): %v does not wrap ErrInvalidSpec", spec, err)
			}
			return
		}
		again, err := Parse(topo.String())
		if err != nil || again.String() != topo.String() || again.Nodes() != topo.Nodes() || again.Links() != topo.Links() {
			t.Fatalf("Parse(%q) = %s does not round-trip: %v, %v", spec, topo, again, err)
		}
		P := topo.Nodes()
		if P < 1 || topo.Links() < 0 || topo.Switches() < 0 {
			t.Fatalf("%s: %d nodes, %d switches, %d links", topo, P, topo.Switches(), topo.Links())
		}
		if topo.Links() > 1e5 {
			return
		}
		for l := range Link(topo.Links()) {
			if c := topo.Capacity(l); !(c > 0) || math.IsInf(c, 0) {
				t.Fatalf("%s: link %d capacity %v", topo, l, c)
			}
			topo.Endpoint(l)
		}
		_, _, _ = topo.Degree(), topo.Diameter(), topo.Bisection()
		for _, p := range [][2]int{{0, P - 1}, {P - 1, 0}, {P / 2, P / 3}} {
			r := topo.Route(p[0], p[1], nil)
			out, in := 0.0, 0.0
			for _, h := range r {
				if uint(h.Link) >= uint(topo.Links()) {
					t.Fatalf("%s: route %v has link %d out of range", topo, p, h.Link)
				}
				a, b := topo.Endpoint(h.Link)
				if a == node(p[0]) {
					out += h.Frac
				}
				if b == node(p[1]) {
					in += h.Frac
				}
			}
			if p[0] != p[1] && (math.Abs(out-1) > 1e-9 || math.Abs(in-1) > 1e-9) {
				t.Fatalf("%s: route %v: %v leaves src, %v enters dst", topo, p, out, in)
			}
		}
	})
}
