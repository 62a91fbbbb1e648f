package algorithms

import "github.com/scoll/scoll/schedule"

// Binomial scatter: the reverse of the binomial gather. A rank receives its
// subtree's blocks from its parent in one message and hands each child its
// range, largest subtree first.
//
//	P=8, root=0:  round 0: 0→4 b4..7
//	              round 1: 0→2 b2..3, 4→6 b6..7
//	              round 2: 0→1 b1, 2→3 b3, 4→5 b5, 6→7 b7
//
// Cost: ⌈lg P⌉α + ((P−1)/P)Nβ.
// Source: Heath–Solomonik notes sec. 5.2.1; Hoefler–Moor 2014 sec. 3.1.2.
func scatterBinomial(b *schedule.Builder, p *Params) {
	n, r := p.Count, p.Rank
	node := rtTwoSided(p.Size, p.Root, 2, r)
	var reg func(lo, hi int) schedule.Region
	var first func()
	switch {
	case r == p.Root:
		reg = func(lo, hi int) schedule.Region { return schedule.SendBuf(lo*n, (hi-lo)*n) }
		if !p.InPlaceAt(r) {
			first = func() { b.Copy(schedule.RecvBuf(0, n), reg(r, r+1)) }
		}
	case len(node.kids) > 0:
		tmp := b.Alloc((node.hi - node.lo) * n)
		reg = func(lo, hi int) schedule.Region { return tmp.Sub((lo-node.lo)*n, (hi-lo)*n) }
		first = func() { b.Copy(schedule.RecvBuf(0, n), reg(r, r+1)) }
	default:
		reg = func(lo, hi int) schedule.Region { return schedule.RecvBuf(0, n) }
	}
	rtScatter(b, node, reg, first)
}

func init() {
	register(Info{Name: Binomial, Build: scatterBinomial, Cost: gatherBinomialCost,
		Doc:    "binomial tree of contiguous rank ranges, largest subtree first",
		Source: "Heath-Solomonik notes sec. 5.2.1; Hoefler-Moor 2014 sec. 3.1.2"}, schedule.Scatter)
}
