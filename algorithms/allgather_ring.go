package algorithms

import "github.com/scoll/scoll/schedule"

// Ring allgather (also allgatherv).
//
// In step k = 0..P-2 rank r passes block (r−k) mod P to r+1 and receives
// block (r−k−1) mod P from r−1. Rank order is kept: each block is copied,
// never combined.
//
//	step 0: 0→1 b0   1→2 b1   2→3 b2   3→0 b3
//	step 1: 0→1 b3   1→2 b0   2→3 b1   3→0 b2
//	step 2: 0→1 b2   1→2 b3   2→3 b0   3→0 b1
//
// Cost: (P−1)α + ((P−1)/P)·nβ for n the gathered bytes.
// Source: Thakur, Rabenseifner and Gropp (2005); Sack (2011) sec. 3.2.
func allgatherRing(b *schedule.Builder, p *Params) {
	P, r := p.Size, p.Rank
	right, left := mod(r+1, P), mod(r-1, P)
	own := p.ownBlock()
	// Uniform blocks are computed, not tabulated: a rank's generator must
	// stay O(1) in memory while it is suspended between rounds.
	var counts, displs []int
	if p.Coll.Vector() {
		counts, displs = p.Counts, p.VDispls()
	}
	blk := func(i int) schedule.Region {
		if counts == nil {
			return schedule.RecvBuf(i*p.Count, p.Count)
		}
		return schedule.RecvBuf(displs[i], counts[i])
	}
	for k := 0; k < P-1; k++ {
		out := blk(mod(r-k, P))
		if k == 0 {
			out = own
		}
		b.Send(right, out)
		b.Recv(left, blk(mod(r-k-1, P)))
		if k == 0 {
			b.Copy(blk(r), own)
		}
		b.EndRound()
	}
	if P == 1 {
		b.Copy(blk(r), own)
	}
}

func allgatherRingCost(p *Params) Cost {
	P := float64(p.Size)
	n := p.bytes(p.Size * p.Count)
	if p.Coll.Vector() {
		n = p.bytes(total(p.Counts))
	}
	return Cost{Alpha: P - 1, Beta: n * (P - 1) / P}
}

func init() {
	register(Info{Name: Ring, Linear: true, Build: allgatherRing, Cost: allgatherRingCost,
		Doc:    "pass blocks around a ring in P-1 steps; bandwidth-optimal",
		Source: "Thakur, Rabenseifner, Gropp 2005; Sack 2011 sec. 3.2"}, schedule.Allgather, schedule.Allgatherv)
}
