package algorithms

import "github.com/scoll/scoll/schedule"

// Node-aware reduce (hier).
//
// Each group (see hier.go) reduces to its leader (the root in the root's
// group, the lowest rank elsewhere) along the order-preserving binomial
// tree, a leader other than the root into scratch; the leaders reduce their
// partials to the root with the inner algorithm, in place at the root when
// its partial is in its receive buffer. A leader alone in its group passes
// its input on as its partial. With a non-commutative operator the groups
// are runs of consecutive ranks and the inner algorithm must keep rank order.
//
//	nodes 0 0 1 1 1, root 3:  1→0, 2→3 4→3 (binomial) | leaders 0, 3: inner reduce 0→3
//
// Cost (estimate): ⌈lg k⌉(α + nβ + nγ) on the largest group k + inner(L).
func reduceHier(b *schedule.Builder, p *Params) {
	g := hierGroupsOf(p)
	n, r := p.Count, p.Rank
	gi := g.group[r]
	mem := g.members[gi]
	leaders := g.leaders(p.Root)
	lead := leaders[gi]
	none := schedule.RecvBuf(0, 0)
	part := p.input()
	if len(mem) > 1 {
		q := p.sub(schedule.Reduce, len(mem), g.index[r], g.index[lead], n, p.InPlaceAt(p.Root) && lead == p.Root)
		recv := none
		switch {
		case r == p.Root:
			recv = schedule.RecvBuf(0, n)
		case r == lead:
			recv = b.Alloc(n)
		}
		hierEmbed(b, hierLocal(schedule.Reduce), &q, mem, p.input(), recv)
		part = recv
	}
	if r != lead {
		return
	}
	recv := none
	if r == p.Root {
		recv = schedule.RecvBuf(0, n)
		if part == recv {
			part = none // in place
		}
	}
	hierRunInner(b, p, g, gi, leaders, part, recv)
}

func reduceHierCost(p *Params) Cost {
	return hierCost(p, schedule.Reduce, p.Count, schedule.NumCollectives, 0)
}

func init() {
	register(Info{Name: Hier, Build: reduceHier, Cost: reduceHierCost, Requires: NeedsNodes,
		Doc:    "node-aware: binomial reduce in each node, inner reduce among node leaders (Params.Inner)",
		Source: hierSource}, schedule.Reduce)
}
