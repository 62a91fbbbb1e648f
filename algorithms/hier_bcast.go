package algorithms

import "github.com/scoll/scoll/schedule"

// Node-aware bcast (hier).
//
// The leaders (the root in its group, the lowest rank elsewhere; see hier.go)
// broadcast from the root with the inner algorithm, then each leader
// broadcasts to its group along a binomial tree rooted at it.
//
//	nodes 0 1 0 1, root 3:  leaders 0, 3: inner bcast 3→0 | 0→2, 3→1
//
// Cost (estimate): inner(L) + ⌈lg k⌉(α + nβ) for the largest group k.
func bcastHier(b *schedule.Builder, p *Params) {
	g := hierGroupsOf(p)
	n, r := p.Count, p.Rank
	gi := g.group[r]
	mem := g.members[gi]
	leaders := g.leaders(p.Root)
	buf := schedule.RecvBuf(0, n)
	none := schedule.RecvBuf(0, 0)
	if r == leaders[gi] {
		hierRunInner(b, p, g, gi, leaders, none, buf)
	}
	if len(mem) > 1 {
		q := p.sub(schedule.Bcast, len(mem), g.index[r], g.index[leaders[gi]], n, false)
		hierEmbed(b, hierLocal(schedule.Bcast), &q, mem, none, buf)
	}
}

func bcastHierCost(p *Params) Cost {
	return hierCost(p, schedule.NumCollectives, 0, schedule.Bcast, p.Count)
}

func init() {
	register(Info{Name: Hier, Build: bcastHier, Cost: bcastHierCost, Requires: NeedsNodes,
		Doc:    "node-aware: inner bcast among node leaders (Params.Inner), then binomial bcast in each node",
		Source: hierSource}, schedule.Bcast)
}
