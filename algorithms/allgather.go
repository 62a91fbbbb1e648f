package algorithms

import (
	"github.com/scoll/scoll/schedule"
)

// Allgather algorithms besides the ring (allgather_ring.go). Each is also
// registered for Allgatherv: blocks come from allgatherLayout, and a group of
// blocks that is not contiguous in the receive buffer (gaps or reordered
// displacements) travels as one message per contiguous run.
//
// Costs write N for the bytes of the gathered buffer.

// allgatherLayout returns the blocks of the gathered buffer: the same as
// p.gatherBlocks, but in closed form (O(1) memory) for Allgather.
func allgatherLayout(p *Params) redscatLayout {
	if p.Coll.Vector() {
		return redscatExplicit(p.Counts, p.VDispls())
	}
	return redscatEven(p.Count, p.Size)
}

// allgatherOwn returns where this rank's input block is (p.ownBlock without
// its O(P) allocation).
// allgatherSetup returns the block layout, this rank's input block and its
// place in the result. With one rank it copies the input into place and
// reports done.
func allgatherSetup(b *schedule.Builder, p *Params) (l redscatLayout, own, mine schedule.Region, done bool) {
	l = allgatherLayout(p)
	own, mine = allgatherOwn(p, &l), allgatherBlk(&l, p.Rank)
	if p.Size == 1 {
		b.Copy(mine, own)
		b.EndRound()
		return l, own, mine, true
	}
	return l, own, mine, false
}

func allgatherOwn(p *Params, l *redscatLayout) schedule.Region {
	if p.InPlaceAt(p.Rank) {
		return allgatherBlk(l, p.Rank)
	}
	return schedule.SendBuf(0, l.count(p.Rank))
}

// allgatherBlk returns rank q's block in the receive buffer.
func allgatherBlk(l *redscatLayout, q int) schedule.Region {
	return schedule.RecvBuf(l.displ(q), l.count(q))
}

// allgatherRuns returns the receive-buffer regions holding the blocks of ranks
// [lo, hi): consecutive ranks whose blocks are adjacent in memory form one
// region; empty blocks are skipped. Sender and receiver compute the same runs
// from the same counts and displacements, so their messages match.
func allgatherRuns(l *redscatLayout, lo, hi int) []schedule.Region {
	if l.counts == nil {
		return []schedule.Region{schedule.RecvBuf(l.displ(lo), l.displ(hi)-l.displ(lo))}
	}
	var out []schedule.Region
	for q := lo; q < hi; q++ {
		c, d := l.count(q), l.displ(q)
		if c == 0 {
			continue
		}
		if k := len(out); k > 0 && out[k-1].End() == d {
			out[k-1].Len += c
			continue
		}
		out = append(out, schedule.RecvBuf(d, c))
	}
	return out
}

// allgatherBytes returns the bytes of the gathered buffer.
func allgatherBytes(p *Params) float64 {
	if p.Coll.Vector() {
		return p.bytes(total(p.Counts))
	}
	return p.bytes(p.Size * p.Count)
}

// Linear allgather.
//
// In one round every rank sends its block to every other rank and receives
// theirs; sends are posted in the order r+1, r+2, … to spread the load.
//
//	P=3   round 0: 0→1 0→2 1→2 1→0 2→0 2→1
//
// Cost: (P−1)·α + ((P−1)/P)·N·β (the P−1 messages leave one port in turn).
// Source: Hoefler–Moor 2014 sec. 3 (direct send); MPICH/Open MPI basic
// linear.
func allgatherLinear(b *schedule.Builder, p *Params) {
	l := allgatherLayout(p)
	P, r := p.Size, p.Rank
	own := allgatherOwn(p, &l)
	for k := 1; k < P; k++ {
		b.Send(mod(r+k, P), own)
		from := mod(r-k, P)
		b.Recv(from, allgatherBlk(&l, from))
	}
	b.Copy(allgatherBlk(&l, r), own)
	b.EndRound()
}

func allgatherLinearCost(p *Params) Cost {
	P := float64(p.Size)
	return Cost{Alpha: P - 1, Beta: allgatherBytes(p) * (P - 1) / P}
}

// Recursive-doubling allgather (P a power of two).
//
// In the step with distance d = 1, 2, …, P/2 rank r exchanges the blocks of
// its aligned group of d ranks with rank r XOR d, doubling what it holds.
//
//	P=4   d=1: 0↔1 2↔3 (1 block)   d=2: 0↔2 1↔3 (2 blocks)
//
// Cost: lg P·α + ((P−1)/P)·N·β.
// Source: Thakur, Rabenseifner, Gropp 2005; Sack 2011 sec. 3.2.2 and 3.4.1;
// Heath–Solomonik 2019 sec. 5.
func allgatherRD(b *schedule.Builder, p *Params) {
	l, own, mine, done := allgatherSetup(b, p)
	if done {
		return
	}
	P, r := p.Size, p.Rank
	for d := 1; d < P; d <<= 1 {
		peer := r ^ d
		lo, plo := r&^(d-1), peer&^(d-1)
		if d == 1 {
			b.Send(peer, own)
		} else {
			for _, reg := range allgatherRuns(&l, lo, lo+d) {
				b.Send(peer, reg)
			}
		}
		for _, reg := range allgatherRuns(&l, plo, plo+d) {
			b.Recv(peer, reg)
		}
		if d == 1 {
			b.Copy(mine, own)
		}
		b.EndRound()
	}
}

func allgatherRDCost(p *Params) Cost {
	P := float64(p.Size)
	// Local copies: the own block into place, and the final rotation of the
	// whole gathered buffer.
	return Cost{Alpha: float64(ceilLog2(p.Size)), Beta: allgatherBytes(p) * (P - 1) / P,
		Copy: allgatherBytes(p) * (1 + 1/P)}
}

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

// Neighbor-exchange allgather (Chen et al.), for an even number of ranks.
//
// Ranks pair up as (2i, 2i+1). In step 0 partners swap their blocks. In steps
// 1..P/2−1 a rank alternately talks to its other neighbour and its partner
// (even ranks: r−1, r+1, r−1, …; odd ranks: r+1, r−1, …) and forwards the two
// blocks it received last (in step 1: its own pair) while receiving two new
// ones. An even rank of pair a receives pairs a−1, a+1, a−2, a+2, …; an odd
// rank the mirror image, so after P/2 steps each rank has every pair.
//
//	P=6   step 0: 0↔1 2↔3 4↔5 (1 block)
//	      step 1: 1↔2 3↔4 5↔0 (2 blocks)   step 2: 0↔1 2↔3 4↔5 (2 blocks)
//
// For odd P there is no pairing; the ring algorithm runs instead (P−1 steps
// of one block, the same bytes).
//
// Cost: (P/2)·α + ((P−1)/P)·N·β for even P; the ring's cost for odd P.
// Source: Chen, Wang, Shen, Liu, Huang 2005 ("Performance evaluation of
// allgather algorithms on terascale Linux cluster with fast Ethernet").
func allgatherNeighbor(b *schedule.Builder, p *Params) {
	P, r := p.Size, p.Rank
	if P%2 == 1 {
		allgatherRing(b, p)
		return
	}
	l := allgatherLayout(p)
	own := allgatherOwn(p, &l)
	H := P / 2
	a := r / 2
	even := r%2 == 0
	neigh := [2]int{mod(r+1, P), mod(r-1, P)} // partner, other neighbour
	if !even {
		neigh = [2]int{mod(r-1, P), mod(r+1, P)}
	}
	pair := func(q int) []schedule.Region { return allgatherRuns(&l, 2*q, 2*q+2) }
	b.Send(neigh[0], own)
	b.Recv(neigh[0], allgatherBlk(&l, neigh[0]))
	b.Copy(allgatherBlk(&l, r), own)
	b.EndRound()
	last := a // the pair this rank forwards next
	for i := 1; i < H; i++ {
		var got int
		if even == (i%2 == 1) {
			got = mod(a-(i+1)/2, H)
		} else {
			got = mod(a+(i+1)/2, H)
		}
		peer := neigh[i%2]
		for _, reg := range pair(last) {
			b.Send(peer, reg)
		}
		for _, reg := range pair(got) {
			b.Recv(peer, reg)
		}
		b.EndRound()
		last = got
	}
}

func allgatherNeighborCost(p *Params) Cost {
	if p.Size%2 == 1 {
		return allgatherRingCost(p)
	}
	P := float64(p.Size)
	return Cost{Alpha: P / 2, Beta: allgatherBytes(p) * (P - 1) / P}
}

func init() {
	for _, c := range []schedule.Collective{schedule.Allgather, schedule.Allgatherv} {
		Register(Info{
			Coll: c, Name: Linear, Linear: true,
			Doc:    "every rank sends its block to every other rank in one round",
			Source: "Hoefler-Moor 2014 sec. 3 (direct); MPICH/Open MPI basic linear",
			Build:  allgatherLinear, Cost: allgatherLinearCost,
		})
		Register(Info{
			Coll: c, Name: RecursiveDoubling, Requires: NeedsPowerOfTwo,
			Doc:    "exchange all held blocks with partners at distance 1, 2, 4, ...",
			Source: "Thakur, Rabenseifner, Gropp 2005; Sack 2011 sec. 3.2.2; Heath-Solomonik 2019 sec. 5",
			Build:  allgatherRD, Cost: allgatherRDCost,
		})
		Register(Info{
			Coll: c, Name: Bruck,
			Doc:    "ceil(lg P) rounds of doubling block counts for any P, then a local rotation",
			Source: "Bruck et al. 1997; Thakur, Rabenseifner, Gropp 2005; Sack 2011 sec. 3.2.2",
			Build:  allgatherBruckAlg, Cost: allgatherBruckCost,
		})
		Register(Info{
			Coll: c, Name: NeighborExchange, Linear: true,
			Doc:    "P/2 steps exchanging pairs of blocks with alternating neighbours (ring for odd P)",
			Source: "Chen et al. 2005",
			Build:  allgatherNeighbor, Cost: allgatherNeighborCost,
		})
	}
}
