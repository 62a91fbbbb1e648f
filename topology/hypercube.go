package topology

import (
	"fmt"
	"strconv"
)

// maxHypercube is the largest hypercube dimension whose k·2^k links fit in a
// Link.
const maxHypercube = 26

// hypercube is the k-cube: 2^k nodes, node i linked to i ^ 1<<b for every
// bit b. Nodes are their own routers (no switches, no injection links).
// Link node·k + b leaves node along bit b.
type hypercube struct {
	k int
}

// NewHypercube returns the hypercube of dimension k (2^k nodes). Errors
// wrap ErrInvalidSpec.
func NewHypercube(k int) (Topology, error) { return newHypercube("", k) }

func newHypercube(spec string, k int) (*hypercube, error) {
	if k < 0 || k > maxHypercube {
		return nil, specErr(spec, fmt.Sprintf("dimension %d, want 0 to %d", k, maxHypercube))
	}
	return &hypercube{k: k}, nil
}

// String returns e.g. "hypercube:9".
func (h *hypercube) String() string { return "hypercube:" + strconv.Itoa(h.k) }

// Nodes returns 2^k.
func (h *hypercube) Nodes() int { return 1 << h.k }

// Switches returns 0: hypercube nodes are their own routers.
func (h *hypercube) Switches() int { return 0 }

// Links returns k·2^k.
func (h *hypercube) Links() int { return h.k << h.k }

// Dims returns k twos: a hypercube is the 2×2×...×2 grid, bit b being
// dimension b.
func (h *hypercube) Dims() []int {
	d := make([]int, h.k)
	for i := range d {
		d[i] = 2
	}
	return d
}

// Capacity returns 1.
func (h *hypercube) Capacity(l Link) float64 {
	if uint(l) >= uint(h.Links()) {
		linkPanic(l, h.Links())
	}
	return 1
}

// Route is e-cube routing: the differing bits are corrected lowest first.
func (h *hypercube) Route(src, dst int, buf []Hop) []Hop {
	checkNodes(src, dst, h.Nodes())
	buf = buf[:0]
	cur, diff := src, src^dst
	for b := 0; diff != 0; b++ {
		if diff&1 != 0 {
			buf = append(buf, Hop{Link(cur*h.k + b), 1})
			cur ^= 1 << b
		}
		diff >>= 1
	}
	return buf
}

// Endpoint returns the nodes l connects.
func (h *hypercube) Endpoint(l Link) (from, to Vertex) {
	if uint(l) >= uint(h.Links()) {
		linkPanic(l, h.Links())
	}
	n, b := int(l)/h.k, int(l)%h.k
	return node(n), node(n ^ 1<<b)
}

// Degree returns k (Table 2).
func (h *hypercube) Degree() int { return h.k }

// Diameter returns k (Table 2).
func (h *hypercube) Diameter() int { return h.k }

// Bisection returns 2^(k−1) (Table 2), 0 for the single-node 0-cube.
func (h *hypercube) Bisection() float64 {
	if h.k == 0 {
		return 0
	}
	return float64(int(1) << (h.k - 1))
}
