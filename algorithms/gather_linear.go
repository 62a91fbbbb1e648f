package algorithms

import "github.com/scoll/scoll/schedule"

// Linear gather (also gatherv): every rank sends its block straight to the
// root, which posts all receives in one round.
//
//	round 0: 1→root b1, 2→root b2, ..., P−1→root b_{P−1}
//
// Cost: (P−1)α + (N − n_root)β for N the gathered bytes.
// Source: Hoefler–Moor 2014 sec. 3.1.1 (flat tree); MPI standard reference
// implementation.
func gatherLinear(b *schedule.Builder, p *Params) {
	l := rtRootBlocks(p)
	blk := func(q int) schedule.Region { return allgatherBlk(&l, q) }
	flatTree(b, p, true, schedule.SendBuf(0, rtBlockLen(p, p.Rank)), blk,
		func() { b.Copy(blk(p.Root), p.ownBlock()) })
}

func gatherLinearCost(p *Params) Cost {
	counts, _ := p.gatherBlocks()
	return Cost{Alpha: float64(p.Size - 1), Beta: p.bytes(total(counts) - counts[p.Root])}
}

func init() {
	register(Info{Name: Linear, Linear: true, Build: gatherLinear, Cost: gatherLinearCost,
		Doc:    "every rank sends its block straight to the root",
		Source: "Hoefler-Moor 2014 sec. 3.1.1"}, schedule.Gather, schedule.Gatherv)
}
