package algorithms

import "github.com/scoll/scoll/schedule"

// rtChain returns rank r's node of the two-sided chain into root: ranks
// below the root pass partial results up (0→1→…→root), ranks above it down
// (P−1→P−2→…→root).
func rtChain(P, root, r int) rtNode {
	n := rtNode{member: true, parent: -1}
	switch {
	case r < root:
		n.parent, n.level, n.lo, n.hi = r+1, r, 0, r+1
		if r > 0 {
			n.kids = []rtKid{{rank: r - 1, level: r - 1, lo: 0, hi: r, left: true}}
		}
	case r > root:
		n.parent, n.level, n.lo, n.hi = r-1, P-1-r, r, P
		if r < P-1 {
			n.kids = []rtKid{{rank: r + 1, level: P - 2 - r, lo: r + 1, hi: P}}
		}
	default:
		n.lo, n.hi = 0, P
		if root > 0 {
			n.kids = append(n.kids, rtKid{rank: root - 1, level: root - 1, lo: 0, hi: root, left: true})
		}
		if root < P-1 {
			n.kids = append(n.kids, rtKid{rank: root + 1, level: P - 2 - root, lo: root + 1, hi: P})
		}
		if len(n.kids) == 2 && n.kids[1].level < n.kids[0].level {
			n.kids[0], n.kids[1] = n.kids[1], n.kids[0]
		}
		for _, c := range n.kids {
			n.level = max(n.level, c.level+1)
		}
	}
	return n
}

// Pipelined chain reduce: the vector is cut into segments of p.Segment
// elements (default 64 KiB); ranks below the root form a chain 0→1→…→root
// and ranks above it a chain P−1→…→root+1→root. Each rank combines a segment
// with its own and forwards it one step after receiving it; the root combines
// both chains with its own vector in rank order.
//
//	root=2, P=5:  step t: 0→1 s_t, 1→2 s_{t−1}, 4→3 s_t, 3→2 s_{t−1}
//
// Cost: (L + S − 1)(α + sβ + sγ), L = max(root, P−1−root).
// Source: Hoefler–Moor 2014 sec. 3.1.4 (pipelines); Sack 2011 sec. 3.2.
func reducePipeline(b *schedule.Builder, p *Params) {
	rtReduce(b, p, rtChain(p.Size, p.Root, p.Rank), rtSegment(p))
}

func reducePipelineCost(p *Params) Cost {
	return rtPipeCost(p, p.Count, max(p.Root, p.Size-1-p.Root), 1, 1)
}

func init() {
	register(Info{Name: Pipeline, Build: reducePipeline, Cost: reducePipelineCost,
		Doc:    "segmented pipeline along chains from both ends into the root",
		Source: "Hoefler-Moor 2014 sec. 3.1.4; Sack 2011 sec. 3.2"}, schedule.Reduce)
}
