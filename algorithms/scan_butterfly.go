package algorithms

import "github.com/scoll/scoll/schedule"

// The notation (v_r, I_r, E_r) is that of scan_linear.go.

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
	register(Info{Name: Butterfly, Build: scanButterfly, Cost: scanButterflyCost,
		Doc:    "pairwise halving of data and ranks, recursive scan, then a second exchange; 2 lg P rounds",
		Source: "Heath, Solomonik 2019, sec. 5.2.4, Algorithm 2"}, schedule.Scan, schedule.Exscan)
}
