package algorithms

import "github.com/scoll/scoll/schedule"

// Sack's reordered recursive-doubling allgathers (reorder.go, paths.go):
// rd-halving, rd-optimal, rd-path, rd-paths and the rd-hybrid.

// Reordered recursive-doubling allgather.
//
//	rd-halving, P=8 (σ = bit reversal)
//	exchange: 1↔4 3↔6 (0, 2, 5, 7 keep their block)
//	stage 0:  0↔4 1↔5 2↔6 3↔7 (1 block)
//	stage 1:  0↔2 1↔3 4↔6 5↔7 (2 blocks)
//	stage 2:  0↔1 2↔3 4↔5 6↔7 (4 blocks)
//
// Cost: (lg V + 1)·α + ((V−1)/V·N + n)·β, plus α + (N + n)·β when P is not a
// power of two.
func allgatherReorder(plan func(*Params) *rdPlan) func(*schedule.Builder, *Params) {
	return func(b *schedule.Builder, p *Params) {
		l, own, mine, done := allgatherSetup(b, p)
		if done {
			return
		}
		pl := plan(p)
		lanes := blockLane(pl, l)
		base := schedule.RecvBuf(0, 0)
		if !pl.exchange() {
			rdAllgatherStages(b, lanes, p.Rank, base, &own, &mine, -1)
			return
		}
		laneExchange(b, lanes[0].x, p.Rank, own, base, rdHolder(lanes), rdHeld(lanes))
		rdAllgatherStages(b, lanes, p.Rank, base, nil, nil, -1)
	}
}

func allgatherReorderCost(plan func(*Params) *rdPlan) func(*Params) Cost {
	return func(p *Params) Cost {
		if p.Size <= 1 {
			return Cost{Copy: allgatherBytes(p)}
		}
		pl := plan(p)
		N := allgatherBytes(p)
		V, n := float64(pl.V), N/float64(p.Size)
		c := Cost{Alpha: float64(len(pl.S)), Beta: N * (V - 1) / V, Copy: n}
		if pl.exchange() {
			c.Alpha++
			c.Beta += n
		}
		if pl.rem > 0 {
			c.Alpha++
			c.Beta += N
		}
		return c
	}
}

// allgatherLanes is the allgather of recursive-doubling lanes: the exchange,
// then the stages.
func allgatherLanes(lanesOf func(*Params, redscatLayout) []rdLane) func(*schedule.Builder, *Params) {
	return func(b *schedule.Builder, p *Params) {
		l, own, _, done := allgatherSetup(b, p)
		if done {
			return
		}
		lanes := lanesOf(p, l)
		base := schedule.RecvBuf(0, 0)
		laneExchange(b, lanes[0].x, p.Rank, own, base, rdHolder(lanes), rdHeld(lanes))
		rdAllgatherStages(b, lanes, p.Rank, base, nil, nil, -1)
	}
}

func allgatherHybrid(b *schedule.Builder, p *Params) {
	l, own, _, done := allgatherSetup(b, p)
	if done {
		return
	}
	h := newHybridPlan(p)
	x, lanes := h.setup(l, p.Rank)
	base := schedule.RecvBuf(0, 0)
	laneExchange(b, x, p.Rank, own, base, h.holder, rdHeld(lanes))
	rdAllgatherStages(b, lanes, p.Rank, base, nil, nil, -1)
	bucketAllgatherPhase(b, h.bk, p.Rank, x, base, h.bk.dims-1)
}

func init() {
	register(Info{Name: RDHalving, Build: allgatherReorder(rdHalvingPlan), Cost: allgatherReorderCost(rdHalvingPlan),
		Doc:    "recursive doubling with partners at distance P/2, P/4, ..., 1 after a bit-reversal exchange",
		Source: "Sack 2011 sec. 3.4.1"}, schedule.Allgather, schedule.Allgatherv)
	register(Info{Name: RDOptimal, Build: allgatherReorder(rdOptimalPlan), Cost: allgatherReorderCost(rdOptimalPlan),
		Doc:    "recursive doubling in torus order (largest dimensions first, far partners first) after a reordering exchange",
		Source: "Sack 2011 sec. 3.4.1"}, schedule.Allgather, schedule.Allgatherv)
	register(Info{Name: RDPath, Build: allgatherLanes(singleLane(rdPathPlan)), Cost: lanesCost(singleLane(rdPathPlan), false),
		Doc:    "distance-halving recursive doubling in the order of a Hamiltonian (snake) path through the machine, for irregular placements",
		Source: "Sack 2011 sec. 3.4.3"}, schedule.Allgather, schedule.Allgatherv)
	register(Info{Name: RDPaths, Build: allgatherLanes(pathLanes), Cost: lanesCost(pathLanes, false),
		Doc:    "one distance-halving recursive doubling per edge-disjoint Hamiltonian cycle of the torus, at once on sections of the data (multi-port)",
		Source: "Sack 2011 sec. 3.4.3"}, schedule.Allgather, schedule.Allgatherv)
	register(Info{Name: RDHybrid, Linear: true, Build: allgatherHybrid, Cost: hybridCost(false),
		Doc:    "bucket6 with each bucket's first d-1 rings replaced by recursive doubling over that sub-grid (triple recursive doubling + sextuple ring)",
		Source: "Sack 2011 sec. 3.6.1"}, schedule.Allgather, schedule.Allgatherv)
}
