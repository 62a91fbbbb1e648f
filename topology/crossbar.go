package topology

import (
	"fmt"
	"strconv"
)

// crossbar is n nodes on one non-blocking switch (switch 0). Node i's
// injection link (i → switch) is link 2i, its ejection link (switch → i)
// is 2i+1. This is the no-congestion model of Sack's thesis (sec. 3.1).
type crossbar struct {
	n int
}

// NewCrossbar returns a fully connected network of n nodes on a single
// non-blocking switch. Errors wrap ErrInvalidSpec.
func NewCrossbar(n int) (Topology, error) { return newCrossbar("", n) }

func newCrossbar(spec string, n int) (*crossbar, error) {
	if n < 1 || n > maxLinks/2 {
		return nil, specErr(spec, fmt.Sprintf("%d nodes, want 1 to %d", n, maxLinks/2))
	}
	return &crossbar{n: n}, nil
}

// String returns e.g. "crossbar:512".
func (c *crossbar) String() string { return "crossbar:" + strconv.Itoa(c.n) }

// Nodes returns n.
func (c *crossbar) Nodes() int { return c.n }

// Switches returns 1.
func (c *crossbar) Switches() int { return 1 }

// Links returns 2n: an injection and an ejection link per node.
func (c *crossbar) Links() int { return 2 * c.n }

// Capacity returns 1.
func (c *crossbar) Capacity(l Link) float64 {
	if uint(l) >= uint(2*c.n) {
		linkPanic(l, 2*c.n)
	}
	return 1
}

// Route is [src's injection link, dst's ejection link].
func (c *crossbar) Route(src, dst int, buf []Hop) []Hop {
	buf, ok := inject(src, dst, c.n, buf)
	if !ok {
		return buf
	}
	return append(buf, Hop{Link(2*dst + 1), 1})
}

// Endpoint returns a node and the switch.
func (c *crossbar) Endpoint(l Link) (from, to Vertex) {
	if uint(l) >= uint(2*c.n) {
		linkPanic(l, 2*c.n)
	}
	if l%2 == 0 {
		return node(int(l) / 2), sw(0)
	}
	return sw(0), node(int(l) / 2)
}

// Degree returns n, the ports of the switch. (Table 2's crossbar is a grid
// of 2×2 switches, a different network.)
func (c *crossbar) Degree() int { return c.n }

// Diameter returns 2 (injection and ejection link), 0 for a single node.
func (c *crossbar) Diameter() int {
	if c.n == 1 {
		return 0
	}
	return 2
}

// Bisection returns ⌊n/2⌋: the node links of the half of the nodes on the
// other side of the switch.
func (c *crossbar) Bisection() float64 { return float64(c.n / 2) }
