package topology

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// maxDims bounds the number of dimensions of a torus or mesh.
const maxDims = 64

// grid is an N-D torus or mesh. Nodes are numbered x fastest and are their
// own routers: there are no switches and no injection links, as in Sack's
// torus model, so a route holds inter-node links only.
//
// Links. Each dimension of size k > 1 has cables between neighbours x and
// x+1: k−1 per line for a mesh, k per line for a torus (the last one, from
// k−1 to 0, wraps). A dimension of size 2 in a torus therefore has two
// parallel cables between the pair, the "+" one and the wrap-around one,
// which is what a torus cabled with wrap links has; routes between the pair
// are a half ring and use both, half the message on each. A dimension of
// size 1 has no links.
//
// Numbering. The cables of active dimension i are numbered e =
// lo + stride·(x + kk·hi) for the cable from the node with coordinate x (its
// lower end, lo the coordinates below i, hi those above), where kk is k for a
// torus and k−1 for a mesh; cable e gives links base_i + 2e ("+": x → x+1)
// and base_i + 2e + 1 ("−": x+1 → x). For a torus e is the index of the
// lower end node.
type grid struct {
	spec  string
	torus bool
	sizes []int // all dimensions, as given
	dims  []gdim
	nodes int
	links int
}

// gdim is an active (size > 1) dimension of a grid.
type gdim struct {
	k      int    // size
	kk     int    // cables per line: k (torus) or k−1 (mesh)
	stride int    // node index step of one coordinate step
	base   int    // first link of the dimension
	magic  uint64 // ⌈2^64/k⌉: n/k = hi64(magic·n) for every n < 2^32 (k ≥ 2)
}

// divmod returns n/k and n%k by multiplication (Lemire, Kaser, Kurz,
// "Faster remainder by direct computation", 2019): it is several times
// faster than a division and Route does two per dimension.
func (d *gdim) divmod(n uint32) (q, r uint32) {
	hi, _ := bits.Mul64(d.magic, uint64(n))
	q = uint32(hi)
	return q, n - q*uint32(d.k)
}

// NewTorus returns the torus with the given sizes, fastest dimension
// first (see the package documentation for numbering, routing and size-1
// and size-2 dimensions). Errors wrap ErrInvalidSpec.
func NewTorus(dims ...int) (Topology, error) { return newGrid("", dims, true) }

// NewMesh returns the mesh with the given sizes, fastest dimension first.
// Errors wrap ErrInvalidSpec.
func NewMesh(dims ...int) (Topology, error) { return newGrid("", dims, false) }

func newGrid(spec string, sizes []int, torus bool) (*grid, error) {
	if len(sizes) == 0 || len(sizes) > maxDims {
		return nil, specErr(spec, fmt.Sprintf("%d dimensions, want 1 to %d", len(sizes), maxDims))
	}
	g := &grid{torus: torus, sizes: append([]int(nil), sizes...), nodes: 1}
	for i, k := range sizes {
		if k < 1 {
			return nil, specErr(spec, fmt.Sprintf("size %d of dimension %d, want at least 1", k, i+1))
		}
		if g.nodes > maxLinks/k {
			return nil, specErr(spec, "too many nodes")
		}
		g.nodes *= k
	}
	stride := 1
	for _, k := range sizes {
		if k > 1 {
			d := gdim{k: k, kk: k, stride: stride, base: g.links, magic: ^uint64(0)/uint64(k) + 1}
			if !torus {
				d.kk = k - 1
			}
			cables := g.nodes / k * d.kk
			if cables > (maxLinks-g.links)/2 {
				return nil, specErr(spec, "too many links")
			}
			g.links += 2 * cables
			g.dims = append(g.dims, d)
		}
		stride *= k
	}
	g.spec = g.kind() + ":" + joinInts(sizes, "x")
	return g, nil
}

func (g *grid) kind() string {
	if g.torus {
		return "torus"
	}
	return "mesh"
}

func joinInts(v []int, sep string) string {
	var b strings.Builder
	for i, x := range v {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(strconv.Itoa(x))
	}
	return b.String()
}

// String returns e.g. "torus:8x8x8".
func (g *grid) String() string { return g.spec }

// Nodes returns the product of the sizes.
func (g *grid) Nodes() int { return g.nodes }

// Switches returns 0: grid nodes are their own routers.
func (g *grid) Switches() int { return 0 }

// Links returns the number of directed inter-node links.
func (g *grid) Links() int { return g.links }

// Dims returns a copy of the sizes.
func (g *grid) Dims() []int { return append([]int(nil), g.sizes...) }

// Capacity returns 1: all grid links are alike.
func (g *grid) Capacity(l Link) float64 {
	if uint(l) >= uint(g.links) {
		linkPanic(l, g.links)
	}
	return 1
}

// Route is dimension-order routing: the displacement in dimension 0 is
// corrected first, then dimension 1, and so on. A torus takes the shorter
// way round each ring; a displacement of exactly half a ring is split, half
// the message each way. Every split path reaches the same intermediate node
// before the next dimension, so the paths share all later links: a route
// is the union of one segment per dimension, a split one carrying 0.5 on
// each of its k links. Hops are listed dimension by dimension in travel
// order ("+" half of a split first).
func (g *grid) Route(src, dst int, buf []Hop) []Hop {
	checkNodes(src, dst, g.nodes)
	buf = buf[:0]
	cur := src
	// The coordinates of src and dst above dimension i (node counts fit in
	// 32 bits).
	hs, hd := uint32(src), uint32(dst)
	for i := range g.dims {
		d := &g.dims[i]
		var x1, x2 uint32
		hs, x1 = d.divmod(hs)
		hd, x2 = d.divmod(hd)
		xs, xd := int(x1), int(x2)
		if xs == xd {
			continue
		}
		// Cable index of the cable whose lower end is node c: c + off.
		// (cur's coordinates above i are still those of src.)
		off := 0
		if !g.torus {
			off = -d.stride * int(hs)
		}
		if g.torus {
			delta := xd - xs
			if delta < 0 {
				delta += d.k
			}
			switch {
			case 2*delta < d.k:
				buf = g.plus(buf, d, cur, xs, delta, off, 1)
			case 2*delta > d.k:
				buf = g.minus(buf, d, cur, xs, d.k-delta, off, 1)
			default:
				buf = g.plus(buf, d, cur, xs, delta, off, 0.5)
				buf = g.minus(buf, d, cur, xs, delta, off, 0.5)
			}
		} else if xd > xs {
			buf = g.plus(buf, d, cur, xs, xd-xs, off, 1)
		} else {
			buf = g.minus(buf, d, cur, xs, xs-xd, off, 1)
		}
		cur += (xd - xs) * d.stride
	}
	return buf
}

// plus appends n hops in the + direction of d from node c at coordinate x:
// the cables whose lower ends are x, x+1, ..., k−1 and then (torus, after
// wrapping) 0, 1, ....
func (g *grid) plus(buf []Hop, d *gdim, c, x, n, off int, frac float64) []Hop {
	first := min(n, d.k-x)
	buf = run(buf, d.base+2*(c+off), 2*d.stride, first, frac)
	if n > first {
		buf = run(buf, d.base+2*(c-x*d.stride+off), 2*d.stride, n-first, frac)
	}
	return buf
}

// minus appends n hops in the − direction of d from node c at coordinate
// x: the cables whose lower ends are x−1, x−2, ..., 0 and then (torus,
// after wrapping) k−1, k−2, ....
func (g *grid) minus(buf []Hop, d *gdim, c, x, n, off int, frac float64) []Hop {
	first := min(n, x)
	buf = run(buf, d.base+2*(c-d.stride+off)+1, -2*d.stride, first, frac)
	if n > first {
		buf = run(buf, d.base+2*(c+(d.k-1-x)*d.stride+off)+1, -2*d.stride, n-first, frac)
	}
	return buf
}

// run appends the n hops l, l+step, l+2·step, ... with fraction frac.
func run(buf []Hop, l, step, n int, frac float64) []Hop {
	i := len(buf)
	buf = slices.Grow(buf, n)[:i+n]
	for j := range buf[i:] {
		buf[i+j] = Hop{Link(l), frac}
		l += step
	}
	return buf
}

// Endpoint returns the nodes l connects.
func (g *grid) Endpoint(l Link) (from, to Vertex) {
	if uint(l) >= uint(g.links) {
		linkPanic(l, g.links)
	}
	i := len(g.dims) - 1
	for int(l) < g.dims[i].base {
		i--
	}
	d := &g.dims[i]
	e, dir := (int(l)-d.base)/2, (int(l)-d.base)%2
	lo, q := e%d.stride, e/d.stride
	x, hi := q%d.kk, q/d.kk
	low := lo + d.stride*(x+d.k*hi)
	high := low + d.stride
	if x == d.k-1 {
		high = low - (d.k-1)*d.stride
	}
	if dir == 1 {
		return node(high), node(low)
	}
	return node(low), node(high)
}

// Degree is the number of cables at an interior node: 2 per dimension of a
// torus (size 2 included, whose two cables are parallel), and for a mesh 2
// per dimension of size ≥ 3 and 1 per dimension of size 2. Size-1
// dimensions add nothing. Table 2: 2n for an n-D torus or mesh.
func (g *grid) Degree() int {
	deg := 0
	for _, d := range g.dims {
		if g.torus || d.k > 2 {
			deg += 2
		} else {
			deg++
		}
	}
	return deg
}

// Diameter is Σ⌊k/2⌋ for a torus and Σ(k−1) for a mesh. Table 2: nk/2 and
// n(k−1).
func (g *grid) Diameter() int {
	dia := 0
	for _, d := range g.dims {
		if g.torus {
			dia += d.k / 2
		} else {
			dia += d.k - 1
		}
	}
	return dia
}

// Bisection is the cut across the largest dimension k_max: P/k_max cables
// for a mesh and 2P/k_max for a torus (two cuts of each ring), 0 for a
// single node. Table 2: k^(n−1) and 2k^(n−1). It is the minimal balanced
// bisection when k_max is even; for odd k_max no cut of that form is exactly
// balanced and the value is Table 2's approximation.
func (g *grid) Bisection() float64 {
	kmax := 1
	for _, d := range g.dims {
		kmax = max(kmax, d.k)
	}
	if kmax == 1 {
		return 0
	}
	if g.torus {
		return float64(2 * g.nodes / kmax)
	}
	return float64(g.nodes / kmax)
}
