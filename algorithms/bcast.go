package algorithms

import (
	"math/bits"

	"github.com/scoll/scoll/schedule"
)

// Broadcast algorithms. The buffer is the receive buffer of every rank; the
// root's holds the message. Ranks are numbered relative to the root where
// the shape does not matter for correctness: v = (r − root) mod P.
//
// In the costs, n is the message in bytes, P the ranks, s the segment in
// bytes and S = ⌈n/s⌉ the segments.

func bcastBuf(p *Params) schedule.Region { return schedule.RecvBuf(0, p.Count) }

// bcastRel returns the absolute rank of relative rank v.
func bcastRel(p *Params, v int) int { return mod(v+p.Root, p.Size) }

// rtRadix returns p.Radix when it is at least 2, else def.
func rtRadix(p *Params, def int) int {
	if p.Radix >= 2 {
		return p.Radix
	}
	return def
}

// Linear (flat tree) broadcast: the root sends the whole message to every
// other rank in one round.
//
//	round 0: root→1, root→2, ..., root→P−1
//
// Cost: (P−1)(α + nβ) (the root's sends serialise on one port).
// Source: Hoefler–Moor 2014 sec. 3.1.1 (flat tree).
func bcastLinear(b *schedule.Builder, p *Params) {
	buf := bcastBuf(p)
	if p.Rank != p.Root {
		b.Recv(p.Root, buf)
		b.EndRound()
		return
	}
	for q := range p.Size {
		if q != p.Root {
			b.Send(q, buf)
		}
	}
	b.EndRound()
}

func bcastLinearCost(p *Params) Cost {
	k := float64(p.Size - 1)
	return Cost{Alpha: k, Beta: k * p.bytes(p.Count)}
}

// k-nomial tree broadcast over relative ranks (binomial for k = 2): a rank
// receives the message from its parent, then sends it to its children level
// by level, farthest first; the k−1 children of one level in one round.
//
//	k=2, P=8:  round 0: 0→4   round 1: 0→2 4→6   round 2: 0→1 2→3 4→5 6→7
//
// Cost: ⌈log_k P⌉(k−1)(α + nβ).
// Source: Heath–Solomonik notes sec. 5.1 (binomial tree); Hoefler–Moor 2014
// sec. 3.1.2 (k-nomial trees); Thakur, Rabenseifner, Gropp 2005 (MPICH).
func bcastKnomialK(b *schedule.Builder, p *Params, k int) {
	buf := bcastBuf(p)
	n := rtRelative(p.Size, p.Size, p.Root, k, p.Rank)
	rtScatter(b, n, func(lo, hi int) schedule.Region { return buf }, nil)
}

func bcastBinomial(b *schedule.Builder, p *Params) { bcastKnomialK(b, p, 2) }

func bcastKnomial(b *schedule.Builder, p *Params) { bcastKnomialK(b, p, rtRadix(p, 4)) }

// rtLogK returns ⌈log_k p⌉.
func rtLogK(p, k int) int {
	l := 0
	for w := 1; w < p; w *= k {
		l++
	}
	return l
}

func bcastKnomialCostK(p *Params, k int) Cost {
	r := float64(rtLogK(p.Size, k) * (k - 1))
	return Cost{Alpha: r, Beta: r * p.bytes(p.Count)}
}

func bcastBinomialCost(p *Params) Cost { return bcastKnomialCostK(p, 2) }

func bcastKnomialCost(p *Params) Cost { return bcastKnomialCostK(p, rtRadix(p, 4)) }

// rtPipeCost is the cost of a pipeline of steps steps, each sending msgs
// messages of segBytes bytes (and reducing red of them).
func rtPipeCost(steps, msgs, red int, segBytes float64) Cost {
	if steps <= 0 {
		return Cost{}
	}
	s := float64(steps)
	return Cost{Alpha: s * float64(msgs), Beta: s * float64(msgs) * segBytes, Gamma: s * float64(red) * segBytes}
}

// rtSegInfo returns the segments of n elements and the bytes of one segment.
func rtSegInfo(p *Params, n int) (segs int, segBytes float64) {
	seg := rtSegment(p)
	return rtSegs(n, seg), p.bytes(min(seg, n))
}

// Pipelined chain broadcast: the message is cut into segments of p.Segment
// elements (default 64 KiB); relative rank v receives segment s from v−1 and
// forwards it to v+1 one step later.
//
//	step 0: 0→1 s0   step 1: 0→1 s1, 1→2 s0   step 2: 0→1 s2, 1→2 s1, 2→3 s0
//
// Cost: (P + S − 2)(α + sβ).
// Source: Hoefler–Moor 2014 sec. 3.1.4 (linear pipeline); Sack 2011 sec. 3.2.
func bcastPipeline(b *schedule.Builder, p *Params) {
	v := mod(p.Rank-p.Root, p.Size)
	st := rtStream{member: true, parent: -1, depth: v, data: bcastBuf(p)}
	if v > 0 {
		st.parent = bcastRel(p, v-1)
	}
	if v+1 < p.Size {
		st.kids = []int{bcastRel(p, v+1)}
	}
	rtBcastStreams(b, []rtStream{st}, rtSegment(p))
}

func bcastPipelineCost(p *Params) Cost {
	S, s := rtSegInfo(p, p.Count)
	if p.Size == 1 || S == 0 {
		return Cost{}
	}
	return rtPipeCost(p.Size+S-2, 1, 0, s)
}

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
	S, s := rtSegInfo(p, p.Count)
	if p.Size == 1 || S == 0 {
		return Cost{}
	}
	return rtPipeCost(bits.Len(uint(p.Size))-1+S-1, 2, 0, s)
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
	h := p.Size / 2 // ⌈(P−1)/2⌉
	S, s := rtSegInfo(p, (p.Count+1)/2)
	c := rtPipeCost(bits.Len(uint(h))+S-1, 2, 0, s)
	c.Alpha++
	c.Beta += p.bytes(p.Count / 2)
	return c
}

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
	sig, inv := func(j int) int { return m + 1 - j }, func(x int) int { return m + 1 - x }
	if m%2 == 1 {
		sig = func(j int) int { return j%m + 1 }
		inv = func(x int) int {
			if x == 1 {
				return m
			}
			return x - 1
		}
	}
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

func bcastTwoTreeCost(p *Params) Cost {
	if p.Size == 1 || p.Count == 0 {
		return Cost{}
	}
	S, s := rtSegInfo(p, (p.Count+1)/2)
	return rtPipeCost(bits.Len(uint(p.Size-1))+S-1, 2, 0, s)
}

// bcastScatter emits the binomial scatter phase of the scatter-allgather
// broadcasts: the message is cut into m blocks, block v for relative rank v
// (v < m), and each rank receives the blocks of its binomial subtree from its
// parent. It returns the block regions of a relative range.
func bcastScatter(b *schedule.Builder, p *Params, m int) func(lo, hi int) schedule.Region {
	blk := func(lo, hi int) schedule.Region {
		off := rtBlockOff(p.Count, m, lo)
		return schedule.RecvBuf(off, rtBlockOff(p.Count, m, hi)-off)
	}
	rtScatter(b, rtRelative(p.Size, m, p.Root, 2, p.Rank), blk, nil)
	return blk
}

// rtBlockOff returns the offset of block i when n elements are cut into m
// blocks as split does (the first n mod m blocks one longer), in O(1).
func rtBlockOff(n, m, i int) int { return i*(n/m) + min(i, n%m) }

// rtSpan returns the relative ranks [v, v+span) whose blocks relative rank v
// holds after the binomial scatter over m ranks.
func rtSpan(v, m int) (lo, hi int) {
	if v == 0 {
		return 0, m
	}
	return v, min(v+(v&-v), m)
}

// Scatter-allgather broadcast: a binomial scatter of P' blocks (P' the
// largest power of two ≤ P) over relative ranks 0..P'−1, then a
// recursive-doubling allgather among them; a rank skips the blocks it already
// holds from the scatter. When P is not a power of two, the P − P' ranks
// v ≥ P' take no part in either phase and receive the whole message from
// v − P' at the end (one more round with nβ), which keeps the algorithm
// logarithmic for every P.
//
//	P=4 scatter: 0→2 [b2 b3]; 0→1 b1, 2→3 b3    allgather: 0↔1, 2↔3; 0↔2, 1↔3
//
// Cost: 2 lg P'·α + 2((P'−1)/P')nβ, plus α + nβ when P ≠ P'.
// Source: Heath–Solomonik notes sec. 5.2.2; Thakur, Rabenseifner, Gropp 2005
// (van de Geijn's long-message broadcast in MPICH).
func bcastScatterAllgather(b *schedule.Builder, p *Params) {
	P := p.Size
	pof2 := floorPow2(P)
	v := mod(p.Rank-p.Root, P)
	blk := bcastScatter(b, p, pof2)
	if v >= pof2 {
		b.Recv(bcastRel(p, v-pof2), bcastBuf(p))
		b.EndRound()
		return
	}
	has := func(x, lo, hi int) bool {
		sl, sh := rtSpan(x, pof2)
		return sl <= lo && hi <= sh
	}
	for mask := 1; mask < pof2; mask <<= 1 {
		pv := v ^ mask
		lo, plo := v&^(mask-1), pv&^(mask-1)
		if !has(pv, lo, lo+mask) {
			b.Send(bcastRel(p, pv), blk(lo, lo+mask))
		}
		if !has(v, plo, plo+mask) {
			b.Recv(bcastRel(p, pv), blk(plo, plo+mask))
		}
		b.EndRound()
	}
	if v+pof2 < P {
		b.Send(bcastRel(p, v+pof2), bcastBuf(p))
		b.EndRound()
	}
}

func bcastScatterAllgatherCost(p *Params) Cost {
	pof2 := floorPow2(p.Size)
	lg := float64(ceilLog2(pof2))
	nb := p.bytes(p.Count)
	c := Cost{Alpha: 2 * lg, Beta: 2 * nb * float64(pof2-1) / float64(pof2)}
	if pof2 != p.Size {
		c.Alpha++
		c.Beta += nb
	}
	return c
}

// Scatter-ring-allgather broadcast: a binomial scatter of P blocks over the
// relative ranks, then a ring allgather (relative rank v passes blocks to
// v+1) in P−1 steps; a block the receiver already holds from the scatter is
// not sent. Works for any P.
//
//	P=4 scatter: 0→2 [b2 b3]; 0→1 b1, 2→3 b3
//	ring step k: v→v+1 block (v−k) mod 4, k = 0, 1, 2
//
// Cost: (lg P + P − 1)α + 2((P−1)/P)nβ.
// Source: Thakur, Rabenseifner, Gropp 2005 (MPICH long-message bcast);
// Sack 2011 sec. 3.2.
func bcastScatterRingAllgather(b *schedule.Builder, p *Params) {
	P := p.Size
	v := mod(p.Rank-p.Root, P)
	blk := bcastScatter(b, p, P)
	has := func(x, j int) bool {
		lo, hi := rtSpan(x, P)
		return lo <= j && j < hi
	}
	right, left := mod(v+1, P), mod(v-1, P)
	for k := 0; k < P-1; k++ {
		out, in := mod(v-k, P), mod(v-k-1, P)
		if !has(right, out) {
			b.Send(bcastRel(p, right), blk(out, out+1))
		}
		if !has(v, in) {
			b.Recv(bcastRel(p, left), blk(in, in+1))
		}
		b.EndRound()
	}
}

func bcastScatterRingAllgatherCost(p *Params) Cost {
	P := float64(p.Size)
	nb := p.bytes(p.Count)
	return Cost{Alpha: float64(ceilLog2(p.Size)) + P - 1, Beta: 2 * nb * (P - 1) / P}
}

func init() {
	for _, in := range []Info{
		{Name: Linear, Linear: true, Build: bcastLinear, Cost: bcastLinearCost,
			Doc:    "the root sends the message to every rank directly",
			Source: "Hoefler-Moor 2014 sec. 3.1.1"},
		{Name: Binomial, Build: bcastBinomial, Cost: bcastBinomialCost,
			Doc:    "binomial tree over ranks relative to the root; latency-optimal for short messages",
			Source: "Heath-Solomonik notes sec. 5.1; Thakur, Rabenseifner, Gropp 2005"},
		{Name: KNomial, Build: bcastKnomial, Cost: bcastKnomialCost,
			Doc:    "k-nomial tree (radix p.Radix, default 4); a rank feeds k-1 children per round",
			Source: "Hoefler-Moor 2014 sec. 3.1.2"},
		{Name: Binary, Build: bcastBinary, Cost: bcastBinaryCost,
			Doc:    "segmented pipeline down a heap-shaped binary tree",
			Source: "Hoefler-Moor 2014 sec. 3.1.4; Open MPI coll/tuned"},
		{Name: SplitBinary, Build: bcastSplitBinary, Cost: bcastSplitBinaryCost,
			Doc:    "halves pipelined down two binary subtrees, then swapped between them",
			Source: "Open MPI coll/tuned split binary tree; Hoefler-Moor 2014 sec. 3.1.4"},
		{Name: Pipeline, Build: bcastPipeline, Cost: bcastPipelineCost,
			Doc:    "segmented pipeline along a chain of ranks; for long messages",
			Source: "Hoefler-Moor 2014 sec. 3.1.4; Sack 2011 sec. 3.2"},
		{Name: ScatterAllgather, Build: bcastScatterAllgather, Cost: bcastScatterAllgatherCost,
			Doc:    "binomial scatter, then recursive-doubling allgather; for long messages",
			Source: "Heath-Solomonik notes sec. 5.2.2; Thakur, Rabenseifner, Gropp 2005"},
		{Name: ScatterRingAllgather, Linear: true, Build: bcastScatterRingAllgather, Cost: bcastScatterRingAllgatherCost,
			Doc:    "binomial scatter, then ring allgather; for long messages and any P",
			Source: "Thakur, Rabenseifner, Gropp 2005; Sack 2011 sec. 3.2"},
		{Name: TwoTree, Build: bcastTwoTree, Cost: bcastTwoTreeCost,
			Doc:    "halves pipelined down two complementary binary trees (double binary tree)",
			Source: "Sanders, Speck, Traff 2009; Hoefler-Moor 2014 sec. 3.1.5; NCCL"},
	} {
		in.Coll = schedule.Bcast
		Register(in)
	}
}
