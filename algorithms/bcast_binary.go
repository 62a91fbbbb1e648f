package algorithms

import (
	"math/bits"

	"github.com/scoll/scoll/schedule"
)

// rtHeap returns rank v's stream in the heap-shaped binary tree over the
// relative ranks first..first+size−1 (local index i = v − first has children
// 2i+1, 2i+2), hanging from parent (−1: v = first is the tree's root) at
// depth base.
func rtHeap(p *Params, v, first, size, parent, base int, data schedule.Region) rtStream {
	i := v - first
	if i < 0 || i >= size {
		return rtStream{}
	}
	st := rtStream{member: true, parent: parent, depth: base + bits.Len(uint(i+1)) - 1, data: data}
	if i > 0 {
		st.parent = bcastRel(p, first+(i-1)/2)
	}
	for _, c := range []int{2*i + 1, 2*i + 2} {
		if c < size {
			st.kids = append(st.kids, bcastRel(p, first+c))
		}
	}
	return st
}

// Pipelined binary tree broadcast: a heap-shaped binary tree over relative
// ranks (children of v are 2v+1 and 2v+2); segments flow down the tree, each
// interior rank forwarding a segment to both children one step after
// receiving it.
//
//	P=7:  0 ─┬─ 1 ─┬─ 3     step t: 0→1,2 s_t; 1→3,4 s_{t−1}; 2→5,6 s_{t−1}
//	         │     └─ 4
//	         └─ 2 ─┬─ 5
//	               └─ 6
//
// Cost: (⌊lg P⌋ + S − 1)·2(α + sβ).
// Source: Hoefler–Moor 2014 sec. 3.1.4 (tree pipeline); Open MPI coll/tuned.
func bcastBinary(b *schedule.Builder, p *Params) {
	v := mod(p.Rank-p.Root, p.Size)
	st := rtHeap(p, v, 0, p.Size, -1, 0, bcastBuf(p))
	rtBcastStreams(b, []rtStream{st}, rtSegment(p))
}

func bcastBinaryCost(p *Params) Cost {
	return rtPipeCost(p, p.Count, bits.Len(uint(p.Size))-1, 2, 0)
}

// Split binary tree broadcast: the P−1 non-root ranks form two heap-shaped
// binary trees, the left one of relative ranks 1..h (h = ⌈(P−1)/2⌉) and the
// right one of h+1..P−1. The root pipelines the first half of the message
// down the left tree and the second half down the right tree at once; then
// left rank i and right rank i swap halves. When P−1 is odd the last left
// rank has no partner and gets the second half from the root.
//
//	P=7:  0 ═╤═ A ═> 1 ─┬─ 2     then  1↔4, 2↔5, 3↔6 swap halves A, B
//	         │          └─ 3
//	         └═ B ═> 4 ─┬─ 5
//	                    └─ 6
//
// Cost: (D + S' − 1)·2(α + sβ) + α + (n/2)β, D = ⌊lg h⌋ + 1, S' = ⌈n/2s⌉.
// Source: Open MPI coll/tuned split binary tree (design, not code);
// Hoefler–Moor 2014 sec. 3.1.4.
func bcastSplitBinary(b *schedule.Builder, p *Params) {
	P, n := p.Size, p.Count
	m := P - 1
	if m == 0 {
		return
	}
	h := (m + 1) / 2
	buf := bcastBuf(p)
	A := buf.Sub(0, (n+1)/2)
	B := buf.Sub(A.Len, n-A.Len)
	v := mod(p.Rank-p.Root, P)
	root := p.Root
	var streams []rtStream
	if v == 0 {
		streams = []rtStream{
			{member: true, parent: -1, kids: []int{bcastRel(p, 1)}, data: A},
			{member: m > h, parent: -1, kids: []int{bcastRel(p, h+1)}, data: B},
		}
	} else {
		streams = []rtStream{
			rtHeap(p, v, 1, h, root, 1, A),
			rtHeap(p, v, h+1, m-h, root, 1, B),
		}
	}
	rtBcastStreams(b, streams, rtSegment(p))
	// Swap halves between the trees.
	switch {
	case v == 0:
		if h > m-h {
			b.Send(bcastRel(p, h), B)
		}
	case v <= h && v-1 < m-h:
		b.Exchange(bcastRel(p, v+h), A, B)
	case v <= h:
		b.Recv(root, B)
	default:
		b.Exchange(bcastRel(p, v-h), B, A)
	}
	b.EndRound()
}

func bcastSplitBinaryCost(p *Params) Cost {
	if p.Size == 1 || p.Count == 0 {
		return Cost{}
	}
	c := rtPipeCost(p, (p.Count+1)/2, bits.Len(uint(p.Size/2)), 2, 0) // h = P/2 = ⌈(P−1)/2⌉
	c.Alpha++
	c.Beta += p.bytes(p.Count / 2)
	return c
}

func init() {
	register(Info{Name: Binary, Build: bcastBinary, Cost: bcastBinaryCost,
		Doc:    "segmented pipeline down a heap-shaped binary tree",
		Source: "Hoefler-Moor 2014 sec. 3.1.4; Open MPI coll/tuned"}, schedule.Bcast)
	register(Info{Name: SplitBinary, Build: bcastSplitBinary, Cost: bcastSplitBinaryCost,
		Doc:    "halves pipelined down two binary subtrees, then swapped between them",
		Source: "Open MPI coll/tuned split binary tree; Hoefler-Moor 2014 sec. 3.1.4"}, schedule.Bcast)
}
