package topology

import (
	"fmt"
	"math/bits"
)

// snake is a line through the nodes of some dimensions of a grid in which
// consecutive positions are neighbours: the reflected mixed-radix Gray
// code (boustrophedon) over the dimensions, the first fastest.
type snake struct {
	dims, strides []int
	n             int // positions: the product of dims
}

func newSnake() snake { return snake{n: 1} }

// with returns s extended by a dimension of size k and node stride stride,
// slower than the others.
func (s snake) with(k, stride int) snake {
	return snake{dims: append(s.dims[:len(s.dims):len(s.dims)], k), strides: append(s.strides[:len(s.strides):len(s.strides)], stride), n: s.n * k}
}

// at returns the node offset of position p in [0, n): digit i of p (mixed
// radix, the first dimension least significant) is reflected when the
// number formed by the digits above it is odd. With every size 2 this is
// the binary reflected Gray code p ^ p>>1.
func (s snake) at(p int) int {
	off := 0
	for i, k := range s.dims {
		d := p % k
		p /= k
		if p&1 == 1 {
			d = k - 1 - d
		}
		off += d * s.strides[i]
	}
	return off
}

// gridSnake returns the snake over every dimension of size > 1 of g, and
// those dimensions as snakes of one dimension each.
func gridSnake(g Grid) (all snake, active []snake) {
	all, stride := newSnake(), 1
	for _, k := range g.Dims() {
		if k > 1 {
			all = all.with(k, stride)
			active = append(active, newSnake().with(k, stride))
		}
		stride *= k
	}
	return all, active
}

// grayMapping places rank r on the node at position r of the grid's snake.
type grayMapping struct{ s snake }

// Gray returns the reflected Gray code mapping of a hypercube, torus or mesh
// t: on a hypercube rank r goes to node gray(r) = r ^ r>>1 (sec. 3.1.3 of
// the Heath–Solomonik notes), so ranks r and r+1 are neighbours and so are
// ranks 0 and 2^k − 1: a ring embeds with dilation 1. On a torus or mesh it
// is the natural generalisation, the reflected mixed-radix Gray code
// (boustrophedon, x fastest): digit i of r is reflected when the number
// formed by the digits above it is odd. Consecutive ranks are again
// neighbours; the closing pair (P−1, 0) is not in general (see Ring for a
// cycle). Other topologies are an error wrapping ErrInvalidMapping.
func Gray(t Topology) (Mapping, error) {
	g, ok := t.(Grid)
	if !ok {
		return nil, fmt.Errorf("%w: gray needs a hypercube, torus or mesh, not %v", ErrInvalidMapping, t)
	}
	s, _ := gridSnake(g)
	return grayMapping{s}, nil
}

// Node returns the node at position rank of the snake.
func (m grayMapping) Node(rank int) int {
	if uint(rank) >= uint(m.s.n) {
		panic(fmt.Sprintf("topology: rank %d out of range [0, %d)", rank, m.s.n))
	}
	return m.s.at(rank)
}

// String returns "gray".
func (grayMapping) String() string { return "gray" }

// tableMapping is a named mapping given by a table of nodes.
type tableMapping struct {
	name  string
	nodes []int32
}

// Node returns the node of rank r, which must be in [0, len(nodes)).
func (m *tableMapping) Node(rank int) int { return int(m.nodes[rank]) }

// String returns the mapping's name, as ParseMapping spells it.
func (m *tableMapping) String() string { return m.name }

// maxTable bounds the nodes of the mappings built as tables.
const maxTable = 1 << 26

// Ring returns a mapping of ranks onto a torus, mesh or hypercube t that
// follows a Hamiltonian cycle where one exists, so that a ring of the
// ranks (r talks to r ± 1 mod P) embeds with dilation 1 (Fig. 5 of the
// Heath–Solomonik notes, left). The grid's dimensions of size > 1 make two
// axes a and b, each a line of neighbouring nodes (a snake, see Gray), and
// the cycle runs in the a×b plane:
//
//   - b is a dimension of even size when there is one, a the others:
//     row b = 0 left to right, rows 1..B−1 back and forth over columns
//     1..A−1, then back down column 0 (a boustrophedon with a return
//     column). Dilation 1.
//   - Every size odd, torus: up column 0, rows B−1..1 back and forth over
//     columns 1..A−1, row 0 to the right, and the wrap-around link back to
//     the start. Dilation 1.
//   - Every size odd, mesh: no Hamiltonian cycle exists (the mesh is
//     bipartite with an odd number of nodes), and one pair of consecutive
//     ranks is 2 links apart: the return-column cycle with the last two rows
//     covered column by column. Dilation 2, which is the least possible.
//   - One dimension of size k: a torus is its own ring; a mesh of k > 2
//     takes the even nodes up and the odd ones back (dilation 2, the
//     least for a line).
//
// With fewer ranks than nodes the ranks take the first nodes of the cycle
// (a path; the closing pair may then be far apart); ranks ≤ 0 means
// t.Nodes(). Other topologies are
// an error wrapping ErrInvalidMapping, as are more than 2^26 nodes.
func Ring(t Topology, ranks int) (Mapping, error) {
	g, ok := t.(Grid)
	if !ok {
		return nil, fmt.Errorf("%w: ring needs a torus, mesh or hypercube, not %v", ErrInvalidMapping, t)
	}
	if t.Nodes() > maxTable {
		return nil, fmt.Errorf("%w: ring on %v: more than %d nodes", ErrInvalidMapping, t, maxTable)
	}
	gr, torus := g.(*grid)
	torus = torus && gr.torus
	all, active := gridSnake(g)
	var seq []int
	switch {
	case len(active) == 0:
		seq = []int{0}
	case len(active) == 1:
		seq = lineCycle(all, torus)
	default:
		a, b := all, newSnake()
		for i, d := range active {
			if d.n%2 == 0 {
				b = d
				a = newSnake()
				for j, o := range active {
					if j != i {
						a = a.with(o.dims[0], o.strides[0])
					}
				}
				break
			}
		}
		if b.n == 1 { // every size odd: a is one dimension, b the others
			a, b = active[0], newSnake()
			for _, o := range active[1:] {
				b = b.with(o.dims[0], o.strides[0])
			}
		}
		seq = planeCycle(a, b, torus)
	}
	if ranks <= 0 {
		ranks = len(seq)
	}
	m := &tableMapping{name: "ring", nodes: make([]int32, 0, len(seq))}
	for _, n := range seq[:min(ranks, len(seq))] {
		m.nodes = append(m.nodes, int32(n))
	}
	return m, nil
}

// lineCycle returns the nodes of a one-dimensional torus or mesh in ring
// order: in order on a torus (or a line of at most 2 nodes), else the even
// positions up and the odd ones back.
func lineCycle(s snake, torus bool) []int {
	seq := make([]int, 0, s.n)
	if torus || s.n <= 2 {
		for p := range s.n {
			seq = append(seq, s.at(p))
		}
		return seq
	}
	for p := 0; p < s.n; p += 2 {
		seq = append(seq, s.at(p))
	}
	for p := s.n - 1 - s.n%2; p > 0; p -= 2 {
		seq = append(seq, s.at(p))
	}
	return seq
}

// planeCycle returns the nodes of the a×b plane in the order Ring
// describes; A and B are at least 2.
func planeCycle(a, b snake, torus bool) []int {
	A, B := a.n, b.n
	seq := make([]int, 0, A*B)
	put := func(x, y int) { seq = append(seq, a.at(x)+b.at(y)) }
	// row y over columns 1..A−1, left to right when right is set.
	row := func(y int, right bool) {
		for i := 1; i < A; i++ {
			if right {
				put(i, y)
			} else {
				put(A-i, y)
			}
		}
	}
	switch {
	case B%2 == 0: // return column
		for x := range A {
			put(x, 0)
		}
		for y := 1; y < B; y++ {
			row(y, y%2 == 0)
		}
		for y := B - 1; y > 0; y-- {
			put(0, y)
		}
	case torus: // up column 0, rows B−1..1, row 0, wrap
		for y := range B {
			put(0, y)
		}
		for y := B - 1; y > 0; y-- {
			row(y, (B-1-y)%2 == 0)
		}
		for x := 1; x < A; x++ {
			put(x, 0)
		}
	default: // odd mesh: rows B−2 and B−1 column by column, one jump of 2
		for x := range A {
			put(x, 0)
		}
		for y := 1; y < B-2; y++ {
			row(y, y%2 == 0)
		}
		for x := A - 1; x > 0; x-- {
			if (A-1-x)%2 == 0 {
				put(x, B-2)
				put(x, B-1)
			} else {
				put(x, B-1)
				put(x, B-2)
			}
		}
		for y := B - 1; y > 0; y-- {
			put(0, y)
		}
	}
	return seq
}

// HTree returns the H-tree layout of a complete binary tree on a 2-D mesh
// or torus t (at most two dimensions of size > 1): rank r is node r of the
// heap-shaped tree (children 2r+1 and 2r+2, the tree of the "binary"
// broadcast) of h levels, the least with 2^h − 1 ≥ ranks.
//
// The layout is recursive: a tree of one level is one node; a tree of j
// levels puts its two subtrees of j−1 levels side by side, one line apart,
// and its root on that line between their roots, joining left-right for
// even j and bottom-top for odd j. The tree of j levels then fills a box
// of w_j × h_j nodes (1×1, 3×1, 3×3, 7×3, 7×7, ...: 2^(⌊j/2⌋+1) − 1 wide
// and 2^⌈j/2⌉ − 1 high, a square for odd j: HTreeBox), placed at the origin (turned a
// quarter when only that fits), and the edges below a root of j levels
// have length (w_{j−1}+1)/2 or (h_{j−1}+1)/2: 2^(⌊j/2⌋−1) links. The
// dilation of the whole tree is that of its root's edges, 2^(⌊h/2⌋−1)
// for h ≥ 2. Errors wrap ErrInvalidMapping.
func HTree(t Topology, ranks int) (Mapping, error) {
	g, ok := t.(Grid)
	var dims, strides []int
	if ok {
		stride := 1
		for _, k := range g.Dims() {
			if k > 1 {
				dims, strides = append(dims, k), append(strides, stride)
			}
			stride *= k
		}
	}
	if !ok || len(dims) > 2 {
		return nil, fmt.Errorf("%w: htree needs a 2-D mesh or torus, not %v", ErrInvalidMapping, t)
	}
	for len(dims) < 2 { // a line or a node: the layout must fit in it
		dims, strides = append(dims, 1), append(strides, 0)
	}
	if ranks < 1 || ranks > maxTable {
		return nil, fmt.Errorf("%w: htree of %d ranks", ErrInvalidMapping, ranks)
	}
	levels := bits.Len(uint(ranks))
	w, h := HTreeBox(levels)
	sx, sy := strides[0], strides[1]
	switch {
	case dims[0] >= w && dims[1] >= h:
	case dims[0] >= h && dims[1] >= w:
		sx, sy = sy, sx
	default:
		return nil, fmt.Errorf("%w: an H-tree of %d levels needs %d×%d nodes; %v is smaller", ErrInvalidMapping, levels, w, h, t)
	}
	m := &tableMapping{name: "htree", nodes: make([]int32, ranks)}
	var place func(r, j, x0, y0 int)
	place = func(r, j, x0, y0 int) {
		if r >= ranks {
			return
		}
		bw, bh := HTreeBox(j)
		m.nodes[r] = int32((x0+bw/2)*sx + (y0+bh/2)*sy)
		if j == 1 {
			return
		}
		cw, ch := HTreeBox(j - 1)
		place(2*r+1, j-1, x0, y0)
		if j%2 == 0 {
			place(2*r+2, j-1, x0+cw+1, y0)
		} else {
			place(2*r+2, j-1, x0, y0+ch+1)
		}
	}
	place(0, levels, 0, 0)
	return m, nil
}

// HTreeBox returns the width and height in nodes of HTree's layout of a
// complete binary tree of levels levels: 2^(⌊levels/2⌋+1) − 1 by
// 2^⌈levels/2⌉ − 1 (0 by 0 for no levels).
func HTreeBox(levels int) (w, h int) {
	if levels < 1 {
		return 0, 0
	}
	return 1<<(levels/2+1) - 1, 1<<((levels+1)/2) - 1
}
