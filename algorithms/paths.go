package algorithms

import "github.com/scoll/scoll/schedule"

// Recursive doubling along Hamiltonian paths (Sack 2011 sec. 3.4.3) and the
// triple-recursive-doubling / sextuple-ring hybrid (sec. 3.6.1).
//
// rd-path orders the ranks along the snake path through the whole machine
// (Params.Placement; the process grid by default), skipping the nodes the
// call does not use, and runs distance-halving recursive doubling in that
// order: stage partners are path neighbours 1, 2, 4, … places apart at the
// end, where the data is largest. The exchange sends every block to the
// participant that starts with it, so the result is in rank order
// whatever the placement.
//
// rd-paths runs one such recursive doubling per Hamiltonian cycle of the
// machine's torus decomposition (d edge-disjoint cycles for d dimensions) at
// once, each on 1/d of every block: the sections and their exchange are
// those of bucket3.
//
// The hybrid keeps bucket6's six buckets (2·d for d dimensions) but
// replaces the rings of each bucket's first d−1 dimensions with one
// recursive doubling over that sub-grid (torus order when its dimensions
// are powers of two), then runs the bucket's last ring: 2·d·(lg of the
// sub-grid + 1) + 2·d·(d_last − 1) messages instead of 2·d·Σ(d_j − 1).
// The two buckets of a dimension pair exchange with the same partners.
//
// The reduce-scatter variants (rh-path, rh-paths, rh-hybrid) mirror them;
// they combine out of rank order (commutative operators only).

// rdPathPlan is distance halving over the ranks in snake-path order.
func rdPathPlan(p *Params) *rdPlan {
	machine, nodes := p.placement()
	line, at := pathLine(0, machine, nodes, p.Size)
	return newRDPlan(p.Size, nil).onLine(line, at)
}

// pathCount returns the number of paths rd-paths uses: the machine's
// dimensions of size > 1 (at least one).
func pathCount(machine []int) int {
	k := 0
	for _, d := range machine {
		if d > 1 {
			k++
		}
	}
	return max(k, 1)
}

// pathLanes are rd-paths' lanes over blocks l: lane b runs distance halving
// over the ranks ordered along cycle b of the torus decomposition.
func pathLanes(p *Params, l redscatLayout) rdLanes {
	machine, nodes := p.placement()
	k := pathCount(machine)
	x := &sections{l: l, k: k}
	lanes := make(rdLanes, k)
	for bk := range k {
		line, at := pathLine(1+bk, machine, nodes, p.Size)
		lanes[bk] = rdLane{pl: newRDPlan(p.Size, nil).onLine(line, at), x: x, off: bk * p.Size}
	}
	return lanes
}

// lanesCost is the single-port accounting of k lanes of recursive doubling
// over V participants: k·(lg V + 1 (+1 when folding))·α and the data of
// the exchange, the stages and the fold, plus the reduction when reducing.
func lanesCost(lanesOf func(*Params, redscatLayout) rdLanes, reduces bool) func(*Params) Cost {
	return func(p *Params) Cost {
		N := familyBytes(p, reduces)
		if p.Size <= 1 {
			return Cost{Copy: N}
		}
		lanes := lanesOf(p, redscatSplit(p.Count, p.Size))
		pl := lanes[0].pl
		k, V, n := float64(len(lanes)), float64(pl.V), N/float64(p.Size)
		c := Cost{Alpha: k * float64(len(pl.S)+1), Beta: N*(V-1)/V + n}
		if pl.rem > 0 {
			c.Alpha += k
			c.Beta += N
		}
		if reduces {
			c.Gamma = N * (V - 1) / V
		} else {
			c.Copy = n
		}
		return c
	}
}

// hybridPlan is the hybrid's buckets (bucket6's lanes) and, for each, the
// recursive doubling over its sub-grid of the first d−1 dimensions.
type hybridPlan struct {
	bk  *bucketPlan
	sub []*rdPlan // in sub-grid index order (no line)
	M   []int     // sub-grid sizes
}

func newHybridPlan(p *Params) *hybridPlan {
	bk := newBucketPlan(p, 6)
	h := &hybridPlan{bk: bk}
	last := bk.dims - 1
	for _, g := range bk.lanes {
		M := g.ostr[last]
		var subDims []int
		for t := range last {
			subDims = append(subDims, g.dims[g.order[t]])
		}
		var S []int
		if st, ok := torusStages(subDims); ok && isPow2(M) {
			S = st
		}
		h.sub = append(h.sub, newRDPlan(M, S))
		h.M = append(h.M, M)
	}
	return h
}

// lanes returns rank r's recursive-doubling lanes: lane b over the sections
// of r's sub-grid in bucket b.
func (h *hybridPlan) lanes(r int, x *sections) rdLanes {
	P := h.bk.P
	out := make(rdLanes, len(h.sub))
	for bk, g := range h.bk.lanes {
		M := h.M[bk]
		hi := g.index(r) / M
		pl := *h.sub[bk]
		pl.rankAt = func(t int) int { return g.rank(hi*M + t) }
		pl.place = func(q int) int { return g.index(q) - hi*M }
		out[bk] = rdLane{pl: &pl, x: x, off: bk*P + hi*M}
	}
	return out
}

// holder returns the rank that starts (ends) with section s.
func (h *hybridPlan) holder(s int) int {
	P := h.bk.P
	bk, q := s/P, s%P
	M := h.M[bk]
	return h.bk.lanes[bk].rank(q/M*M + h.sub[bk].holder(q%M))
}

// hybridScheme is the hybrid laid out for one rank: the plan, the sections
// of the blocks and the rank's recursive-doubling lanes.
type hybridScheme struct {
	h     *hybridPlan
	x     *sections
	lanes rdLanes
}

// hybridLanes returns rank p.Rank's hybrid over blocks l.
func hybridLanes(p *Params, l redscatLayout) *hybridScheme {
	h := newHybridPlan(p)
	x := &sections{l: l, k: h.bk.k()}
	return &hybridScheme{h: h, x: x, lanes: h.lanes(p.Rank, x)}
}

func (hs *hybridScheme) cut() *sections             { return hs.x }
func (hs *hybridScheme) holder(s int) int           { return hs.h.holder(s) }
func (hs *hybridScheme) held(b, r int) (s0, s1 int) { return hs.lanes.held(b, r) }

// allgather emits the recursive doubling over each bucket's sub-grid, then
// the buckets' rings along the last dimension.
func (hs *hybridScheme) allgather(b *schedule.Builder, r int, base schedule.Region, skip int) {
	hs.lanes.allgather(b, r, base, skip)
	hs.h.bk.allgatherPhase(b, r, hs.x, base, hs.h.bk.dims-1)
}

// reduceScatter emits the buckets' rings along the last dimension, then the
// recursive halving over each bucket's sub-grid.
func (hs *hybridScheme) reduceScatter(b *schedule.Builder, r int, in, acc schedule.Region) {
	inAcc := make([]bool, hs.h.bk.k())
	hs.h.bk.reduceScatterPhase(b, r, hs.x, in, acc, hs.h.bk.dims-1, inAcc)
	src := acc
	if !inAcc[0] {
		src = in
	}
	hs.lanes.reduceScatter(b, r, src, acc)
}

// hybridCost is the single-port accounting: the lanes' exchange, stages and
// folds, then the last rings.
func hybridCost(reduces bool) func(*Params) Cost {
	return func(p *Params) Cost {
		N := familyBytes(p, reduces)
		if p.Size <= 1 {
			return Cost{Copy: N}
		}
		h := newHybridPlan(p)
		k, P := float64(h.bk.k()), float64(p.Size)
		var stages float64
		for _, pl := range h.sub {
			st := float64(len(pl.S))
			if pl.rem > 0 {
				st++
			}
			stages = max(stages, st)
		}
		rings := float64(h.bk.phaseRounds(h.bk.dims - 1))
		c := Cost{Alpha: k * (1 + stages + rings), Beta: N*(P-1)/P + N/P}
		if reduces {
			c.Gamma = N * (P - 1) / P
		} else {
			c.Copy = N / P
		}
		return c
	}
}
