package algorithms

import "github.com/scoll/scoll/schedule"

// Linear reduce: every rank sends its vector to the root, which receives them
// one per round from rank P−1 down to rank 0 and folds each in as the left
// operand (its own vector at its place), so one scratch vector suffices and
// rank order is kept.
//
//	root 0, P=4:  round 0: 3→0   round 1: 2→0, acc = v2⊕acc   round 2: 1→0, ...
//
// Cost: (P−1)(α + nβ + nγ).
// Source: Hoefler–Moor 2014 sec. 3.1.1 (flat tree); MPI reference reduce.
func reduceLinear(b *schedule.Builder, p *Params) {
	n, P, r, root := p.Count, p.Size, p.Rank, p.Root
	in := p.input()
	if r != root {
		b.Send(root, in)
		b.EndRound()
		return
	}
	acc := schedule.RecvBuf(0, n)
	own := in
	if p.InPlaceAt(r) && root < P-1 {
		// Rank P−1's vector arrives in the receive buffer first.
		own = b.Alloc(n)
		b.Copy(own, in)
		b.EndRound()
	}
	var tmp schedule.Region
	if P > 1 {
		tmp = b.Alloc(n)
	}
	init, pending := false, false
	for i := P - 1; i >= 0; i-- {
		if i == root {
			pending = true
			continue
		}
		dst := tmp
		if !init && !pending {
			dst = acc
		}
		b.Recv(i, dst)
		if pending {
			if init {
				b.ReduceLeft(acc, own)
			} else {
				b.Copy(acc, own)
			}
			init, pending = true, false
		}
		if dst == tmp {
			b.ReduceLeft(acc, tmp)
		}
		init = true
		b.EndRound()
	}
	if pending {
		if init {
			b.ReduceLeft(acc, own)
		} else {
			b.Copy(acc, own)
		}
		b.EndRound()
	}
}

func reduceLinearCost(p *Params) Cost {
	k, nb := float64(p.Size-1), p.bytes(p.Count)
	return Cost{Alpha: k, Beta: k * nb, Gamma: k * nb}
}

func init() {
	register(Info{Name: Linear, Linear: true, Build: reduceLinear, Cost: reduceLinearCost,
		Doc:    "the root receives every vector in turn and combines them in rank order",
		Source: "Hoefler-Moor 2014 sec. 3.1.1"}, schedule.Reduce)
}
