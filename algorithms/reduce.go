package algorithms

import (
	"github.com/scoll/scoll/schedule"
)

// Reduce algorithms. The result lands in the root's receive buffer; other
// ranks have none and accumulate in scratch. All of them keep contributions
// in rank order, so non-commutative operators are safe: the tree algorithms
// use trees whose every subtree is a contiguous range of ranks (rtTwoSided,
// rtInOrder, a two-sided chain) and combine a lower range as the left
// operand.
//
// In the costs, n is the vector in bytes, s the segment in bytes and S the
// number of segments.

// Linear reduce: every rank sends its vector to the root, which receives them
// one per round from rank P−1 down to rank 0 and folds each in as the left
// operand (its own vector at its place), so one scratch vector suffices and
// rank order is kept.
//
//	root 0, P=4:  round 0: 3→0   round 1: 2→0, acc = v2⊕acc   round 2: 1→0, ...
//
// Cost: (P−1)(α + nβ + nγ).
// Source: Hoefler–Moor 2014 sec. 3.1.1 (flat tree); MPI reference reduce.
func reduceLinear(b *schedule.Builder, p *Params) {
	n, P, r, root := p.Count, p.Size, p.Rank, p.Root
	in := p.input()
	if r != root {
		b.Send(root, in)
		b.EndRound()
		return
	}
	acc := schedule.RecvBuf(0, n)
	own := in
	if p.InPlaceAt(r) && root < P-1 {
		// Rank P−1's vector arrives in the receive buffer first.
		own = b.Alloc(n)
		b.Copy(own, in)
		b.EndRound()
	}
	var tmp schedule.Region
	if P > 1 {
		tmp = b.Alloc(n)
	}
	init, pending := false, false
	for i := P - 1; i >= 0; i-- {
		if i == root {
			pending = true
			continue
		}
		dst := tmp
		if !init && !pending {
			dst = acc
		}
		b.Recv(i, dst)
		if pending {
			if init {
				b.ReduceLeft(acc, own)
			} else {
				b.Copy(acc, own)
			}
			init, pending = true, false
		}
		if dst == tmp {
			b.ReduceLeft(acc, tmp)
		}
		init = true
		b.EndRound()
	}
	if pending {
		if init {
			b.ReduceLeft(acc, own)
		} else {
			b.Copy(acc, own)
		}
		b.EndRound()
	}
}

func reduceLinearCost(p *Params) Cost {
	k, nb := float64(p.Size-1), p.bytes(p.Count)
	return Cost{Alpha: k, Beta: k * nb, Gamma: k * nb}
}

// k-nomial tree reduce (binomial for k = 2) over the order-preserving
// two-sided tree (rtTwoSided): the root and its larger side form a k-nomial
// tree growing away from the root, the smaller side a mirrored one that hangs
// off the root. A rank receives its children's partial results level by level
// (the k−1 children of a level in one round), combines them in rank order and
// sends the result to its parent. With k = 2 the depth is ⌈lg P⌉ for every
// root, as for the textbook binomial tree over relative ranks, which cannot
// keep rank order when its subtrees wrap around rank P−1.
//
//	P=8, root=0:  round 0: 1→0 3→2 5→4 7→6   round 1: 2→0 6→4   round 2: 4→0
//	P=6, root=4:  main side 4,3,2,1,0 (mirrored), other side 5:
//	              round 0: 3→4 5→4 1→2   round 1: 2→4   round 2: 0→4
//
// Cost: ⌈log_k P⌉(k−1)(α + nβ + nγ) (one level more for k > 2 and a root far
// from both ends).
// Source: Heath–Solomonik notes sec. 5.1 (reduction as reversed broadcast);
// Hoefler–Moor 2014 sec. 3.1.2; Thakur, Rabenseifner, Gropp 2005.
func reduceKnomialK(b *schedule.Builder, p *Params, k int) {
	rtReduce(b, p, rtTwoSided(p.Size, p.Root, k, p.Rank), p.Count)
}

func reduceBinomial(b *schedule.Builder, p *Params) { reduceKnomialK(b, p, 2) }

func reduceKnomial(b *schedule.Builder, p *Params) { reduceKnomialK(b, p, rtRadix(p, 4)) }

func reduceKnomialCostK(p *Params, k int) Cost {
	r, nb := float64(rtLogK(p.Size, k)*(k-1)), p.bytes(p.Count)
	return Cost{Alpha: r, Beta: r * nb, Gamma: r * nb}
}

func reduceBinomialCost(p *Params) Cost { return reduceKnomialCostK(p, 2) }

func reduceKnomialCost(p *Params) Cost { return reduceKnomialCostK(p, rtRadix(p, 4)) }

// rtChain returns rank r's node of the two-sided chain into root: ranks
// below the root pass partial results up (0→1→…→root), ranks above it down
// (P−1→P−2→…→root).
func rtChain(P, root, r int) rtNode {
	n := rtNode{member: true, parent: -1}
	switch {
	case r < root:
		n.parent, n.level, n.lo, n.hi = r+1, r, 0, r+1
		if r > 0 {
			n.kids = []rtKid{{rank: r - 1, level: r - 1, lo: 0, hi: r, left: true}}
		}
	case r > root:
		n.parent, n.level, n.lo, n.hi = r-1, P-1-r, r, P
		if r < P-1 {
			n.kids = []rtKid{{rank: r + 1, level: P - 2 - r, lo: r + 1, hi: P}}
		}
	default:
		n.lo, n.hi = 0, P
		if root > 0 {
			n.kids = append(n.kids, rtKid{rank: root - 1, level: root - 1, lo: 0, hi: root, left: true})
		}
		if root < P-1 {
			n.kids = append(n.kids, rtKid{rank: root + 1, level: P - 2 - root, lo: root + 1, hi: P})
		}
		if len(n.kids) == 2 && n.kids[1].level < n.kids[0].level {
			n.kids[0], n.kids[1] = n.kids[1], n.kids[0]
		}
		for _, c := range n.kids {
			n.level = max(n.level, c.level+1)
		}
	}
	return n
}

// Pipelined chain reduce: the vector is cut into segments of p.Segment
// elements (default 64 KiB); ranks below the root form a chain 0→1→…→root
// and ranks above it a chain P−1→…→root+1→root. Each rank combines a segment
// with its own and forwards it one step after receiving it; the root combines
// both chains with its own vector in rank order.
//
//	root=2, P=5:  step t: 0→1 s_t, 1→2 s_{t−1}, 4→3 s_t, 3→2 s_{t−1}
//
// Cost: (L + S − 1)(α + sβ + sγ), L = max(root, P−1−root).
// Source: Hoefler–Moor 2014 sec. 3.1.4 (pipelines); Sack 2011 sec. 3.2.
func reducePipeline(b *schedule.Builder, p *Params) {
	rtReduce(b, p, rtChain(p.Size, p.Root, p.Rank), rtSegment(p))
}

func reducePipelineCost(p *Params) Cost {
	S, s := rtSegInfo(p, p.Count)
	if p.Size == 1 || S == 0 {
		return Cost{}
	}
	return rtPipeCost(max(p.Root, p.Size-1-p.Root)+S-1, 1, 1, s)
}

// In-order binary tree reduce: the root's left subtree is a balanced in-order
// binary tree over the ranks below it and its right subtree one over the
// ranks above it (rtInOrder), so each subtree is a contiguous rank range with
// its root in the middle and a rank computes left ⊕ own ⊕ right. Segmented
// (p.Segment, default 64 KiB) and pipelined up the tree.
//
//	P=7, root=3:   3 ─┬─ 1 ─┬─ 0     step t: 0,2→1 s_t; 4,6→5 s_t;
//	                  │     └─ 2             1,5→3 s_{t−1}
//	                  └─ 5 ─┬─ 4
//	                        └─ 6
//
// Cost: (D + S − 1)·2(α + sβ + sγ), D the tree's depth (≤ ⌊lg P⌋ + 1).
// Source: Open MPI coll/tuned in-order binary reduce (design, not code);
// Hoefler–Moor 2014 sec. 3.1.4.
func reduceInOrderBinary(b *schedule.Builder, p *Params) {
	rtReduce(b, p, rtInOrder(p.Size, p.Root, p.Rank), rtSegment(p))
}

func reduceInOrderBinaryCost(p *Params) Cost {
	S, s := rtSegInfo(p, p.Count)
	if p.Size == 1 || S == 0 {
		return Cost{}
	}
	d := rtInOrder(p.Size, p.Root, p.Root).level
	return rtPipeCost(d+S-1, 2, 2, s)
}

// Rabenseifner reduce: a reduce-scatter by recursive halving followed by a
// binomial gather of the pieces to the root.
//
// With P' the largest power of two ≤ P and rem = P − P', ranks 2i and 2i+1
// (i < rem) first fold: one sends its vector to the other and sits out (2i,
// unless 2i is the root; the survivor combines in rank order). The P'
// remaining ranks, renumbered in rank order, run lg P' halving steps with
// partners at distance 1, 2, 4, …: each keeps half of its current block range
// (the lower half if its bit is clear), receives the partner's contributions
// for it and combines them. Distances grow, so the contributions combined are
// always two adjacent rank ranges and rank order is kept. The gather then
// reverses the steps (distance P'/2 down to 1) towards the root's new number,
// each step merging two adjacent halves.
//
//	P=4, root 0:  halving: 0↔1, 2↔3 (0, 2 keep b0..1; 1, 3 keep b2..3)
//	                       0↔2, 1↔3 (0 keeps b0, 2 b1, 1 b2, 3 b3)
//	              gather:  2→0 b1, 3→1 b3; then 1→0 b2..3
//
// Cost: 2 lg P'·α + 2((P'−1)/P')nβ + ((P'−1)/P')nγ, plus α + nβ + nγ when P
// is not a power of two.
// Source: Rabenseifner 2004; Thakur, Rabenseifner, Gropp 2005 (MPICH
// reduce_scatter_gather); Heath–Solomonik notes sec. 5.2.2.
func reduceRabenseifner(b *schedule.Builder, p *Params) {
	n, P, r, root := p.Count, p.Size, p.Rank, p.Root
	in := p.input()
	pof2 := floorPow2(P)
	rem := P - pof2
	// Pair i < rem is ranks 2i and 2i+1; its survivor is 2i+1, or the root
	// when the root is in the pair, so the root always takes part.
	survivor := func(i int) int {
		if root == 2*i {
			return root
		}
		return 2*i + 1
	}
	newRank := func(x int) int {
		if x < 2*rem {
			if x != survivor(x/2) {
				return -1
			}
			return x / 2
		}
		return x - rem
	}
	oldRank := func(x int) int {
		if x < rem {
			return survivor(x)
		}
		return x + rem
	}
	newRoot := newRank(root)
	nr := newRank(r)
	if nr < 0 {
		b.Send(survivor(r/2), in)
		b.EndRound()
		return
	}
	acc := schedule.RecvBuf(0, n)
	if r != root {
		acc = b.Alloc(n)
	}
	tmp := b.Alloc(n)
	blk := func(base schedule.Region, lo, hi int) schedule.Region {
		off := rtBlockOff(n, pof2, lo)
		return base.Sub(off, rtBlockOff(n, pof2, hi)-off)
	}
	src := in // where this rank's partial vector is; acc after the first combine
	if r < 2*rem {
		other := r ^ 1
		b.Recv(other, tmp)
		b.Copy(acc, in)
		b.ReduceOrdered(acc, tmp, other < r)
		b.EndRound()
		src = acc
	}
	lo, hi := 0, pof2
	for mask := 1; mask < pof2; mask <<= 1 {
		pn := nr ^ mask
		mid := (lo + hi) / 2
		klo, khi, slo, shi := lo, mid, mid, hi
		if nr&mask != 0 {
			klo, khi, slo, shi = mid, hi, lo, mid
		}
		keep := blk(acc, klo, khi)
		t := tmp.Sub(0, keep.Len)
		b.Send(oldRank(pn), blk(src, slo, shi))
		b.Recv(oldRank(pn), t)
		b.Copy(keep, blk(src, klo, khi))
		b.ReduceOrdered(keep, t, pn < nr)
		b.EndRound()
		src, lo, hi = acc, klo, khi
	}
	if src != acc {
		b.Copy(acc, src) // P = 1
		b.EndRound()
	}
	// Binomial gather towards newRoot, undoing the halving steps.
	y := nr ^ newRoot
	for mask := pof2 / 2; mask >= 1; mask >>= 1 {
		if y >= 2*mask {
			continue
		}
		peer := oldRank(nr ^ mask)
		if y >= mask {
			b.Send(peer, blk(acc, lo, hi))
			b.EndRound()
			break
		}
		size := hi - lo
		rlo := lo - lo%(2*size)
		plo := rlo
		if plo == lo {
			plo = lo + size
		}
		b.Recv(peer, blk(acc, plo, plo+size))
		b.EndRound()
		lo, hi = rlo, rlo+2*size
	}
}

func reduceRabenseifnerCost(p *Params) Cost {
	pof2 := floorPow2(p.Size)
	lg := float64(ceilLog2(pof2))
	nb := p.bytes(p.Count)
	f := float64(pof2-1) / float64(pof2)
	c := Cost{Alpha: 2 * lg, Beta: 2 * f * nb, Gamma: f * nb}
	if rem := p.Size - pof2; rem > 0 {
		c.Alpha++
		c.Beta += nb
		c.Gamma += nb
	}
	return c
}

func init() {
	for _, in := range []Info{
		{Name: Linear, Linear: true, Build: reduceLinear, Cost: reduceLinearCost,
			Doc:    "the root receives every vector in turn and combines them in rank order",
			Source: "Hoefler-Moor 2014 sec. 3.1.1"},
		{Name: Binomial, Build: reduceBinomial, Cost: reduceBinomialCost,
			Doc:    "binomial tree of contiguous rank ranges; order-preserving, lg P rounds",
			Source: "Heath-Solomonik notes sec. 5.1; Thakur, Rabenseifner, Gropp 2005"},
		{Name: KNomial, Build: reduceKnomial, Cost: reduceKnomialCost,
			Doc:    "k-nomial tree (radix p.Radix, default 4) of contiguous rank ranges",
			Source: "Hoefler-Moor 2014 sec. 3.1.2"},
		{Name: Pipeline, Build: reducePipeline, Cost: reducePipelineCost,
			Doc:    "segmented pipeline along chains from both ends into the root",
			Source: "Hoefler-Moor 2014 sec. 3.1.4; Sack 2011 sec. 3.2"},
		{Name: InOrderBinary, Build: reduceInOrderBinary, Cost: reduceInOrderBinaryCost,
			Doc:    "segmented in-order binary tree rooted at the root; order-preserving",
			Source: "Open MPI coll/tuned; Hoefler-Moor 2014 sec. 3.1.4"},
		{Name: Rabenseifner, Build: reduceRabenseifner, Cost: reduceRabenseifnerCost,
			Doc:    "reduce-scatter by recursive halving, then binomial gather; for long vectors",
			Source: "Rabenseifner 2004; Thakur, Rabenseifner, Gropp 2005"},
	} {
		in.Coll = schedule.Reduce
		Register(in)
	}
}
