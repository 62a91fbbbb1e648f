package algorithms

import "github.com/scoll/scoll/schedule"

// Ring allreduce: a ring reduce-scatter followed by a ring allgather.
//
// The vector is cut into P blocks (lengths differ by at most one). In the
// reduce-scatter steps k = 0..P−2 rank r sends its partial of block r−k−1 to
// r+1 and combines the partial of block r−k−2 arriving from r−1 with its own
// input; after P−1 steps it holds block r fully reduced. In the allgather
// steps it forwards block r−k and receives block r−k−1. Blocks combine in ring
// order, so the operator must be commutative.
//
// No element is copied: out of place, partials are received straight into
// their place in the receive buffer and the rank's input is reduced into them;
// in place, they are received into one block (or segment) of scratch and
// reduced into the receive buffer. With Params.Segment > 0 each block is
// pipelined in segments of at most Segment elements, which bounds the
// message and scratch size at the price of more rounds.
//
//	P=3   reduce-scatter: 0→1 b2 1→2 b0 2→0 b1 | 0→1 b1 1→2 b2 2→0 b0
//	      allgather:      0→1 b0 1→2 b1 2→0 b2 | 0→1 b2 1→2 b0 2→0 b1
//
// Cost: 2(P−1)·S·α + 2((P−1)/P)·nβ + ((P−1)/P)·nγ for S segments a block.
// Source: Thakur, Rabenseifner, Gropp 2005; Hoefler–Moor 2014 sec. 3;
// Sack 2011 sec. 3.2 (Gloo/Baidu ring allreduce).
func allreduceRing(b *schedule.Builder, p *Params) {
	n, P, r := p.Count, p.Size, p.Rank
	l := redscatSplit(n, P)
	buf := schedule.RecvBuf(0, n)
	S := redscatSegments(l.maxCount(), p.Segment)
	redscatRing(b, r, P, &redscatRingArgs{
		l: l, in: p.input(), acc: buf, out: l.blk(buf, r), segs: S,
	})
	redscatRingGather(b, r, P, &l, buf, S)
}

func allreduceRingCost(p *Params) Cost {
	P := float64(p.Size)
	n := p.bytes(p.Count)
	S := float64(redscatSegments((p.Count+p.Size-1)/p.Size, p.Segment))
	return Cost{Alpha: 2 * (P - 1) * S, Beta: 2 * n * (P - 1) / P, Gamma: n * (P - 1) / P}
}

func init() {
	register(Info{Name: Ring, Requires: NeedsCommutative, Linear: true, Build: allreduceRing, Cost: allreduceRingCost,
		Doc:    "ring reduce-scatter then ring allgather, optionally segmented; bandwidth-optimal",
		Source: "Thakur, Rabenseifner, Gropp 2005; Hoefler-Moor 2014 sec. 3; Sack 2011 sec. 3.2"}, schedule.Allreduce)
}
