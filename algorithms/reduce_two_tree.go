package algorithms

import (
	"math/bits"
	"slices"

	"github.com/scoll/scoll/schedule"
)

// Two-tree reduce (Sanders, Speck and Träff's two-tree, reversed; Marendic
// et al.'s Two-tree): the P−1 ranks other than the root form the two
// complementary in-order binary trees of the two-tree broadcast (first tree
// on positions 1..P−1, second its mirror or shift, twoTreeSecond); the
// first half of the vector is reduced up the first tree and the second half
// up the second, both segmented and pipelined at once (rtReduceStreams), so
// every rank's ports carry one segment of each tree a step.
//
// Positions are ranks relative to the root. For a non-commutative operator
// the trees must keep rank order: positions are then laid on the ranks in
// order from an end of the line (the root itself when it is 0 or P−1,
// else rank 0, which passes each finished segment on to the root: one hop
// more), and for P−1 odd the second tree is the in-order tree over
// positions 2..P−1 with position 1 a second child of the root (the root
// then receives three segments a step instead of two).
//
//	P=8 (m=7), commutative:  tree 1:      4           tree 2 (shift):  5
//	                                 2         6                  3         7
//	                               1   3     5   7              2   4     6   1
//
// The default segment length cuts each half into Table 3's optimal number
// of segments for the trees' depth D, √((D−1)·(m/2)(β+γ)/α) with InProcess's
// α, β, γ (Params.Segment sets it instead).
//
// Cost: (D + S − 1)·2(α + 2sβ + sγ) for S segments of s bytes a half,
// D = ⌊lg(P−1)⌋ + 1 (one more when relayed): each step copies the rank's
// own segment of each tree (charged like bytes sent) as well as sending one. Table 3's Two-tree row,
// 4(n−1)α + 4√((n−1)α)·√(βm/2) + mβ + 2mγ, is the bound of their source,
// not this schedule's time (see model.MarendicTwoTree).
// Source: Sanders, Speck, Träff 2009; Marendic et al. 2016 Table 3.
func reduceTwoTree(b *schedule.Builder, p *Params) {
	P, n, r := p.Size, p.Count, p.Rank
	in, out := p.input(), schedule.RecvBuf(0, n)
	if P == 1 {
		rtReduce(b, p, rtNode{member: true, parent: -1}, max(n, 1))
		return
	}
	m := P - 1
	h := (n + 1) / 2
	halves := [2][2]schedule.Region{{in.Sub(0, h), out.Sub(0, h)}, {in.Sub(h, n-h), out.Sub(h, n-h)}}
	relayed, vroot := twoTreeRoot(p)
	rank := func(v int) int { return mod(v+vroot, P) }
	v := mod(r-vroot, P)
	seg := rtOptSegment(p, h, twoTreeDepth(p))
	var streams, relays []rtRedStream
	for t := range 2 {
		parent, level, kids, levels := twoTreePos(t, v, m, p.Commutative)
		node := rtNode{member: true, parent: -1, level: level}
		if v > 0 {
			node.parent = rank(parent)
		} else if relayed {
			node.parent = p.Root
		}
		for i, c := range kids {
			node.kids = append(node.kids, rtKid{rank: rank(c), level: levels[i], left: rank(c) < r})
		}
		slices.SortStableFunc(node.kids, func(a, b rtKid) int {
			if a.level != b.level {
				return a.level - b.level
			}
			return dist(a.rank, r) - dist(b.rank, r)
		})
		streams = append(streams, rtRedStream{node: node, in: halves[t][0], out: halves[t][1]})
		if relayed && r == p.Root {
			_, top, _, _ := twoTreePos(t, 0, m, p.Commutative)
			relays = append(relays, rtRedStream{relay: true, out: halves[t][1],
				node: rtNode{member: true, parent: -1, level: top + 1, kids: []rtKid{{rank: vroot, level: top}}}})
		}
	}
	rtReduceStreams(b, append(streams, relays...), seg)
}

// twoTreeRoot returns whether two-tree relays its result from rank 0 to
// the root (a non-commutative operator and a root inside the line), and
// the rank its positions are relative to.
func twoTreeRoot(p *Params) (relayed bool, vroot int) {
	if !p.Commutative && p.Root > 0 && p.Root < p.Size-1 {
		return true, 0
	}
	return false, p.Root
}

// twoTreeDepth returns the steps a segment takes to the root: the depth of
// the trees, plus one when relayed.
func twoTreeDepth(p *Params) int {
	d := bits.Len(uint(p.Size - 1))
	if relayed, _ := twoTreeRoot(p); relayed {
		d++
	}
	return d
}

// twoTreePos returns position v's parent position, level, kid positions and
// their levels in tree t (0 or 1) of two-tree over positions 0..m (0 the
// root). Levels are subtree heights: a position's trailing zeros in the
// in-order numbering, the root one above its kids.
func twoTreePos(t, v, m int, commutative bool) (parent, level int, kids, levels []int) {
	ident := func(j int) int { return j }
	if t == 0 {
		return ioTreePos(v, m, ident, ident)
	}
	if m%2 == 0 || commutative {
		sig, inv := twoTreeSecond(m)
		return ioTreePos(v, m, sig, inv)
	}
	// Order-preserving second tree for m odd: positions 2..m carry the
	// in-order tree over 1..m−1, and position 1 hangs off the root.
	top := 0
	if m > 1 {
		top = bits.TrailingZeros(uint(floorPow2(m - 1)))
	}
	switch {
	case v == 1:
		return 0, top, nil, nil
	case m == 1:
		return -1, 1, []int{1}, []int{0}
	}
	up, down := func(j int) int { return j + 1 }, func(x int) int { return x - 1 }
	parent, level, kids, levels = ioTreePos(v, m-1, up, down)
	if v == 0 {
		kids, levels = append(kids, 1), append(levels, top)
	}
	return parent, level, kids, levels
}

// ioTreePos returns position v's view of the in-order binary tree over
// 1..m (rtIoParent, rtIoKids) laid on positions by sig (inv its inverse),
// under a root at position 0: parent position, level, kids and their levels.
func ioTreePos(v, m int, sig, inv func(int) int) (parent, level int, kids, levels []int) {
	if v == 0 {
		top := floorPow2(m)
		lg := bits.TrailingZeros(uint(top))
		return -1, lg + 1, []int{sig(top)}, []int{lg}
	}
	j := inv(v)
	if up := rtIoParent(j, m); up != 0 {
		parent = sig(up)
	}
	for _, c := range rtIoKids(j, m) {
		kids, levels = append(kids, sig(c)), append(levels, bits.TrailingZeros(uint(c)))
	}
	return parent, bits.TrailingZeros(uint(j)), kids, levels
}

func reduceTwoTreeCost(p *Params) Cost {
	q := *p
	h := (p.Count + 1) / 2
	D := twoTreeDepth(p)
	q.Segment = rtOptSegment(p, h, D)
	c := rtPipeCost(&q, h, D, 2, 2)
	// Each step also copies the rank's own segment of each tree before it
	// combines the children's into it (rtReduceStreams): as many bytes as
	// it sends.
	c.Copy = c.Beta
	return c
}

func init() {
	register(Info{Name: TwoTree, Build: reduceTwoTree, Cost: reduceTwoTreeCost,
		Doc:    "halves reduced up two complementary binary trees at once, segmented (two-tree); order-preserving",
		Source: "Sanders, Speck, Traff 2009; Marendic et al. 2016 Table 3"}, schedule.Reduce)
}

// dist returns |a − b|.
func dist(a, b int) int {
	if a < b {
		return b - a
	}
	return a - b
}
