package algorithms

import "github.com/scoll/scoll/schedule"

// Rabenseifner's allreduce: recursive-halving reduce-scatter followed by a
// recursive-doubling allgather.
//
// With P' the largest power of two ≤ P and rem = P − P', the first 2·rem
// ranks fold in pairs: even rank 2i sends its vector to 2i+1, which combines
// it (2i on the left) and stands for both; the even rank waits for the result.
// The P' participants then halve the vector: in the step with distance
// d = 1, 2, …, P'/2 a participant keeps the lower half of its range if its
// bit d is clear and the upper half otherwise, sends the other half to its
// partner and combines what it receives. Partners at distance d combine
// adjacent groups of d participants, the lower group on the left, so rank
// order is kept and non-commutative operators are safe. The allgather runs
// the same steps backwards, exchanging the reduced ranges, and the odd ranks
// of folded pairs finally send the result to their even partners.
//
//	P=4   halving:  0↔1 (halves)  0↔2 (quarters)
//	      doubling: 0↔2 (quarters) 0↔1 (halves)
//
// Cost: 2 lg P'·α + 2((P'−1)/P')·nβ + ((P'−1)/P')·nγ; when P is not a power
// of two add 2α + 2nβ + nγ for the fold.
// Source: Thakur, Rabenseifner, Gropp 2005 sec. 4; Heath–Solomonik 2019
// sec. 5 (butterfly allreduce); Hoefler–Moor 2014 sec. 3.
func allreduceRabenseifner(b *schedule.Builder, p *Params) {
	buf, in, done := vectorSetup(b, p)
	if done {
		return
	}
	r := p.Rank
	a := newHalving(b, p.Size, r, in, buf)
	if a == nil {
		return
	}
	l := redscatSplit(p.Count, a.pof2)
	a.acc, a.hasAcc, a.doubling, a.bound = buf, true, true, l.displ
	if r < 2*a.rem {
		b.RecvReduce(r-1, buf, in, false) // the even partner's vector is left
		b.EndRound()
		a.cur = buf
	}
	steps, _ := redscatHalving(b, a)
	at := func(lo, hi int) schedule.Region { return buf.Sub(a.bound(lo), a.bound(hi)-a.bound(lo)) }
	for i := len(steps) - 1; i >= 0; i-- {
		s := steps[i]
		b.Exchange(s.peer, at(s.keepLo, s.keepHi), at(s.sendLo, s.sendHi))
		b.EndRound()
	}
	if r < 2*a.rem {
		b.Send(r-1, buf)
		b.EndRound()
	}
}

func allreduceRabenseifnerCost(p *Params) Cost { return halvingCost(p, 2) }

func init() {
	register(Info{Name: Rabenseifner, Build: allreduceRabenseifner, Cost: allreduceRabenseifnerCost,
		Doc:    "recursive-halving reduce-scatter then recursive-doubling allgather; keeps rank order",
		Source: "Thakur, Rabenseifner, Gropp 2005; Heath-Solomonik 2019 sec. 5; Hoefler-Moor 2014 sec. 3"}, schedule.Allreduce)
}
