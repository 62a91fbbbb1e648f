package algorithms

import (
	"github.com/scoll/scoll/schedule"
)

// This file holds the building blocks shared by the reduce-scatter family
// (reducescatter.go) and the allreduce algorithms built on a reduce-scatter
// phase (allreduce_ring.go, allreduce_rabenseifner.go): a lazily allocated
// scratch region, segment arithmetic, the choice of where a final partial
// result lands, and the ring reduce-scatter.

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

// redscatRingArgs describes one rank's ring reduce-scatter.
//
// The vector is cut into blocks l (offsets relative to the start of in and
// acc). Block j's partial results travel the ring j+1 → j+2 → … → j,
// so rank r ends with block r fully reduced in out.
type redscatRingArgs struct {
	l redscatLayout
	// in is this rank's input vector.
	in schedule.Region
	// acc, when its Len is not 0, is a writable vector-shaped region where
	// partial results accumulate. acc == in means in place: partials arrive
	// in scratch and are reduced into in. acc != in means partials are
	// received straight into acc and the rank's input is reduced into them
	// (no scratch at all). With acc.Len == 0 partials alternate between two
	// scratch slots of one block each.
	acc schedule.Region
	// out is where this rank's reduced block r must end.
	out schedule.Region
	// segs is the number of segments each block is pipelined in (≥ 1).
	segs int
}

// redscatRing emits the P−1 steps (segs rounds each) of the ring
// reduce-scatter. In step k rank r sends its partial of block r−k−1 to r+1
// and receives the partial of block r−k−2 from r−1, which it combines with its
// own input of that block (received partial on the left). The reduction order
// wraps around the ring, so the operator must be commutative.
//
//	P=3, step 0: 0→1 b2  1→2 b0  2→0 b1
//	     step 1: 0→1 b1  1→2 b2  2→0 b0   (rank r now holds block r)
//
// No element is copied except where out is the start of an in-place buffer
// that is still being read (one block copy on at most one or two ranks).
func redscatRing(b *schedule.Builder, r, P int, a *redscatRingArgs) {
	l := &a.l
	blk := l.blk
	if P == 1 {
		b.Copy(a.out, blk(a.in, 0))
		b.EndRound()
		return
	}
	S := max(a.segs, 1)
	maxBlk := l.maxCount()
	inPlace := a.acc.Len > 0 && a.acc == a.in
	separate := a.acc.Len > 0 && !inPlace
	var slots [2]schedule.Region
	if !inPlace && !separate && P > 2 {
		slots[0], slots[1] = b.Alloc(maxBlk), b.Alloc(maxBlk)
	}
	right, left := mod(r+1, P), mod(r-1, P)
	var prev schedule.Region // where the partial sent in the next step accumulated
	for k := 0; k < P-1; k++ {
		sb, rb := mod(r-k-1, P), mod(r-k-2, P)
		src := blk(a.in, sb)
		if k > 0 {
			src = prev
		}
		own := blk(a.in, rb)
		last := k == P-2
		var dst schedule.Region
		direct := true // receive into dst, then reduce own into it
		switch {
		case last:
			if redscatDirect(a.out, own, src) {
				dst = a.out
			} else {
				// Only in place: own is writable and out is, or overlaps,
				// a region still in use.
				dst, direct = own, false
			}
		case inPlace:
			dst, direct = own, false
		case separate:
			dst = blk(a.acc, rb)
		default:
			dst = slots[k%2].Sub(0, l.count(rb))
		}
		for i := range S {
			so, sn := redscatSegPart(l.count(sb), S, i)
			ro, rn := redscatSegPart(l.count(rb), S, i)
			b.Send(right, src.Sub(so, sn))
			// One fused pass: the partial arriving from the left is
			// combined with this rank's input as it is received.
			if direct {
				b.RecvReduce(left, dst.Sub(ro, rn), own.Sub(ro, rn), true)
			} else {
				b.RecvReduce(left, dst.Sub(ro, rn), dst.Sub(ro, rn), false)
			}
			if last && i == S-1 && !direct {
				b.Copy(a.out, dst)
			}
			b.EndRound()
		}
		prev = dst
	}
}

// redscatRingGather emits the P−1 steps of the ring allgather of blocks l of
// buf, each block pipelined in segs segments: in step k rank
// r forwards block r−k to r+1 and receives block r−k−1 from r−1. It is the
// second half of the ring allreduce.
//
//	P=3, step 0: 0→1 b0  1→2 b1  2→0 b2
//	     step 1: 0→1 b2  1→2 b0  2→0 b1
func redscatRingGather(b *schedule.Builder, r, P int, l *redscatLayout, buf schedule.Region, segs int) {
	S := max(segs, 1)
	right, left := mod(r+1, P), mod(r-1, P)
	for k := 0; k < P-1; k++ {
		sb, rb := mod(r-k, P), mod(r-k-1, P)
		for i := range S {
			so, sn := redscatSegPart(l.count(sb), S, i)
			ro, rn := redscatSegPart(l.count(rb), S, i)
			b.Send(right, buf.Sub(l.displ(sb)+so, sn))
			b.Recv(left, buf.Sub(l.displ(rb)+ro, rn))
			b.EndRound()
		}
	}
}
