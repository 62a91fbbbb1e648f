package algorithms

import (
	"fmt"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/schedule"
)

// Node-aware (hierarchical, two-level) collectives, the scheme of MPI
// libraries' node-aware selection (Open MPI's han, MPICH's node-aware
// algorithms): a phase inside each node gathers the node's part to one rank,
// the node's leader; the leaders run an algorithm of the registry among
// themselves (named by Params.Inner, or the default rule's choice for the
// leaders' call, so the topology-aware algorithms apply between nodes); a
// last phase inside each node hands the result out. Only the leaders send
// messages between nodes, and they send as many as the inner algorithm does
// on as many ranks as there are nodes.
//
// Groups. The ranks are grouped by Params.Nodes (nil: every rank alone), a
// group's ranks in rank order and the groups ordered by their lowest rank.
// A group's leader is its lowest rank, except in the root's group of a
// rooted collective, led by the root. A node's ranks need not be
// consecutive. For a reduction with a non-commutative operator the groups
// are the runs of consecutive ranks on one node instead, so that combining
// in group order is combining in rank order (interleaved nodes then fall
// back to smaller groups, never to a wrong order).
//
// The phases inside a node use the order-preserving binomial trees of the
// registry (reduce, bcast, gather "binomial"); every phase is the schedule of
// a registered algorithm on the group's (or the leaders') ranks, embedded
// with its peers and buffers renamed (hierEmbed), so each phase is as correct
// as the algorithm it runs.
//
// Cost: the phases' costs added, the node phases at the largest group (an
// estimate: the single α of the model charges messages inside and between
// nodes alike, and groups of unequal sizes overlap their phases).

// hierGroups is the grouping of the ranks the node-aware algorithms use.
//
// Invariant: members[group[r]][index[r]] == r; every members[g] is ascending
// and members[g][0] < members[g+1][0].
type hierGroups struct {
	members [][]int
	group   []int
	index   []int
	largest int
}

// hierGroupsOf groups p's ranks (see the package comment above).
func hierGroupsOf(p *Params) *hierGroups {
	P := p.Size
	g := &hierGroups{group: make([]int, P), index: make([]int, P)}
	runs := p.Coll.Reduces() && !p.Commutative
	byNode := map[int]int{}
	for r := range P {
		gi := -1
		switch {
		case p.Nodes == nil:
		case runs:
			if r > 0 && p.Nodes[r] == p.Nodes[r-1] {
				gi = g.group[r-1]
			}
		default:
			if i, ok := byNode[p.Nodes[r]]; ok {
				gi = i
			}
		}
		if gi < 0 {
			gi = len(g.members)
			g.members = append(g.members, nil)
			if p.Nodes != nil && !runs {
				byNode[p.Nodes[r]] = gi
			}
		}
		g.group[r], g.index[r] = gi, len(g.members[gi])
		g.members[gi] = append(g.members[gi], r)
		g.largest = max(g.largest, len(g.members[gi]))
	}
	return g
}

// leaders returns the leader of every group: its lowest rank, or root in
// root's group (root < 0: no root).
func (g *hierGroups) leaders(root int) []int {
	out := make([]int, len(g.members))
	for i, m := range g.members {
		out[i] = m[0]
	}
	if root >= 0 {
		out[g.group[root]] = root
	}
	return out
}

// uniform reports whether every group has as many ranks.
func (g *hierGroups) uniform() bool {
	for _, m := range g.members {
		if len(m) != g.largest {
			return false
		}
	}
	return true
}

// consecutive reports whether every group's ranks are consecutive (then
// the groups' layout in rank order is the ranks' order).
func (g *hierGroups) consecutive() bool {
	for _, m := range g.members {
		if m[len(m)-1]-m[0] != len(m)-1 {
			return false
		}
	}
	return true
}

// multiNode reports whether nodes puts ranks on several nodes and more than
// one rank on some node: when grouping by node pays.
func multiNode(nodes []int) bool {
	seen := map[int]bool{}
	for _, v := range nodes {
		seen[v] = true
	}
	return len(seen) > 1 && len(seen) < len(nodes)
}

// CheckNodes reports whether nodes is a node layout of size ranks: one
// non-negative node number per rank.
func CheckNodes(nodes []int, size int) error {
	if len(nodes) != size {
		return fmt.Errorf("%w: node layout lists %d ranks, have %d", errs.InvalidArgument, len(nodes), size)
	}
	for r, v := range nodes {
		if v < 0 {
			return fmt.Errorf("%w: rank %d on node %d (node numbers must be non-negative)", errs.InvalidArgument, r, v)
		}
	}
	return nil
}

// sub returns the parameters of a call of collective coll on size ranks as
// rank rank, inheriting p's operator and tuning (not its grid, placement,
// radix vector or nodes, which describe p's ranks).
func (p *Params) sub(coll schedule.Collective, size, rank, root, count int, inPlace bool) Params {
	return Params{
		Spec: schedule.Spec{Coll: coll, Size: size, Root: root, Count: count, InPlace: inPlace},
		Rank: rank, Commutative: p.Commutative, Radix: p.Radix, Segments: p.Segments, LogP: p.LogP,
		Segment: p.Segment, ElemSize: p.ElemSize, Machine: p.Machine,
	}
}

// hierLeaderCall returns the leaders' call of the node-aware algorithm of
// p.Coll as leader number rank (its Counts set for an allgatherv), given the
// grouping g.
func hierLeaderCall(p *Params, g *hierGroups, rank int) Params {
	L, n := len(g.members), p.Count
	switch p.Coll {
	case schedule.Bcast, schedule.Reduce:
		// The inner reduce is in place at the root when the root's partial is
		// in its receive buffer: its group reduced into it, or it was there.
		gr := g.group[p.Root]
		inPlace := p.Coll == schedule.Reduce && (len(g.members[gr]) > 1 || p.InPlaceAt(p.Root))
		return p.sub(p.Coll, L, rank, gr, n, inPlace)
	case schedule.Allgather:
		if g.uniform() {
			return p.sub(schedule.Allgather, L, rank, 0, g.largest*n, true)
		}
		q := p.sub(schedule.Allgatherv, L, rank, 0, 0, true)
		q.Counts = make([]int, L)
		for i, m := range g.members {
			q.Counts[i] = len(m) * n
		}
		return q
	}
	return p.sub(p.Coll, L, rank, 0, n, true)
}

// hierInner returns the algorithm the leaders run for the call q: p.Inner,
// or the default rule's choice (never a node-aware one).
func hierInner(p, q *Params) (*Info, error) {
	if p.Inner != "" {
		in, ok := Lookup(q.Coll, p.Inner)
		if !ok {
			return nil, fmt.Errorf("%w: no %s algorithm %q to run among the node leaders", errs.InvalidArgument, q.Coll, p.Inner)
		}
		if err := in.Check(q); err != nil {
			return nil, fmt.Errorf("inner algorithm: %w", err)
		}
		return in, nil
	}
	in := SelectExcept(q, q.machine(), Caps{}, func(name string) bool { return name == Hier }) // the leaders talk over messages
	if in == nil {
		return nil, fmt.Errorf("%w: no %s algorithm fits the %d node leaders", errs.Unsupported, q.Coll, q.Size)
	}
	return in, nil
}

// hierCheck reports why the node-aware algorithm of p.Coll cannot run p:
// an inner algorithm that is unknown or does not fit the leaders' call.
func hierCheck(p *Params) error {
	if p.Size < 1 || (p.Nodes != nil && len(p.Nodes) != p.Size) || p.Coll.Rooted() && (p.Root < 0 || p.Root >= p.Size) {
		return nil // the spec's or CheckNodes' error
	}
	g := hierGroupsOf(p)
	q := hierLeaderCall(p, g, 0)
	_, err := hierInner(p, &q)
	return err
}

// hierLocal returns the registry's algorithm name of collective c run
// inside a node.
func hierLocal(c schedule.Collective) *Info {
	in, ok := Lookup(c, Binomial)
	if !ok {
		panic("algorithms: no binomial " + c.String())
	}
	return in
}

// hierEmbed emits into b the schedule of algorithm in for the call q on the
// ranks ranks (q.Rank is this rank's position in ranks): peer i becomes
// ranks[i], q's send buffer the region send, its receive buffer the region
// recv, and its scratch fresh scratch of b. The open round of b is closed
// first; every round of q's schedule becomes one round of b.
func hierEmbed(b *schedule.Builder, in *Info, q *Params, ranks []int, send, recv schedule.Region) {
	if b.Err() != nil {
		return
	}
	sb := schedule.NewBuilder(q.Rank, q.Size)
	sb.SetBounds(q.BufLens(q.Rank))
	if q.Coll == schedule.Barrier {
		sb.KeepEmpty()
	}
	in.Build(sb, q)
	s, err := sb.Schedule()
	if err != nil {
		b.Fail(fmt.Errorf("%s %s on %d ranks: %w", q.Coll, in.Name, q.Size, err))
		return
	}
	var scratch schedule.Region
	if s.Scratch > 0 {
		scratch = b.Alloc(s.Scratch)
	}
	rename := func(r schedule.Region) schedule.Region {
		base := scratch
		switch r.Space {
		case schedule.SendSpace:
			base = send
		case schedule.RecvSpace:
			base = recv
		}
		if r.End() > base.Len {
			b.Failf("%s %s on %d ranks: region %s outside the %d elements given", q.Coll, in.Name, q.Size, r, base.Len)
		}
		return base.Sub(r.Off, r.Len)
	}
	b.EndRound()
	for _, rd := range s.Rounds {
		for _, o := range rd {
			switch o.Kind {
			case schedule.OpSend:
				b.Send(ranks[o.Peer], rename(o.Src))
			case schedule.OpRecv:
				b.Recv(ranks[o.Peer], rename(o.Dst))
			case schedule.OpRecvReduce:
				b.RecvReduce(ranks[o.Peer], rename(o.Dst), rename(o.Src), o.SrcLeft)
			case schedule.OpReduce:
				if o.SrcLeft {
					b.ReduceLeft(rename(o.Dst), rename(o.Src))
				} else {
					b.Reduce(rename(o.Dst), rename(o.Src))
				}
			case schedule.OpCopy:
				b.Copy(rename(o.Dst), rename(o.Src))
			}
		}
		b.EndRound()
	}
}

// hierRunInner embeds the leaders' algorithm for leader number rank.
func hierRunInner(b *schedule.Builder, p *Params, g *hierGroups, rank int, leaders []int, send, recv schedule.Region) {
	q := hierLeaderCall(p, g, rank)
	in, err := hierInner(p, &q)
	if err != nil {
		b.Fail(err)
		return
	}
	hierEmbed(b, in, &q, leaders, send, recv)
}

// hierCost adds the cost of the node phase of collective first (none if
// first is NumCollectives), of the leaders' algorithm and of the node phase
// of last, the node phases on the largest group, each phase moving count
// elements (the node phases of allgather move more: they take counts).
func hierCost(p *Params, first schedule.Collective, firstCount int, last schedule.Collective, lastCount int) Cost {
	g := hierGroupsOf(p)
	var c Cost
	add := func(d Cost) {
		c.Alpha += d.Alpha
		c.Beta += d.Beta
		c.Gamma += d.Gamma
		c.Copy += d.Copy
	}
	k := g.largest
	if first < schedule.NumCollectives && k > 1 {
		q := p.sub(first, k, 0, 0, firstCount, false)
		add(hierLocal(first).Cost(&q))
	}
	q := hierLeaderCall(p, g, 0)
	if in, err := hierInner(p, &q); err == nil {
		add(in.Cost(&q))
	}
	if last < schedule.NumCollectives && k > 1 {
		q := p.sub(last, k, 0, 0, lastCount, false)
		add(hierLocal(last).Cost(&q))
	}
	return c
}

// hierSource is the provenance every node-aware algorithm registers.
const hierSource = "node-aware two-level scheme (Open MPI han; MPICH node-aware collectives)"
