package algorithms

import "github.com/scoll/scoll/schedule"

// Bucket algorithms on a process grid (Sack 2011 sec. 3.2.2 and 3.4.2).
//
// The single-port bucket allgather runs a ring allgather along dimension X,
// then along Y with the gathered X lines, then along Z with the gathered XY
// planes: Σ(d_j − 1) stages and the optimal bandwidth term. The multi-port
// variants run several such buckets at once on disjoint sections of the
// data, each starting in a different dimension so that they never share a
// link: bucket3 runs one bucket per dimension (XYZ+, YZX+, ZXY+), bucket6
// one per dimension and direction (XYZ±, YZX±, ZXY±) — 2·d buckets for d
// dimensions. Every bucket finishes a dimension before any moves on to the
// next (a phase lasts as long as its longest ring).
//
// Sections: each rank's block is cut into k sections (lengths differing by
// at most one, so any count works; short blocks leave sections empty).
// Section j of rank i has id s = k·i + j, and the gathered buffer is the
// sections in id order. Bucket b = ⌊s/P⌋ delivers the ids bP … bP+P−1, the
// one at offset q = s mod P starting from the rank numbered q in the bucket's
// dimension order. A first exchange sends every section to that rank, which
// stores it at its final place; the buckets then circulate contiguous runs
// of the gathered buffer. Dimensions of size 1 are dropped, so a 1-D grid
// gives one bucket (two for bucket6).
//
// The reduce-scatter variants are the mirror image: ring reduce-scatters
// along the dimensions in reverse order, then an exchange that sends each
// reduced section to its owner. They combine out of rank order.

// bucketPlan is the buckets of one call.
type bucketPlan struct {
	P     int
	lanes []*gridOrder // bucket b's rank numbering
	dirs  []int        // +1: towards higher coordinates
	dims  int          // grid dimensions (size-1 ones dropped)
}

// newBucketPlan returns the plan with one bucket (ports = 1), one per
// dimension (3) or two per dimension (6).
func newBucketPlan(p *Params, ports int) *bucketPlan {
	var dims []int
	for _, k := range p.grid() {
		if k > 1 {
			dims = append(dims, k)
		}
	}
	if len(dims) == 0 {
		dims = []int{1}
	}
	pl := &bucketPlan{P: p.Size, dims: len(dims)}
	switch ports {
	case 1:
		pl.lanes, pl.dirs = []*gridOrder{newGridOrder(dims, 0)}, []int{1}
	case 3:
		for j := range dims {
			pl.lanes = append(pl.lanes, newGridOrder(dims, j))
			pl.dirs = append(pl.dirs, 1)
		}
	default:
		for j := range dims {
			g := newGridOrder(dims, j)
			pl.lanes = append(pl.lanes, g, g)
			pl.dirs = append(pl.dirs, 1, -1)
		}
	}
	return pl
}

// holder returns the rank that starts bucket ⌊s/P⌋ with section s.
func (pl *bucketPlan) holder(s int) int { return pl.lanes[s/pl.P].rank(s % pl.P) }

// held returns the section of bucket b rank r starts with.
func (pl *bucketPlan) held(b, r int) (s0, s1 int) {
	s0 = b*pl.P + pl.lanes[b].index(r)
	return s0, s0 + 1
}

// k returns the number of buckets (sections per block).
func (pl *bucketPlan) k() int { return len(pl.lanes) }

// phaseRounds returns the rounds of phase t: the longest ring of any bucket.
func (pl *bucketPlan) phaseRounds(t int) int {
	n := 0
	for _, g := range pl.lanes {
		n = max(n, g.dims[g.order[t]]-1)
	}
	return n
}

// ring describes rank r's ring of bucket b in phase t: its coordinate c,
// the ring length m, the neighbours at c+1 and c−1, and the first position
// and width of the chunks.
func (pl *bucketPlan) ring(b, t, r int) (c, m, next, prev, base, w int) {
	g := pl.lanes[b]
	j := g.order[t]
	m = g.dims[j]
	c = r / g.stride[j] % m
	next = r + (mod(c+1, m)-c)*g.stride[j]
	prev = r + (mod(c-1, m)-c)*g.stride[j]
	idx := g.index(r)
	w = g.ostr[t]
	base = idx - idx%g.ostr[t+1]
	return
}

// sections cuts blocks into k sections and maps section ids to regions.
type sections struct {
	l redscatLayout
	k int
}

func secOff(c, k, j int) int { return j*(c/k) + min(j, c%k) }
func secLen(c, k, j int) int { return secOff(c, k, j+1) - secOff(c, k, j) }

// region returns section id s in buffer base.
func (x *sections) region(base schedule.Region, s int) schedule.Region {
	i, j := s/x.k, s%x.k
	c := x.l.count(i)
	return base.Sub(x.l.displ(i)+secOff(c, x.k, j), secLen(c, x.k, j))
}

// runs returns the regions of base holding section ids [s0, s1), merging
// adjacent ones and skipping empty ones.
func (x *sections) runs(base schedule.Region, s0, s1 int) []schedule.Region {
	if x.l.counts == nil {
		a, z := x.region(base, s0), x.region(base, s1-1)
		return []schedule.Region{base.Sub(a.Off-base.Off, z.End()-a.Off)}
	}
	var out []schedule.Region
	for s := s0; s < s1; s++ {
		reg := x.region(base, s)
		if reg.Len == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].End() == reg.Off {
			out[n-1].Len += reg.Len
			continue
		}
		out = append(out, reg)
	}
	return out
}

// bucketAllgatherStages emits the buckets' rings for rank r, which holds
// section bP + index_b(r) of every bucket b at its place in base.
func bucketAllgatherStages(b *schedule.Builder, pl *bucketPlan, r int, x *sections, base schedule.Region) {
	for t := range pl.dims {
		bucketAllgatherPhase(b, pl, r, x, base, t)
	}
}

// bucketAllgatherPhase emits phase t: every bucket's ring along its t-th
// dimension, passing the chunks gathered in the earlier phases.
func bucketAllgatherPhase(b *schedule.Builder, pl *bucketPlan, r int, x *sections, base schedule.Region, t int) {
	P := pl.P
	for step := range pl.phaseRounds(t) {
		for bk := range pl.lanes {
			c, m, next, prev, lo, w := pl.ring(bk, t, r)
			if step >= m-1 {
				continue
			}
			to, from, sc, rc := next, prev, mod(c-step, m), mod(c-step-1, m)
			if pl.dirs[bk] < 0 {
				to, from, sc, rc = prev, next, mod(c+step, m), mod(c+step+1, m)
			}
			for _, reg := range x.runs(base, bk*P+lo+sc*w, bk*P+lo+(sc+1)*w) {
				b.Send(to, reg)
			}
			for _, reg := range x.runs(base, bk*P+lo+rc*w, bk*P+lo+(rc+1)*w) {
				b.Recv(from, reg)
			}
		}
		b.EndRound()
	}
}

// bucketReduceScatterStages emits the buckets' ring reduce-scatters for rank
// r on the vector in: it ends with the reduced section bP + index_b(r) of
// every bucket b at its place in acc (which may be in).
func bucketReduceScatterStages(b *schedule.Builder, pl *bucketPlan, r int, x *sections, in, acc schedule.Region) {
	inAcc := make([]bool, pl.k()) // the bucket's partials have moved to acc
	for t := pl.dims - 1; t >= 0; t-- {
		bucketReduceScatterPhase(b, pl, r, x, in, acc, t, inAcc)
	}
}

// bucketReduceScatterPhase emits phase t of the ring reduce-scatters;
// inAcc[b] tells whether bucket b's partials are in acc already, and is set
// when the phase moves them there.
func bucketReduceScatterPhase(b *schedule.Builder, pl *bucketPlan, r int, x *sections, in, acc schedule.Region, t int, inAcc []bool) {
	P := pl.P
	for step := range pl.phaseRounds(t) {
		for bk := range pl.lanes {
			c, m, next, prev, lo, w := pl.ring(bk, t, r)
			if step >= m-1 {
				continue
			}
			to, from, sc, rc := next, prev, mod(c-step-1, m), mod(c-step-2, m)
			if pl.dirs[bk] < 0 {
				to, from, sc, rc = prev, next, mod(c+step+1, m), mod(c+step+2, m)
			}
			src := in
			if inAcc[bk] || step > 0 {
				src = acc
			}
			for _, reg := range x.runs(src, bk*P+lo+sc*w, bk*P+lo+(sc+1)*w) {
				b.Send(to, reg)
			}
			src = in
			if inAcc[bk] {
				src = acc
			}
			for _, reg := range x.runs(acc, bk*P+lo+rc*w, bk*P+lo+(rc+1)*w) {
				b.RecvReduce(from, reg, src.Sub(reg.Off-acc.Off, reg.Len), true)
			}
		}
		b.EndRound()
	}
	for bk := range pl.lanes {
		if _, m, _, _, _, _ := pl.ring(bk, t, r); m > 1 {
			inAcc[bk] = true
		}
	}
}

// familyBytes is the data of an allgather call, or of a reduce-scatter
// when reducing.
func familyBytes(p *Params, reduces bool) float64 {
	if reduces {
		return redscatBytes(p)
	}
	return allgatherBytes(p)
}

func bucketRounds(p *Params, ports int) (k, rounds float64) {
	pl := newBucketPlan(p, ports)
	for t := range pl.dims {
		rounds += float64(pl.phaseRounds(t))
	}
	return float64(pl.k()), rounds
}

// bucketCost is the single-port accounting of the bucket algorithms:
// k·(Σ_t max_b(d_b,t − 1) + 1)·α + ((P−1)/P·N + n)·β for k buckets (one:
// Σ(d_j − 1)·α + (P−1)/P·N·β), plus (P−1)/P·N·γ when reducing.
func bucketCost(ports int, reduces bool) func(*Params) Cost {
	return func(p *Params) Cost {
		N := familyBytes(p, reduces)
		if p.Size <= 1 {
			return Cost{Copy: N}
		}
		P := float64(p.Size)
		k, rounds := bucketRounds(p, ports)
		c := Cost{Alpha: k * rounds, Beta: N * (P - 1) / P}
		if reduces {
			c.Gamma = c.Beta
		} else {
			c.Copy = N / P
		}
		if ports > 1 {
			c.Alpha += k
			c.Beta += N / P
		}
		return c
	}
}
