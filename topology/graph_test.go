package topology

import (
	"math"
	"math/bits"
	"testing"
)

// graph is the link graph of a topology, built from Endpoint alone so that
// it checks Route independently of the routing code. Vertex ids: node i is
// i, switch s is Nodes()+s.
type graph struct {
	t     Topology
	n     int      // vertices
	from  []int    // per link
	to    []int    // per link
	out   [][]Link // per vertex
	isGlb []bool   // per link: a dragonfly global link (nil otherwise)
}

func vid(t Topology, v Vertex) int {
	if v.Kind == KindSwitch {
		return t.Nodes() + v.Index
	}
	return v.Index
}

func newGraph(tb testing.TB, t Topology) *graph {
	tb.Helper()
	g := &graph{t: t, n: t.Nodes() + t.Switches()}
	g.out = make([][]Link, g.n)
	for l := range Link(t.Links()) {
		a, b := t.Endpoint(l)
		for _, v := range []Vertex{a, b} {
			lim := t.Nodes()
			if v.Kind == KindSwitch {
				lim = t.Switches()
			}
			if v.Index < 0 || v.Index >= lim || v.Kind > KindSwitch {
				tb.Fatalf("%v: link %d has endpoint %v out of range", t, l, v)
			}
		}
		f, to := vid(t, a), vid(t, b)
		if f == to {
			tb.Fatalf("%v: link %d is a loop at %v", t, l, a)
		}
		g.from = append(g.from, f)
		g.to = append(g.to, to)
		g.out[f] = append(g.out[f], l)
	}
	if d, ok := t.(*dragonfly); ok {
		g.isGlb = make([]bool, t.Links())
		for l := range g.isGlb {
			g.isGlb[l] = l >= d.baseG
		}
	}
	return g
}

// dist returns the hop distances from vertex s. With onlyOneGlobal, paths
// may cross at most one global link (dragonfly minimal routing); the
// result is then the distance with at most one global hop.
func (g *graph) dist(s int, oneGlobal bool) []int {
	layers := 1
	if oneGlobal {
		layers = 2
	}
	d := make([]int, g.n*layers)
	for i := range d {
		d[i] = -1
	}
	d[s] = 0
	q := []int{s}
	for len(q) > 0 {
		u := q[0]
		q = q[1:]
		v, layer := u%g.n, u/g.n
		for _, l := range g.out[v] {
			nl := layer
			if oneGlobal && g.isGlb[l] {
				if layer == 1 {
					continue
				}
				nl = 1
			}
			w := g.to[l] + nl*g.n
			if d[w] < 0 {
				d[w] = d[u] + 1
				q = append(q, w)
			}
		}
	}
	if oneGlobal {
		for i := range g.n {
			if d[i] < 0 || (d[i+g.n] >= 0 && d[i+g.n] < d[i]) {
				d[i] = d[i+g.n]
			}
		}
		d = d[:g.n]
	}
	return d
}

// bruteBisection is the capacity of a minimal balanced cut (node counts
// ⌊P/2⌋ and ⌈P/2⌉), by exhaustion. Each cable counts once (the links
// from the lower vertex id to the higher). In an indirect network every
// node hangs off one switch, so it enumerates switch sides and then moves
// the fewest nodes to balance, at 1 per node; in a direct one it
// enumerates node sides.
func bruteBisection(tb testing.TB, g *graph) float64 {
	tb.Helper()
	P, S := g.t.Nodes(), g.t.Switches()
	var free []int // vertices enumerated
	if S == 0 {
		for i := range P {
			free = append(free, i)
		}
	} else {
		for i := range S {
			free = append(free, P+i)
		}
	}
	if len(free) > 22 {
		tb.Fatalf("%v: %d vertices to enumerate, too many", g.t, len(free))
	}
	side := make([]bool, g.n)
	best := math.Inf(1)
	for mask := uint(0); mask < 1<<len(free); mask++ {
		if S == 0 {
			if c := bits.OnesCount(mask); c != P/2 && c != (P+1)/2 {
				continue
			}
		}
		for i, v := range free {
			side[v] = mask>>i&1 == 1
		}
		if S > 0 {
			for n := range P {
				side[n] = side[g.to[g.out[n][0]]]
			}
		}
		cut, nA := 0.0, 0
		for l := range g.from {
			a, b := g.from[l], g.to[l]
			if a < P && S > 0 {
				if side[a] {
					nA++
				}
				continue
			}
			if b < P && S > 0 {
				continue
			}
			if a < b && side[a] != side[b] {
				cut += g.t.Capacity(Link(l))
			}
		}
		if S > 0 {
			cut += float64(min(abs(nA-P/2), abs(nA-(P+1)/2)))
		}
		best = min(best, cut)
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
