package algorithms

import "github.com/scoll/scoll/schedule"

// Reduce-then-scatter reduce-scatter.
//
// The whole vector is reduced to rank 0 along a binomial tree (child r+d
// sends to r for d = 1, 2, 4, …; the lower rank's partial is the left
// operand, so rank order is kept), then rank 0 scatters the blocks down the
// same tree: each rank receives the blocks of its subtree from its parent in
// one message and passes on the halves of its children.
//
//	P=4   reduce: 1→0 3→2 | 2→0      scatter: 0→2 {b2,b3} | 0→1 b1 3←2 b3
//
// Cost: 2⌈lg P⌉·α + ⌈lg P⌉·N·(β+γ) + ((P−1)/P)·N·β.
// Source: Thakur, Rabenseifner, Gropp 2005 (MPICH's reduce + scatterv
// baseline); Sack 2011 sec. 3.2.
func redscatReduceScatter(b *schedule.Builder, p *Params) {
	l := redscatBlocks(p)
	N, P, r := l.displ(p.Size), p.Size, p.Rank
	in, out := p.input(), redscatOut(p, &l)
	inPlace := p.InPlaceAt(r)
	acc := in
	if !inPlace && r%2 == 0 && r+1 < P {
		acc = b.Alloc(N)
	}
	res := allreduceTreeReduce(b, r, P, in, acc, &redscatTemp{b: b})
	// Scatter: rank q ≠ 0 owns the subtree [q, q+lowbit(q)) ∩ [0, P).
	end := func(q int) int { return l.displ(min(q, P)) } // start of block q, or N
	m := 1
	stage := res // blocks of this rank's subtree, starting with its own
	if r != 0 {
		for r&m == 0 {
			m <<= 1
		}
		size := end(r+m) - l.displ(r)
		switch {
		case inPlace:
			stage = schedule.RecvBuf(0, size)
		case size == l.count(r):
			stage = out
		case acc.Space == schedule.ScratchSpace && acc.Len >= size:
			stage = acc.Sub(0, size)
		default:
			stage = b.Alloc(size)
		}
		b.Recv(r-m, stage)
		b.Copy(out, stage.Sub(0, l.count(r)))
		b.EndRound()
	} else {
		for m < P {
			m <<= 1
		}
	}
	for m >>= 1; m > 0; m >>= 1 {
		if c := r + m; c < P {
			b.Send(c, stage.Sub(l.displ(c)-l.displ(r), end(c+m)-l.displ(c)))
			if r == 0 && 2*m >= P {
				// The root's first round also places its own block.
				b.Copy(out, stage.Sub(0, l.count(0)))
			}
			b.EndRound()
		}
	}
	if r == 0 && P == 1 {
		b.Copy(out, stage.Sub(0, l.count(0)))
		b.EndRound()
	}
}

func redscatReduceScatterCost(p *Params) Cost {
	P := float64(p.Size)
	N := redscatBytes(p)
	lg := float64(ceilLog2(p.Size))
	return Cost{Alpha: 2 * lg, Beta: lg*N + N*(P-1)/P, Gamma: lg * N}
}

func init() {
	register(Info{Name: ReduceScatter, Build: redscatReduceScatter, Cost: redscatReduceScatterCost,
		Doc:    "binomial reduce of the whole vector to rank 0, then binomial scatter of the blocks",
		Source: "Thakur, Rabenseifner, Gropp 2005; Sack 2011 sec. 3.2"}, schedule.ReduceScatterBlock, schedule.ReduceScatter)
}
