package topology

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ClosRouting is how a Clos network spreads traffic over its up-paths.
// (A two-valued enum with a String, shaped like sim.Ports by nature.)
type ClosRouting uint8

const (
	// ClosIdeal spreads traffic between different leaf switches evenly
	// over all shortest up-paths (the "perfect oracular routing" of Sack's
	// thesis, sec. 3.1): each of the k uplinks of the source leaf carries
	// 1/k of the message, and so on up the tree.
	ClosIdeal ClosRouting = iota
	// ClosDModK is static destination-mod-k routing, as in InfiniBand
	// subnet managers: a message to node d leaves its leaf switch on
	// uplink d mod k1 and, in a 3-level tree, leaves the aggregation switch
	// on uplink ⌊d/k1⌋ mod (R/2); the way down is then forced.
	ClosDModK
)

// String returns "ideal" or "dmodk", as specs spell them.
func (r ClosRouting) String() string {
	if r == ClosDModK {
		return "dmodk"
	}
	return "ideal"
}

// ClosConfig describes a Clos (fat-tree) network in the parameters of
// Sack's thesis (sec. 3.1).
type ClosConfig struct {
	// R is the switch radix (ports per switch).
	R int
	// T is the number of nodes per leaf switch.
	T int
	// Mu is the taper: minimal bisection bandwidth over injection
	// bandwidth, 0 < Mu ≤ 1.
	Mu float64
	// Levels is 2 (leaf and spine; 0 means 2) or 3 (leaf, aggregation,
	// core).
	Levels int
	// Nodes is the number of nodes; 0 means the largest tree the radix
	// allows: R·T for 2 levels, R·(R/2)·T for 3.
	Nodes int
	// Routing spreads traffic ideally (the default) or by D-mod-k.
	Routing ClosRouting
}

// clos is a 2- or 3-level Clos network (see NewClos).
//
// Numbering. Switches: leaves 0..L−1, then the spines L+j (2 levels) or
// the aggregation switches L + p·k1 + j and the core switches
// L + pods·k1 + j·H + m (3 levels). Links: node n's injection link 2n and
// ejection link 2n+1; leaf ℓ's uplink j: base1 + 2(ℓ·k1 + j) up and +1
// down; aggregation switch (p, j)'s uplink m: base2 + 2((p·k1 + j)·H + m)
// up and +1 down.
type clos struct {
	cfg          ClosConfig
	spec         string
	p, l, k1     int
	h, pods      int // 3 levels only
	c            float64
	base1, base2 int
	links        int
	inv1, inv2   float64 // 1/k1 and 1/(k1·H)
}

// NewClos returns the Clos (fat-tree) network c describes, the idealised
// model of Sack's thesis (sec. 3.1). Errors wrap ErrInvalidSpec.
//
// Leaf switches. Each has T nodes, each node an injection and an ejection
// link of capacity 1, and k1 = ⌈μT⌉ uplinks of capacity μT/k1 each (1 when
// μT is an integer): the uplink bundle of a leaf carries μ times the
// injection bandwidth of its nodes, in both directions. T + k1 ≤ R is
// Sack's constraint (R−T)/T ≥ μ. Nodes fill the leaf switches in order,
// L = ⌈P/T⌉ of them, the last one possibly partly.
//
// 2 levels (the default): k1 spine switches; spine j has one link to
// uplink j of every leaf, so there are at most R leaves and by default
// exactly R: P = R·T (R=32,T=16: 512 nodes; with T = R/2 and μ = 1 the
// classic full fat tree of R²/2 nodes). Nodes (spec "nodes=N") builds a
// smaller network with ⌈N/T⌉ leaves.
//
// 3 levels: leaves form pods of H = R/2 (R must be even). Pod p has k1
// aggregation switches; aggregation switch (p, j) has one link to uplink j
// of every leaf of the pod and H uplinks, uplink m going to core switch
// (j, m); core switch (j, m) has one link to aggregation switch (p, j) of
// every pod, so there are at most R pods, by default exactly R: P =
// R·(R/2)·T (R=8,T=4,μ=1: the 128-node 3-level 8-ary fat tree). All links
// above the leaves have capacity μT/k1, so only the leaf level tapers.
//
// Degree is the most cables at a switch (≤ R), Diameter 4 for 2 levels and
// 6 for 3 with several pods (node links included), Bisection μ·P/2.
func NewClos(c ClosConfig) (Topology, error) { return newClos("", c) }

func parseClos(spec, body string) (ClosConfig, error) {
	var c ClosConfig
	kv, err := parseParams(spec, body, "R", "T", "mu", "levels", "nodes", "routing")
	if err != nil {
		return c, err
	}
	for _, k := range []string{"R", "T", "mu"} {
		if _, ok := kv[strings.ToLower(k)]; !ok {
			return c, specErr(spec, fmt.Sprintf("parameter %s is missing (want clos:R=32,T=16,mu=0.25[,levels=2][,nodes=N][,routing=ideal|dmodk])", k))
		}
	}
	ints := []struct {
		key string
		dst *int
	}{{"r", &c.R}, {"t", &c.T}, {"levels", &c.Levels}, {"nodes", &c.Nodes}}
	for _, p := range ints {
		if v, ok := kv[p.key]; ok {
			if *p.dst, err = parseInt(spec, p.key, v); err != nil {
				return c, err
			}
		}
	}
	if v, ok := kv["levels"]; ok && c.Levels == 0 {
		return c, specErr(spec, fmt.Sprintf("levels %q, want 2 or 3", v))
	}
	if v, ok := kv["nodes"]; ok && c.Nodes == 0 {
		return c, specErr(spec, fmt.Sprintf("nodes %q, want at least 1", v))
	}
	c.Mu, err = strconv.ParseFloat(kv["mu"], 64)
	if err != nil || math.IsNaN(c.Mu) || math.IsInf(c.Mu, 0) {
		return c, specErr(spec, fmt.Sprintf("mu %q is not a number", kv["mu"]))
	}
	switch strings.ToLower(kv["routing"]) {
	case "", "ideal":
		if v, ok := kv["routing"]; ok && v == "" {
			return c, specErr(spec, "routing is empty, want ideal or dmodk")
		}
	case "dmodk", "d-mod-k":
		c.Routing = ClosDModK
	default:
		return c, specErr(spec, fmt.Sprintf("routing %q, want ideal or dmodk", kv["routing"]))
	}
	return c, nil
}

func newClos(spec string, c ClosConfig) (*clos, error) {
	if c.Levels == 0 {
		c.Levels = 2
	}
	switch {
	case c.Levels != 2 && c.Levels != 3:
		return nil, specErr(spec, fmt.Sprintf("levels %d, want 2 or 3", c.Levels))
	case c.R < 2 || c.R > maxParam:
		return nil, specErr(spec, fmt.Sprintf("radix R=%d, want 2 to %d", c.R, maxParam))
	case c.T < 1 || c.T >= c.R:
		return nil, specErr(spec, fmt.Sprintf("T=%d nodes per leaf switch, want 1 to R−1=%d", c.T, c.R-1))
	case !(c.Mu > 0 && c.Mu <= 1):
		return nil, specErr(spec, fmt.Sprintf("taper mu=%g, want 0 < mu ≤ 1", c.Mu))
	case c.Routing > ClosDModK:
		return nil, specErr(spec, fmt.Sprintf("unknown routing %d", c.Routing))
	case c.Nodes < 0:
		return nil, specErr(spec, fmt.Sprintf("%d nodes, want at least 1", c.Nodes))
	case c.Levels == 3 && c.R%2 != 0:
		return nil, specErr(spec, fmt.Sprintf("3 levels need an even radix, have R=%d", c.R))
	}
	t := &clos{cfg: c}
	// ⌈μT⌉, forgiving the rounding of μ·T (0.3·10 = 3.0000000000000004).
	t.k1 = max(1, int(math.Ceil(c.Mu*float64(c.T)-1e-9)))
	if c.T+t.k1 > c.R {
		return nil, specErr(spec, fmt.Sprintf("a leaf switch needs T=%d node ports and ⌈mu·T⌉=%d uplinks, more than R=%d", c.T, t.k1, c.R))
	}
	t.c = c.Mu * float64(c.T) / float64(t.k1)
	maxLeaves := int64(c.R)
	if c.Levels == 3 {
		t.h = c.R / 2
		maxLeaves *= int64(t.h)
	}
	full := maxLeaves * int64(c.T)
	switch {
	case c.Nodes == 0 && full > maxLinks/2:
		return nil, specErr(spec, fmt.Sprintf("%d nodes, more than %d links", full, maxLinks))
	case c.Nodes == 0:
		t.cfg.Nodes = int(full)
	case int64(c.Nodes) > full:
		return nil, specErr(spec, fmt.Sprintf("%d nodes, but %d levels of radix %d with T=%d hold at most %d", c.Nodes, c.Levels, c.R, c.T, full))
	case c.Nodes > maxLinks/2:
		return nil, specErr(spec, fmt.Sprintf("%d nodes, more than %d links", c.Nodes, maxLinks))
	}
	t.p = t.cfg.Nodes
	t.l = (t.p + c.T - 1) / c.T
	t.base1 = 2 * t.p
	links := int64(t.base1) + 2*int64(t.l)*int64(t.k1)
	if c.Levels == 3 {
		t.pods = (t.l + t.h - 1) / t.h
		t.base2 = int(min(links, maxLinks))
		links += 2 * int64(t.pods) * int64(t.k1) * int64(t.h)
	}
	if links > maxLinks {
		return nil, specErr(spec, fmt.Sprintf("%d links, more than %d", links, maxLinks))
	}
	t.links = int(links)
	t.inv1 = 1 / float64(t.k1)
	if c.Levels == 3 {
		t.inv2 = 1 / float64(t.k1*t.h)
	}
	t.spec = t.canonical()
	return t, nil
}

func (t *clos) canonical() string {
	c := t.cfg
	s := fmt.Sprintf("clos:R=%d,T=%d,mu=%s", c.R, c.T, strconv.FormatFloat(c.Mu, 'g', -1, 64))
	full := int64(c.R) * int64(c.T)
	if c.Levels == 3 {
		s += ",levels=3"
		full *= int64(t.h)
	}
	if int64(c.Nodes) != full {
		s += ",nodes=" + strconv.Itoa(c.Nodes)
	}
	if c.Routing != ClosIdeal {
		s += ",routing=" + c.Routing.String()
	}
	return s
}

// String returns the canonical spec, e.g. "clos:R=32,T=16,mu=0.25".
func (t *clos) String() string { return t.spec }

// Nodes returns the node count.
func (t *clos) Nodes() int { return t.p }

// Switches returns the leaf, spine, aggregation and core switches.
func (t *clos) Switches() int {
	if t.cfg.Levels == 3 {
		return t.l + t.pods*t.k1 + t.k1*t.h
	}
	return t.l + t.k1
}

// Links returns the number of directed links.
func (t *clos) Links() int { return t.links }

// Capacity is 1 for node links and μT/⌈μT⌉ for links between switches.
func (t *clos) Capacity(l Link) float64 {
	if uint(l) >= uint(t.links) {
		linkPanic(l, t.links)
	}
	if int(l) < t.base1 {
		return 1
	}
	return t.c
}

// Route goes up to the lowest common level and down again. Between
// different leaf switches, ClosIdeal splits the message evenly over all
// up-paths and ClosDModK takes one, chosen by the destination. Hops are
// listed level by level in travel order: injection, leaf uplinks, (3
// levels: aggregation uplinks, their down links,) leaf down links, ejection.
func (t *clos) Route(src, dst int, buf []Hop) []Hop {
	buf, ok := inject(src, dst, t.p, buf)
	if !ok {
		return buf
	}
	ls, ld := src/t.cfg.T, dst/t.cfg.T
	if ls != ld {
		k1 := t.k1
		up1, down1 := t.base1+2*ls*k1, t.base1+2*ld*k1+1
		ps, pd := 0, 0
		if t.cfg.Levels == 3 {
			ps, pd = ls/t.h, ld/t.h
		}
		if t.cfg.Routing == ClosDModK {
			j := dst % k1
			buf = append(buf, Hop{Link(up1 + 2*j), 1})
			if ps != pd {
				m := dst / k1 % t.h
				buf = append(buf,
					Hop{Link(t.base2 + 2*((ps*k1+j)*t.h+m)), 1},
					Hop{Link(t.base2 + 2*((pd*k1+j)*t.h+m) + 1), 1})
			}
			buf = append(buf, Hop{Link(down1 + 2*j), 1})
		} else {
			for j := range k1 {
				buf = append(buf, Hop{Link(up1 + 2*j), t.inv1})
			}
			if ps != pd {
				n := k1 * t.h
				up2, down2 := t.base2+2*ps*n, t.base2+2*pd*n+1
				for i := range n {
					buf = append(buf, Hop{Link(up2 + 2*i), t.inv2})
				}
				for i := range n {
					buf = append(buf, Hop{Link(down2 + 2*i), t.inv2})
				}
			}
			for j := range k1 {
				buf = append(buf, Hop{Link(down1 + 2*j), t.inv1})
			}
		}
	}
	return append(buf, Hop{Link(2*dst + 1), 1})
}

// Endpoint returns the vertices l connects.
func (t *clos) Endpoint(l Link) (from, to Vertex) {
	if uint(l) >= uint(t.links) {
		linkPanic(l, t.links)
	}
	i, down := int(l), int(l)%2 == 1
	var a, b Vertex // lower and upper end
	switch {
	case i < t.base1:
		a, b = node(i/2), sw(i/2/t.cfg.T)
	case t.cfg.Levels == 2:
		e := (i - t.base1) / 2
		a, b = sw(e/t.k1), sw(t.l+e%t.k1)
	case i < t.base2:
		e := (i - t.base1) / 2
		leaf, j := e/t.k1, e%t.k1
		a, b = sw(leaf), sw(t.l+leaf/t.h*t.k1+j)
	default:
		e := (i - t.base2) / 2
		agg, m := e/t.h, e%t.h
		j := agg % t.k1
		a, b = sw(t.l+agg), sw(t.l+t.pods*t.k1+j*t.h+m)
	}
	if down {
		return b, a
	}
	return a, b
}

// Degree is the largest number of cables at a switch: a leaf's nodes plus
// its k1 uplinks, a spine's L leaves, an aggregation switch's leaves plus
// its R/2 uplinks, a core switch's pods. It is at most R.
func (t *clos) Degree() int {
	deg := min(t.cfg.T, t.p) + t.k1
	if t.cfg.Levels == 2 {
		return max(deg, t.l)
	}
	return max(deg, min(t.h, t.l)+t.h, t.pods)
}

// Diameter is the hops between nodes under different top-level switches:
// 4 for 2 levels (node, leaf, spine, leaf, node), 6 for 3 levels with more
// than one pod; 2 when all nodes share a leaf switch.
func (t *clos) Diameter() int {
	switch {
	case t.p == 1:
		return 0
	case t.l == 1:
		return 2
	case t.cfg.Levels == 3 && t.pods > 1:
		return 6
	default:
		return 4
	}
}

// Bisection is μ·P/2, the definition of the taper: the bandwidth between
// two halves of the nodes is μ times the injection bandwidth of a half. It
// is the minimal balanced cut when the nodes fill an even number of leaf
// switches (for 3 levels too: the upper levels do not taper). When all
// nodes share one leaf switch it is ⌊P/2⌋ node links.
func (t *clos) Bisection() float64 {
	if t.l == 1 {
		return float64(t.p / 2)
	}
	return t.cfg.Mu * float64(t.p) / 2
}
