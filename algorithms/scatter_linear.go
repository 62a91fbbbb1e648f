package algorithms

import "github.com/scoll/scoll/schedule"

// Linear scatter (also scatterv): the root sends every rank its block in
// one round.
//
//	round 0: root→1 b1, root→2 b2, ..., root→P−1 b_{P−1}
//
// Cost: (P−1)α + (N − n_root)β.
// Source: Hoefler–Moor 2014 sec. 3.1.1 (flat tree).
func scatterLinear(b *schedule.Builder, p *Params) {
	l := rtRootBlocks(p)
	blk := func(q int) schedule.Region { return schedule.SendBuf(l.displ(q), l.count(q)) }
	flatTree(b, p, false, schedule.RecvBuf(0, rtBlockLen(p, p.Rank)), blk, func() {
		if !p.InPlaceAt(p.Rank) {
			b.Copy(schedule.RecvBuf(0, l.count(p.Root)), blk(p.Root))
		}
	})
}

func init() {
	register(Info{Name: Linear, Linear: true, Build: scatterLinear, Cost: gatherLinearCost,
		Doc:    "the root sends every rank its block directly",
		Source: "Hoefler-Moor 2014 sec. 3.1.1"}, schedule.Scatter, schedule.Scatterv)
}
