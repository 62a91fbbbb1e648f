package algorithms

import "github.com/scoll/scoll/schedule"

// bcastScatter emits the binomial scatter phase of the scatter-allgather
// broadcasts: the message is cut into m blocks, block v for relative rank v
// (v < m), and each rank receives the blocks of its binomial subtree from its
// parent. It returns the block regions of a relative range.
func bcastScatter(b *schedule.Builder, p *Params, m int) func(lo, hi int) schedule.Region {
	blk := func(lo, hi int) schedule.Region {
		off := rtBlockOff(p.Count, m, lo)
		return schedule.RecvBuf(off, rtBlockOff(p.Count, m, hi)-off)
	}
	rtScatter(b, rtRelative(p.Size, m, p.Root, 2, p.Rank), blk, nil)
	return blk
}

// rtSpan returns the relative ranks [v, v+span) whose blocks relative rank v
// holds after the binomial scatter over m ranks.
func rtSpan(v, m int) (lo, hi int) {
	if v == 0 {
		return 0, m
	}
	return v, min(v+(v&-v), m)
}

// Scatter-allgather broadcast: a binomial scatter of P' blocks (P' the
// largest power of two ≤ P) over relative ranks 0..P'−1, then a
// recursive-doubling allgather among them; a rank skips the blocks it already
// holds from the scatter. When P is not a power of two, the P − P' ranks
// v ≥ P' take no part in either phase and receive the whole message from
// v − P' at the end (one more round with nβ), which keeps the algorithm
// logarithmic for every P.
//
//	P=4 scatter: 0→2 [b2 b3]; 0→1 b1, 2→3 b3    allgather: 0↔1, 2↔3; 0↔2, 1↔3
//
// Cost: 2 lg P'·α + 2((P'−1)/P')nβ, plus α + nβ when P ≠ P'.
// Source: Heath–Solomonik notes sec. 5.2.2; Thakur, Rabenseifner, Gropp 2005
// (van de Geijn's long-message broadcast in MPICH).
func bcastScatterAllgather(b *schedule.Builder, p *Params) {
	P := p.Size
	pof2 := floorPow2(P)
	v := mod(p.Rank-p.Root, P)
	blk := bcastScatter(b, p, pof2)
	if v >= pof2 {
		b.Recv(bcastRel(p, v-pof2), bcastBuf(p))
		b.EndRound()
		return
	}
	has := func(x, lo, hi int) bool {
		sl, sh := rtSpan(x, pof2)
		return sl <= lo && hi <= sh
	}
	for mask := 1; mask < pof2; mask <<= 1 {
		pv := v ^ mask
		lo, plo := v&^(mask-1), pv&^(mask-1)
		if !has(pv, lo, lo+mask) {
			b.Send(bcastRel(p, pv), blk(lo, lo+mask))
		}
		if !has(v, plo, plo+mask) {
			b.Recv(bcastRel(p, pv), blk(plo, plo+mask))
		}
		b.EndRound()
	}
	if v+pof2 < P {
		b.Send(bcastRel(p, v+pof2), bcastBuf(p))
		b.EndRound()
	}
}

func bcastScatterAllgatherCost(p *Params) Cost {
	pof2 := floorPow2(p.Size)
	lg := float64(ceilLog2(pof2))
	nb := p.bytes(p.Count)
	c := Cost{Alpha: 2 * lg, Beta: 2 * nb * float64(pof2-1) / float64(pof2)}
	if pof2 != p.Size {
		c.Alpha++
		c.Beta += nb
	}
	return c
}

// Scatter-ring-allgather broadcast: a binomial scatter of P blocks over the
// relative ranks, then a ring allgather (relative rank v passes blocks to
// v+1) in P−1 steps; a block the receiver already holds from the scatter is
// not sent. Works for any P.
//
//	P=4 scatter: 0→2 [b2 b3]; 0→1 b1, 2→3 b3
//	ring step k: v→v+1 block (v−k) mod 4, k = 0, 1, 2
//
// Cost: (lg P + P − 1)α + 2((P−1)/P)nβ.
// Source: Thakur, Rabenseifner, Gropp 2005 (MPICH long-message bcast);
// Sack 2011 sec. 3.2.
func bcastScatterRingAllgather(b *schedule.Builder, p *Params) {
	P := p.Size
	v := mod(p.Rank-p.Root, P)
	blk := bcastScatter(b, p, P)
	has := func(x, j int) bool {
		lo, hi := rtSpan(x, P)
		return lo <= j && j < hi
	}
	right, left := mod(v+1, P), mod(v-1, P)
	for k := 0; k < P-1; k++ {
		out, in := mod(v-k, P), mod(v-k-1, P)
		if !has(right, out) {
			b.Send(bcastRel(p, right), blk(out, out+1))
		}
		if !has(v, in) {
			b.Recv(bcastRel(p, left), blk(in, in+1))
		}
		b.EndRound()
	}
}

func bcastScatterRingAllgatherCost(p *Params) Cost {
	P := float64(p.Size)
	nb := p.bytes(p.Count)
	return Cost{Alpha: float64(ceilLog2(p.Size)) + P - 1, Beta: 2 * nb * (P - 1) / P}
}

func init() {
	register(Info{Name: ScatterAllgather, Build: bcastScatterAllgather, Cost: bcastScatterAllgatherCost,
		Doc:    "binomial scatter, then recursive-doubling allgather; for long messages",
		Source: "Heath-Solomonik notes sec. 5.2.2; Thakur, Rabenseifner, Gropp 2005"}, schedule.Bcast)
	register(Info{Name: ScatterRingAllgather, Linear: true, Build: bcastScatterRingAllgather, Cost: bcastScatterRingAllgatherCost,
		Doc:    "binomial scatter, then ring allgather; for long messages and any P",
		Source: "Thakur, Rabenseifner, Gropp 2005; Sack 2011 sec. 3.2"}, schedule.Bcast)
}
