package algorithms

import "github.com/scoll/scoll/schedule"

// Node-aware barrier (hier).
//
// Arrival is gathered up a binomial tree of each group (see hier.go) to its
// leader, its lowest rank (the parent of position i is i with its lowest set
// bit cleared); the leaders run the inner barrier; the release goes back
// down the trees.
//
//	nodes 0 0 0 1 1:  up 1→0 2→0, 4→3 | leaders 0, 3: inner barrier |
//	                  down 0→2 0→1, 3→4
//
// Cost (estimate): 2⌈lg k⌉α for the largest group k + inner(L).
func barrierHier(b *schedule.Builder, p *Params) {
	g := hierGroupsOf(p)
	r := p.Rank
	gi, idx := g.group[r], g.index[r]
	mem := g.members[gi]
	k := len(mem)
	low := k // lowest set bit of idx; for the leader every mask < k
	if idx != 0 {
		low = idx & -idx
	}
	var kids []int
	for m := 1; m < low && idx+m < k; m <<= 1 {
		kids = append(kids, mem[idx+m])
	}
	for _, c := range kids {
		b.Recv(c, barrierToken)
	}
	b.EndRound()
	if idx != 0 {
		b.Exchange(mem[idx-low], barrierToken, barrierToken)
		b.EndRound()
	} else {
		hierRunInner(b, p, g, gi, g.leaders(-1), barrierToken, barrierToken)
	}
	for i := len(kids) - 1; i >= 0; i-- {
		b.Send(kids[i], barrierToken)
	}
	b.EndRound()
}

func barrierHierCost(p *Params) Cost {
	c := hierCost(p, schedule.NumCollectives, 0, schedule.NumCollectives, 0)
	c.Alpha += 2 * float64(ceilLog2(hierGroupsOf(p).largest))
	return c
}

func init() {
	register(Info{Name: Hier, Build: barrierHier, Cost: barrierHierCost, Requires: NeedsNodes,
		Doc:    "node-aware: arrival up a binomial tree in each node, inner barrier among node leaders (Params.Inner), release down",
		Source: hierSource}, schedule.Barrier)
}
