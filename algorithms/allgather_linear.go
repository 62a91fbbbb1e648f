package algorithms

import "github.com/scoll/scoll/schedule"

// Linear allgather.
//
// In one round every rank sends its block to every other rank and receives
// theirs; sends are posted in the order r+1, r+2, … to spread the load.
//
//	P=3   round 0: 0→1 0→2 1→2 1→0 2→0 2→1
//
// Cost: (P−1)·α + ((P−1)/P)·N·β (the P−1 messages leave one port in turn).
// Source: Hoefler–Moor 2014 sec. 3 (direct send); MPICH/Open MPI basic
// linear.
func allgatherLinear(b *schedule.Builder, p *Params) {
	l := allgatherLayout(p)
	P, r := p.Size, p.Rank
	own := allgatherOwn(p, &l)
	for k := 1; k < P; k++ {
		b.Send(mod(r+k, P), own)
		from := mod(r-k, P)
		b.Recv(from, allgatherBlk(&l, from))
	}
	b.Copy(allgatherBlk(&l, r), own)
	b.EndRound()
}

func allgatherLinearCost(p *Params) Cost {
	P := float64(p.Size)
	return Cost{Alpha: P - 1, Beta: allgatherBytes(p) * (P - 1) / P}
}

func init() {
	register(Info{Name: Linear, Linear: true, Build: allgatherLinear, Cost: allgatherLinearCost,
		Doc:    "every rank sends its block to every other rank in one round",
		Source: "Hoefler-Moor 2014 sec. 3 (direct); MPICH/Open MPI basic linear"}, schedule.Allgather, schedule.Allgatherv)
}
