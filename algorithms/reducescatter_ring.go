package algorithms

import "github.com/scoll/scoll/schedule"

// Ring reduce-scatter.
//
// In step k = 0..P−2 rank r sends its partial of block r−k−1 to r+1 and
// receives the partial of block r−k−2 from r−1, adding its own input. Block j
// is combined in ring order j+1, j+2, …, j, so the operator must be
// commutative. Partials are received straight into scratch (or, in place,
// reduced into the input) and never copied; with Params.Segment > 0 every
// block is pipelined in segments of at most Segment elements.
//
//	P=4   step 0: 0→1 b3  1→2 b0  2→3 b1  3→0 b2
//	      step 1: 0→1 b2  1→2 b3  2→3 b0  3→0 b1
//	      step 2: 0→1 b1  1→2 b2  2→3 b3  3→0 b0   → rank r holds block r
//
// Cost: (P−1)·S·α + ((P−1)/P)·N·β + ((P−1)/P)·N·γ for S segments a block.
// Source: Thakur, Rabenseifner, Gropp 2005; Sack 2011 sec. 3.2;
// Hoefler–Moor 2014 sec. 3.
func redscatRingAlg(b *schedule.Builder, p *Params) {
	l := redscatBlocks(p)
	in := p.input()
	a := &redscatRingArgs{l: l, in: in, out: redscatOut(p, &l)}
	if p.InPlaceAt(p.Rank) {
		a.acc = in
	}
	a.segs = redscatSegments(l.maxCount(), p.Segment)
	redscatRing(b, p.Rank, p.Size, a)
}

func redscatRingCost(p *Params) Cost {
	l := redscatBlocks(p)
	P := float64(p.Size)
	N := redscatBytes(p)
	S := float64(redscatSegments(l.maxCount(), p.Segment))
	return Cost{Alpha: (P - 1) * S, Beta: N * (P - 1) / P, Gamma: N * (P - 1) / P}
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

func init() {
	register(Info{Name: Ring, Requires: NeedsCommutative, Linear: true, Build: redscatRingAlg, Cost: redscatRingCost,
		Doc:    "pass partial blocks around a ring in P-1 steps, optionally segmented; bandwidth-optimal",
		Source: "Thakur, Rabenseifner, Gropp 2005; Sack 2011 sec. 3.2; Hoefler-Moor 2014 sec. 3"}, schedule.ReduceScatterBlock, schedule.ReduceScatter)
}
