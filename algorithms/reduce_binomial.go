package algorithms

import "github.com/scoll/scoll/schedule"

// k-nomial tree reduce (binomial for k = 2) over the order-preserving
// two-sided tree (rtTwoSided): the root and its larger side form a k-nomial
// tree growing away from the root, the smaller side a mirrored one that hangs
// off the root. A rank receives its children's partial results level by level
// (the k−1 children of a level in one round), combines them in rank order and
// sends the result to its parent. With k = 2 the depth is ⌈lg P⌉ for every
// root, as for the textbook binomial tree over relative ranks, which cannot
// keep rank order when its subtrees wrap around rank P−1.
//
//	P=8, root=0:  round 0: 1→0 3→2 5→4 7→6   round 1: 2→0 6→4   round 2: 4→0
//	P=6, root=4:  main side 4,3,2,1,0 (mirrored), other side 5:
//	              round 0: 3→4 5→4 1→2   round 1: 2→4   round 2: 0→4
//
// Cost: ⌈log_k P⌉(k−1)(α + nβ + nγ) (one level more for k > 2 and a root far
// from both ends).
// Source: Heath–Solomonik notes sec. 5.1 (reduction as reversed broadcast);
// Hoefler–Moor 2014 sec. 3.1.2; Thakur, Rabenseifner, Gropp 2005.
func reduceKnomial(k int) func(*schedule.Builder, *Params) {
	return func(b *schedule.Builder, p *Params) {
		rtReduce(b, p, rtTwoSided(p.Size, p.Root, rtK(p, k), p.Rank), p.Count)
	}
}

func init() {
	registerKnomial(schedule.Reduce, reduceKnomial,
		"binomial tree of contiguous rank ranges; order-preserving, lg P rounds",
		"k-nomial tree (radix p.Radix, default 4) of contiguous rank ranges")
}
