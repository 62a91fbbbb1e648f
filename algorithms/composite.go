package algorithms

import "github.com/scoll/scoll/schedule"

// Composites of Sack's reordered families (thesis sec. 3.4.4): broadcast as
// a scatter then an allgather, reduce as a reduce-scatter then a gather,
// allreduce as a reduce-scatter then an allgather. The vector is cut into P
// blocks; between the two halves every rank holds the blocks of its
// positions, exactly where the family's reduce-scatter leaves them and its
// allgather wants them, so the reordering exchanges cancel: allreduce pays
// neither, and the scatter and gather deliver to (collect from) the
// positions directly — a binomial tree over the positions taken relative to
// the root's, whose subtrees are runs of positions (two when they wrap).

// positions describes where the blocks are between the halves: spaces of n
// positions each (one for recursive doubling, one per bucket), holder(s, q)
// the rank holding position q of space s, runs(base, s, q0, q1) the regions
// of base holding positions [q0, q1) of space s.
type positions struct {
	n, spaces int
	holder    func(s, q int) int
	runs      func(base schedule.Region, s, q0, q1 int) []schedule.Region
}

// rdPositions are the positions of recursive-doubling lanes (one space
// each).
func rdPositions(lanes []rdLane) *positions {
	return &positions{
		n: lanes[0].pl.V, spaces: len(lanes),
		holder: func(s, q int) int { return lanes[s].pl.rank(lanes[s].pl.sigmaInv(q)) },
		runs: func(base schedule.Region, s, q0, q1 int) []schedule.Region {
			return lanes[s].runs(base, q0, q1)
		},
	}
}

// bucketPositions are the sections of the buckets of pl.
func bucketPositions(pl *bucketPlan, x *sections) *positions {
	return &positions{
		n: pl.P, spaces: pl.k(),
		holder: func(s, q int) int { return pl.lanes[s].rank(q) },
		runs: func(base schedule.Region, s, q0, q1 int) []schedule.Region {
			return x.runs(base, s*pl.P+q0, s*pl.P+q1)
		},
	}
}

// relRuns returns the regions of the positions [lo, hi) counted from q0
// (hi − lo < n): one run, or two when it wraps.
func (ps *positions) relRuns(base schedule.Region, s, q0, lo, hi int) []schedule.Region {
	a := (q0 + lo) % ps.n
	if e := a + hi - lo; e > ps.n {
		return append(ps.runs(base, s, a, ps.n), ps.runs(base, s, 0, e-ps.n)...)
	}
	return ps.runs(base, s, a, a+hi-lo)
}

// acts returns the positions of space s, counted from q0, whose part in a
// tree rank r plays: the one it holds, and q0 itself for the root (which
// stands in for q0's holder in the scatter).
func (ps *positions) acts(s, r, root, q0 int, mine func(s, r int) (int, bool)) []int {
	var out []int
	if r == root {
		out = append(out, 0)
	}
	if q, ok := mine(s, r); ok && q != q0 {
		out = append(out, (q-q0+ps.n)%ps.n)
	}
	return out
}

// treeScatter sends the blocks from root to the holders of their positions
// along binomial trees (all spaces at once). q0[s] is the position of space
// s the root stands for; when the root does not hold it, it hands that
// position's blocks to its holder last. mine(s, r) is the position of
// space s rank r holds.
func (ps *positions) treeScatter(b *schedule.Builder, r, root int, q0 []int, mine func(s, r int) (int, bool), buf schedule.Region) {
	actor := func(s, v int) int {
		if v == 0 {
			return root
		}
		return ps.holder(s, (q0[s]+v)%ps.n)
	}
	top := 1
	for top*2 < ps.n {
		top *= 2
	}
	for m := top; m >= 1; m /= 2 {
		for s := range ps.spaces {
			for _, v := range ps.acts(s, r, root, q0[s], mine) {
				switch {
				case v%(2*m) == 0 && v+m < ps.n:
					for _, reg := range ps.relRuns(buf, s, q0[s], v+m, min(v+2*m, ps.n)) {
						b.Send(actor(s, v+m), reg)
					}
				case v%(2*m) == m:
					for _, reg := range ps.relRuns(buf, s, q0[s], v, min(v+m, ps.n)) {
						b.Recv(actor(s, v-m), reg)
					}
				}
			}
		}
		b.EndRound()
	}
	for s := range ps.spaces {
		if h := ps.holder(s, q0[s]); h != root && (r == root || r == h) {
			for _, reg := range ps.runs(buf, s, q0[s], q0[s]+1) {
				if r == root {
					b.Send(h, reg)
				} else {
					b.Recv(root, reg)
				}
			}
		}
	}
	b.EndRound()
}

// treeGather collects the positions' blocks from their holders into acc of
// the holders of q0[s] along binomial trees (the mirror of treeScatter,
// without a stand-in).
func (ps *positions) treeGather(b *schedule.Builder, r int, q0 []int, mine func(s, r int) (int, bool), acc schedule.Region) {
	for m := 1; m < ps.n; m *= 2 {
		for s := range ps.spaces {
			q, ok := mine(s, r)
			if !ok {
				continue
			}
			v := (q - q0[s] + ps.n) % ps.n
			switch {
			case v%(2*m) == m:
				for _, reg := range ps.relRuns(acc, s, q0[s], v, min(v+m, ps.n)) {
					b.Send(ps.holder(s, (q0[s]+v-m)%ps.n), reg)
				}
			case v%(2*m) == 0 && v+m < ps.n:
				for _, reg := range ps.relRuns(acc, s, q0[s], v+m, min(v+2*m, ps.n)) {
					b.Recv(ps.holder(s, (q0[s]+v+m)%ps.n), reg)
				}
			}
		}
		b.EndRound()
	}
}

// composite names one of the families the composites are built from, and
// the names of its allreduce (the family's name), bcast and reduce.
type composite struct {
	name, bcastName, reduceName string
	rd                          func(*Params, redscatLayout) []rdLane // recursive doubling in these lanes, or
	ports                       int                                   // buckets
}

var composites = []composite{
	{name: RDHalving, bcastName: ScatterRDHalving, reduceName: RDHalvingGather, rd: singleLane(rdHalvingPlan)},
	{name: RDOptimal, bcastName: ScatterRDOptimal, reduceName: RDOptimalGather, rd: singleLane(rdOptimalPlan)},
	{name: RDPath, bcastName: ScatterRDPath, reduceName: RDPathGather, rd: singleLane(rdPathPlan)},
	{name: RDPaths, bcastName: ScatterRDPaths, reduceName: RDPathsGather, rd: pathLanes},
	{name: Bucket, bcastName: ScatterBucket, reduceName: BucketGather, ports: 1},
	{name: Bucket3, bcastName: ScatterBucket3, reduceName: Bucket3Gather, ports: 3},
	{name: Bucket6, bcastName: ScatterBucket6, reduceName: Bucket6Gather, ports: 6},
}

// plan returns the positions of the family for p over blocks l and the
// position of each space that rank root stands for.
func (c *composite) plan(p *Params, l *redscatLayout) (ps *positions, q0 []int, rd []rdLane, bk *bucketPlan, x *sections) {
	if c.rd != nil {
		rd = c.rd(p, *l)
		for i := range rd {
			u, _ := rd[i].pl.part(p.Root)
			q0 = append(q0, rd[i].pl.sigma(u))
		}
		return rdPositions(rd), q0, rd, nil, nil
	}
	bk = newBucketPlan(p, c.ports)
	x = &sections{l: *l, k: bk.k()}
	ps = bucketPositions(bk, x)
	for _, g := range bk.lanes {
		q0 = append(q0, g.index(p.Root))
	}
	return ps, q0, nil, bk, x
}

// mine returns the position of space s rank r holds between the halves.
func (c *composite) mine(rd []rdLane, bk *bucketPlan) func(s, r int) (int, bool) {
	if rd != nil {
		return func(s, r int) (int, bool) {
			u, owner := rd[s].pl.part(r)
			return rd[s].pl.sigma(u), owner
		}
	}
	return func(s, r int) (int, bool) { return bk.lanes[s].index(r), true }
}

// compositeCost adds the halves' costs: 2 of the family's stage counts (no
// exchanges) for allreduce; the scatter or gather trees cost ⌈lg n⌉·α per
// space and (n−1)/n of the vector.
func (c *composite) cost(coll schedule.Collective) func(*Params) Cost {
	return func(p *Params) Cost {
		N := p.bytes(p.Count)
		if p.Size <= 1 {
			return Cost{Copy: N}
		}
		P := float64(p.Size)
		var stages, spaces, n float64
		if c.rd != nil {
			lanes := c.rd(p, redscatSplit(p.Count, p.Size))
			pl := lanes[0].pl
			stages, spaces, n = float64(len(pl.S)), float64(len(lanes)), float64(pl.V)
			if pl.rem > 0 {
				stages++
			}
			stages *= spaces
		} else {
			var k float64
			k, stages = bucketRounds(p, c.ports)
			stages *= k
			spaces, n = k, P
		}
		half := Cost{Alpha: stages, Beta: N * (P - 1) / P}
		tree := Cost{Alpha: spaces * float64(ceilLog2(int(n))), Beta: N * (n - 1) / n}
		switch coll {
		case schedule.Allreduce:
			return Cost{Alpha: 2 * half.Alpha, Beta: 2 * half.Beta, Gamma: half.Beta}
		case schedule.Bcast:
			return Cost{Alpha: half.Alpha + tree.Alpha, Beta: half.Beta + tree.Beta}
		default:
			return Cost{Alpha: half.Alpha + tree.Alpha, Beta: half.Beta + tree.Beta, Gamma: half.Beta}
		}
	}
}

// registerComposites registers the algorithm of collective coll of every
// composite family; info names it and gives its builder and doc line.
func registerComposites(coll schedule.Collective, info func(c *composite) Info) {
	for i := range composites {
		c := &composites[i]
		in := info(c)
		in.Linear, in.Source, in.Cost = c.rd == nil, "Sack 2011 sec. 3.4.4", c.cost(coll)
		if coll.Reduces() && c.name != RDHalving {
			in.Requires = NeedsCommutative // only rd-halving combines in rank order
		}
		register(in, coll)
	}
}
