package algorithms

import "github.com/scoll/scoll/schedule"

// Parallel ring reduce (Marendic et al.'s Parallel Ring; the bucket or
// cyclic algorithm): a ring reduce-scatter of P blocks (redscatRing; rank r
// ends with block r), then a binomial gather of the blocks to the root
// (reduceGatherBlocks). The ring combines block j in ring order j+1, …, j,
// so the operator must be commutative.
//
//	P=4, root 0:  ring:   3 steps, r→r+1 (see the ring reduce-scatter)
//	              gather: 1→0 b1, 3→2 b3; then 2→0 b2..3
//
// Cost: (P − 1 + ⌈lg P⌉)α + 2((P−1)/P)nβ + ((P−1)/P)nγ: Table 3's Parallel
// Ring row for every P (the gather's bytes exactly so on powers of two).
// Source: Marendic et al. 2016 sec. 5.5.2, Table 3; Thakur, Rabenseifner,
// Gropp 2005 (ring reduce-scatter); Chan et al. 2007 (bucket algorithm).
func reduceParallelRing(b *schedule.Builder, p *Params) {
	n, P, r := p.Count, p.Size, p.Rank
	acc, in, done := reduceBlocksSetup(b, p)
	if done {
		return
	}
	l := redscatSplit(n, P)
	redscatRing(b, r, P, &redscatRingArgs{l: l, in: in, acc: acc, out: l.blk(acc, r), segs: 1})
	reduceGatherBlocks(b, p, &l, acc, func(r int) int { return r }, func(v int) int { return v })
}

// reduceBlocksSetup returns where a reduce-scatter-then-gather reduction
// accumulates the vector (the root's receive buffer, else scratch) and the
// rank's input; with no elements, or one rank (whose input it copies), it
// reports done.
func reduceBlocksSetup(b *schedule.Builder, p *Params) (acc, in schedule.Region, done bool) {
	in = p.input()
	if p.Count == 0 {
		return acc, in, true
	}
	if p.Rank == p.Root {
		acc = schedule.RecvBuf(0, p.Count)
	} else {
		acc = b.Alloc(p.Count)
	}
	if p.Size == 1 {
		b.Copy(acc, in)
		b.EndRound()
		return acc, in, true
	}
	return acc, in, false
}

// reduceGatherBlocks gathers the reduced blocks l of acc to the root after a
// reduce-scatter in which the rank of virtual rank v = virt(r) holds block
// v (real(v) is the rank of v). The tree is the order-preserving binomial
// tree over virtual ranks (rtTwoSided), so every subtree's blocks are one
// contiguous range of acc, which travels in one message and lands in place:
// ⌈lg P⌉ rounds, ((P−1)/P)·n elements into the root on powers of two.
func reduceGatherBlocks(b *schedule.Builder, p *Params, l *redscatLayout, acc schedule.Region, virt, real func(int) int) {
	node := rtTwoSided(p.Size, virt(p.Root), 2, virt(p.Rank))
	if node.parent >= 0 {
		node.parent = real(node.parent)
	}
	for i := range node.kids {
		node.kids[i].rank = real(node.kids[i].rank)
	}
	reg := func(lo, hi int) schedule.Region { return acc.Sub(l.displ(lo), l.displ(hi)-l.displ(lo)) }
	rtGather(b, node, reg, nil)
}

// reduceBlocksCost is the cost of a reduce-scatter of msgs start-ups
// moving ((P−1)/P)·n bytes followed by reduceGatherBlocks: (msgs + ⌈lg P⌉)α
// + 2((P−1)/P)nβ + ((P−1)/P)nγ (0 for one rank or no data).
func reduceBlocksCost(p *Params, msgs int) Cost {
	if p.Size == 1 || p.Count == 0 {
		return Cost{}
	}
	f := float64(p.Size-1) / float64(p.Size) * p.bytes(p.Count)
	return Cost{Alpha: float64(msgs + ceilLog2(p.Size)), Beta: 2 * f, Gamma: f}
}

func init() {
	register(Info{Name: ParallelRing, Requires: NeedsCommutative, Linear: true, Build: reduceParallelRing,
		Cost:   func(p *Params) Cost { return reduceBlocksCost(p, p.Size-1) },
		Doc:    "ring reduce-scatter, then binomial gather of the blocks (Marendic et al.'s Parallel Ring)",
		Source: "Marendic et al. 2016 sec. 5.5.2; Thakur, Rabenseifner, Gropp 2005; Chan et al. 2007"}, schedule.Reduce)
}
