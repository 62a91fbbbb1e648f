package algorithms

import "github.com/scoll/scoll/schedule"

// In-order binary tree reduce: the root's left subtree is a balanced in-order
// binary tree over the ranks below it and its right subtree one over the
// ranks above it (rtInOrder), so each subtree is a contiguous rank range with
// its root in the middle and a rank computes left ⊕ own ⊕ right. Segmented
// (p.Segment, default 64 KiB) and pipelined up the tree.
//
//	P=7, root=3:   3 ─┬─ 1 ─┬─ 0     step t: 0,2→1 s_t; 4,6→5 s_t;
//	                  │     └─ 2             1,5→3 s_{t−1}
//	                  └─ 5 ─┬─ 4
//	                        └─ 6
//
// Cost: (D + S − 1)·2(α + sβ + sγ), D the tree's depth (≤ ⌊lg P⌋ + 1).
// Source: Open MPI coll/tuned in-order binary reduce (design, not code);
// Hoefler–Moor 2014 sec. 3.1.4.
func reduceInOrderBinary(b *schedule.Builder, p *Params) {
	rtReduce(b, p, rtInOrder(p.Size, p.Root, p.Rank), rtSegment(p))
}

func reduceInOrderBinaryCost(p *Params) Cost {
	return rtPipeCost(p, p.Count, rtInOrder(p.Size, p.Root, p.Root).level, 2, 2)
}

func init() {
	register(Info{Name: InOrderBinary, Build: reduceInOrderBinary, Cost: reduceInOrderBinaryCost,
		Doc:    "segmented in-order binary tree rooted at the root; order-preserving",
		Source: "Open MPI coll/tuned; Hoefler-Moor 2014 sec. 3.1.4"}, schedule.Reduce)
}
