package algorithms

import "github.com/scoll/scoll/schedule"

// Sack's reordered recursive-halving reduce-scatters (reorder.go,
// paths.go), the mirrors of allgather_sack.go: rh-doubling, rh-optimal,
// rh-path, rh-paths and the rh-hybrid. The buckets
// (reducescatter_bucket.go) are built the same way.

// sackReduceScatter returns the reduce-scatter of a family (sack.go): the
// stages, then the exchange that sends every reduced section to its owner.
func sackReduceScatter[S sackScheme](scheme func(*Params, redscatLayout) S) func(*schedule.Builder, *Params) {
	return func(b *schedule.Builder, p *Params) {
		if l, in, out, done := redscatSetup(b, p); !done {
			sc := scheme(p, l)
			acc := b.Alloc(l.displ(p.Size))
			sc.reduceScatter(b, p.Rank, in, acc)
			laneTrade(b, sc, p.Rank, out, acc, false)
		}
	}
}

func init() {
	// Reordered recursive halving, the allgather's mirror: the stages run in
	// reverse order, each sending the half of the held positions the
	// partner keeps and combining the other half with what arrives; then
	// every participant sends the blocks of the position it ends with to
	// their ranks. With distance halving mirrored (rh-doubling: partners at
	// distance 1, 2, 4, …) every partial covers a contiguous group of ranks,
	// combined lower group on the left, so the result keeps rank order; the
	// torus order does not (commutative operators only).
	//
	//	rh-doubling, P=8: stage 0: 0↔1 2↔3 4↔5 6↔7 (half the vector)
	//	                  stage 1: 0↔2 1↔3 4↔6 5↔7;  stage 2: 0↔4 1↔5 2↔6 3↔7
	//	exchange: 1↔4 3↔6 (rank r held the block of bit-reverse(r))
	//
	// Cost: (lg V + 1)·α + ((V−1)/V·N + n)·β + (V−1)/V·N·γ, plus α + N·(β+γ)
	// when P is not a power of two (reorderCost).
	register(Info{Name: RHDoubling, Build: sackReduceScatter(singleLane(rdHalvingPlan)), Cost: reorderCost(rdHalvingPlan, true),
		Doc:    "recursive halving with partners at distance 1, 2, ..., P/2, then a bit-reversal exchange; keeps rank order",
		Source: "Sack 2011 sec. 3.4.1"}, schedule.ReduceScatterBlock, schedule.ReduceScatter)
	register(Info{Name: RHOptimal, Requires: NeedsCommutative, Build: sackReduceScatter(singleLane(rdOptimalPlan)), Cost: reorderCost(rdOptimalPlan, true),
		Doc:    "recursive halving in reverse torus order (neighbours first), then a reordering exchange",
		Source: "Sack 2011 sec. 3.4.1"}, schedule.ReduceScatterBlock, schedule.ReduceScatter)
	// Along Hamiltonian paths (paths.go); cost: lanesCost.
	register(Info{Name: RHPath, Requires: NeedsCommutative, Build: sackReduceScatter(singleLane(rdPathPlan)), Cost: lanesCost(singleLane(rdPathPlan), true),
		Doc:    "recursive halving in the order of a Hamiltonian (snake) path through the machine, then the exchange; for irregular placements",
		Source: "Sack 2011 sec. 3.4.3"}, schedule.ReduceScatterBlock, schedule.ReduceScatter)
	register(Info{Name: RHPaths, Requires: NeedsCommutative, Build: sackReduceScatter(pathLanes), Cost: lanesCost(pathLanes, true),
		Doc:    "one recursive halving per edge-disjoint Hamiltonian cycle of the torus, at once on sections of the data (multi-port)",
		Source: "Sack 2011 sec. 3.4.3"}, schedule.ReduceScatterBlock, schedule.ReduceScatter)
	// The hybrid (paths.go); cost: hybridCost.
	register(Info{Name: RHHybrid, Requires: NeedsCommutative, Linear: true, Build: sackReduceScatter(hybridLanes), Cost: hybridCost(true),
		Doc:    "the six buckets' last rings, then recursive halving over each bucket's sub-grid of the other dimensions (mirror of rd-hybrid)",
		Source: "Sack 2011 sec. 3.6.1"}, schedule.ReduceScatterBlock, schedule.ReduceScatter)
}
