package algorithms

import (
	"github.com/scoll/scoll/schedule"
)

// redscatHalvingArgs describes one rank's recursive vector halving among pof2
// participants, the reduce-scatter half of Rabenseifner's allreduce and the
// recursive-halving reduce-scatter.
//
// The vector is cut into pof2 logical blocks; logical block i spans elements
// [bound(i), bound(i+1)) relative to the start of cur and acc. In each step a
// participant keeps one half of the range it holds and sends the other half
// to its partner, so after lg pof2 steps it holds one logical block.
type redscatHalvingArgs struct {
	// nr is this rank's number among the participants, pof2 their number.
	nr, pof2 int
	// real maps a participant number to its rank.
	real func(nr int) int
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
	tmp      *redscatTemp
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
		peer := a.real(pnr)
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
