package algorithms

import "github.com/scoll/scoll/schedule"

// Shared pieces of the reduce-scatter algorithms (reducescatter_*.go),
// registered for ReduceScatterBlock ("reducescatter": every rank's result is
// n elements) and ReduceScatter ("reducescatterv": rank r's result is
// Counts[r] elements, blocks packed), and of the allreduce algorithms built
// on a reduce-scatter phase: the cut of a vector into blocks, a lazily
// allocated scratch region, segment arithmetic and the choice of where a
// final partial result lands.
//
// Buffers: the input vector (P·n or ΣCounts elements) is the send buffer, or
// in place the receive buffer; the result is the start of the receive buffer.
// Costs write N for the bytes of the whole vector and n = N/P.

// redscatBlocks returns the blocks of the reduce-scatter vector: rank q's
// result is block q. They are packed.
func redscatBlocks(p *Params) redscatLayout {
	if p.Coll == schedule.ReduceScatter {
		return redscatExplicit(p.Counts, schedule.Packed(p.Counts))
	}
	return redscatEven(p.Count, p.Size)
}

// redscatOut returns the region that receives this rank's result.
func redscatOut(p *Params, l *redscatLayout) schedule.Region {
	return schedule.RecvBuf(0, l.count(p.Rank))
}

// redscatBytes returns the bytes of the whole vector.
func redscatBytes(p *Params) float64 {
	l := redscatBlocks(p)
	return p.bytes(l.displ(p.Size))
}

// redscatSetup returns the blocks, input and output of a reduce-scatter;
// with one rank it copies the input's block to the output and reports done.
func redscatSetup(b *schedule.Builder, p *Params) (l redscatLayout, in, out schedule.Region, done bool) {
	l = redscatBlocks(p)
	in, out = p.input(), redscatOut(p, &l)
	if p.Size == 1 {
		b.Copy(out, in.Sub(0, l.count(0)))
		b.EndRound()
		return l, in, out, true
	}
	return l, in, out, false
}

// vectorSetup returns the receive buffer and the input of a call whose
// result is the whole vector (allreduce; reduce, on its root); with one rank
// it copies the input into the receive buffer and reports done.
func vectorSetup(b *schedule.Builder, p *Params) (buf, in schedule.Region, done bool) {
	buf, in = schedule.RecvBuf(0, p.Count), p.input()
	if p.Size == 1 {
		b.Copy(buf, in)
		b.EndRound()
		return buf, in, true
	}
	return buf, in, false
}

// redscatLayout is the cut of a vector (or gathered buffer) into P blocks.
// Uniform cuts are kept in closed form, so that building one rank's schedule
// of a logarithmic algorithm takes O(log P) memory, not O(P): the verifier
// keeps every rank's generator alive at once, and at 32,768 ranks per-rank
// count arrays alone would take gigabytes.
type redscatLayout struct {
	counts, displs []int // explicit blocks; nil when uniform
	p, q, rem      int   // uniform: block i has q+1 elements if i < rem, else q
}

// redscatSplit cuts n elements into p blocks whose lengths differ by at most
// one, the first n mod p longer (the closed form of split).
func redscatSplit(n, p int) redscatLayout { return redscatLayout{p: p, q: n / p, rem: n % p} }

// redscatEven is p blocks of n elements each.
func redscatEven(n, p int) redscatLayout { return redscatLayout{p: p, q: n} }

// redscatExplicit is blocks counts at displs.
func redscatExplicit(counts, displs []int) redscatLayout {
	return redscatLayout{counts: counts, displs: displs, p: len(counts)}
}

// count returns the length of block i.
func (l *redscatLayout) count(i int) int {
	if l.counts != nil {
		return l.counts[i]
	}
	if i < l.rem {
		return l.q + 1
	}
	return l.q
}

// displ returns the offset of block i; displ(P) is the end of a packed
// layout.
func (l *redscatLayout) displ(i int) int {
	if l.displs != nil {
		if i == l.p {
			return l.displs[i-1] + l.counts[i-1]
		}
		return l.displs[i]
	}
	return i*l.q + min(i, l.rem)
}

// maxCount returns the length of the longest block.
func (l *redscatLayout) maxCount() int {
	if l.counts != nil {
		return maxInt(l.counts)
	}
	if l.rem > 0 {
		return l.q + 1
	}
	return l.q
}

// blk returns block i of the vector starting at base.
func (l *redscatLayout) blk(base schedule.Region, i int) schedule.Region {
	return base.Sub(l.displ(i), l.count(i))
}

// maxInt returns the largest of xs (0 when empty).
func maxInt(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// redscatTemp hands out one scratch region, allocated on first use. A later
// request for more elements than the region holds allocates a larger one, so
// callers should ask for their largest size first.
type redscatTemp struct {
	b  *schedule.Builder
	r  schedule.Region
	ok bool
}

func (t *redscatTemp) get(n int) schedule.Region {
	if !t.ok || t.r.Len < n {
		t.r = t.b.Alloc(n)
		t.ok = true
	}
	return t.r.Sub(0, n)
}

// redscatSegPart returns segment i of a block of c elements cut into s
// segments whose lengths differ by at most one (the first c mod s are longer).
func redscatSegPart(c, s, i int) (off, n int) {
	q, rem := c/s, c%s
	off = i*q + min(i, rem)
	n = q
	if i < rem {
		n++
	}
	return off, n
}

// redscatSegments returns the number of segments each block of at most maxBlk
// elements is cut into when segments hold at most seg elements; seg ≤ 0 means
// no segmentation.
func redscatSegments(maxBlk, seg int) int {
	if seg <= 0 || maxBlk <= seg {
		return 1
	}
	return (maxBlk + seg - 1) / seg
}

// redscatDirect reports whether the last partial of a rank's own block may be
// received straight into out and combined there with mine (the rank's own
// partial), instead of landing in scratch and being copied: out must be
// writable and must overlap neither mine nor the region sent in the same round.
// It is called for the last exchange of a reduce-scatter, when no other region
// of the rank's buffers is still needed.
func redscatDirect(out, mine, sent schedule.Region) bool {
	return out.Space != schedule.SendSpace && !out.Overlaps(mine) && !out.Overlaps(sent)
}
