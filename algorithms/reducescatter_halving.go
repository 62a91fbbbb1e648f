package algorithms

import "github.com/scoll/scoll/schedule"

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
	l, in, out, done := redscatSetup(b, p)
	if done {
		return
	}
	N, r := l.displ(p.Size), p.Rank
	a := newHalving(b, p.Size, r, in, out)
	if a == nil {
		return
	}
	// Logical block i is the blocks of the ranks participant i stands for.
	a.bound = func(i int) int {
		switch {
		case i == a.pof2:
			return N
		case i < a.rem:
			return l.displ(2 * i)
		}
		return l.displ(i + a.rem)
	}
	if p.InPlaceAt(r) {
		a.acc, a.hasAcc = in, true
	}
	if r < 2*a.rem {
		// The even partner's vector is the left operand.
		if a.hasAcc {
			b.RecvReduce(r-1, in, in, false)
		} else {
			a.acc, a.hasAcc = b.Alloc(N), true
			b.RecvReduce(r-1, a.acc, in, false)
			a.cur = a.acc
		}
		b.EndRound()
	} else {
		a.out, a.hasOut = out, true
	}
	_, res := redscatHalving(b, a)
	if a.nr < a.rem {
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

// halvingCost is the cost of a recursive halving of the whole vector over the
// P' = floorPow2(P) participants of p and of its mirror (the allgather or
// gather that undoes it): 2 lg P'·α + 2((P'−1)/P')·nβ + ((P'−1)/P')·nγ, plus,
// when P ≠ P', the fold's foldMsgs messages of the vector and one reduction
// of it.
func halvingCost(p *Params, foldMsgs float64) Cost {
	pof2 := floorPow2(p.Size)
	lg := float64(ceilLog2(pof2))
	n := p.bytes(p.Count)
	f := float64(pof2-1) / float64(pof2)
	c := Cost{Alpha: 2 * lg, Beta: 2 * f * n, Gamma: f * n}
	if p.Size != pof2 {
		c.Alpha += foldMsgs
		c.Beta += foldMsgs * n
		c.Gamma += n
	}
	return c
}

// redscatHalvingArgs describes one rank's recursive vector halving among pof2
// participants, the reduce-scatter half of Rabenseifner's allreduce and the
// recursive-halving reduce-scatter.
//
// The vector is cut into pof2 logical blocks; logical block i spans elements
// [bound(i), bound(i+1)) relative to the start of cur and acc. In each step a
// participant keeps one half of the range it holds and sends the other half
// to its partner, so after lg pof2 steps it holds one logical block.
type redscatHalvingArgs struct {
	// nr is this rank's number among the participants, pof2 their number;
	// rem = P − pof2 pairs of ranks are folded (see newHalving).
	nr, pof2, rem int
	// bound gives the offset of logical block i, for i in [0, pof2].
	bound func(i int) int
	// cur holds this rank's current vector (its input, or the result of
	// folding a non-participant into it).
	cur schedule.Region
	// acc, when hasAcc, is the writable vector-shaped region partial results
	// accumulate in; it may equal cur. Without it the first step allocates
	// scratch for the half it keeps.
	acc    schedule.Region
	hasAcc bool
	// out, when hasOut, is where the last step should leave the final block
	// (received straight into it when redscatDirect allows).
	out    schedule.Region
	hasOut bool
	// doubling selects the distance order. Distance doubling (partners at
	// 1, 2, 4, …) combines contiguous groups of participants, lower ones on
	// the left, so rank order is kept; participant nr ends with logical block
	// bit-reverse(nr). Distance halving (partners at pof2/2, …, 1) ends with
	// logical block nr but combines out of rank order.
	doubling bool
}

// newHalving starts rank r's recursive halving among the pof2 = floorPow2(P)
// participants of P ranks: ranks 2i and 2i+1 (i < rem = P − pof2) fold into
// participant i, which the odd rank stands for, and rank r ≥ 2·rem is
// participant r − rem. An even rank of a pair sends its vector in to its
// partner, receives its result into res and gets nil; the odd rank still has
// to combine its partner's vector (cur is in until it does).
func newHalving(b *schedule.Builder, P, r int, in, res schedule.Region) *redscatHalvingArgs {
	pof2 := floorPow2(P)
	a := &redscatHalvingArgs{pof2: pof2, rem: P - pof2, cur: in}
	switch {
	case r < 2*a.rem && r%2 == 0:
		b.Send(r+1, in)
		b.EndRound()
		b.Recv(r+1, res)
		b.EndRound()
		return nil
	case r < 2*a.rem:
		a.nr = r / 2
	default:
		a.nr = r - a.rem
	}
	return a
}

// rank returns the rank that stands for participant i.
func (a *redscatHalvingArgs) rank(i int) int {
	if i < a.rem {
		return 2*i + 1
	}
	return i + a.rem
}

// redscatHalvingStep records one step for the allgather that mirrors it.
type redscatHalvingStep struct {
	peer           int // rank of the partner
	keepLo, keepHi int // logical blocks kept
	sendLo, sendHi int // logical blocks sent
}

// redscatHalving emits the lg pof2 exchange rounds and returns the steps and
// the region that holds this rank's fully reduced logical block.
func redscatHalving(b *schedule.Builder, a *redscatHalvingArgs) ([]redscatHalvingStep, schedule.Region) {
	at := func(base schedule.Region, shift, lo, hi int) schedule.Region {
		return base.Sub(a.bound(lo)-shift, a.bound(hi)-a.bound(lo))
	}
	have, haveShift := a.cur, 0 // region holding the current data and its offset shift
	haveAcc := a.hasAcc && a.acc == a.cur
	acc, accShift := a.acc, 0
	var steps []redscatHalvingStep
	lo, hi := 0, a.pof2
	nsteps := ceilLog2(a.pof2)
	for s := range nsteps {
		m := a.pof2 >> (s + 1)
		if a.doubling {
			m = 1 << s
		}
		pnr := a.nr ^ m
		peer := a.rank(pnr)
		half := (hi - lo) / 2
		klo, khi, slo, shi := lo, lo+half, lo+half, hi
		if a.nr&m != 0 {
			klo, khi, slo, shi = lo+half, hi, lo, lo+half
		}
		recvLower := pnr < a.nr
		sent := at(have, haveShift, slo, shi)
		mine := at(have, haveShift, klo, khi)
		b.Send(peer, sent)
		switch {
		case s == nsteps-1 && a.hasOut && redscatDirect(a.out, mine, sent):
			b.RecvReduce(peer, a.out, mine, !recvLower)
			have, haveShift = a.out, a.bound(klo)
		case haveAcc:
			b.RecvReduce(peer, mine, mine, !recvLower)
		default:
			if !a.hasAcc {
				accShift = a.bound(klo)
				acc = b.Alloc(a.bound(khi) - accShift)
			}
			dst := at(acc, accShift, klo, khi)
			b.RecvReduce(peer, dst, mine, !recvLower)
			have, haveShift, haveAcc = acc, accShift, true
		}
		b.EndRound()
		steps = append(steps, redscatHalvingStep{peer: peer, keepLo: klo, keepHi: khi, sendLo: slo, sendHi: shi})
		lo, hi = klo, khi
	}
	return steps, at(have, haveShift, lo, hi)
}

func init() {
	register(Info{Name: RecursiveHalving, Requires: NeedsCommutative, Build: redscatHalvingAlg, Cost: redscatHalvingCost,
		Doc:    "halve the vector with partners at distance P/2, ..., 1; folds extra ranks when P is not a power of two",
		Source: "Thakur, Rabenseifner, Gropp 2005; Heath-Solomonik 2019 sec. 5"}, schedule.ReduceScatterBlock, schedule.ReduceScatter)
}
