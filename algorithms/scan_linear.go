package algorithms

import "github.com/scoll/scoll/schedule"

// Scan and Exscan: every algorithm is registered for both collectives and
// combines contributions in rank order, so non-commutative operators are
// safe. Notation: v_r is rank r's input; the inclusive prefix of rank r is
// I_r = v_0 ⊕ ... ⊕ v_r (Scan's result) and the exclusive prefix is
// E_r = v_0 ⊕ ... ⊕ v_{r−1} (Exscan's result; undefined on rank 0).

// Linear (chain) scan.
//
// Rank r receives I_{r−1} from r−1, combines it with v_r and passes I_r on to
// r+1. Exscan keeps the received E_r = I_{r−1} as its result.
//
//	round:  0      1      2      3
//	        0→1    1→2    2→3    3→4   (rank r sends one round after it receives)
//
// Cost: (P−1)α + (P−1)·nβ + (P−1)·nγ (P−2 reductions for Exscan).
// Source: the MPI standard's reference semantics; MPICH's linear scan.
func scanLinear(b *schedule.Builder, p *Params) {
	P, r, n := p.Size, p.Rank, p.Count
	excl := p.Coll == schedule.Exscan
	in := p.input()
	out := schedule.RecvBuf(0, n)
	inPlace := p.InPlaceAt(r)
	if r == 0 {
		if P > 1 {
			b.Send(1, in)
		}
		if !excl {
			b.Copy(out, in)
		}
		b.EndRound()
		return
	}
	last := r == P-1
	switch {
	case !excl && !inPlace:
		b.Recv(r-1, out)
		b.Reduce(out, in)
		b.EndRound()
		if !last {
			b.Send(r+1, out)
		}
	case !excl: // in place: out holds v_r
		tmp := b.Alloc(n)
		b.Recv(r-1, tmp)
		b.ReduceLeft(out, tmp)
		b.EndRound()
		if !last {
			b.Send(r+1, out)
		}
	case !inPlace:
		b.Recv(r-1, out)
		if !last {
			tmp := b.Alloc(n)
			b.Copy(tmp, out)
			b.Reduce(tmp, in)
			b.EndRound()
			b.Send(r+1, tmp)
		}
	default: // exscan in place: out holds v_r until I_r has been sent
		tmp := b.Alloc(n)
		b.Recv(r-1, tmp)
		if !last {
			b.ReduceLeft(out, tmp)
			b.EndRound()
			b.Send(r+1, out)
		}
		b.Copy(out, tmp)
	}
	b.EndRound()
}

func scanLinearCost(p *Params) Cost {
	hops := float64(p.Size - 1)
	n := p.bytes(p.Count)
	red := hops
	if p.Coll == schedule.Exscan && p.Size > 1 {
		red--
	}
	return Cost{Alpha: hops, Beta: hops * n, Gamma: red * n}
}

func init() {
	register(Info{Name: Linear, Linear: true, Build: scanLinear, Cost: scanLinearCost,
		Doc:    "pass the prefix along a chain from rank 0 to rank P-1",
		Source: "MPI standard reference semantics; MPICH"}, schedule.Scan, schedule.Exscan)
}
