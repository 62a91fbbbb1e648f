package algorithms

import "github.com/scoll/scoll/schedule"

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

func init() {
	register(Info{Name: Dissemination, Build: barrierDissemination, Cost: barrierDisseminationCost,
		Doc:    "lg P rounds; in round k signal r+2^k and wait for r-2^k",
		Source: "Hensgen, Finkel, Manber 1988"}, schedule.Barrier)
}
