package algorithms

import (
	"fmt"
	"math"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/schedule"
)

// CheckRadixVector reports why ks cannot be radix-k's radix vector on size
// ranks (errs.InvalidArgument): an entry below 2 or a product other than
// size.
func CheckRadixVector(ks []int, size int) error {
	prod := 1
	for _, k := range ks {
		if k < 2 {
			return fmt.Errorf("%w: radix vector %v: entry %d (want ≥ 2)", errs.InvalidArgument, ks, k)
		}
		if prod > math.MaxInt/k {
			return fmt.Errorf("%w: radix vector %v: product overflows, want %d ranks", errs.InvalidArgument, ks, size)
		}
		prod *= k
	}
	if prod != size {
		return fmt.Errorf("%w: radix vector %v: product %d, want %d ranks", errs.InvalidArgument, ks, prod, size)
	}
	return nil
}

// Radix-k reduce (Peterka et al.'s radix-k compositing, as Marendic et al.
// run it): a reduce-scatter in r rounds for the radix vector k = [k_1, …,
// k_r] (k_1·…·k_r = P), then the binomial gather of reduceGatherBlocks.
// In round i the ranks form groups of k_i that differ only in their i-th
// mixed-radix digit d_i (members k_1·…·k_(i−1) apart, nearest neighbours
// first); each member cuts the range of blocks it holds into k_i pieces,
// sends piece j to member j and combines the k_i − 1 pieces it receives
// into piece d_i, in member order. A rank's partial always covers a
// contiguous, aligned range of ranks, so non-commutative operators are
// safe. With k = [2, …, 2] it is the butterfly (recursive halving).
//
//	P=8, k=[2,4]:  round 1: 0↔1 2↔3 4↔5 6↔7 (halves)
//	               round 2: {0,2,4,6} {1,3,5,7} all to all (quarters)
//	               gather:  rank r holds block β(r), β the digit reversal
//
// No element is copied: in round 1 the first piece received lands in place
// and the rank's own input is combined into it.
//
// The default vector (Params.RadixVector nil) is p.Radix as often as it
// divides P, then the factors of what is left: its power of two as 4s (a
// last 2 joins a 4 as 8, as in Marendic et al.'s {4, 4, 8} for P = 128),
// then its odd prime factors in increasing order.
//
// Cost: (Σ(k_i − 1) + ⌈lg P⌉)α + 2((P−1)/P)nβ + ((P−1)/P)nγ, Table 3's
// Radix-k row (a round's k_i − 1 sends leave one port one after another).
// Source: Marendic et al. 2016 sec. 5.5.4, Table 3; Peterka et al. 2009;
// Kendall et al. 2010.
func reduceRadixK(b *schedule.Builder, p *Params) {
	n, P, r := p.Count, p.Size, p.Rank
	acc, in, done := reduceBlocksSetup(b, p)
	if done {
		return
	}
	ks := RadixVector(p)
	l := redscatSplit(n, P)
	reg := func(base schedule.Region, lo, hi int) schedule.Region {
		return base.Sub(l.displ(lo), l.displ(hi)-l.displ(lo))
	}
	maxK := 0
	for _, k := range ks {
		maxK = max(maxK, k)
	}
	// Scratch for received pieces; round 1's are the longest.
	tmp := make([]schedule.Region, maxK-1)
	piece := min(n, l.displ(P/ks[0]))
	for i := range tmp {
		tmp[i] = b.Alloc(piece)
	}
	src := in
	lo, stride := 0, 1
	for _, k := range ks {
		w := P / (k * stride) // blocks a piece (the range is w·k blocks)
		d := r / stride % k
		base := r - d*stride
		keep := reg(acc, lo+d*w, lo+(d+1)*w)
		for j := range k {
			if j != d {
				b.Send(base+j*stride, reg(src, lo+j*w, lo+(j+1)*w))
			}
		}
		// Partners nearest first on each side: left ones as left
		// operands, then right ones. In round 1 (not in place) the first
		// piece lands in keep and the own input joins it.
		direct := src != acc
		order := make([]int, 0, k-1)
		for j := d - 1; j >= 0; j-- {
			order = append(order, j)
		}
		for j := d + 1; j < k; j++ {
			order = append(order, j)
		}
		slot := 0
		for x, j := range order {
			if direct && x == 0 {
				b.Recv(base+j*stride, keep)
				continue
			}
			b.Recv(base+j*stride, tmp[slot].Sub(0, keep.Len))
			slot++
		}
		slot = 0
		for x, j := range order {
			if direct && x == 0 {
				b.ReduceOrdered(keep, reg(in, lo+d*w, lo+(d+1)*w), d < j)
				continue
			}
			b.ReduceOrdered(keep, tmp[slot].Sub(0, keep.Len), j < d)
			slot++
		}
		b.EndRound()
		src = acc
		lo += d * w
		stride *= k
	}
	reduceGatherBlocks(b, p, &l, acc,
		func(x int) int { return radixBlock(ks, P, x) },
		func(v int) int { return radixRank(ks, P, v) })
}

// RadixVector returns radix-k's radix vector for p: p.RadixVector, or the
// default for p.Size ranks and radix p.Radix (DefaultRadixVector).
func RadixVector(p *Params) []int {
	if p.RadixVector != nil {
		return p.RadixVector
	}
	return DefaultRadixVector(p.Size, p.Radix)
}

// DefaultRadixVector returns radix-k's default vector for P ranks: k (when
// at least 2) as often as it divides P, then the power of two left as 4s
// (a last 2 joins the last 4 as an 8; a lone 2 stays), then the odd prime
// factors left in increasing order. Its product is P; it is empty for P ≤ 1.
//
//	P=128: [4 4 8]   P=64: [4 4 4]   P=8: [8]   P=2: [2]   P=12: [4 3]   P=17: [17]
func DefaultRadixVector(P, k int) []int {
	var ks []int
	if P < 1 {
		return ks
	}
	for k >= 2 && P%k == 0 {
		ks, P = append(ks, k), P/k
	}
	e := 0
	for P%2 == 0 {
		P, e = P/2, e+1
	}
	for ; e >= 2; e -= 2 {
		ks = append(ks, 4)
	}
	if e == 1 {
		if n := len(ks); n > 0 && ks[n-1] == 4 {
			ks[n-1] = 8
		} else {
			ks = append(ks, 2)
		}
	}
	for f := 3; f*f <= P; f += 2 {
		for P%f == 0 {
			ks, P = append(ks, f), P/f
		}
	}
	if P > 1 {
		ks = append(ks, P)
	}
	return ks
}

// radixBlock returns the block rank r holds after radix-k's reduce-scatter
// with vector ks on P ranks: its digits (least significant first in r)
// read most significant first.
func radixBlock(ks []int, P, r int) int {
	lo, w := 0, P
	for _, k := range ks {
		w /= k
		lo += r % k * w
		r /= k
	}
	return lo
}

// radixRank is the inverse of radixBlock: the rank holding block v.
func radixRank(ks []int, P, v int) int {
	r, stride, w := 0, 1, P
	for _, k := range ks {
		w /= k
		r += v / w % k * stride
		stride *= k
	}
	return r
}

func reduceRadixKCost(p *Params) Cost {
	msgs := 0
	for _, k := range RadixVector(p) {
		msgs += k - 1
	}
	return reduceBlocksCost(p, msgs)
}

func init() {
	register(Info{Name: RadixK, Build: reduceRadixK, Cost: reduceRadixKCost,
		Doc: "reduce-scatter in rounds of k_i-way exchanges for a radix vector (WithRadixVector; default P factored into 4s), " +
			"then binomial gather; order-preserving",
		Source: "Marendic et al. 2016 sec. 5.5.4; Peterka et al. 2009; Kendall et al. 2010"}, schedule.Reduce)
}
