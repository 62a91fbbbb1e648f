package algorithms

import "github.com/scoll/scoll/schedule"

// k-nomial tree broadcast over relative ranks (binomial for k = 2): a rank
// receives the message from its parent, then sends it to its children level
// by level, farthest first; the k−1 children of one level in one round.
//
//	k=2, P=8:  round 0: 0→4   round 1: 0→2 4→6   round 2: 0→1 2→3 4→5 6→7
//
// Cost: ⌈log_k P⌉(k−1)(α + nβ).
// Source: Heath–Solomonik notes sec. 5.1 (binomial tree); Hoefler–Moor 2014
// sec. 3.1.2 (k-nomial trees); Thakur, Rabenseifner, Gropp 2005 (MPICH).
func bcastKnomial(k int) func(*schedule.Builder, *Params) {
	return func(b *schedule.Builder, p *Params) {
		buf := bcastBuf(p)
		n := rtRelative(p.Size, p.Size, p.Root, rtK(p, k), p.Rank)
		rtScatter(b, n, func(lo, hi int) schedule.Region { return buf }, nil)
	}
}

func init() {
	registerKnomial(schedule.Bcast, bcastKnomial,
		"binomial tree over ranks relative to the root; latency-optimal for short messages",
		"k-nomial tree (radix p.Radix, default 4); a rank feeds k-1 children per round")
}
