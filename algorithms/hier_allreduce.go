package algorithms

import "github.com/scoll/scoll/schedule"

// Node-aware allreduce (hier).
//
// Each group (see hier.go) reduces to its leader, its lowest rank, along the
// order-preserving binomial tree; the leaders allreduce their partials in
// place with the inner algorithm; each leader broadcasts the result to its
// group along a binomial tree. A leader alone in its group copies its input
// to the receive buffer first (unless in place), so the leaders' call is in
// place on every leader. With a non-commutative operator the groups are
// runs of consecutive ranks and the inner algorithm must keep rank order
// (the default rule's choice does).
//
//	nodes 0 0 1 1 1:  reduce 1→0, 3→2 4→2 (binomial) | leaders 0,2: inner
//	                  allreduce | bcast 0→1, 2→3 2→4
//
// Cost (estimate): binomial reduce and bcast on the largest group plus the
// inner algorithm on the L leaders: 2⌈lg k⌉(α + nβ) + ⌈lg k⌉nγ + inner(L).
func allreduceHier(b *schedule.Builder, p *Params) {
	g := hierGroupsOf(p)
	n, r := p.Count, p.Rank
	gi, idx := g.group[r], g.index[r]
	mem := g.members[gi]
	buf := schedule.RecvBuf(0, n)
	none := schedule.RecvBuf(0, 0)
	if len(mem) > 1 {
		q := p.sub(schedule.Reduce, len(mem), idx, 0, n, p.InPlace)
		recv := none
		if idx == 0 {
			recv = buf
		}
		hierEmbed(b, hierLocal(schedule.Reduce), &q, mem, p.input(), recv)
	} else if !p.InPlace {
		b.Copy(buf, p.input())
		b.EndRound()
	}
	if idx == 0 {
		hierRunInner(b, p, g, gi, g.leaders(-1), none, buf)
	}
	if len(mem) > 1 {
		q := p.sub(schedule.Bcast, len(mem), idx, 0, n, false)
		hierEmbed(b, hierLocal(schedule.Bcast), &q, mem, none, buf)
	}
}

func allreduceHierCost(p *Params) Cost {
	return hierCost(p, schedule.Reduce, p.Count, schedule.Bcast, p.Count)
}

func init() {
	register(Info{Name: Hier, Build: allreduceHier, Cost: allreduceHierCost, Requires: NeedsNodes,
		Doc:    "node-aware: reduce in each node, inner allreduce among node leaders (Params.Inner), bcast in each node",
		Source: hierSource}, schedule.Allreduce)
}
