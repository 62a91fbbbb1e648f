package algorithms

import (
	"github.com/scoll/scoll/schedule"
)

// Scan and Exscan algorithms: linear chain, recursive doubling and the
// Heath–Solomonik butterfly. Each is registered for both collectives.
//
// Notation: v_r is rank r's input; the inclusive prefix of rank r is
// I_r = v_0 ⊕ ... ⊕ v_r (Scan's result) and the exclusive prefix is
// E_r = v_0 ⊕ ... ⊕ v_{r−1} (Exscan's result; undefined on rank 0). All
// three algorithms combine contributions in rank order, so non-commutative
// operators are safe.

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

// Butterfly scan (Heath and Solomonik, Algorithm 2), generalised to any P and
// any count.
//
// A level works on a group of k members (ranks base + j·stride) holding
// values over a data range D. Members 2i and 2i+1 pair up and split D into a
// left half L (⌊|D|/2⌋ elements) and a right half R: the even member sends
// its R half and gets its partner's L half, the odd member the reverse, so
// the even holds the pair's combination u_i over L and the odd over R. The
// evens then scan the u over L and the odds over R recursively (half the
// data, half the members) and return the exclusive prefix X_i of the pairs.
// A second exchange finishes the level: the even sends X_i⊕v_{2i} over L and
// gets X_i over R; the odd, which kept v_{2i}'s R half from the first
// exchange, then has E_{2i+1} = X_i⊕v_{2i} on both halves and the even has
// E_{2i} = X_i. All combinations keep rank order.
//
// Generalisations (the paper assumes P a power of two and even counts):
//   - Odd group size: the last member sits the level out. In the round of the
//     last pair's second exchange, that pair's even sends X⊕u over L and its
//     odd X⊕u over R to the lone member, which is its exclusive prefix; so
//     the level still takes two rounds. Recursion depth is ⌊lg P⌋.
//   - Odd or tiny counts: halves are ⌊|D|/2⌋ and ⌈|D|/2⌉; empty halves make
//     empty messages, which the builder drops on both sides.
//
// Inclusive Scan finishes the top level with one more local combine with
// v_r; in place, the input is first copied to scratch since the output is
// written while the input is still needed.
//
//	P=4  round 0: 0↔1 2↔3 (halves)   round 1: 0↔2 (L/4) 1↔3 (R/4)
//	     round 2: 0↔2                 round 3: 0↔1 2↔3 (halves)
//
// Cost: 2⌊lg P⌋α + 2n(1−2^−⌊lg P⌋)β + ≈(2n + n[Scan])γ: the same time as a
// reduce-scatter plus an allgather, bandwidth-optimal within a factor of 2.
// Source: Heath, Solomonik 2019, Parallel Computing notes, sec. 5.2.4, Algorithm 2.
func scanButterfly(b *schedule.Builder, p *Params) {
	P, r, n := p.Size, p.Rank, p.Count
	in := p.input()
	out := schedule.RecvBuf(0, n)
	if p.InPlaceAt(r) && P > 1 {
		t := b.Alloc(n)
		b.Copy(t, in)
		in = t
	}
	scanBflyLevel(b, r, 0, 1, P, in, out, p.Coll == schedule.Scan)
	b.EndRound()
}

// scanBflyLevel emits rank r's part of one butterfly level over the group
// base + j·stride, j < k. v holds the member's value over the level's data;
// out receives its exclusive prefix (left undefined on member 0), or the
// inclusive one when incl. The level leaves the current round open with
// local operations only, so the caller may append more before its next
// message.
func scanBflyLevel(b *schedule.Builder, r, base, stride, k int, v, out schedule.Region, incl bool) {
	if k == 1 {
		if incl {
			b.Copy(out, v)
		}
		return
	}
	j := (r - base) / stride
	n := v.Len
	h := n / 2
	left := func(x schedule.Region) schedule.Region { return x.Sub(0, h) }
	right := func(x schedule.Region) schedule.Region { return x.Sub(h, n-h) }
	member := func(j int) int { return base + j*stride }
	pairs := k / 2
	lone := k%2 == 1
	if lone && j == k-1 {
		b.EndRound()
		b.Recv(member(k-3), left(out))
		b.Recv(member(k-2), right(out))
		if incl {
			b.Reduce(out, v)
		}
		return
	}
	i := j / 2
	last := lone && i == pairs-1 // this pair also serves the lone member
	if j%2 == 0 {
		partner := member(j + 1)
		u := b.Alloc(h)
		b.EndRound()
		b.Send(partner, right(v))
		b.Recv(partner, u)
		b.ReduceLeft(u, left(v)) // u = v_{2i} ⊕ v_{2i+1} over L
		scanBflyLevel(b, r, base, 2*stride, pairs, u, left(out), false)
		s := left(v) // what the odd partner needs: X ⊕ v_{2i} over L
		if i > 0 {
			if last {
				b.ReduceLeft(u, left(out))
			}
			if incl {
				b.Reduce(left(out), left(v))
				s = left(out)
			} else {
				s = b.Alloc(h)
				b.Copy(s, left(out))
				b.Reduce(s, left(v))
			}
		}
		b.EndRound()
		b.Send(partner, s)
		if i > 0 {
			b.Recv(partner, right(out))
		}
		if last {
			b.Send(member(k-1), u)
		}
		if incl {
			if i > 0 {
				b.Reduce(right(out), right(v))
			} else {
				b.Copy(out, v)
			}
		}
		return
	}
	partner := member(j - 1)
	w := b.Alloc(n - h) // v_{2i} over R
	u := b.Alloc(n - h)
	b.EndRound()
	b.Send(partner, left(v))
	b.Recv(partner, w)
	b.Copy(u, w)
	b.Reduce(u, right(v)) // u = v_{2i} ⊕ v_{2i+1} over R
	scanBflyLevel(b, r, base+stride, 2*stride, pairs, u, right(out), false)
	if i > 0 && (last || incl) {
		b.ReduceLeft(u, right(out)) // X ⊕ u = I_{2i+1} over R
	}
	b.EndRound()
	if i > 0 {
		b.Send(partner, right(out))
	}
	b.Recv(partner, left(out))
	if last {
		b.Send(member(k-1), u)
	}
	if incl {
		b.Reduce(left(out), left(v))
		b.Copy(right(out), u)
	} else if i > 0 {
		b.Reduce(right(out), w)
	} else {
		b.Copy(right(out), w)
	}
}

func scanButterflyCost(p *Params) Cost {
	lv := 0
	for k := p.Size; k > 1; k /= 2 {
		lv++
	}
	n := p.bytes(p.Count)
	f := 1 - 1/float64(int(1)<<lv)
	c := Cost{Alpha: 2 * float64(lv), Beta: 2 * n * f, Gamma: 2 * n * f}
	if p.Coll == schedule.Scan && p.Size > 1 {
		c.Gamma += n
	}
	return c
}

func init() {
	for _, c := range []schedule.Collective{schedule.Scan, schedule.Exscan} {
		Register(Info{
			Coll: c, Name: Linear, Linear: true,
			Doc:    "pass the prefix along a chain from rank 0 to rank P-1",
			Source: "MPI standard reference semantics; MPICH",
			Build:  scanLinear, Cost: scanLinearCost,
		})
		Register(Info{
			Coll: c, Name: RecursiveDoubling,
			Doc:    "lg P exchanges of partial totals with partners r^2^k; latency-optimal",
			Source: "Hillis, Steele 1986; Thakur, Rabenseifner, Gropp 2005",
			Build:  scanRD, Cost: scanRDCost,
		})
		Register(Info{
			Coll: c, Name: Butterfly,
			Doc:    "pairwise halving of data and ranks, recursive scan, then a second exchange; 2 lg P rounds",
			Source: "Heath, Solomonik 2019, sec. 5.2.4, Algorithm 2",
			Build:  scanButterfly, Cost: scanButterflyCost,
		})
	}
}
