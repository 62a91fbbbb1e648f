package algorithms

import "github.com/scoll/scoll/schedule"

// Sack's reordered recursive-doubling allgathers (reorder.go, paths.go):
// rd-halving, rd-optimal, rd-path, rd-paths and the rd-hybrid. The buckets
// (allgather_bucket.go) are built the same way.

// sackAllgather returns the allgather of a family (sack.go): the exchange
// that puts every section where the stages carry it to its place, then the
// stages.
func sackAllgather[S sackScheme](scheme func(*Params, redscatLayout) S) func(*schedule.Builder, *Params) {
	return func(b *schedule.Builder, p *Params) {
		if l, own, mine, done := allgatherSetup(b, p); !done {
			sackGather(b, p.Rank, scheme(p, l), own, mine)
		}
	}
}

func sackGather(b *schedule.Builder, r int, sc sackScheme, own, mine schedule.Region) {
	base := schedule.RecvBuf(0, 0)
	if ls, ok := sc.(rdLanes); ok && !ls.exchange() {
		// Stages in rank order (P = 2): every rank starts with its own
		// block and sends it straight from its input.
		ls.allgatherFrom(b, r, base, &own, &mine, -1)
		return
	}
	laneTrade(b, sc, r, own, base, true)
	sc.allgather(b, r, base, -1)
}

func init() {
	// Reordered recursive doubling: stage partners at distance P/2, P/4, …
	// (rd-halving) or in torus order (rd-optimal), after the exchange.
	//
	//	rd-halving, P=8 (σ = bit reversal)
	//	exchange: 1↔4 3↔6 (0, 2, 5, 7 keep their block)
	//	stage 0:  0↔4 1↔5 2↔6 3↔7 (1 block)
	//	stage 1:  0↔2 1↔3 4↔6 5↔7 (2 blocks)
	//	stage 2:  0↔1 2↔3 4↔5 6↔7 (4 blocks)
	//
	// Cost: (lg V + 1)·α + ((V−1)/V·N + n)·β, plus α + (N + n)·β when P is
	// not a power of two (reorderCost).
	register(Info{Name: RDHalving, Build: sackAllgather(singleLane(rdHalvingPlan)), Cost: reorderCost(rdHalvingPlan, false),
		Doc:    "recursive doubling with partners at distance P/2, P/4, ..., 1 after a bit-reversal exchange",
		Source: "Sack 2011 sec. 3.4.1"}, schedule.Allgather, schedule.Allgatherv)
	register(Info{Name: RDOptimal, Build: sackAllgather(singleLane(rdOptimalPlan)), Cost: reorderCost(rdOptimalPlan, false),
		Doc:    "recursive doubling in torus order (largest dimensions first, far partners first) after a reordering exchange",
		Source: "Sack 2011 sec. 3.4.1"}, schedule.Allgather, schedule.Allgatherv)
	// Along Hamiltonian paths (paths.go); cost: lanesCost.
	register(Info{Name: RDPath, Build: sackAllgather(singleLane(rdPathPlan)), Cost: lanesCost(singleLane(rdPathPlan), false),
		Doc:    "distance-halving recursive doubling in the order of a Hamiltonian (snake) path through the machine, for irregular placements",
		Source: "Sack 2011 sec. 3.4.3"}, schedule.Allgather, schedule.Allgatherv)
	register(Info{Name: RDPaths, Build: sackAllgather(pathLanes), Cost: lanesCost(pathLanes, false),
		Doc:    "one distance-halving recursive doubling per edge-disjoint Hamiltonian cycle of the torus, at once on sections of the data (multi-port)",
		Source: "Sack 2011 sec. 3.4.3"}, schedule.Allgather, schedule.Allgatherv)
	// The hybrid (paths.go); cost: hybridCost.
	register(Info{Name: RDHybrid, Linear: true, Build: sackAllgather(hybridLanes), Cost: hybridCost(false),
		Doc:    "bucket6 with each bucket's first d-1 rings replaced by recursive doubling over that sub-grid (triple recursive doubling + sextuple ring)",
		Source: "Sack 2011 sec. 3.6.1"}, schedule.Allgather, schedule.Allgatherv)
}
