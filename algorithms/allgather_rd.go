package algorithms

import "github.com/scoll/scoll/schedule"

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
			sendAll(b, peer, allgatherRuns(&l, lo, lo+d))
		}
		recvAll(b, peer, allgatherRuns(&l, plo, plo+d))
		if d == 1 {
			b.Copy(mine, own)
		}
		b.EndRound()
	}
}

func init() {
	// Charged as Bruck's, rotation copy included, as it always was: the
	// selector's choice between the two at powers of two rests on it.
	register(Info{Name: RecursiveDoubling, Requires: NeedsPowerOfTwo, Build: allgatherRD, Cost: allgatherBruckCost,
		Doc:    "exchange all held blocks with partners at distance 1, 2, 4, ...",
		Source: "Thakur, Rabenseifner, Gropp 2005; Sack 2011 sec. 3.2.2; Heath-Solomonik 2019 sec. 5"}, schedule.Allgather, schedule.Allgatherv)
}
