package algorithms

import "github.com/scoll/scoll/schedule"

// Recursive-doubling barrier.
//
// With P' the largest power of two ≤ P, each extra rank r ≥ P' signals
// r−P' and waits for its release. The P' ranks exchange with r^2^k for
// k < lg P', then release their extra partner.
//
//	P=6  round 0: 4→0 5→1   rounds 1–2: 0↔1 2↔3, 0↔2 1↔3   round 3: 0→4 1→5
//
// Cost: (lg P' + 2[P ≠ P'])α.
// Source: Thakur, Rabenseifner, Gropp 2005 (MPICH barrier); Hoefler–Moor 2014.
func barrierRD(b *schedule.Builder, p *Params) {
	P, r := p.Size, p.Rank
	pof2 := floorPow2(P)
	rem := P - pof2
	if r >= pof2 {
		// Signal and wait for the release in one round.
		b.Exchange(r-pof2, barrierToken, barrierToken)
		b.EndRound()
		return
	}
	if r < rem {
		b.Recv(r+pof2, barrierToken)
		b.EndRound()
	}
	for mask := 1; mask < pof2; mask <<= 1 {
		b.Exchange(r^mask, barrierToken, barrierToken)
		b.EndRound()
	}
	if r < rem {
		b.Send(r+pof2, barrierToken)
		b.EndRound()
	}
}

func barrierRDCost(p *Params) Cost {
	c := Cost{Alpha: float64(ceilLog2(floorPow2(p.Size)))}
	if !isPow2(p.Size) {
		c.Alpha += 2
	}
	return c
}

func init() {
	register(Info{Name: RecursiveDoubling, Build: barrierRD, Cost: barrierRDCost,
		Doc:    "pairwise exchanges with r^2^k; extra ranks fold into a power of two",
		Source: "Thakur, Rabenseifner, Gropp 2005"}, schedule.Barrier)
}
