package algorithms

import "github.com/scoll/scoll/schedule"

// Pairwise-exchange reduce-scatter.
//
// In step k = 1..P−1 rank r sends its input block r+k to rank r+k and
// receives rank r−k's input of block r, which it combines. Contributions
// arrive in the order r−1, r−2, …, 0, P−1, …, r+1; to keep rank order the
// rank grows two partial results to the left, x_0⊕…⊕x_r and
// x_{r+1}⊕…⊕x_{P−1}, and joins them at the end (with a commutative operator
// one accumulator suffices).
//
//	P=4   step 1: 0→1 1→2 2→3 3→0
//	      step 2: 0→2 1→3 2→0 3→1
//	      step 3: 0→3 1→0 2→1 3→2
//
// Cost: (P−1)·α + ((P−1)/P)·N·β + ((P−1)/P)·N·γ.
// Source: Thakur, Rabenseifner, Gropp 2005 (pairwise exchange); Hoefler–Moor
// 2014 sec. 3.
func redscatPairwise(b *schedule.Builder, p *Params) {
	l := redscatBlocks(p)
	P, r := p.Size, p.Rank
	in, out := p.input(), redscatOut(p, &l)
	c := l.count(r)
	mine := l.blk(in, r)
	if P == 1 {
		b.Copy(out, mine)
		b.EndRound()
		return
	}
	tmp := &redscatTemp{b: b}
	inPlace := p.InPlaceAt(r)
	ordered := !p.Commutative
	// lower accumulates x_0..x_r. Out of place it is out, and mine joins it
	// with the first contribution; in place the start of the receive buffer
	// still holds blocks to send, so lower grows over mine and is copied to
	// out at the end. upper accumulates x_{r+1}..x_{P-1} (ordered only).
	lower, lowerHas := out, false
	if inPlace {
		lower, lowerHas = mine, true
	}
	var upper schedule.Region
	upperHas := false
	switch {
	case ordered && r == 0 && !inPlace:
		upper = out // nothing arrives for lower: x_0 joins at the end
	case ordered && r < P-1:
		upper = b.Alloc(c)
	}
	for k := 1; k < P; k++ {
		to, from := mod(r+k, P), mod(r-k, P)
		b.Send(to, l.blk(in, to))
		switch {
		case ordered && from > r && !upperHas:
			b.Recv(from, upper)
			upperHas = true
		case ordered && from > r:
			t := tmp.get(c)
			b.Recv(from, t)
			b.ReduceLeft(upper, t)
		case !lowerHas:
			b.Recv(from, lower)
			b.Reduce(lower, mine)
			lowerHas = true
		default:
			t := tmp.get(c)
			b.Recv(from, t)
			b.ReduceLeft(lower, t)
		}
		if k < P-1 {
			b.EndRound()
		}
	}
	// Still in the last step's round, after its reduction.
	switch {
	case ordered && r == 0 && !inPlace:
		b.ReduceLeft(out, mine)
	case upperHas:
		b.Reduce(lower, upper)
		b.Copy(out, lower)
	default:
		b.Copy(out, lower)
	}
	b.EndRound()
}

func redscatPairwiseCost(p *Params) Cost {
	P := float64(p.Size)
	N := redscatBytes(p)
	return Cost{Alpha: P - 1, Beta: N * (P - 1) / P, Gamma: N * (P - 1) / P}
}

func init() {
	register(Info{Name: Pairwise, Linear: true, Build: redscatPairwise, Cost: redscatPairwiseCost,
		Doc:    "in step k send block r+k to rank r+k and combine rank r-k's block; keeps rank order",
		Source: "Thakur, Rabenseifner, Gropp 2005; Hoefler-Moor 2014 sec. 3"}, schedule.ReduceScatterBlock, schedule.ReduceScatter)
}
