package algorithms

import "github.com/scoll/scoll/schedule"

// Node-aware allgather (hier).
//
// The blocks are laid out node by node: the groups (see hier.go) in order,
// each group's ranks in rank order. Each group gathers its blocks to its
// leader, its lowest rank, along a binomial tree, into the group's place of
// that layout; the leaders allgather the groups' runs in place with the
// inner algorithm (an allgather when the groups are equal, else an
// allgatherv); each leader moves the blocks from the layout to their ranks'
// places and broadcasts the whole vector to its group along a binomial tree.
// When every node's ranks are consecutive the layout is the receive buffer
// itself and nothing moves; otherwise the leaders lay out in scratch (P·n
// elements) and unpack with one copy per run of consecutive ranks.
//
//	nodes 0 1 0 1:  layout b0 b2 b1 b3 | gather 2→0, 3→1 | leaders 0, 1:
//	                inner allgather of (b0 b2), (b1 b3) | unpack | bcast 0→2, 1→3
//
// Cost (estimate): ⌈lg k⌉α + (k−1)nβ (gather) + inner(L) + ⌈lg k⌉(α + Pnβ)
// (bcast) for the largest group k, plus Pn copied when nodes interleave.
func allgatherHier(b *schedule.Builder, p *Params) {
	g := hierGroupsOf(p)
	n, r, P := p.Count, p.Rank, p.Size
	gi, idx := g.group[r], g.index[r]
	mem := g.members[gi]
	none := schedule.RecvBuf(0, 0)
	// start[h]: the position of group h's first block in the layout.
	start := make([]int, len(g.members)+1)
	for h, m := range g.members {
		start[h+1] = start[h] + len(m)
	}
	identity := g.consecutive()
	all := schedule.RecvBuf(0, P*n)
	layout := all
	if !identity && idx == 0 {
		layout = b.Alloc(P * n)
	}
	mine := layout.Sub(start[gi]*n, len(mem)*n)
	inPlace := p.InPlace && identity
	if len(mem) > 1 {
		q := p.sub(schedule.Gather, len(mem), idx, 0, n, inPlace)
		send, recv := p.ownBlock(), none
		if idx == 0 {
			recv = mine
		}
		hierEmbed(b, hierLocal(schedule.Gather), &q, mem, send, recv)
	} else if !inPlace {
		b.Copy(mine, p.ownBlock())
		b.EndRound()
	}
	if idx != 0 {
		q := p.sub(schedule.Bcast, len(mem), idx, 0, P*n, false)
		hierEmbed(b, hierLocal(schedule.Bcast), &q, mem, none, all)
		return
	}
	hierRunInner(b, p, g, gi, g.leaders(-1), none, layout)
	if !identity {
		for h, m := range g.members {
			for j := 0; j < len(m); {
				e := j + 1
				for e < len(m) && m[e] == m[e-1]+1 {
					e++
				}
				b.Copy(all.Sub(m[j]*n, (e-j)*n), layout.Sub((start[h]+j)*n, (e-j)*n))
				j = e
			}
		}
		b.EndRound()
	}
	if len(mem) > 1 {
		q := p.sub(schedule.Bcast, len(mem), idx, 0, P*n, false)
		hierEmbed(b, hierLocal(schedule.Bcast), &q, mem, none, all)
	}
}

func allgatherHierCost(p *Params) Cost {
	c := hierCost(p, schedule.Gather, p.Count, schedule.Bcast, p.Size*p.Count)
	if g := hierGroupsOf(p); !g.consecutive() {
		c.Copy += p.bytes(p.Size * p.Count)
	}
	return c
}

func init() {
	register(Info{Name: Hier, Build: allgatherHier, Cost: allgatherHierCost, Requires: NeedsNodes,
		Doc:    "node-aware: binomial gather in each node, inner allgather(v) among node leaders (Params.Inner), bcast in each node",
		Source: hierSource}, schedule.Allgather)
}
