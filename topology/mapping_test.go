package topology

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// isPermutation reports whether m maps ranks 0..n-1 onto distinct nodes in
// [0, n).
func isPermutation(m Mapping, n int) bool {
	seen := make([]bool, n)
	for r := range n {
		x := m.Node(r)
		if x < 0 || x >= n || seen[x] {
			return false
		}
		seen[x] = true
	}
	return true
}

func TestMortonPowerOfTwo(t *testing.T) {
	topo := mustParse(t, "torus:8x8x8").(Grid)
	m, err := Morton(topo)
	if err != nil {
		t.Fatal(err)
	}
	if !isPermutation(m, 512) {
		t.Fatal("morton on 8x8x8 is not a permutation")
	}
	// Ranks 0..7 fill the 2x2x2 cube at the origin in x, y, z bit order.
	var first []int
	for r := range 8 {
		first = append(first, m.Node(r))
	}
	if want := []int{0, 1, 8, 9, 64, 65, 72, 73}; !slices.Equal(first, want) {
		t.Errorf("morton ranks 0..7 on 8x8x8: nodes %v, want %v", first, want)
	}
	// Every aligned block of 2^(3j) ranks is a cube of side 2^j.
	for _, side := range []int{2, 4} {
		for start := 0; start < 512; start += side * side * side {
			for r := start; r < start+side*side*side; r++ {
				c0, c := coords([]int{8, 8, 8}, m.Node(start)), coords([]int{8, 8, 8}, m.Node(r))
				for i := range c {
					if c[i]/side != c0[i]/side {
						t.Fatalf("ranks %d..%d: rank %d at %v leaves the %d-cube of %v", start, start+side*side*side-1, r, c, side, c0)
					}
				}
			}
		}
	}
	// Unequal sizes: 4x4x8 puts the extra bit in z.
	m, _ = Morton(mustParse(t, "mesh:4x4x8"))
	if got, want := m.Node(64), 4*4*4; got != want {
		t.Errorf("morton on 4x4x8: rank 64 on node %d, want %d (z=4)", got, want)
	}
	// A hypercube's Morton order is the identity.
	m, _ = Morton(mustParse(t, "hypercube:5"))
	for r := range 32 {
		if m.Node(r) != r {
			t.Fatalf("morton on hypercube:5: rank %d on node %d", r, m.Node(r))
		}
	}
}

// TestMortonGeneral checks non-power-of-two sizes against the table built
// by sorting codes, and that the table agrees with the bit-arithmetic path
// on power-of-two sizes.
func TestMortonGeneral(t *testing.T) {
	for _, dims := range [][]int{{3}, {5, 3}, {6, 6, 6}, {1, 7, 2}, {4, 3}, {8, 8, 8}, {2, 16, 4}} {
		n := 1
		for _, k := range dims {
			n *= k
		}
		m, err := newMorton(dims)
		if err != nil {
			t.Fatal(err)
		}
		if !isPermutation(m, n) {
			t.Fatalf("morton %v is not a permutation", dims)
		}
		// The codes of the nodes in rank order increase.
		code := func(node int) int {
			c := coords(dims, node)
			w := make([]int, len(dims))
			for i, k := range dims {
				for 1<<w[i] < k {
					w[i]++
				}
			}
			out, j := 0, 0
			for b := 0; b < 64; b++ {
				for i := range dims {
					if b < w[i] {
						out |= (c[i] >> b & 1) << j
						j++
					}
				}
			}
			return out
		}
		for r := 1; r < n; r++ {
			if code(m.Node(r-1)) >= code(m.Node(r)) {
				t.Fatalf("morton %v: ranks %d, %d have codes %d, %d", dims, r-1, r, code(m.Node(r-1)), code(m.Node(r)))
			}
		}
	}
	// 6x6: the first 4 ranks are the 2x2 block, then (2..3, 0..1).
	m, _ := newMorton([]int{6, 6})
	var got []int
	for r := range 8 {
		got = append(got, m.Node(r))
	}
	if want := []int{0, 1, 6, 7, 2, 3, 8, 9}; !slices.Equal(got, want) {
		t.Errorf("morton 6x6 ranks 0..7: %v, want %v", got, want)
	}
}

func TestExplicit(t *testing.T) {
	m, err := Explicit([]int{3, 0, 2}, 4)
	if err != nil {
		t.Fatal(err)
	}
	if m.Node(0) != 3 || m.Node(2) != 2 {
		t.Errorf("Explicit: %d, %d", m.Node(0), m.Node(2))
	}
	nodes := []int{1, 0}
	m, _ = Explicit(nodes, 2)
	nodes[0] = 0
	if m.Node(0) != 1 {
		t.Error("Explicit does not copy its input")
	}
	for _, tc := range []struct {
		nodes []int
		n     int
		msg   string
	}{
		{[]int{0, 0}, 4, "both on node 0"},
		{[]int{0, 4}, 4, "want a node in [0, 4)"},
		{[]int{-1}, 4, "want a node in"},
		{[]int{0, 1, 2}, 2, "3 ranks on 2 nodes"},
	} {
		if _, err := Explicit(tc.nodes, tc.n); !errors.Is(err, ErrInvalidMapping) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Explicit(%v, %d): %v, want ErrInvalidMapping mentioning %q", tc.nodes, tc.n, err, tc.msg)
		}
	}
}

func TestParseMapping(t *testing.T) {
	torus := mustParse(t, "torus:4x4")
	for _, tc := range []struct {
		spec  string
		ranks int
		want  []int // nodes of the first ranks
	}{
		{"xyz", 0, []int{0, 1, 2, 3}},
		{" XYZ ", 16, []int{0, 1, 2, 3}},
		{"morton", 0, []int{0, 1, 4, 5, 2, 3, 6, 7}},
		{"list:3,2,1,0", 4, []int{3, 2, 1, 0}},
		{"list: 5, 7", 2, []int{5, 7}},
	} {
		m, err := ParseMapping(tc.spec, torus, tc.ranks)
		if err != nil {
			t.Errorf("ParseMapping(%q): %v", tc.spec, err)
			continue
		}
		for r, n := range tc.want {
			if m.Node(r) != n {
				t.Errorf("ParseMapping(%q): rank %d on node %d, want %d", tc.spec, r, m.Node(r), n)
			}
		}
		if s, ok := m.(interface{ String() string }); !ok || !strings.HasPrefix(s.String(), strings.ToLower(strings.TrimSpace(tc.spec))[:3]) {
			t.Errorf("ParseMapping(%q): String %v", tc.spec, m)
		}
	}
	for _, tc := range []struct {
		spec  string
		topo  Topology
		ranks int
		msg   string
	}{
		{"zorder", torus, 0, "want xyz, morton, gray, ring, htree, random[:seed] or list"},
		{"morton", mustParse(t, "clos:R=4,T=2,mu=1"), 0, "morton needs a torus"},
		{"list:0,1", torus, 3, "2 nodes listed for 3 ranks"},
		{"list:0,x", torus, 2, "not a node number"},
		{"list:0,0", torus, 2, "both on node 0"},
		{"list:0,16", torus, 2, "want a node in"},
		{"xyz", torus, 17, "17 ranks"},
		{"xyz:1", torus, 0, "want xyz"},
		{"list", torus, 0, "want xyz"},
		{"xyz", nil, 1, "no topology"},
	} {
		if _, err := ParseMapping(tc.spec, tc.topo, tc.ranks); !errors.Is(err, ErrInvalidMapping) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("ParseMapping(%q, %v, %d): %v, want ErrInvalidMapping mentioning %q", tc.spec, tc.topo, tc.ranks, err, tc.msg)
		}
	}
}

func TestRandomMapping(t *testing.T) {
	torus := mustParse(t, "torus:4x4x4")
	a, err := ParseMapping("random:7", torus, 20)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ParseMapping("random:7", torus, 20)
	c, _ := ParseMapping("random:8", torus, 20)
	seen := map[int]bool{}
	same, differ := true, false
	for r := range 20 {
		n := a.Node(r)
		if n < 0 || n >= 64 || seen[n] {
			t.Fatalf("rank %d on node %d: out of range or taken", r, n)
		}
		seen[n] = true
		same = same && n == b.Node(r)
		differ = differ || n != c.Node(r)
	}
	if !same || !differ {
		t.Errorf("random mapping: same seed same nodes %v, other seed differs %v", same, differ)
	}
	if _, err := ParseMapping("random", torus, 64); err != nil {
		t.Errorf("random without seed: %v", err)
	}
	for _, bad := range []string{"random:x", "random:-1"} {
		if _, err := ParseMapping(bad, torus, 4); !errors.Is(err, ErrInvalidMapping) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := Random(torus, 65, 1); !errors.Is(err, ErrInvalidMapping) {
		t.Errorf("65 ranks on 64 nodes: %v", err)
	}
}
