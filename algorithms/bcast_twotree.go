package algorithms

import (
	"math/bits"

	"github.com/scoll/scoll/schedule"
)

// In-order complete binary tree over positions 1..m (two-tree bcast): the
// position with lowest set bit 2^b (b ≥ 1) has children j − 2^(b−1) and
// j + 2^(b−1); odd positions are leaves; the root is the largest power of two
// not above m. Positions above m are cut off and replaced by their left
// child, so the tree stays connected for any m.
//
//	m=6:        4
//	          /   \
//	         2     6
//	        / \   /
//	       1   3 5

func rtIoParent(j, m int) int {
	if j == floorPow2(m) {
		return 0
	}
	b := j & -j
	for {
		up := j + b
		if j&(2*b) != 0 {
			up = j - b
		}
		if up <= m {
			return up
		}
		j, b = up, 2*b
	}
}

func rtIoKids(j, m int) []int {
	b := j & -j
	if b == 1 {
		return nil
	}
	h := b / 2
	kids := []int{j - h}
	c := j + h
	for c > m && h > 1 {
		h /= 2
		c -= h
	}
	if c <= m {
		kids = append(kids, c)
	}
	return kids
}

func rtIoDepth(j, m int) int {
	d := 0
	for j = rtIoParent(j, m); j != 0; j = rtIoParent(j, m) {
		d++
	}
	return d
}

// Two-tree (double binary tree) broadcast: the P−1 non-root ranks form two
// in-order binary trees; the first is laid on relative ranks 1..P−1 directly,
// the second is its mirror image (P−1 even) or its shift by one (P−1 odd), so
// that every rank is interior in at most one tree and the leaves of one tree
// forward in the other. The root pipelines the first half of the message down
// tree one and the second half down tree two at once, so every rank's send
// bandwidth is used.
//
//	P=7 (m=6)  tree 1:    4          tree 2 (mirror j→7−j):   3
//	                    /   \                               /   \
//	                   2     6                             5     1
//	                  / \   /                             / \   /
//	                 1   3 5                             6   4 2
//
// Cost: (D + S' − 1)·2(α + sβ) with D = ⌊lg(P−1)⌋ + 1 and S' = ⌈n/2s⌉;
// about nβ for long messages.
// Source: Sanders, Speck, Träff 2009 (two-tree); Hoefler–Moor 2014 sec.
// 3.1.5; NCCL's double binary tree.
func bcastTwoTree(b *schedule.Builder, p *Params) {
	P, n := p.Size, p.Count
	m := P - 1
	if m == 0 {
		return
	}
	buf := bcastBuf(p)
	A := buf.Sub(0, (n+1)/2)
	B := buf.Sub(A.Len, n-A.Len)
	ident := func(j int) int { return j }
	sig, inv := twoTreeSecond(m)
	v := mod(p.Rank-p.Root, P)
	stream := func(sig, inv func(int) int, data schedule.Region) rtStream {
		if v == 0 {
			return rtStream{member: true, parent: -1, kids: []int{bcastRel(p, sig(floorPow2(m)))}, data: data}
		}
		j := inv(v)
		st := rtStream{member: true, parent: p.Root, depth: rtIoDepth(j, m) + 1, data: data}
		if up := rtIoParent(j, m); up != 0 {
			st.parent = bcastRel(p, sig(up))
		}
		for _, c := range rtIoKids(j, m) {
			st.kids = append(st.kids, bcastRel(p, sig(c)))
		}
		return st
	}
	rtBcastStreams(b, []rtStream{stream(ident, ident, A), stream(sig, inv, B)}, rtSegment(p))
}

// twoTreeSecond returns the map sig from positions of the first tree over
// 1..m to positions of the second, and its inverse: the mirror j → m+1−j
// for m even, the shift j → j mod m + 1 for m odd, either making every
// position interior in at most one tree.
func twoTreeSecond(m int) (sig, inv func(int) int) {
	if m%2 == 0 {
		mirror := func(j int) int { return m + 1 - j }
		return mirror, mirror
	}
	return func(j int) int { return j%m + 1 }, func(x int) int {
		if x == 1 {
			return m
		}
		return x - 1
	}
}

func bcastTwoTreeCost(p *Params) Cost {
	return rtPipeCost(p, (p.Count+1)/2, bits.Len(uint(p.Size-1)), 2, 0)
}

func init() {
	register(Info{Name: TwoTree, Build: bcastTwoTree, Cost: bcastTwoTreeCost,
		Doc:    "halves pipelined down two complementary binary trees (double binary tree)",
		Source: "Sanders, Speck, Traff 2009; Hoefler-Moor 2014 sec. 3.1.5; NCCL"}, schedule.Bcast)
}
