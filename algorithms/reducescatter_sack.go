package algorithms

import "github.com/scoll/scoll/schedule"

// Sack's reordered recursive-halving reduce-scatters (reorder.go,
// paths.go), the mirrors of allgather_sack.go: rh-doubling, rh-optimal,
// rh-path, rh-paths and the rh-hybrid.

// Reordered recursive-halving reduce-scatter: the allgather's mirror. The
// stages run in reverse order, each sending the half of the held positions
// the partner keeps and combining the other half with what arrives; then
// every participant sends the blocks of the position it ends with to their
// ranks. With distance halving mirrored (rh-doubling: partners at distance
// 1, 2, 4, …) every partial covers a contiguous group of ranks, combined
// lower group on the left, so the result keeps rank order; the torus order
// does not (commutative operators only).
//
//	rh-doubling, P=8: stage 0: 0↔1 2↔3 4↔5 6↔7 (half the vector)
//	                  stage 1: 0↔2 1↔3 4↔6 5↔7;  stage 2: 0↔4 1↔5 2↔6 3↔7
//	exchange: 1↔4 3↔6 (rank r held the block of bit-reverse(r))
//
// Cost: (lg V + 1)·α + ((V−1)/V·N + n)·β + (V−1)/V·N·γ, plus α + N·(β+γ)
// when P is not a power of two.
func redscatReorder(plan func(*Params) *rdPlan) func(*schedule.Builder, *Params) {
	return func(b *schedule.Builder, p *Params) {
		l, in, out, done := redscatSetup(b, p)
		if done {
			return
		}
		lanes := blockLane(plan(p), l)
		acc := b.Alloc(l.displ(p.Size))
		rdReduceScatterStages(b, lanes, p.Rank, in, acc)
		laneReturn(b, lanes[0].x, p.Rank, acc, out, rdHolder(lanes), rdHeld(lanes))
	}
}

func redscatReorderCost(plan func(*Params) *rdPlan) func(*Params) Cost {
	return func(p *Params) Cost {
		N := redscatBytes(p)
		if p.Size <= 1 {
			return Cost{Copy: N}
		}
		pl := plan(p)
		V, n := float64(pl.V), N/float64(p.Size)
		c := Cost{Alpha: float64(len(pl.S)) + 1, Beta: N*(V-1)/V + n, Gamma: N * (V - 1) / V}
		if pl.rem > 0 {
			c.Alpha++
			c.Beta += N
			c.Gamma += N
		}
		return c
	}
}

// redscatLanes is the reduce-scatter of recursive-doubling lanes.
func redscatLanes(lanesOf func(*Params, redscatLayout) []rdLane) func(*schedule.Builder, *Params) {
	return func(b *schedule.Builder, p *Params) {
		l, in, out, done := redscatSetup(b, p)
		if done {
			return
		}
		lanes := lanesOf(p, l)
		acc := b.Alloc(l.displ(p.Size))
		rdReduceScatterStages(b, lanes, p.Rank, in, acc)
		laneReturn(b, lanes[0].x, p.Rank, acc, out, rdHolder(lanes), rdHeld(lanes))
	}
}

func redscatHybrid(b *schedule.Builder, p *Params) {
	l, in, out, done := redscatSetup(b, p)
	if done {
		return
	}
	h := newHybridPlan(p)
	x, lanes := h.setup(l, p.Rank)
	acc := b.Alloc(l.displ(p.Size))
	inAcc := make([]bool, h.bk.k())
	bucketReduceScatterPhase(b, h.bk, p.Rank, x, in, acc, h.bk.dims-1, inAcc)
	src := acc
	if !inAcc[0] {
		src = in
	}
	rdReduceScatterStages(b, lanes, p.Rank, src, acc)
	laneReturn(b, x, p.Rank, acc, out, h.holder, rdHeld(lanes))
}

func init() {
	register(Info{Name: RHDoubling, Build: redscatReorder(rdHalvingPlan), Cost: redscatReorderCost(rdHalvingPlan),
		Doc:    "recursive halving with partners at distance 1, 2, ..., P/2, then a bit-reversal exchange; keeps rank order",
		Source: "Sack 2011 sec. 3.4.1"}, schedule.ReduceScatterBlock, schedule.ReduceScatter)
	register(Info{Name: RHOptimal, Requires: NeedsCommutative, Build: redscatReorder(rdOptimalPlan), Cost: redscatReorderCost(rdOptimalPlan),
		Doc:    "recursive halving in reverse torus order (neighbours first), then a reordering exchange",
		Source: "Sack 2011 sec. 3.4.1"}, schedule.ReduceScatterBlock, schedule.ReduceScatter)
	register(Info{Name: RHPath, Requires: NeedsCommutative, Build: redscatLanes(singleLane(rdPathPlan)), Cost: lanesCost(singleLane(rdPathPlan), true),
		Doc:    "recursive halving in the order of a Hamiltonian (snake) path through the machine, then the exchange; for irregular placements",
		Source: "Sack 2011 sec. 3.4.3"}, schedule.ReduceScatterBlock, schedule.ReduceScatter)
	register(Info{Name: RHPaths, Requires: NeedsCommutative, Build: redscatLanes(pathLanes), Cost: lanesCost(pathLanes, true),
		Doc:    "one recursive halving per edge-disjoint Hamiltonian cycle of the torus, at once on sections of the data (multi-port)",
		Source: "Sack 2011 sec. 3.4.3"}, schedule.ReduceScatterBlock, schedule.ReduceScatter)
	register(Info{Name: RHHybrid, Requires: NeedsCommutative, Linear: true, Build: redscatHybrid, Cost: hybridCost(true),
		Doc:    "the six buckets' last rings, then recursive halving over each bucket's sub-grid of the other dimensions (mirror of rd-hybrid)",
		Source: "Sack 2011 sec. 3.6.1"}, schedule.ReduceScatterBlock, schedule.ReduceScatter)
}
