package topology

import (
	"fmt"
	"math/bits"
	"strings"
	"testing"
)

// gridDistance is the naive reference for route lengths on a torus or
// mesh: the sum over dimensions of the coordinate distance (the shorter
// way round on a torus).
func gridDistance(dims []int, torus bool, a, b int) int {
	d := 0
	for _, k := range dims {
		x, y := a%k, b%k
		a, b = a/k, b/k
		s := max(x-y, y-x)
		if torus {
			s = min(s, k-s)
		}
		d += s
	}
	return d
}

func mustEmbed(t *testing.T, topo Topology, m Mapping, ranks int, edges []Pair) Embedding {
	t.Helper()
	e, err := Embed(topo, m, ranks, edges)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestFig5Rings: the ring cases of Fig. 5 of the Heath–Solomonik notes. A
// ring of P ranks embeds with load 1, dilation 1 and congestion 1 in a 2-D
// mesh (ring mapping, one side even) and in a hypercube (gray mapping),
// where the identity placement stretches the ring.
func TestFig5Rings(t *testing.T) {
	for _, c := range []struct {
		topo, mapping string
		dilation      int
		congestion    float64
	}{
		{"mesh:4x4", "ring", 1, 1},
		{"mesh:8x8", "ring", 1, 1},
		{"mesh:6x5", "ring", 1, 1},
		{"mesh:5x6", "ring", 1, 1},
		{"mesh:2x9", "ring", 1, 1},
		{"hypercube:3", "gray", 1, 1},
		{"hypercube:6", "gray", 1, 1},
		{"hypercube:6", "ring", 1, 1},
		{"mesh:4x4", "xyz", 6, 2},    // closing pair (3,3)→(0,0)
		{"hypercube:6", "xyz", 6, 2}, // 63→0 flips every bit
		{"mesh:4x4", "gray", 3, 2},   // a Hamiltonian path: the closing pair (0,3)→(0,0)
	} {
		topo := mustParse(t, c.topo)
		m, err := ParseMapping(c.mapping, topo, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !isPermutation(m, topo.Nodes()) {
			t.Fatalf("%s %s: not a permutation", c.topo, c.mapping)
		}
		e := mustEmbed(t, topo, m, topo.Nodes(), RingPairs(topo.Nodes()))
		if e.Load != 1 || e.Dilation != c.dilation || e.Congestion != c.congestion || e.Edges != 2*topo.Nodes() {
			t.Errorf("ring on %s by %s: %+v, want load 1, dilation %d, congestion %g", c.topo, c.mapping, e, c.dilation, c.congestion)
		}
	}
}

func TestGrayIsGrayCode(t *testing.T) {
	for k := range 11 {
		m, err := Gray(mustParse(t, fmt.Sprintf("hypercube:%d", k)))
		if err != nil {
			t.Fatal(err)
		}
		for r := range 1 << k {
			if m.Node(r) != r^r>>1 {
				t.Fatalf("k=%d: gray(%d) = %d, want %d", k, r, m.Node(r), r^r>>1)
			}
		}
	}
	// The generalisation: consecutive ranks are neighbours on any grid.
	for _, spec := range []string{"mesh:3x4x5", "torus:5x3", "mesh:7", "mesh:2x1x3"} {
		topo := mustParse(t, spec)
		m, err := Gray(topo)
		if err != nil {
			t.Fatal(err)
		}
		if !isPermutation(m, topo.Nodes()) {
			t.Fatalf("%s: not a permutation", spec)
		}
		dims := topo.(Grid).Dims()
		for r := 1; r < topo.Nodes(); r++ {
			if d := gridDistance(dims, false, m.Node(r-1), m.Node(r)); d != 1 {
				t.Errorf("%s: ranks %d, %d are %d apart", spec, r-1, r, d)
			}
		}
	}
	if _, err := Gray(mustParse(t, "crossbar:8")); err == nil {
		t.Error("gray on a crossbar: no error")
	}
}

// TestRingDilation checks Ring on every 2-D torus and mesh up to 8×8 and
// on some 1-D and 3-D ones against the naive distance: a permutation whose
// consecutive ranks (and P−1, 0) are 1 apart, except on meshes with every
// size odd and on lines of more than 2 nodes, where they are at most 2
// apart and Embed reports dilation 2.
func TestRingDilation(t *testing.T) {
	var specs []string
	for x := 1; x <= 8; x++ {
		for y := 1; y <= 8; y++ {
			specs = append(specs, fmt.Sprintf("mesh:%dx%d", x, y), fmt.Sprintf("torus:%dx%d", x, y))
		}
	}
	specs = append(specs, "mesh:3x3x3", "torus:3x3x3", "mesh:2x3x3", "mesh:3x5x4", "mesh:3x1x5", "hypercube:5", "torus:9")
	for _, spec := range specs {
		topo := mustParse(t, spec)
		m, err := Ring(topo, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := topo.Nodes()
		if !isPermutation(m, n) {
			t.Fatalf("%s: not a permutation", spec)
		}
		g := topo.(Grid)
		dims, torus := g.Dims(), strings.HasPrefix(spec, "torus")
		odd, active := true, 0
		for _, k := range dims {
			if k > 1 {
				active++
				odd = odd && k%2 == 1
			}
		}
		want := 1
		if !torus && (odd && active > 1 || active == 1 && n > 2) {
			want = 2
		}
		if n == 1 {
			want = 0
		}
		naive := 0
		for r := range n {
			naive = max(naive, gridDistance(dims, torus, m.Node(r), m.Node((r+1)%n)))
		}
		e := mustEmbed(t, topo, m, n, RingPairs(n))
		if naive != want || e.Dilation != want {
			t.Errorf("%s: ring dilation %d (naive %d), want %d", spec, e.Dilation, naive, want)
		}
	}
}

// TestHTree: the H-tree layout of the heap-shaped binary tree of h levels
// in the square mesh of HTreeBox's larger side has load 1 and dilation
// 2^(⌊h/2⌋−1), the length of its root's edges; its box is as HTreeBox says.
func TestHTree(t *testing.T) {
	for h := 1; h <= 11; h++ {
		w, hh := HTreeBox(h)
		side := max(w, hh)
		topo := mustParse(t, fmt.Sprintf("mesh:%dx%d", side, side))
		n := 1<<h - 1
		m, err := HTree(topo, n)
		if err != nil {
			t.Fatal(err)
		}
		e := mustEmbed(t, topo, m, n, TreePairs(n))
		want := 0
		if h >= 2 {
			want = 1 << (h/2 - 1)
		}
		maxX, maxY := 0, 0
		for r := range n {
			maxX, maxY = max(maxX, m.Node(r)%side), max(maxY, m.Node(r)/side)
		}
		if e.Load != 1 || e.Dilation != want || maxX+1 != w || maxY+1 != hh {
			t.Errorf("h=%d on %v: %+v in a %dx%d box, want load 1, dilation %d, box %dx%d", h, topo, e, maxX+1, maxY+1, want, w, hh)
		}
		// The root's edges are the longest.
		if root := max(gridDistance([]int{side, side}, false, m.Node(0), m.Node(min(1, n-1))), 0); root != want {
			t.Errorf("h=%d: root edge %d, want %d", h, root, want)
		}
	}
	// Fewer ranks take the top of the tree (here turned to fit); a small
	// mesh is an error, and so is a 3-D one.
	m, err := HTree(mustParse(t, "mesh:3x7"), 10)
	if err != nil {
		t.Fatal(err)
	}
	if e := mustEmbed(t, mustParse(t, "mesh:3x7"), m, 10, TreePairs(10)); e.Load != 1 || e.Dilation != 2 {
		t.Errorf("10 ranks on 3x7 (turned): %+v", e)
	}
	for _, spec := range []string{"mesh:6x6", "mesh:3x3x3", "clos:R=4,T=2,mu=1"} {
		if _, err := HTree(mustParse(t, spec), 31); err == nil {
			t.Errorf("htree of 31 on %s: no error", spec)
		}
	}
}

// TestEmbedderCounts checks congestion and load against hand counts, and
// Reset.
func TestEmbedderCounts(t *testing.T) {
	mesh := mustParse(t, "mesh:4x1")
	e, err := NewEmbedder(mesh, nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	// 0→3, 1→3 and 2→3 all cross the link 2→3.
	for _, a := range []int{0, 1, 2} {
		e.Add(a, 3)
	}
	if r := e.Result(); r.Congestion != 3 || r.Dilation != 3 || r.MeanDilation != 2 || r.Edges != 3 {
		t.Errorf("fan-in on a line: %+v", r)
	}
	e.Reset()
	if r := e.Result(); r != (Embedding{Ranks: 4, Load: 1}) {
		t.Errorf("after Reset: %+v", r)
	}
	// A torus half ring splits: 0.5 per direction.
	ring := mustParse(t, "torus:4")
	if r := mustEmbed(t, ring, nil, 4, []Pair{{0, 2}}); r.Congestion != 0.5 || r.Dilation != 2 {
		t.Errorf("half ring: %+v", r)
	}
	// Two ranks on one node: load 2, a route of length 0.
	two := &tableMapping{name: "two", nodes: []int32{1, 1, 0}}
	if r := mustEmbed(t, mesh, two, 3, []Pair{{0, 1}, {1, 2}}); r.Load != 2 || r.Dilation != 1 || r.MeanDilation != 0.5 {
		t.Errorf("shared node: %+v", r)
	}
	if _, err := Embed(mesh, nil, 4, []Pair{{0, 4}}); err == nil {
		t.Error("edge out of range: no error")
	}
	if _, err := NewEmbedder(mesh, &tableMapping{nodes: []int32{9}}, 1); err == nil {
		t.Error("node out of range: no error")
	}
}

func TestRingAndTreePairs(t *testing.T) {
	for n, want := range []int{0, 0, 2, 6, 8} {
		if got := len(RingPairs(n)); got != want {
			t.Errorf("RingPairs(%d): %d edges, want %d", n, got, want)
		}
	}
	for _, p := range TreePairs(31) {
		if bits.Len(uint(p.From+1))-bits.Len(uint(p.To+1)) != 1 && bits.Len(uint(p.To+1))-bits.Len(uint(p.From+1)) != 1 {
			t.Errorf("tree edge %v does not join adjacent levels", p)
		}
	}
}
