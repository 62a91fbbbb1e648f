package algorithms

import "github.com/scoll/scoll/schedule"

// Allgather-then-reduce allreduce.
//
// Every rank gathers all P input vectors into scratch with Bruck's ⌈lg P⌉
// rounds (scratch position i holds rank r+i's vector), then reduces them
// locally in rank order: starting from its own vector x_r it adds
// x_{r−1}, …, x_0 on the left and x_{r+1}, …, x_{P−1} on the right, so
// non-commutative operators are safe and, in place, nothing is copied. It
// trades P−1 redundant reductions and P·n scratch for the fewest rounds of
// any allreduce: good for tiny vectors and many ranks.
//
//	P=4   d=1: r←r+1 (x_{r+1})   d=2: r←r+2 (x_{r+2}, x_{r+3})
//	      local: x_0 ⊕ x_1 ⊕ x_2 ⊕ x_3
//
// Cost: ⌈lg P⌉·α + (P−1)·nβ + (P−1)·nγ.
// Source: Bruck et al. 1997 (gather phase); Hoefler–Moor 2014 sec. 3.
func allreduceAllgatherReduce(b *schedule.Builder, p *Params) {
	buf, in, done := vectorSetup(b, p)
	if done {
		return
	}
	n, P, r := p.Count, p.Size, p.Rank
	pos := func(i int) int { return i * n }
	stage := b.Alloc(P * n)
	allgatherBruck(b, r, P, in, stage, pos)
	at := func(q int) schedule.Region { return stage.Sub(pos(mod(q-r, P)), n) }
	b.Copy(buf, in)
	for q := r - 1; q >= 0; q-- {
		b.ReduceLeft(buf, at(q))
	}
	for q := r + 1; q < P; q++ {
		b.Reduce(buf, at(q))
	}
	b.EndRound()
}

func allreduceAllgatherReduceCost(p *Params) Cost {
	P := float64(p.Size)
	n := p.bytes(p.Count)
	// Local copies: the own vector into the Bruck stage and into the result.
	return Cost{Alpha: float64(ceilLog2(p.Size)), Beta: (P - 1) * n, Gamma: (P - 1) * n, Copy: 2 * n}
}

func init() {
	// Linear: Θ(P) local reductions a rank, Θ(P²) operations in all.
	register(Info{Name: AllgatherReduce, Linear: true, Build: allreduceAllgatherReduce, Cost: allreduceAllgatherReduceCost,
		Doc:    "Bruck allgather of all vectors, then a local reduction in rank order; fewest rounds",
		Source: "Bruck et al. 1997; Hoefler-Moor 2014 sec. 3"}, schedule.Allreduce)
}
