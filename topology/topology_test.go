package topology

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// propertySpecs are the topologies every property test runs on: small and
// odd sizes, size-1 and size-2 dimensions, partial leaf switches, tapered
// and bundled Clos links, dragonflies with several cables per pair of
// groups and with unused global ports.
var propertySpecs = []string{
	"torus:1", "torus:2", "torus:3", "torus:7", "torus:8",
	"torus:2x2", "torus:4x4", "torus:3x4", "torus:2x3x4", "torus:4x1x4", "torus:1x6x1x5",
	"torus:8x8x8", "torus:6x4x2",
	"mesh:1", "mesh:2", "mesh:5", "mesh:8", "mesh:4x4", "mesh:3x5", "mesh:2x2x2",
	"mesh:1x3x2", "mesh:4x4x8",
	"hypercube:0", "hypercube:1", "hypercube:4", "hypercube:7",
	"crossbar:1", "crossbar:2", "crossbar:17",
	"clos:R=4,T=2,mu=1", "clos:R=8,T=4,mu=0.5", "clos:R=16,T=8,mu=0.5",
	"clos:R=8,T=4,mu=0.75,nodes=13", "clos:R=8,T=3,mu=0.3", "clos:R=6,T=3,mu=0.5",
	"clos:R=8,T=4,mu=1,routing=dmodk", "clos:R=6,T=3,mu=0.5,nodes=11,routing=dmodk",
	"clos:R=4,T=1,mu=1,nodes=1", "clos:R=4,T=2,mu=1,nodes=2",
	"clos:R=4,T=2,mu=1,levels=3", "clos:R=6,T=2,mu=0.5,levels=3,nodes=20",
	"clos:R=8,T=4,mu=0.5,levels=3,routing=dmodk", "clos:R=8,T=3,mu=1,levels=3,nodes=50",
	"dragonfly:g=9,a=4,p=2", "dragonfly:g=2,a=2,p=1,h=1", "dragonfly:g=3,a=2,p=2,h=3",
	"dragonfly:g=1,a=3,p=2", "dragonfly:g=1,a=1,p=3", "dragonfly:g=5,a=1,p=1,h=4",
	"dragonfly:g=4,a=3,p=1,h=2", "dragonfly:g=6,a=4,p=2,h=3", "dragonfly:g=3,a=3,p=1,h=4",
}

func mustParse(tb testing.TB, spec string) Topology {
	tb.Helper()
	t, err := Parse(spec)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

// pairs returns all node pairs of small topologies and a seeded sample of
// large ones.
func pairs(t Topology, rng *rand.Rand) [][2]int {
	P := t.Nodes()
	var out [][2]int
	if P <= 40 {
		for s := range P {
			for d := range P {
				out = append(out, [2]int{s, d})
			}
		}
		return out
	}
	for range 400 {
		out = append(out, [2]int{rng.IntN(P), rng.IntN(P)})
	}
	return append(out, [2]int{0, P - 1}, [2]int{P - 1, 0}, [2]int{3, 3})
}

// TestLinkGraph checks the links: endpoints in range, no loops, every link
// with a reverse of the same capacity (full duplex), positive capacities,
// node links of capacity 1 and Degree the largest out-degree.
func TestLinkGraph(t *testing.T) {
	for _, spec := range propertySpecs {
		topo := mustParse(t, spec)
		g := newGraph(t, topo)
		type pair struct{ a, b int }
		dup := map[pair][]float64{}
		for l := range g.from {
			c := topo.Capacity(Link(l))
			if !(c > 0) {
				t.Errorf("%s: link %d capacity %v", spec, l, c)
			}
			if (g.from[l] < topo.Nodes() || g.to[l] < topo.Nodes()) && topo.Switches() > 0 && c != 1 {
				t.Errorf("%s: node link %d capacity %v, want 1", spec, l, c)
			}
			dup[pair{g.from[l], g.to[l]}] = append(dup[pair{g.from[l], g.to[l]}], c)
		}
		for p, cs := range dup {
			rev := dup[pair{p.b, p.a}]
			slices.Sort(cs)
			slices.Sort(rev)
			if !slices.Equal(cs, rev) {
				t.Errorf("%s: links %d→%d have capacities %v, reverse %v", spec, p.a, p.b, cs, rev)
			}
		}
		deg := 0
		for v := range g.out {
			deg = max(deg, len(g.out[v]))
		}
		if topo.Degree() != deg {
			t.Errorf("%s: Degree %d, largest out-degree %d", spec, topo.Degree(), deg)
		}
		// Nodes of indirect networks hang off exactly one switch.
		if topo.Switches() > 0 {
			for n := range topo.Nodes() {
				if len(g.out[n]) != 1 || g.to[g.out[n][0]] < topo.Nodes() {
					t.Errorf("%s: node %d has links %v, want one to a switch", spec, n, g.out[n])
				}
			}
		}
	}
}

// TestRouteProperties checks every route: fractions in (0, 1], no link
// twice, flow conservation (1 leaves src, 1 enters dst, every other vertex
// passes on what it gets), and, following the hops from src, every path
// reaches dst without revisiting a vertex and is as long as the shortest
// path of the link graph (for a dragonfly: the shortest with at most one
// global link, which is what minimal routing means there). It also checks
// that Diameter is the longest path found for exhaustively checked sizes.
func TestRouteProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, spec := range propertySpecs {
		t.Run(spec, func(t *testing.T) {
			topo := mustParse(t, spec)
			g := newGraph(t, topo)
			_, oneGlobal := topo.(*dragonfly)
			dists := map[int][]int{}
			var buf []Hop
			longest := 0
			exhaustive := topo.Nodes() <= 40
			net := make([]float64, g.n)
			for _, p := range pairs(topo, rng) {
				src, dst := p[0], p[1]
				buf = topo.Route(src, dst, buf)
				if src == dst {
					if len(buf) != 0 {
						t.Fatalf("route %d→%d: %v, want empty", src, dst, buf)
					}
					continue
				}
				d, ok := dists[src]
				if !ok {
					d = g.dist(src, oneGlobal)
					dists[src] = d
				}
				clear(net)
				seen := map[Link]bool{}
				for _, h := range buf {
					if !(h.Frac > 0 && h.Frac <= 1+1e-12) {
						t.Fatalf("route %d→%d: hop %v has fraction %v", src, dst, h.Link, h.Frac)
					}
					if seen[h.Link] {
						t.Fatalf("route %d→%d: link %d twice in %v", src, dst, h.Link, buf)
					}
					seen[h.Link] = true
					net[g.from[h.Link]] -= h.Frac
					net[g.to[h.Link]] += h.Frac
				}
				for v, x := range net {
					want := 0.0
					switch v {
					case src:
						want = -1
					case dst:
						want = 1
					}
					if math.Abs(x-want) > 1e-9 {
						t.Fatalf("route %d→%d: net flow %v into vertex %d, want %v; route %v", src, dst, x, v, want, buf)
					}
				}
				n := walkPaths(t, g, buf, src, dst, d[dst])
				longest = max(longest, n)
			}
			if exhaustive && topo.Nodes() > 1 && longest != topo.Diameter() {
				t.Errorf("Diameter %d, longest route %d", topo.Diameter(), longest)
			}
			if topo.Nodes() == 1 && topo.Diameter() != 0 {
				t.Errorf("Diameter %d of a single node, want 0", topo.Diameter())
			}
		})
	}
}

// walkPaths follows the hops of a route from src depth first and checks
// that every path ends at dst after exactly want hops without revisiting a
// vertex. It returns want.
func walkPaths(t *testing.T, g *graph, route []Hop, src, dst, want int) int {
	t.Helper()
	out := map[int][]Link{}
	for _, h := range route {
		out[g.from[h.Link]] = append(out[g.from[h.Link]], h.Link)
	}
	onPath := map[int]bool{}
	paths := 0
	var walk func(v, depth int)
	walk = func(v, depth int) {
		if v == dst {
			if depth != want {
				t.Fatalf("route %d→%d: a path of %d hops, shortest is %d; route %v", src, dst, depth, want, route)
			}
			paths++
			return
		}
		if len(out[v]) == 0 {
			t.Fatalf("route %d→%d: a path stops at vertex %d; route %v", src, dst, v, route)
		}
		if onPath[v] {
			t.Fatalf("route %d→%d: a path revisits vertex %d; route %v", src, dst, v, route)
		}
		onPath[v] = true
		for _, l := range out[v] {
			walk(g.to[l], depth+1)
		}
		onPath[v] = false
	}
	walk(src, 0)
	if paths == 0 {
		t.Fatalf("route %d→%d: no path", src, dst)
	}
	return want
}

// coords returns the grid coordinates of node n, x first.
func coords(dims []int, n int) []int {
	c := make([]int, len(dims))
	for i, k := range dims {
		c[i] = n % k
		n /= k
	}
	return c
}

// TestDimensionOrder checks that grid routes correct dimension 0 first,
// then 1, and so on, each hop changing one coordinate by ±1 (mod k).
func TestDimensionOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, spec := range []string{"torus:8x8x8", "torus:2x3x4", "torus:1x6x1x5", "mesh:4x4x8", "mesh:1x3x2", "hypercube:7"} {
		topo := mustParse(t, spec).(Grid)
		dims := topo.Dims()
		var buf []Hop
		for _, p := range pairs(topo, rng) {
			buf = topo.Route(p[0], p[1], buf)
			last := -1
			for _, h := range buf {
				a, b := topo.Endpoint(h.Link)
				ca, cb := coords(dims, a.Index), coords(dims, b.Index)
				dim := -1
				for i := range dims {
					if ca[i] != cb[i] {
						if dim >= 0 {
							t.Fatalf("%s: hop %v changes two coordinates", spec, h)
						}
						dim = i
					}
				}
				if dim < last {
					t.Fatalf("%s: route %d→%d goes back to dimension %d after %d: %v", spec, p[0], p[1], dim, last, buf)
				}
				last = dim
			}
		}
	}
}

// TestHalfRingSplits checks the split of a displacement of half a ring.
func TestHalfRingSplits(t *testing.T) {
	for _, tc := range []struct {
		spec      string
		src, dst  int
		hops      int     // links in the route
		frac      float64 // fraction on every link
		wantLinks int     // links with fraction 1 (0.5 ones are the rest)
	}{
		{"torus:8", 0, 4, 8, 0.5, 0},
		{"torus:8", 6, 2, 8, 0.5, 0},
		{"torus:2", 0, 1, 2, 0.5, 0},
		{"torus:2", 1, 0, 2, 0.5, 0},
		{"torus:4x4", 0, 2 + 2*4, 8, 0.5, 0}, // (0,0)→(2,2): both dimensions split
		{"torus:2x2x2", 0, 7, 6, 0.5, 0},
		{"torus:8", 0, 3, 3, 1, 3},
		{"torus:7", 0, 3, 3, 1, 3}, // odd ring: no half
		{"torus:7", 0, 4, 3, 1, 3},
	} {
		topo := mustParse(t, tc.spec)
		r := topo.Route(tc.src, tc.dst, nil)
		if len(r) != tc.hops {
			t.Errorf("%s %d→%d: %d hops %v, want %d", tc.spec, tc.src, tc.dst, len(r), r, tc.hops)
		}
		for _, h := range r {
			if h.Frac != tc.frac {
				t.Errorf("%s %d→%d: hop %v, want fraction %v", tc.spec, tc.src, tc.dst, h, tc.frac)
			}
		}
	}
	// A split X is followed by one Y segment shared by both halves: 4
	// links at 0.5 then 1 link at 1.
	topo := mustParse(t, "torus:4x4")
	r := topo.Route(0, 2+1*4, nil)
	var fr []float64
	for _, h := range r {
		fr = append(fr, h.Frac)
	}
	if !slices.Equal(fr, []float64{0.5, 0.5, 0.5, 0.5, 1}) {
		t.Errorf("torus:4x4 0→(2,1): fractions %v, want [0.5 0.5 0.5 0.5 1]", fr)
	}
	// Size 2: the two halves take the two parallel cables.
	topo = mustParse(t, "torus:2")
	r = topo.Route(0, 1, nil)
	if r[0].Link == r[1].Link {
		t.Errorf("torus:2 0→1 uses link %d twice", r[0].Link)
	}
	for _, h := range r {
		if a, b := topo.Endpoint(h.Link); a != node(0) || b != node(1) {
			t.Errorf("torus:2 0→1: hop %v goes %v→%v", h, a, b)
		}
	}
}

// TestHypercubeECube checks that bits are corrected lowest first.
func TestHypercubeECube(t *testing.T) {
	topo := mustParse(t, "hypercube:6")
	for src := range 64 {
		for dst := range 64 {
			r := topo.Route(src, dst, nil)
			cur, last := src, -1
			for _, h := range r {
				a, b := topo.Endpoint(h.Link)
				bit := a.Index ^ b.Index
				if a.Index != cur || bit&(bit-1) != 0 || bit <= last {
					t.Fatalf("%d→%d: route %v is not e-cube", src, dst, r)
				}
				cur, last = b.Index, bit
			}
		}
	}
}

// TestClosRoutes checks the fractions of ideal routing and the uplink that
// D-mod-k chooses.
func TestClosRoutes(t *testing.T) {
	topo := mustParse(t, "clos:R=32,T=16,mu=0.25").(*clos)
	if topo.k1 != 4 || topo.Capacity(Link(topo.base1)) != 1 || topo.Nodes() != 512 {
		t.Fatalf("R=32,T=16,mu=0.25: %d uplinks of capacity %v, %d nodes; want 4 of 1, 512", topo.k1, topo.Capacity(Link(topo.base1)), topo.Nodes())
	}
	r := topo.Route(0, 100, nil)
	if len(r) != 2+2*4 {
		t.Fatalf("0→100: %v, want 10 hops", r)
	}
	for _, h := range r[1 : len(r)-1] {
		if h.Frac != 0.25 {
			t.Fatalf("0→100: hop %v, want fraction 1/4", h)
		}
	}
	if r := topo.Route(0, 15, nil); len(r) != 2 {
		t.Fatalf("0→15 (same leaf): %v, want 2 hops", r)
	}
	// Bundled capacity: μT = 1.5 over 2 links of 0.75.
	b := mustParse(t, "clos:R=6,T=3,mu=0.5").(*clos)
	if b.k1 != 2 || b.Capacity(Link(b.base1)) != 0.75 {
		t.Fatalf("R=6,T=3,mu=0.5: %d uplinks of %v, want 2 of 0.75", b.k1, b.Capacity(Link(b.base1)))
	}

	for _, spec := range []string{"clos:R=16,T=8,mu=1,routing=dmodk", "clos:R=8,T=4,mu=0.5,levels=3,routing=dmodk"} {
		d := mustParse(t, spec).(*clos)
		g := newGraph(t, d)
		for src := range d.Nodes() {
			for dst := range d.Nodes() {
				r := d.Route(src, dst, nil)
				if src/d.cfg.T == dst/d.cfg.T {
					continue
				}
				for _, h := range r {
					if h.Frac != 1 {
						t.Fatalf("%s %d→%d: hop %v split", spec, src, dst, h)
					}
				}
				// Hop 1 is the leaf uplink: to spine/aggregation j = dst mod k1.
				up := g.to[r[1].Link] - d.Nodes() - d.l
				if j := up % d.k1; j != dst%d.k1 {
					t.Fatalf("%s %d→%d: leaf uplink %d, want dst mod %d = %d", spec, src, dst, j, d.k1, dst%d.k1)
				}
				if d.cfg.Levels == 3 && src/d.cfg.T/d.h != dst/d.cfg.T/d.h {
					core := g.to[r[2].Link] - d.Nodes() - d.l - d.pods*d.k1
					if want := dst%d.k1*d.h + dst/d.k1%d.h; core != want {
						t.Fatalf("%s %d→%d: core switch %d, want %d", spec, src, dst, core, want)
					}
				}
			}
		}
	}
}

// TestClosRecursiveDoublingLoads reproduces the congestion behind Sack's
// closed form (thesis sec. 3.3.1) with the links' loads: in recursive
// doubling on a Clos network with T nodes per leaf (a power of two) and
// taper μ, a stage whose partners share a leaf switch has congestion 1 and
// one whose partners do not has 1/μ, so the δ term is n{(T−1) + (P−T)/μ}.
func TestClosRecursiveDoublingLoads(t *testing.T) {
	for _, spec := range []string{
		"clos:R=32,T=16,mu=0.25",
		"clos:R=16,T=8,mu=0.5",
		"clos:R=16,T=8,mu=0.5,routing=dmodk",
		"clos:R=8,T=4,mu=0.5,levels=3",
		"clos:R=8,T=4,mu=1",
	} {
		topo := mustParse(t, spec)
		T, mu := topo.(*clos).cfg.T, topo.(*clos).cfg.Mu
		P := topo.Nodes()
		load := make([]float64, topo.Links())
		var buf []Hop
		total := 0.0
		for dist := 1; dist < P; dist *= 2 {
			clear(load)
			for i := range P {
				buf = topo.Route(i, i^dist, buf)
				for _, h := range buf {
					load[h.Link] += h.Frac
				}
			}
			c := 0.0
			for l, x := range load {
				c = max(c, x/topo.Capacity(Link(l)))
			}
			want := 1.0
			if dist >= T {
				want = 1 / mu
			}
			if math.Abs(c-want) > 1e-9 {
				t.Errorf("%s distance %d: congestion %v, want %v", spec, dist, c, want)
			}
			total += c * float64(dist) // message size n·dist, n = 1
		}
		want := float64(T-1) + float64(P-T)/mu
		if math.Abs(total-want) > 1e-6 {
			t.Errorf("%s: δ term %v·n, want %v·n", spec, total, want)
		}
	}
}

// TestDragonflyArrangement checks that every pair of groups is joined by m
// global cables, that routers hold h ports each, and the default h.
func TestDragonflyArrangement(t *testing.T) {
	for _, tc := range []struct {
		spec       string
		h, m, used int // per router ports, cables per group pair, used ports per group
	}{
		{"dragonfly:g=9,a=4,p=2", 2, 1, 8},
		{"dragonfly:g=5,a=4,p=2", 1, 1, 4},
		{"dragonfly:g=6,a=4,p=2,h=3", 3, 2, 10},
		{"dragonfly:g=3,a=2,p=2,h=3", 3, 3, 6},
	} {
		d := mustParse(t, tc.spec).(*dragonfly)
		if d.h != tc.h || d.m != tc.m {
			t.Errorf("%s: h=%d m=%d, want h=%d m=%d", tc.spec, d.h, d.m, tc.h, tc.m)
		}
		cables := map[[2]int]int{}
		perRouter := map[int]int{}
		for l := d.baseG; l < d.links; l++ {
			a, b := d.Endpoint(Link(l))
			ga, gb := a.Index/d.a, b.Index/d.a
			if ga == gb {
				t.Fatalf("%s: global link %d inside group %d", tc.spec, l, ga)
			}
			cables[[2]int{ga, gb}]++
			perRouter[a.Index]++
		}
		for ga := range d.g {
			for gb := range d.g {
				if ga != gb && cables[[2]int{ga, gb}] != tc.m {
					t.Errorf("%s: %d cables %d→%d, want %d", tc.spec, cables[[2]int{ga, gb}], ga, gb, tc.m)
				}
			}
		}
		for r, n := range perRouter {
			if n > d.h {
				t.Errorf("%s: router %d has %d global links, more than h=%d", tc.spec, r, n, d.h)
			}
		}
		if got := (d.links - d.baseG) / d.g; got != tc.used {
			t.Errorf("%s: %d global ports used per group, want %d", tc.spec, got, tc.used)
		}
	}
	// g=9,a=4,h=2: group 0's port q goes to group q+1 from router q/2.
	d := mustParse(t, "dragonfly:g=9,a=4,p=2").(*dragonfly)
	src, dst := 0, 8*d.a*d.p // router 0 of group 0 → router 0 of group 8 (port 7 on router 3; in group 8 port 0 on router 0)
	r := d.Route(src, dst, nil)
	want := []Link{0, d.local(0, 0, 3), Link(d.baseG + 7), Link(2*dst + 1)}
	var got []Link
	for _, h := range r {
		got = append(got, h.Link)
	}
	if !slices.Equal(got, want) {
		t.Errorf("g=9 route %d→%d: links %v, want %v", src, dst, got, want)
	}
}

// TestTable2 checks degree, diameter and bisection against Table 2 of the
// Heath–Solomonik notes: n-D mesh 2n, n(k−1), k^(n−1); n-D torus 2n, nk/2,
// 2k^(n−1); hypercube k, k, 2^(k−1).
func TestTable2(t *testing.T) {
	type props struct {
		deg, dia int
		bis      float64
	}
	check := func(spec string, want props) {
		t.Helper()
		topo := mustParse(t, spec)
		got := props{topo.Degree(), topo.Diameter(), topo.Bisection()}
		if got != want {
			t.Errorf("%s: degree, diameter, bisection = %v, want %v", spec, got, want)
		}
	}
	pow := func(k, n int) int {
		r := 1
		for range n {
			r *= k
		}
		return r
	}
	for n := 1; n <= 4; n++ {
		for _, k := range []int{4, 6, 8, 16} {
			if pow(k, n) > 1<<16 {
				continue
			}
			dims := make([]int, n)
			for i := range dims {
				dims[i] = k
			}
			s := joinInts(dims, "x")
			check("torus:"+s, props{2 * n, n * k / 2, float64(2 * pow(k, n-1))})
			check("mesh:"+s, props{2 * n, n * (k - 1), float64(pow(k, n-1))})
		}
		check("mesh:"+joinInts([]int{3, 3, 3, 3}[:n], "x"), props{2 * n, 2 * n, float64(pow(3, n-1))})
	}
	for k := 0; k <= 12; k++ {
		check(fmt.Sprintf("hypercube:%d", k), props{k, k, float64(pow(2, k-1) * min(k, 1))})
	}
	// Our definitions beyond Table 2 (see the method docs).
	for _, tc := range []struct {
		spec string
		want props
	}{
		{"torus:2", props{2, 1, 2}},                            // two parallel cables
		{"mesh:2", props{1, 1, 1}},                             // one cable
		{"mesh:2x2x2", props{3, 3, 4}},                         // = hypercube:3
		{"torus:4x8", props{4, 6, 8}},                          // cut across the 8s
		{"mesh:4x4x8", props{6, 13, 16}},                       // cut across the 8s
		{"torus:1x8", props{2, 4, 2}},                          // size-1 dimensions have no links
		{"torus:1", props{0, 0, 0}},                            // a single node
		{"crossbar:512", props{512, 2, 256}},                   // switch ports, node-switch-node
		{"clos:R=32,T=16,mu=0.25", props{32, 4, 64}},           // spine: 32 leaves; μP/2
		{"clos:R=64,T=32,mu=1", props{64, 4, 1024}},            // full 2-level fat tree
		{"clos:R=8,T=4,mu=1,levels=3", props{8, 6, 64}},        // 3-level k-ary fat tree, k=8: 128 nodes
		{"clos:R=32,T=16,mu=0.25,nodes=16", props{20, 2, 8}},   // one leaf
		{"dragonfly:g=9,a=4,p=2", props{7, 5, 20}},             // p+a−1+h; 4·5 cables
		{"dragonfly:g=2,a=2,p=1,h=1", props{3, 4, 2}},          // both routers are gateways
		{"dragonfly:g=1,a=4,p=2", props{5, 3, 4}},              // one group: a clique
		{"dragonfly:g=33,a=16,p=8,h=2", props{25, 5, 16 * 17}}, // Cray-like
	} {
		check(tc.spec, tc.want)
	}
}

// TestBisectionExhaustive compares Bisection with a minimal balanced cut
// found by exhaustion on small instances.
func TestBisectionExhaustive(t *testing.T) {
	for _, spec := range []string{
		"torus:4x4", "torus:2x4", "torus:2x2x2", "torus:6", "torus:3x4", "torus:2",
		"mesh:4x4", "mesh:3x4", "mesh:2x2x2x2", "mesh:6", "mesh:1x4x2",
		"hypercube:4", "hypercube:1",
		"crossbar:7", "crossbar:8",
		"clos:R=4,T=2,mu=1", "clos:R=8,T=4,mu=0.5", "clos:R=6,T=3,mu=0.5",
		"clos:R=8,T=4,mu=0.5,nodes=16", "clos:R=4,T=2,mu=1,nodes=2", "clos:R=8,T=3,mu=0.3",
		"clos:R=4,T=2,mu=1,levels=3,nodes=8", "clos:R=4,T=2,mu=0.5,levels=3",
		"clos:R=6,T=2,mu=0.5,levels=3,nodes=24",
		"dragonfly:g=2,a=2,p=1,h=1", "dragonfly:g=4,a=3,p=1,h=1", "dragonfly:g=1,a=4,p=2",
		"dragonfly:g=2,a=4,p=2,h=2", "dragonfly:g=1,a=1,p=5", "dragonfly:g=4,a=4,p=1,h=1",
		// Not dragonfly:g=4,a=2,p=2,h=2, whose minimal cut (3) goes through
		// groups; see dragonfly.Bisection.
	} {
		topo := mustParse(t, spec)
		g := newGraph(t, topo)
		if got, want := topo.Bisection(), bruteBisection(t, g); math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: Bisection %v, exhaustive minimum %v", spec, got, want)
		}
	}
}

// TestRoutePanics checks that out-of-range nodes panic with a message.
func TestRoutePanics(t *testing.T) {
	for _, spec := range []string{"torus:4", "clos:R=4,T=2,mu=1", "dragonfly:g=2,a=2,p=1,h=1", "hypercube:2", "crossbar:3"} {
		topo := mustParse(t, spec)
		for _, p := range [][2]int{{-1, 0}, {0, topo.Nodes()}} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s: Route(%d, %d) did not panic", spec, p[0], p[1])
					}
				}()
				topo.Route(p[0], p[1], nil)
			}()
		}
	}
}

// TestRouteReusesBuffer checks that Route appends to buf[:0] and does not
// allocate when buf is large enough.
func TestRouteReusesBuffer(t *testing.T) {
	for _, spec := range []string{"torus:8x8x8", "mesh:4x4x8", "clos:R=32,T=16,mu=0.25", "clos:R=8,T=4,mu=0.5,levels=3", "dragonfly:g=6,a=4,p=2,h=3", "hypercube:9", "crossbar:64"} {
		topo := mustParse(t, spec)
		buf := make([]Hop, 5, 4096)
		buf[0] = Hop{Link: 12345, Frac: 7}
		P := topo.Nodes()
		r := topo.Route(1, P-1, buf)
		if &r[0] != &buf[0] || (len(r) > 0 && r[0].Frac == 7) {
			t.Errorf("%s: Route did not overwrite buf from index 0", spec)
		}
		allocs := testing.AllocsPerRun(100, func() {
			for s := 0; s < P; s += 1 + P/16 {
				buf = topo.Route(s, P-1-s, buf)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per run with a reused buffer", spec, allocs)
		}
	}
}

// TestDivmod checks the division by multiplication that grid routing uses
// against the / and % operators.
func TestDivmod(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	ns := []uint32{0, 1, 2, 3, math.MaxInt32 - 1, math.MaxInt32, math.MaxUint32 - 1, math.MaxUint32}
	for range 2000 {
		ns = append(ns, rng.Uint32())
	}
	for _, k := range []int{2, 3, 5, 7, 8, 31, 32, 33, 1000, 65535, 1 << 16, 1<<30 + 7, math.MaxInt32} {
		d := gdim{k: k, magic: ^uint64(0)/uint64(k) + 1}
		for _, n := range ns {
			if q, r := d.divmod(n); q != n/uint32(k) || r != n%uint32(k) {
				t.Fatalf("divmod(%d) by %d = %d, %d; want %d, %d", n, k, q, r, n/uint32(k), n%uint32(k))
			}
		}
	}
}

// TestEveryKindIsChecked: every kind Parse knows has specs in the route
// property tests (the checklist for a new topology in docs/architecture.md).
func TestEveryKindIsChecked(t *testing.T) {
	for _, k := range Kinds() {
		found := false
		for _, s := range propertySpecs {
			if strings.HasPrefix(s, k+":") {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("kind %s has no spec in propertySpecs", k)
		}
		if _, err := Parse(k + ":"); err == nil || strings.Contains(err.Error(), "unknown kind") {
			t.Errorf("Parse does not know kind %s: %v", k, err)
		}
	}
}
