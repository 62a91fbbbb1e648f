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
	n, P, r := p.Count, p.Size, p.Rank
	buf := schedule.RecvBuf(0, n)
	in := p.input()
	if P == 1 {
		b.Copy(buf, in)
		b.EndRound()
		return
	}
	pof2 := floorPow2(P)
	rem := P - pof2
	l := redscatSplit(n, pof2)
	tmp := &redscatTemp{b: b}
	a := &redscatHalvingArgs{
		pof2: pof2, tmp: tmp, cur: in, acc: buf, hasAcc: true, doubling: true,
		real: func(i int) int {
			if i < rem {
				return 2*i + 1
			}
			return i + rem
		},
		bound: l.displ,
	}
	switch {
	case r < 2*rem && r%2 == 0:
		b.Send(r+1, in)
		b.EndRound()
		b.Recv(r+1, buf)
		b.EndRound()
		return
	case r < 2*rem:
		b.RecvReduce(r-1, buf, in, false) // the even partner's vector is left
		b.EndRound()
		a.cur, a.nr = buf, r/2
	default:
		a.nr = r - rem
	}
	steps, _ := redscatHalving(b, a)
	at := func(lo, hi int) schedule.Region { return buf.Sub(a.bound(lo), a.bound(hi)-a.bound(lo)) }
	for i := len(steps) - 1; i >= 0; i-- {
		s := steps[i]
		b.Exchange(s.peer, at(s.keepLo, s.keepHi), at(s.sendLo, s.sendHi))
		b.EndRound()
	}
	if r < 2*rem {
		b.Send(r-1, buf)
		b.EndRound()
	}
}

func allreduceRabenseifnerCost(p *Params) Cost {
	P := p.Size
	pof2 := floorPow2(P)
	n := p.bytes(p.Count)
	lg := float64(ceilLog2(pof2))
	f := float64(pof2-1) / float64(pof2)
	c := Cost{Alpha: 2 * lg, Beta: 2 * f * n, Gamma: f * n}
	if P != pof2 {
		c.Alpha += 2
		c.Beta += 2 * n
		c.Gamma += n
	}
	return c
}

func init() {
	register(Info{Name: Rabenseifner, Build: allreduceRabenseifner, Cost: allreduceRabenseifnerCost,
		Doc:    "recursive-halving reduce-scatter then recursive-doubling allgather; keeps rank order",
		Source: "Thakur, Rabenseifner, Gropp 2005; Heath-Solomonik 2019 sec. 5; Hoefler-Moor 2014 sec. 3"}, schedule.Allreduce)
}
