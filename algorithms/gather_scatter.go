package algorithms

import (
	"github.com/scoll/scoll/schedule"
)

// Gather and scatter (and their v-variants for the linear algorithms).
// Blocks are in absolute rank order in the root's buffer. In place, the
// root's gather block is already in its receive buffer, and a scatter root
// keeps its block in the send buffer and receives nothing.

// rtBlockLen returns rank r's block length in a gather or scatter, in O(1).
func rtBlockLen(p *Params, r int) int {
	if p.Coll.Vector() {
		return p.Counts[r]
	}
	return p.Count
}

// Linear gather (also gatherv): every rank sends its block straight to the
// root, which posts all receives in one round.
//
//	round 0: 1→root b1, 2→root b2, ..., P−1→root b_{P−1}
//
// Cost: (P−1)α + (N − n_root)β for N the gathered bytes.
// Source: Hoefler–Moor 2014 sec. 3.1.1 (flat tree); MPI standard reference
// implementation.
func gatherLinear(b *schedule.Builder, p *Params) {
	if p.Rank != p.Root {
		b.Send(p.Root, schedule.SendBuf(0, rtBlockLen(p, p.Rank)))
		b.EndRound()
		return
	}
	counts, displs := p.gatherBlocks()
	for q := range p.Size {
		if q != p.Root {
			b.Recv(q, schedule.RecvBuf(displs[q], counts[q]))
		}
	}
	b.Copy(schedule.RecvBuf(displs[p.Root], counts[p.Root]), p.ownBlock())
	b.EndRound()
}

// Linear scatter (also scatterv): the root sends every rank its block in
// one round.
//
//	round 0: root→1 b1, root→2 b2, ..., root→P−1 b_{P−1}
//
// Cost: (P−1)α + (N − n_root)β.
// Source: Hoefler–Moor 2014 sec. 3.1.1 (flat tree).
func scatterLinear(b *schedule.Builder, p *Params) {
	if p.Rank != p.Root {
		b.Recv(p.Root, schedule.RecvBuf(0, rtBlockLen(p, p.Rank)))
		b.EndRound()
		return
	}
	counts, displs := p.gatherBlocks()
	for q := range p.Size {
		if q != p.Root {
			b.Send(q, schedule.SendBuf(displs[q], counts[q]))
		}
	}
	if !p.InPlaceAt(p.Rank) {
		b.Copy(schedule.RecvBuf(0, counts[p.Root]), schedule.SendBuf(displs[p.Root], counts[p.Root]))
	}
	b.EndRound()
}

func gatherLinearCost(p *Params) Cost {
	counts, _ := p.gatherBlocks()
	return Cost{Alpha: float64(p.Size - 1), Beta: p.bytes(total(counts) - counts[p.Root])}
}

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
	n, r := p.Count, p.Rank
	node := rtTwoSided(p.Size, p.Root, 2, r)
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

func gatherBinomialCost(p *Params) Cost {
	return Cost{Alpha: float64(ceilLog2(p.Size)), Beta: p.bytes((p.Size - 1) * p.Count)}
}

func init() {
	for _, c := range []schedule.Collective{schedule.Gather, schedule.Gatherv} {
		Register(Info{Coll: c, Name: Linear, Linear: true, Build: gatherLinear, Cost: gatherLinearCost,
			Doc:    "every rank sends its block straight to the root",
			Source: "Hoefler-Moor 2014 sec. 3.1.1"})
	}
	for _, c := range []schedule.Collective{schedule.Scatter, schedule.Scatterv} {
		Register(Info{Coll: c, Name: Linear, Linear: true, Build: scatterLinear, Cost: gatherLinearCost,
			Doc:    "the root sends every rank its block directly",
			Source: "Hoefler-Moor 2014 sec. 3.1.1"})
	}
	Register(Info{Coll: schedule.Gather, Name: Binomial, Build: gatherBinomial, Cost: gatherBinomialCost,
		Doc:    "binomial tree of contiguous rank ranges; one message per tree edge",
		Source: "Heath-Solomonik notes sec. 5.2.1; Hoefler-Moor 2014 sec. 3.1.2"})
	Register(Info{Coll: schedule.Scatter, Name: Binomial, Build: scatterBinomial, Cost: gatherBinomialCost,
		Doc:    "binomial tree of contiguous rank ranges, largest subtree first",
		Source: "Heath-Solomonik notes sec. 5.2.1; Hoefler-Moor 2014 sec. 3.1.2"})
}
