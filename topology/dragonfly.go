package topology

import (
	"fmt"
	"strconv"
)

// DragonflyConfig describes a dragonfly network (Kim, Dally, Scott, Abts,
// ISCA 2008): G groups of A routers, P nodes per router, H global links per
// router.
type DragonflyConfig struct {
	G int // groups
	A int // routers per group
	P int // nodes per router
	// H is the number of global-link ports per router; 0 means
	// ⌈(G−1)/A⌉, the fewest that give every pair of groups a global link
	// (for the balanced G = A·H+1 with A = 2P it is A/2, so A = 2P = 2H).
	H int
}

// dragonfly is a dragonfly with the consecutive global arrangement (see
// NewDragonfly).
//
// Numbering. Routers are switches G·a + r. Links: node n's injection link
// 2n and ejection link 2n+1; the local link from router r to r' ≠ r of
// group G: baseL + (G·a + r)·(a−1) + (r' if r' < r else r'−1); the global
// link out of port q of group G: baseG + G·m·(g−1) + q.
type dragonfly struct {
	cfg          DragonflyConfig
	g, a, p, h   int
	m            int // global cables per pair of groups
	nodes        int
	baseL, baseG int
	links        int
	spec         string
}

// NewDragonfly returns the dragonfly c describes. Errors wrap
// ErrInvalidSpec.
//
// Structure. Router r of group G is switch G·a + r; node n attaches to
// router ⌊n/p⌋ by an injection and an ejection link. The routers of a group
// are fully connected by local cables. All links have capacity 1.
//
// Global arrangement ("consecutive", also called absolute). Group G has
// a·h global ports, port q on router ⌊q/h⌋ (router r holds ports
// r·h..r·h+h−1). With m = ⌊a·h/(g−1)⌋ ≥ 1, port q = t·(g−1) + i (t < m,
// i < g−1) goes to the i-th other group in increasing order, G' = i if
// i < G else i+1, arriving at port t·(g−1) + (G if G < G' else G−1) of G'.
// Every pair of groups is thus joined by m global cables, and ports
// q ≥ m·(g−1) stay unconnected. For g=9,a=4,h=2 group 0's router 0 reaches
// groups 1 and 2, router 3 groups 7 and 8.
//
// Routing is minimal in the dragonfly sense: a local hop (if the source
// router has no cable to the destination group), the global cable, a local
// hop (if needed). Among the m cables between the two groups it takes those
// with the fewest local hops and splits the message evenly over them, so
// with m = 1 (the balanced dragonfly) a route is a single path. A path
// through a third group is never taken, even in the rare case where it is
// shorter. Degree is a router's ports, p + a − 1 + h
// when all ports are used; Diameter is 5 (node links included) unless
// groups are small enough for every router to hold a cable to every group;
// Bisection counts the global cables between two halves of the groups.
func NewDragonfly(c DragonflyConfig) (Topology, error) { return newDragonfly("", c) }

func parseDragonfly(spec, body string) (DragonflyConfig, error) {
	var c DragonflyConfig
	kv, err := parseParams(spec, body, "g", "a", "p", "h")
	if err != nil {
		return c, err
	}
	for _, p := range []struct {
		key string
		dst *int
	}{{"g", &c.G}, {"a", &c.A}, {"p", &c.P}, {"h", &c.H}} {
		v, ok := kv[p.key]
		if !ok {
			if p.key == "h" {
				continue
			}
			return c, specErr(spec, fmt.Sprintf("parameter %s is missing (want dragonfly:g=9,a=4,p=2[,h=2])", p.key))
		}
		if *p.dst, err = parseInt(spec, p.key, v); err != nil {
			return c, err
		}
	}
	if v, ok := kv["h"]; ok && c.H == 0 {
		return c, specErr(spec, fmt.Sprintf("h %q, want at least 1 (omit h for the default)", v))
	}
	return c, nil
}

func defaultH(g, a int) int {
	if g <= 1 || a < 1 {
		return 0
	}
	return (g - 1 + a - 1) / a
}

func newDragonfly(spec string, c DragonflyConfig) (*dragonfly, error) {
	for _, p := range []struct {
		name string
		v    int
	}{{"groups g", c.G}, {"routers per group a", c.A}, {"nodes per router p", c.P}} {
		if p.v < 1 || p.v > maxParam {
			return nil, specErr(spec, fmt.Sprintf("%s = %d, want 1 to %d", p.name, p.v, maxParam))
		}
	}
	if c.H < 0 || c.H > maxParam {
		return nil, specErr(spec, fmt.Sprintf("global links per router h = %d, want 1 to %d", c.H, maxParam))
	}
	d := &dragonfly{cfg: c, g: c.G, a: c.A, p: c.P, h: c.H}
	if d.h == 0 {
		d.h = defaultH(c.G, c.A)
	}
	if d.g > 1 {
		if d.a*d.h < d.g-1 {
			return nil, specErr(spec, fmt.Sprintf("a·h = %d global ports per group cannot reach the other %d groups", d.a*d.h, d.g-1))
		}
		d.m = d.a * d.h / (d.g - 1)
	}
	nodes := int64(d.g) * int64(d.a) * int64(d.p)
	local := int64(d.g) * int64(d.a) * int64(d.a-1)
	global := int64(d.g) * int64(d.m) * int64(d.g-1)
	if links := 2*nodes + local + global; links > maxLinks {
		return nil, specErr(spec, fmt.Sprintf("%d links, more than %d", links, maxLinks))
	}
	d.nodes = int(nodes)
	d.baseL = 2 * d.nodes
	d.baseG = d.baseL + int(local)
	d.links = d.baseG + int(global)
	d.spec = fmt.Sprintf("dragonfly:g=%d,a=%d,p=%d", d.g, d.a, d.p)
	if d.h != defaultH(d.g, d.a) {
		d.spec += ",h=" + strconv.Itoa(d.h)
	}
	return d, nil
}

// String returns the canonical spec, e.g. "dragonfly:g=9,a=4,p=2".
func (d *dragonfly) String() string { return d.spec }

// Nodes returns g·a·p.
func (d *dragonfly) Nodes() int { return d.nodes }

// Switches returns the g·a routers.
func (d *dragonfly) Switches() int { return d.g * d.a }

// Links returns the number of directed links.
func (d *dragonfly) Links() int { return d.links }

// Capacity returns 1: local, global and node links have the same
// bandwidth.
func (d *dragonfly) Capacity(l Link) float64 {
	if uint(l) >= uint(d.links) {
		linkPanic(l, d.links)
	}
	return 1
}

// idx is the position of group to among the other groups of from.
func idx(from, to int) int {
	if to < from {
		return to
	}
	return to - 1
}

// local returns the local link from router r to router s of group grp.
func (d *dragonfly) local(grp, r, s int) Link {
	return Link(d.baseL + (grp*d.a+r)*(d.a-1) + idx(r, s))
}

// cable returns the ports (hence gateway routers q/h) that global cable t
// between groups gs and gd uses in gs and in gd.
func (d *dragonfly) cable(gs, gd, t int) (qs, qd int) {
	return t*(d.g-1) + idx(gs, gd), t*(d.g-1) + idx(gd, gs)
}

// Route is minimal routing: a local hop to a router with a global cable to
// the destination group (if the source router has none), the global cable,
// and a local hop to the destination router (if needed), plus the node
// links. Among the m cables between the two groups it takes those with the
// fewest local hops and splits the message evenly over them (m = 1 for the
// balanced dragonfly, so usually one path). Hops are listed in travel
// order, path by path; a local link shared by split paths appears once.
func (d *dragonfly) Route(src, dst int, buf []Hop) []Hop {
	buf, ok := inject(src, dst, d.nodes, buf)
	if !ok {
		return buf
	}
	rs, rd := src/d.p, dst/d.p
	gs, gd := rs/d.a, rd/d.a
	rs, rd = rs%d.a, rd%d.a
	switch {
	case gs != gd:
		best, n := 3, 0
		for t := range d.m {
			qs, qd := d.cable(gs, gd, t)
			c := b2i(qs/d.h != rs) + b2i(qd/d.h != rd)
			if c < best {
				best, n = c, 0
			}
			if c == best {
				n++
			}
		}
		frac := 1 / float64(n)
		start := len(buf)
		for t := range d.m {
			qs, qd := d.cable(gs, gd, t)
			xs, xd := qs/d.h, qd/d.h
			if b2i(xs != rs)+b2i(xd != rd) != best {
				continue
			}
			if xs != rs {
				buf = addHop(buf, start, d.local(gs, rs, xs), frac)
			}
			buf = append(buf, Hop{Link(d.baseG + gs*d.m*(d.g-1) + qs), frac})
			if xd != rd {
				buf = addHop(buf, start, d.local(gd, xd, rd), frac)
			}
		}
	case rs != rd:
		buf = append(buf, Hop{d.local(gs, rs, rd), 1})
	}
	return append(buf, Hop{Link(2*dst + 1), 1})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// addHop appends l with frac, or adds frac to l's hop if buf[start:] has it.
func addHop(buf []Hop, start int, l Link, frac float64) []Hop {
	for i := start; i < len(buf); i++ {
		if buf[i].Link == l {
			buf[i].Frac += frac
			return buf
		}
	}
	return append(buf, Hop{l, frac})
}

// Endpoint returns the vertices l connects.
func (d *dragonfly) Endpoint(l Link) (from, to Vertex) {
	if uint(l) >= uint(d.links) {
		linkPanic(l, d.links)
	}
	i := int(l)
	switch {
	case i < d.baseL:
		n, r := node(i/2), sw(i/2/d.p)
		if i%2 == 1 {
			return r, n
		}
		return n, r
	case i < d.baseG:
		e := i - d.baseL
		r, j := e/(d.a-1), e%(d.a-1)
		s := r % d.a
		if j >= s {
			j++
		}
		return sw(r), sw(r - s + j)
	default:
		e := i - d.baseG
		per := d.m * (d.g - 1)
		gs, q := e/per, e%per
		gd := q % (d.g - 1)
		if gd >= gs {
			gd++
		}
		_, qd := d.cable(gs, gd, q/(d.g-1))
		return sw(gs*d.a + q/d.h), sw(gd*d.a + qd/d.h)
	}
}

// Degree is the ports of a router: p nodes, a−1 local cables and its
// global cables (router 0 has the most, min(h, m·(g−1))).
func (d *dragonfly) Degree() int {
	return d.p + d.a - 1 + min(d.h, d.m*(d.g-1))
}

// Diameter is the longest minimal route between nodes, node links
// included: 5 (node, local, global, local, node) in a usual dragonfly, less
// when routers have cables to every group (it checks every pair of groups,
// in time proportional to the global cables).
func (d *dragonfly) Diameter() int {
	switch {
	case d.nodes == 1:
		return 0
	case d.g == 1 && d.a == 1:
		return 2
	case d.g == 1 || d.a == 1:
		return 3
	case d.m < d.a:
		return 5 // fewer gateways than routers on both sides
	}
	worst := 0
	seenS := make([]bool, d.a)
	seenD := make([]bool, d.a)
	pairs := make(map[[2]int]bool, d.m)
	for gs := range d.g {
		for gd := range d.g {
			if gs == gd {
				continue
			}
			clear(seenS)
			clear(seenD)
			clear(pairs)
			ns, nd := 0, 0
			for t := range d.m {
				qs, qd := d.cable(gs, gd, t)
				xs, xd := qs/d.h, qd/d.h
				if !seenS[xs] {
					seenS[xs] = true
					ns++
				}
				if !seenD[xd] {
					seenD[xd] = true
					nd++
				}
				pairs[[2]int{xs, xd}] = true
			}
			v := 0
			switch {
			case ns < d.a && nd < d.a:
				return 5
			case len(pairs) < d.a*d.a:
				v = 1
			}
			worst = max(worst, v)
		}
	}
	return 3 + worst
}

// Bisection is the usual dragonfly bisection, the cables between two halves
// of the groups: for g ≥ 2 the global cables between groups 0..⌊g/2⌋−1 and
// the rest, m·⌊g/2⌋·⌈g/2⌉ (balanced when g is even); for one group the
// local cables between two halves of its routers, ⌊a/2⌋·⌈a/2⌉; for one
// router ⌊p/2⌋ node links. It is the minimal balanced cut for the
// dragonflies the tests check exhaustively, but not always: with very
// small groups and unused global ports a cut through groups can be smaller
// (g=4,a=2,p=2,h=2: 3 cables rather than 4).
func (d *dragonfly) Bisection() float64 {
	switch {
	case d.g > 1:
		return float64(d.m * (d.g / 2) * ((d.g + 1) / 2))
	case d.a > 1:
		return float64((d.a / 2) * ((d.a + 1) / 2))
	default:
		return float64(d.p / 2)
	}
}
