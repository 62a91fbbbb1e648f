package algorithms

import "github.com/scoll/scoll/schedule"

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
//
// It is Marendic et al.'s Butterfly (sec. 5.5.3: recursive-halving
// reduce-scatter, then a gather), and on a power of two ranks its cost is
// their Table 3 row 2αn + 2((P−1)/P)mβ + ((P−1)/P)mγ (model.MarendicButterfly;
// TestMarendicButterflyIsRabenseifner). Where it differs: their
// implementation needs P a power of two and gathers with the library's
// MPI_Gather, while this one folds the P − P' extra ranks first (the α + nβ
// + nγ above, which the row does not have) and gathers along the halving
// steps reversed, so the blocks arrive in place; its critical path also
// carries the copies of the kept halves, which the row leaves out.
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

func reduceRabenseifnerCost(p *Params) Cost { return halvingCost(p, 1) }

func init() {
	register(Info{Name: Rabenseifner, Build: reduceRabenseifner, Cost: reduceRabenseifnerCost,
		Doc:    "reduce-scatter by recursive halving, then binomial gather; for long vectors (Marendic et al.'s Butterfly)",
		Source: "Rabenseifner 2004; Thakur, Rabenseifner, Gropp 2005"}, schedule.Reduce)
}
