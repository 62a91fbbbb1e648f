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

// rounds returns the rounds of all phases.
func (pl *bucketPlan) rounds() int {
	n := 0
	for t := range pl.dims {
		n += pl.phaseRounds(t)
	}
	return n
}

// bucketMove is one bucket's part of a round of a phase: send the chunk of
// section ids [send, send+w) to rank to and receive [recv, recv+w) from
// rank from.
type bucketMove struct {
	bk, step          int
	to, from          int
	send, recv, width int
}

// phase walks rank r's rings of phase t: in every round each bucket whose
// ring along its t-th dimension is still moving passes one chunk on, which
// move posts. A rank first passes the chunk of its own coordinate (shift 0,
// allgather) or the one before it (shift 1, reduce-scatter, so that it ends
// with its own).
func (pl *bucketPlan) phase(b *schedule.Builder, t, r, shift int, move func(bucketMove)) {
	for step := range pl.phaseRounds(t) {
		for bk := range pl.lanes {
			c, m, next, prev, lo, w := pl.ring(bk, t, r)
			if step >= m-1 {
				continue
			}
			to, from, sc, rc := next, prev, mod(c-step-shift, m), mod(c-step-shift-1, m)
			if pl.dirs[bk] < 0 {
				to, from, sc, rc = prev, next, mod(c+step+shift, m), mod(c+step+shift+1, m)
			}
			off := bk*pl.P + lo
			move(bucketMove{bk: bk, step: step, to: to, from: from, send: off + sc*w, recv: off + rc*w, width: w})
		}
		b.EndRound()
	}
}

// allgatherPhase emits phase t: every bucket's ring along its t-th
// dimension, passing the chunks gathered in the earlier phases.
func (pl *bucketPlan) allgatherPhase(b *schedule.Builder, r int, x *sections, base schedule.Region, t int) {
	pl.phase(b, t, r, 0, func(mv bucketMove) {
		sendAll(b, mv.to, x.runs(base, mv.send, mv.send+mv.width))
		recvAll(b, mv.from, x.runs(base, mv.recv, mv.recv+mv.width))
	})
}

// reduceScatterPhase emits phase t of the ring reduce-scatters; inAcc[b]
// tells whether bucket b's partials are in acc already, and is set when the
// phase moves them there.
func (pl *bucketPlan) reduceScatterPhase(b *schedule.Builder, r int, x *sections, in, acc schedule.Region, t int, inAcc []bool) {
	pl.phase(b, t, r, 1, func(mv bucketMove) {
		src := in
		if inAcc[mv.bk] || mv.step > 0 {
			src = acc
		}
		sendAll(b, mv.to, x.runs(src, mv.send, mv.send+mv.width))
		src = in
		if inAcc[mv.bk] {
			src = acc
		}
		recvReduceAll(b, mv.from, x.runs(acc, mv.recv, mv.recv+mv.width), acc, src, true)
	})
	for bk := range pl.lanes {
		if _, m, _, _, _, _ := pl.ring(bk, t, r); m > 1 {
			inAcc[bk] = true
		}
	}
}

// bucketScheme is the buckets of one call on the sections x; it is a
// compositeScheme.
type bucketScheme struct {
	pl *bucketPlan
	x  *sections
}

// bucketLanes returns the scheme of ports buckets (1, 3 or 6, as
// newBucketPlan) for a call and its blocks.
func bucketLanes(ports int) func(*Params, redscatLayout) *bucketScheme {
	return func(p *Params, l redscatLayout) *bucketScheme {
		pl := newBucketPlan(p, ports)
		return &bucketScheme{pl: pl, x: &sections{l: l, k: pl.k()}}
	}
}

func (bs *bucketScheme) cut() *sections             { return bs.x }
func (bs *bucketScheme) holder(s int) int           { return bs.pl.holder(s) }
func (bs *bucketScheme) held(b, r int) (s0, s1 int) { return bs.pl.held(b, r) }
func (bs *bucketScheme) rounds() int                { return bs.pl.k() * bs.pl.rounds() }

// positions are the sections of the buckets, one space per bucket.
func (bs *bucketScheme) positions() *positions {
	pl := bs.pl
	return &positions{
		n: pl.P, spaces: pl.k(),
		holder: func(s, q int) int { return pl.lanes[s].rank(q) },
		runs: func(base schedule.Region, s, q0, q1 int) []schedule.Region {
			return bs.x.runs(base, s*pl.P+q0, s*pl.P+q1)
		},
		mine: func(s, r int) (int, bool) { return pl.lanes[s].index(r), true },
	}
}

// allgather emits the buckets' rings for rank r, which holds section
// bP + index_b(r) of every bucket b at its place in base. No rank idles, so
// there is none to skip.
func (bs *bucketScheme) allgather(b *schedule.Builder, r int, base schedule.Region, _ int) {
	for t := range bs.pl.dims {
		bs.pl.allgatherPhase(b, r, bs.x, base, t)
	}
}

// reduceScatter emits the buckets' ring reduce-scatters for rank r on the
// vector in, along the dimensions in reverse order: it ends with the reduced
// section bP + index_b(r) of every bucket b at its place in acc.
func (bs *bucketScheme) reduceScatter(b *schedule.Builder, r int, in, acc schedule.Region) {
	inAcc := make([]bool, bs.pl.k()) // the bucket's partials have moved to acc
	for t := bs.pl.dims - 1; t >= 0; t-- {
		bs.pl.reduceScatterPhase(b, r, bs.x, in, acc, t, inAcc)
	}
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
		pl := newBucketPlan(p, ports)
		k, rounds := float64(pl.k()), float64(pl.rounds())
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
