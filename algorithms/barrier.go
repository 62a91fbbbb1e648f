package algorithms

import (
	"github.com/scoll/scoll/schedule"
)

// Barrier algorithms: dissemination, recursive doubling and a binomial tree.
// They exchange zero-length messages; the builder keeps them because barrier
// schedules are built after KeepEmpty (Info.Schedule and the verifier do so).

// barrierToken is the empty region barrier messages carry.
var barrierToken = schedule.RecvBuf(0, 0)

// Dissemination barrier.
//
// In round k = 0..⌈lg P⌉−1 rank r signals r+2^k and waits for r−2^k (mod P).
// After round k a rank has heard, directly or not, from the 2^(k+1)−1 ranks
// before it, so after ⌈lg P⌉ rounds from all of them. Any P works.
//
//	P=5  round 0: r→r+1   round 1: r→r+2   round 2: r→r+4
//
// Cost: ⌈lg P⌉α.
// Source: Hensgen, Finkel, Manber 1988; Mellor-Crummey, Scott 1991.
func barrierDissemination(b *schedule.Builder, p *Params) {
	P, r := p.Size, p.Rank
	for d := 1; d < P; d <<= 1 {
		b.Send(mod(r+d, P), barrierToken)
		b.Recv(mod(r-d, P), barrierToken)
		b.EndRound()
	}
}

func barrierDisseminationCost(p *Params) Cost {
	return Cost{Alpha: float64(ceilLog2(p.Size))}
}

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

// Tree barrier.
//
// Arrival is gathered up a binomial tree rooted at rank 0 (the parent of r is
// r with its lowest set bit cleared; its children are r+2^k for 2^k below
// that bit), then the release goes back down the same tree. A rank waits for
// all its children in one round, then signals its parent and waits for the
// release in the next, then releases its children.
//
//	P=8  up:   1→0 3→2 5→4 7→6, then 2→0 6→4, then 4→0
//	     down: 0→4, then 0→2 4→6, then 0→1 2→3 4→5 6→7
//
// Cost: 2⌈lg P⌉α.
// Source: binomial-tree gather and broadcast (MPICH); Hoefler–Moor 2014.
func barrierTree(b *schedule.Builder, p *Params) {
	P, r := p.Size, p.Rank
	low := P // lowest set bit of r; for rank 0 every mask < P
	if r != 0 {
		low = r & -r
	}
	var kids []int
	for m := 1; m < low && r+m < P; m <<= 1 {
		kids = append(kids, r+m)
	}
	for _, c := range kids {
		b.Recv(c, barrierToken)
	}
	b.EndRound()
	if r != 0 {
		b.Exchange(r-low, barrierToken, barrierToken)
		b.EndRound()
	}
	for i := len(kids) - 1; i >= 0; i-- {
		b.Send(kids[i], barrierToken)
	}
	b.EndRound()
}

func barrierTreeCost(p *Params) Cost {
	return Cost{Alpha: 2 * float64(ceilLog2(p.Size))}
}

func init() {
	for _, in := range []Info{
		{
			Name:   Dissemination,
			Doc:    "lg P rounds; in round k signal r+2^k and wait for r-2^k",
			Source: "Hensgen, Finkel, Manber 1988",
			Build:  barrierDissemination, Cost: barrierDisseminationCost,
		},
		{
			Name:   RecursiveDoubling,
			Doc:    "pairwise exchanges with r^2^k; extra ranks fold into a power of two",
			Source: "Thakur, Rabenseifner, Gropp 2005",
			Build:  barrierRD, Cost: barrierRDCost,
		},
		{
			Name:   Tree,
			Doc:    "gather arrival up a binomial tree to rank 0, then release down it",
			Source: "binomial tree (MPICH); Hoefler-Moor 2014",
			Build:  barrierTree, Cost: barrierTreeCost,
		},
	} {
		in.Coll = schedule.Barrier
		Register(in)
	}
}
