package algorithms

import "github.com/scoll/scoll/schedule"

// The notation (v_r, I_r, E_r) is that of scan_linear.go.

// Recursive-doubling scan (hypercube formulation of Hillis–Steele).
//
// Each rank keeps a partial total t (the combination of its aligned block of
// 2^k ranks) and its prefix. In round k rank r exchanges t with r^2^k
// (r+2^k or r−2^k; skipped when that rank does not exist, which is what makes
// any P work). A partner below contributes on the left of both t and the
// prefix; a partner above only extends t. A rank that sends no t after this
// round neither updates t nor receives its upper partner's t, so the last
// exchanges are one-way (upward).
//
//	P=4  round 0: 0↔1 2↔3    round 1: 0→2 1→3
//	     rank 3: prefix = v3, then v2⊕v3, then (v0⊕v1)⊕(v2⊕v3)
//
// Cost: ⌈lg P⌉(α + nβ) + (2⌈lg P⌉−1)·nγ at most.
// Source: Hillis, Steele 1986; MPICH scan (Thakur, Rabenseifner, Gropp 2005).
func scanRD(b *schedule.Builder, p *Params) {
	P, r, n := p.Size, p.Rank, p.Count
	excl := p.Coll == schedule.Exscan
	in := p.input()
	out := schedule.RecvBuf(0, n)
	haveOut := !excl // Scan's prefix starts as v_r
	initOut := !excl
	total := in // the partial total; copied to scratch before it changes
	var tmp schedule.Region
	// own makes total private before it or out is written.
	own := func() {
		if total.Space != schedule.ScratchSpace {
			t := b.Alloc(n)
			b.Copy(t, total)
			total = t
		}
	}
	for mask := 1; mask < P; mask <<= 1 {
		peer := r ^ mask
		if peer >= P {
			continue
		}
		// A rank needs its partner's total for its prefix (partner below) or
		// for a total it still has to send (more); otherwise that direction
		// of the exchange is skipped.
		more := scanRDNeed(r, mask, P)
		want := peer < r || more
		if tmp.Len == 0 && want {
			tmp = b.Alloc(n)
		}
		b.EndRound()
		if peer > r || scanRDNeed(peer, mask, P) {
			b.Send(peer, total)
		}
		if !want {
			continue
		}
		b.Recv(peer, tmp)
		if more {
			own() // before out changes: in place, total is out
		}
		if initOut {
			b.Copy(out, in)
			initOut = false
		}
		if peer < r {
			if haveOut {
				b.ReduceLeft(out, tmp)
			} else {
				b.Copy(out, tmp)
				haveOut = true
			}
			if more {
				b.ReduceLeft(total, tmp)
			}
		} else {
			b.Reduce(total, tmp)
		}
	}
	if initOut {
		b.Copy(out, in)
	}
	b.EndRound()
}

// scanRDNeed reports whether rank x of P sends its total in a round after
// the one with the given mask.
func scanRDNeed(x, mask, P int) bool {
	for m := mask << 1; m < P; m <<= 1 {
		if x^m < P {
			return true
		}
	}
	return false
}

func scanRDCost(p *Params) Cost {
	lg := float64(ceilLog2(p.Size))
	n := p.bytes(p.Count)
	return Cost{Alpha: lg, Beta: lg * n, Gamma: max(0, 2*lg-1) * n}
}

func init() {
	register(Info{Name: RecursiveDoubling, Build: scanRD, Cost: scanRDCost,
		Doc:    "lg P exchanges of partial totals with partners r^2^k; latency-optimal",
		Source: "Hillis, Steele 1986; Thakur, Rabenseifner, Gropp 2005"}, schedule.Scan, schedule.Exscan)
}
