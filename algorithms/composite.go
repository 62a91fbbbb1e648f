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
// of base holding positions [q0, q1) of space s, and mine(s, r) the position
// of space s rank r holds, if any (a rank another stands for holds none, but
// gets the position of the one that stands for it).
type positions struct {
	n, spaces int
	holder    func(s, q int) int
	runs      func(base schedule.Region, s, q0, q1 int) []schedule.Region
	mine      func(s, r int) (int, bool)
}

// origin returns the position of each space that rank root stands for.
func (ps *positions) origin(root int) []int {
	q0 := make([]int, ps.spaces)
	for s := range q0 {
		q0[s], _ = ps.mine(s, root)
	}
	return q0
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
func (ps *positions) acts(s, r, root, q0 int) []int {
	var out []int
	if r == root {
		out = append(out, 0)
	}
	if q, ok := ps.mine(s, r); ok && q != q0 {
		out = append(out, (q-q0+ps.n)%ps.n)
	}
	return out
}

// treeScatter sends the blocks from root to the holders of their positions
// along binomial trees (all spaces at once). q0[s] is the position of space
// s the root stands for; when the root does not hold it, it hands that
// position's blocks to its holder last.
func (ps *positions) treeScatter(b *schedule.Builder, r, root int, q0 []int, buf schedule.Region) {
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
			for _, v := range ps.acts(s, r, root, q0[s]) {
				switch {
				case v%(2*m) == 0 && v+m < ps.n:
					sendAll(b, actor(s, v+m), ps.relRuns(buf, s, q0[s], v+m, min(v+2*m, ps.n)))
				case v%(2*m) == m:
					recvAll(b, actor(s, v-m), ps.relRuns(buf, s, q0[s], v, min(v+m, ps.n)))
				}
			}
		}
		b.EndRound()
	}
	for s := range ps.spaces {
		if h := ps.holder(s, q0[s]); h != root && (r == root || r == h) {
			ps.handOver(b, r, root, h, ps.runs(buf, s, q0[s], q0[s]+1))
		}
	}
	b.EndRound()
}

// handOver adds rank r's side (r is from or to) of moving the regions regs
// from rank from to rank to.
func (ps *positions) handOver(b *schedule.Builder, r, from, to int, regs []schedule.Region) {
	switch r {
	case from:
		sendAll(b, to, regs)
	case to:
		recvAll(b, from, regs)
	}
}

// treeGather collects the positions' blocks from their holders into acc of
// the holders of q0[s] along binomial trees (the mirror of treeScatter,
// without a stand-in).
func (ps *positions) treeGather(b *schedule.Builder, r int, q0 []int, acc schedule.Region) {
	for m := 1; m < ps.n; m *= 2 {
		for s := range ps.spaces {
			q, ok := ps.mine(s, r)
			if !ok {
				continue
			}
			v := (q - q0[s] + ps.n) % ps.n
			switch {
			case v%(2*m) == m:
				sendAll(b, ps.holder(s, (q0[s]+v-m)%ps.n), ps.relRuns(acc, s, q0[s], v, min(v+m, ps.n)))
			case v%(2*m) == 0 && v+m < ps.n:
				recvAll(b, ps.holder(s, (q0[s]+v+m)%ps.n), ps.relRuns(acc, s, q0[s], v+m, min(v+2*m, ps.n)))
			}
		}
		b.EndRound()
	}
}

// composite names one of the families the composites are built from, and
// the names of its allreduce (the family's name), bcast and reduce.
type composite struct {
	name, bcastName, reduceName string
	rd                          func(*Params, redscatLayout) rdLanes // recursive doubling in these lanes, or
	ports                       int                                  // buckets
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

// scheme returns the family laid out for p, the vector cut into P blocks.
func (c *composite) scheme(p *Params) compositeScheme {
	l := redscatSplit(p.Count, p.Size)
	if c.rd != nil {
		return c.rd(p, l)
	}
	return bucketLanes(c.ports)(p, l)
}

// cost adds the halves' costs: 2 of the family's stage counts (no
// exchanges) for allreduce; the scatter or gather trees cost ⌈lg n⌉·α per
// space and (n−1)/n of the vector.
func (c *composite) cost(coll schedule.Collective) func(*Params) Cost {
	return func(p *Params) Cost {
		N := p.bytes(p.Count)
		if p.Size <= 1 {
			return Cost{Copy: N}
		}
		P := float64(p.Size)
		sc := c.scheme(p)
		ps := sc.positions()
		stages, spaces, n := float64(sc.rounds()), float64(ps.spaces), float64(ps.n)
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
