package algorithms

import "github.com/scoll/scoll/schedule"

// allgatherBruck runs Bruck's ⌈lg P⌉ rounds into stage, a scratch region in
// which position i holds rank (r+i) mod P's block, packed in that order. In
// the round with distance d = 1, 2, 4, … rank r sends positions
// [0, min(d, P−d)) to r−d and receives them from r+d into positions
// [d, d+min(d, P−d)). own is this rank's block; it is sent directly in the
// first round and copied to position 0 for the later ones. pos returns the
// offset of position i in stage (i in [0, P]).
func allgatherBruck(b *schedule.Builder, r, P int, own, stage schedule.Region, pos func(i int) int) {
	for d := 1; d < P; d <<= 1 {
		c := min(d, P-d)
		out := stage.Sub(0, pos(c))
		if d == 1 {
			out = own
		}
		b.Send(mod(r-d, P), out)
		b.Recv(mod(r+d, P), stage.Sub(pos(d), pos(d+c)-pos(d)))
		if d == 1 {
			b.Copy(stage.Sub(0, own.Len), own)
		}
		b.EndRound()
	}
}

// allgatherBruckPos returns the stage offsets of allgatherBruck for rank r:
// closed form when every block has the same length.
func allgatherBruckPos(l *redscatLayout, r int) func(int) int {
	if l.counts == nil && l.rem == 0 {
		n := l.q
		return func(i int) int { return i * n }
	}
	P := l.p
	off := make([]int, P+1)
	for i := range P {
		off[i+1] = off[i] + l.count(mod(r+i, P))
	}
	return func(i int) int { return off[i] }
}

// Bruck allgather (any P).
//
// ⌈lg P⌉ rounds as in allgatherBruck gather all blocks into scratch in the
// order r, r+1, …; a final local rotation copies them to their places (two
// copies when the blocks are packed in rank order).
//
//	P=5   d=1: r←r+1 (1 block)   d=2: r←r+2 (2 blocks)   d=4: r←r+4 (1 block)
//	      then rotate by r
//
// Cost: ⌈lg P⌉·α + ((P−1)/P)·N·β, plus a local copy of N.
// Source: Bruck, Ho, Kipnis, Upfal, Weathersby 1997; Thakur, Rabenseifner,
// Gropp 2005; Sack 2011 sec. 3.2.2.
func allgatherBruckAlg(b *schedule.Builder, p *Params) {
	l, own, _, done := allgatherSetup(b, p)
	if done {
		return
	}
	P, r := p.Size, p.Rank
	pos := allgatherBruckPos(&l, r)
	stage := b.Alloc(pos(P))
	allgatherBruck(b, r, P, own, stage, pos)
	// Rotate: position i goes to rank (r+i) mod P's block. Consecutive
	// positions whose destinations are adjacent are copied together.
	first := 1
	if !p.InPlaceAt(r) {
		first = 0
	}
	if l.counts == nil {
		// Packed in rank order: positions [first, P−r) hold ranks
		// r+first..P−1, positions [P−r, P) ranks 0..r−1.
		b.Copy(schedule.RecvBuf(l.displ(r+first), pos(P-r)-pos(first)), stage.Sub(pos(first), pos(P-r)-pos(first)))
		b.Copy(schedule.RecvBuf(0, pos(P)-pos(P-r)), stage.Sub(pos(P-r), pos(P)-pos(P-r)))
		b.EndRound()
		return
	}
	var src, dst schedule.Region
	flush := func() {
		b.Copy(dst, src)
		src, dst = schedule.Region{}, schedule.Region{}
	}
	for i := first; i < P; i++ {
		q := mod(r+i, P)
		c := l.count(q)
		if c == 0 {
			continue
		}
		if dst.Len > 0 && dst.End() == l.displ(q) && src.End() == stage.Off+pos(i) {
			dst.Len += c
			src.Len += c
			continue
		}
		if dst.Len > 0 {
			flush()
		}
		dst = allgatherBlk(&l, q)
		src = stage.Sub(pos(i), c)
	}
	if dst.Len > 0 {
		flush()
	}
	b.EndRound()
}

func allgatherBruckCost(p *Params) Cost {
	P := float64(p.Size)
	// Local copies: the own block into place, and the final rotation of the
	// whole gathered buffer.
	return Cost{Alpha: float64(ceilLog2(p.Size)), Beta: allgatherBytes(p) * (P - 1) / P,
		Copy: allgatherBytes(p) * (1 + 1/P)}
}

func init() {
	register(Info{Name: Bruck, Build: allgatherBruckAlg, Cost: allgatherBruckCost,
		Doc:    "ceil(lg P) rounds of doubling block counts for any P, then a local rotation",
		Source: "Bruck et al. 1997; Thakur, Rabenseifner, Gropp 2005; Sack 2011 sec. 3.2.2"}, schedule.Allgather, schedule.Allgatherv)
}
