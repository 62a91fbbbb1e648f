package algorithms

import (
	"github.com/scoll/scoll/schedule"
)

// Reduce-scatter algorithms, registered for ReduceScatterBlock
// ("reducescatter": every rank's result is n elements) and ReduceScatter
// ("reducescatterv": rank r's result is Counts[r] elements, blocks packed).
//
// Buffers: the input vector (P·n or ΣCounts elements) is the send buffer, or
// in place the receive buffer; the result is the start of the receive buffer.
// Costs below write N for the bytes of the whole vector and n = N/P.

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

// Recursive-halving reduce-scatter.
//
// With P' the largest power of two ≤ P and rem = P − P', the first 2·rem ranks
// fold in pairs: even rank 2i sends its whole vector to 2i+1 and waits for its
// result block. The P' participants then halve the vector lg P' times: in the
// step with distance d = P'/2, …, 1 a participant sends the half of its range
// its partner at distance d is responsible for and combines the other half
// with what it receives. Participant i ends with the blocks of its ranks (two
// for a folded pair, of which it forwards the even rank's). Partners combine
// non-adjacent groups of ranks, so the operator must be commutative.
//
//	P=4   step 0 (d=2): 0↔2 1↔3 swap halves {b0,b1}/{b2,b3}
//	      step 1 (d=1): 0↔1 2↔3 swap quarters → rank r holds block r
//
// Cost: lg P'·α + ((P'−1)/P')·N·(β+γ); when P is not a power of two add
// 2α + (N + n)·β + N·γ for the fold.
// Source: Thakur, Rabenseifner, Gropp 2005; Heath–Solomonik 2019 sec. 5.
func redscatHalvingAlg(b *schedule.Builder, p *Params) {
	l := redscatBlocks(p)
	N, P, r := l.displ(p.Size), p.Size, p.Rank
	in, out := p.input(), redscatOut(p, &l)
	if P == 1 {
		b.Copy(out, in.Sub(0, l.count(0)))
		b.EndRound()
		return
	}
	pof2 := floorPow2(P)
	rem := P - pof2
	tmp := &redscatTemp{b: b}
	// Participant i stands for ranks 2i, 2i+1 when i < rem, else for i+rem.
	first := func(i int) int {
		if i < rem {
			return 2 * i
		}
		return i + rem
	}
	a := &redscatHalvingArgs{
		pof2: pof2, tmp: tmp, cur: in,
		real: func(i int) int {
			if i < rem {
				return 2*i + 1
			}
			return i + rem
		},
		bound: func(i int) int {
			if i == pof2 {
				return N
			}
			return l.displ(first(i))
		},
	}
	if p.InPlaceAt(r) {
		a.acc, a.hasAcc = in, true
	}
	switch {
	case r < 2*rem && r%2 == 0:
		b.Send(r+1, in)
		b.EndRound()
		b.Recv(r+1, out)
		b.EndRound()
		return
	case r < 2*rem:
		// The even partner's vector is the left operand.
		if a.hasAcc {
			b.RecvReduce(r-1, in, in, false)
		} else {
			a.acc, a.hasAcc = b.Alloc(N), true
			b.RecvReduce(r-1, a.acc, in, false)
			a.cur = a.acc
		}
		b.EndRound()
		a.nr = r / 2
	default:
		a.nr = r - rem
		a.out, a.hasOut = out, true
	}
	_, res := redscatHalving(b, a)
	if a.nr < rem {
		// res holds blocks r−1 and r.
		b.Send(r-1, res.Sub(0, l.count(r-1)))
		b.Copy(out, res.Sub(l.count(r-1), l.count(r)))
	} else {
		b.Copy(out, res)
	}
	b.EndRound()
}

func redscatHalvingCost(p *Params) Cost {
	P := p.Size
	pof2 := floorPow2(P)
	N := redscatBytes(p)
	lg := float64(ceilLog2(pof2))
	f := float64(pof2-1) / float64(pof2)
	c := Cost{Alpha: lg, Beta: f * N, Gamma: f * N}
	if P != pof2 {
		c.Alpha += 2
		c.Beta += N + N/float64(P)
		c.Gamma += N
	}
	return c
}

// Pairwise-exchange reduce-scatter.
//
// In step k = 1..P−1 rank r sends its input block r+k to rank r+k and
// receives rank r−k's input of block r, which it combines. Contributions
// arrive in the order r−1, r−2, …, 0, P−1, …, r+1; to keep rank order the
// rank grows two partial results to the left, x_0⊕…⊕x_r and
// x_{r+1}⊕…⊕x_{P−1}, and joins them at the end (with a commutative operator
// one accumulator suffices).
//
//	P=4   step 1: 0→1 1→2 2→3 3→0
//	      step 2: 0→2 1→3 2→0 3→1
//	      step 3: 0→3 1→0 2→1 3→2
//
// Cost: (P−1)·α + ((P−1)/P)·N·β + ((P−1)/P)·N·γ.
// Source: Thakur, Rabenseifner, Gropp 2005 (pairwise exchange); Hoefler–Moor
// 2014 sec. 3.
func redscatPairwise(b *schedule.Builder, p *Params) {
	l := redscatBlocks(p)
	P, r := p.Size, p.Rank
	in, out := p.input(), redscatOut(p, &l)
	c := l.count(r)
	mine := l.blk(in, r)
	if P == 1 {
		b.Copy(out, mine)
		b.EndRound()
		return
	}
	tmp := &redscatTemp{b: b}
	inPlace := p.InPlaceAt(r)
	ordered := !p.Commutative
	// lower accumulates x_0..x_r. Out of place it is out, and mine joins it
	// with the first contribution; in place the start of the receive buffer
	// still holds blocks to send, so lower grows over mine and is copied to
	// out at the end. upper accumulates x_{r+1}..x_{P-1} (ordered only).
	lower, lowerHas := out, false
	if inPlace {
		lower, lowerHas = mine, true
	}
	var upper schedule.Region
	upperHas := false
	switch {
	case ordered && r == 0 && !inPlace:
		upper = out // nothing arrives for lower: x_0 joins at the end
	case ordered && r < P-1:
		upper = b.Alloc(c)
	}
	for k := 1; k < P; k++ {
		to, from := mod(r+k, P), mod(r-k, P)
		b.Send(to, l.blk(in, to))
		switch {
		case ordered && from > r && !upperHas:
			b.Recv(from, upper)
			upperHas = true
		case ordered && from > r:
			t := tmp.get(c)
			b.Recv(from, t)
			b.ReduceLeft(upper, t)
		case !lowerHas:
			b.Recv(from, lower)
			b.Reduce(lower, mine)
			lowerHas = true
		default:
			t := tmp.get(c)
			b.Recv(from, t)
			b.ReduceLeft(lower, t)
		}
		if k < P-1 {
			b.EndRound()
		}
	}
	// Still in the last step's round, after its reduction.
	switch {
	case ordered && r == 0 && !inPlace:
		b.ReduceLeft(out, mine)
	case upperHas:
		b.Reduce(lower, upper)
		b.Copy(out, lower)
	default:
		b.Copy(out, lower)
	}
	b.EndRound()
}

func redscatPairwiseCost(p *Params) Cost {
	P := float64(p.Size)
	N := redscatBytes(p)
	return Cost{Alpha: P - 1, Beta: N * (P - 1) / P, Gamma: N * (P - 1) / P}
}

// Reduce-then-scatter reduce-scatter.
//
// The whole vector is reduced to rank 0 along a binomial tree (child r+d
// sends to r for d = 1, 2, 4, …; the lower rank's partial is the left
// operand, so rank order is kept), then rank 0 scatters the blocks down the
// same tree: each rank receives the blocks of its subtree from its parent in
// one message and passes on the halves of its children.
//
//	P=4   reduce: 1→0 3→2 | 2→0      scatter: 0→2 {b2,b3} | 0→1 b1 3←2 b3
//
// Cost: 2⌈lg P⌉·α + ⌈lg P⌉·N·(β+γ) + ((P−1)/P)·N·β.
// Source: Thakur, Rabenseifner, Gropp 2005 (MPICH's reduce + scatterv
// baseline); Sack 2011 sec. 3.2.
func redscatReduceScatter(b *schedule.Builder, p *Params) {
	l := redscatBlocks(p)
	N, P, r := l.displ(p.Size), p.Size, p.Rank
	in, out := p.input(), redscatOut(p, &l)
	inPlace := p.InPlaceAt(r)
	acc := in
	if !inPlace && r%2 == 0 && r+1 < P {
		acc = b.Alloc(N)
	}
	res := allreduceTreeReduce(b, r, P, in, acc, &redscatTemp{b: b})
	// Scatter: rank q ≠ 0 owns the subtree [q, q+lowbit(q)) ∩ [0, P).
	end := func(q int) int { return l.displ(min(q, P)) } // start of block q, or N
	m := 1
	stage := res // blocks of this rank's subtree, starting with its own
	if r != 0 {
		for r&m == 0 {
			m <<= 1
		}
		size := end(r+m) - l.displ(r)
		switch {
		case inPlace:
			stage = schedule.RecvBuf(0, size)
		case size == l.count(r):
			stage = out
		case acc.Space == schedule.ScratchSpace && acc.Len >= size:
			stage = acc.Sub(0, size)
		default:
			stage = b.Alloc(size)
		}
		b.Recv(r-m, stage)
		b.Copy(out, stage.Sub(0, l.count(r)))
		b.EndRound()
	} else {
		for m < P {
			m <<= 1
		}
	}
	for m >>= 1; m > 0; m >>= 1 {
		if c := r + m; c < P {
			b.Send(c, stage.Sub(l.displ(c)-l.displ(r), end(c+m)-l.displ(c)))
			if r == 0 && 2*m >= P {
				// The root's first round also places its own block.
				b.Copy(out, stage.Sub(0, l.count(0)))
			}
			b.EndRound()
		}
	}
	if r == 0 && P == 1 {
		b.Copy(out, stage.Sub(0, l.count(0)))
		b.EndRound()
	}
}

func redscatReduceScatterCost(p *Params) Cost {
	P := float64(p.Size)
	N := redscatBytes(p)
	lg := float64(ceilLog2(p.Size))
	return Cost{Alpha: 2 * lg, Beta: lg*N + N*(P-1)/P, Gamma: lg * N}
}

func init() {
	for _, c := range []schedule.Collective{schedule.ReduceScatterBlock, schedule.ReduceScatter} {
		Register(Info{
			Coll: c, Name: Ring, Requires: NeedsCommutative, Linear: true,
			Doc:    "pass partial blocks around a ring in P-1 steps, optionally segmented; bandwidth-optimal",
			Source: "Thakur, Rabenseifner, Gropp 2005; Sack 2011 sec. 3.2; Hoefler-Moor 2014 sec. 3",
			Build:  redscatRingAlg, Cost: redscatRingCost,
		})
		Register(Info{
			Coll: c, Name: RecursiveHalving, Requires: NeedsCommutative,
			Doc:    "halve the vector with partners at distance P/2, ..., 1; folds extra ranks when P is not a power of two",
			Source: "Thakur, Rabenseifner, Gropp 2005; Heath-Solomonik 2019 sec. 5",
			Build:  redscatHalvingAlg, Cost: redscatHalvingCost,
		})
		Register(Info{
			Coll: c, Name: Pairwise, Linear: true,
			Doc:    "in step k send block r+k to rank r+k and combine rank r-k's block; keeps rank order",
			Source: "Thakur, Rabenseifner, Gropp 2005; Hoefler-Moor 2014 sec. 3",
			Build:  redscatPairwise, Cost: redscatPairwiseCost,
		})
		Register(Info{
			Coll: c, Name: ReduceScatter,
			Doc:    "binomial reduce of the whole vector to rank 0, then binomial scatter of the blocks",
			Source: "Thakur, Rabenseifner, Gropp 2005; Sack 2011 sec. 3.2",
			Build:  redscatReduceScatter, Cost: redscatReduceScatterCost,
		})
	}
}
