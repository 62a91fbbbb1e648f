package algorithms

import "github.com/scoll/scoll/schedule"

// Linear (flat tree) broadcast: the root sends the whole message to every
// other rank in one round.
//
//	round 0: root→1, root→2, ..., root→P−1
//
// Cost: (P−1)(α + nβ) (the root's sends serialise on one port).
// Source: Hoefler–Moor 2014 sec. 3.1.1 (flat tree).
func bcastLinear(b *schedule.Builder, p *Params) {
	buf := bcastBuf(p)
	flatTree(b, p, false, buf, func(int) schedule.Region { return buf }, nil)
}

func bcastLinearCost(p *Params) Cost {
	k := float64(p.Size - 1)
	return Cost{Alpha: k, Beta: k * p.bytes(p.Count)}
}

func init() {
	register(Info{Name: Linear, Linear: true, Build: bcastLinear, Cost: bcastLinearCost,
		Doc:    "the root sends the message to every rank directly",
		Source: "Hoefler-Moor 2014 sec. 3.1.1"}, schedule.Bcast)
}
