package algorithms

import "github.com/scoll/scoll/schedule"

// Binomial gather over the order-preserving two-sided binomial tree
// (rtTwoSided): every subtree is a contiguous range of ranks, so a rank
// gathers its subtree's blocks into one contiguous scratch area and sends it
// to its parent in one message, and the root receives each child's range
// straight into place, whatever the root.
//
//	P=8, root=0:  round 0: 1→0 b1, 3→2 b3, 5→4 b5, 7→6 b7
//	              round 1: 2→0 b2..3, 6→4 b6..7
//	              round 2: 4→0 b4..7
//
// Cost: ⌈lg P⌉α + ((P−1)/P)Nβ; a rank of subtree size t needs t·n scratch.
// Source: Heath–Solomonik notes sec. 5.2.1; Hoefler–Moor 2014 sec. 3.1.2
// (personalised binomial tree); Thakur, Rabenseifner, Gropp 2005.
func gatherBinomial(b *schedule.Builder, p *Params) {
	gatherTree(b, p, rtTwoSided(p.Size, p.Root, 2, p.Rank))
}

// gatherTree gathers up the tree of node, whose every subtree is a
// contiguous range of ranks: a rank collects its subtree's blocks in one
// scratch area and sends them in one message, the root receives straight
// into place.
func gatherTree(b *schedule.Builder, p *Params, node rtNode) {
	n, r := p.Count, p.Rank
	own := schedule.SendBuf(0, n)
	if p.InPlaceAt(r) {
		own = schedule.RecvBuf(r*n, n)
	}
	var reg func(lo, hi int) schedule.Region
	var first func()
	switch {
	case r == p.Root:
		reg = func(lo, hi int) schedule.Region { return schedule.RecvBuf(lo*n, (hi-lo)*n) }
		first = func() { b.Copy(reg(r, r+1), own) }
	case len(node.kids) > 0:
		tmp := b.Alloc((node.hi - node.lo) * n)
		reg = func(lo, hi int) schedule.Region { return tmp.Sub((lo-node.lo)*n, (hi-lo)*n) }
		first = func() { b.Copy(reg(r, r+1), own) }
	default:
		reg = func(lo, hi int) schedule.Region { return own }
	}
	rtGather(b, node, reg, first)
}

func gatherBinomialCost(p *Params) Cost {
	return Cost{Alpha: float64(ceilLog2(p.Size)), Beta: p.bytes((p.Size - 1) * p.Count)}
}

func init() {
	register(Info{Name: Binomial, Build: gatherBinomial, Cost: gatherBinomialCost,
		Doc:    "binomial tree of contiguous rank ranges; one message per tree edge",
		Source: "Heath-Solomonik notes sec. 5.2.1; Hoefler-Moor 2014 sec. 3.1.2"}, schedule.Gather)
}
