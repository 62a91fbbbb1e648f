package algorithms

import "github.com/scoll/scoll/schedule"

// Recursive-doubling allreduce.
//
// With P' the largest power of two ≤ P and rem = P − P', the first 2·rem ranks
// fold in pairs: even rank 2i sends its vector to 2i+1 and sits out. The P'
// remaining ranks then run lg P' exchange steps: in step s rank r swaps its whole
// vector with the rank whose new number differs in bit s and combines. Finally
// each odd folding rank returns the result to its even partner. Rank order of
// contributions is kept, so non-commutative operators are safe.
//
// Every exchange combines on arrival (a fused receive-reduce), alternating
// between the receive buffer and one scratch vector: the outgoing vector must
// stay intact while the partner reads it. Two ranks need a single round and
// no scratch.
//
//	P=4:  step 0: 0↔1 2↔3    step 1: 0↔2 1↔3
//
// Cost: (lg P' + 2[rem>0])α + (lg P' + 2[rem>0])·nβ + (lg P' + [rem>0])·nγ.
// Source: Thakur, Rabenseifner, Gropp 2005 (MPICH); Hoefler–Moor 2014 sec. 3.
func allreduceRD(b *schedule.Builder, p *Params) {
	n, P, r := p.Count, p.Size, p.Rank
	out := schedule.RecvBuf(0, n)
	cur := p.input()
	pof2 := floorPow2(P)
	rem := P - pof2
	// Combines left for this rank: the last one should land in out.
	left := ceilLog2(pof2)
	if r < 2*rem {
		left = (r % 2) * (left + 1)
	}
	var tmp schedule.Region
	allocated := false
	// next returns the buffer the following combine writes: never cur, and
	// chosen so that the last combine writes out when possible.
	next := func() schedule.Region {
		left--
		if cur != out && (allocated && cur == tmp || left%2 == 0) {
			return out
		}
		if !allocated {
			tmp, allocated = b.Alloc(n), true
		}
		return tmp
	}
	newRank := -1
	switch {
	case r < 2*rem && r%2 == 0:
		b.Send(r+1, cur)
		b.EndRound()
	case r < 2*rem:
		dst := next()
		b.RecvReduce(r-1, dst, cur, false) // the lower rank's vector is left
		b.EndRound()
		cur = dst
		newRank = r / 2
	default:
		newRank = r - rem
	}
	if newRank >= 0 {
		for mask := 1; mask < pof2; mask <<= 1 {
			np := newRank ^ mask
			peer := np + rem
			if np < rem {
				peer = np*2 + 1
			}
			dst := next()
			b.Send(peer, cur)
			b.RecvReduce(peer, dst, cur, np > newRank)
			b.EndRound()
			cur = dst
		}
	}
	if r < 2*rem {
		if r%2 == 1 {
			b.Send(r-1, cur)
		} else {
			b.Recv(r+1, out)
			cur = out
		}
		b.EndRound()
	}
	b.Copy(out, cur)
}

func allreduceRDCost(p *Params) Cost {
	P := p.Size
	lg := float64(ceilLog2(floorPow2(P)))
	extra := 0.0
	if !isPow2(P) {
		extra = 1
	}
	n := p.bytes(p.Count)
	return Cost{Alpha: lg + 2*extra, Beta: (lg + 2*extra) * n, Gamma: (lg + extra) * n}
}

func init() {
	register(Info{Name: RecursiveDoubling, Build: allreduceRD, Cost: allreduceRDCost,
		Doc:    "exchange whole vectors with partners at distance 1, 2, 4, ...; latency-optimal",
		Source: "Thakur, Rabenseifner, Gropp 2005; Hoefler-Moor 2014 sec. 3"}, schedule.Allreduce)
}
