package algorithms

import (
	"math/bits"
	"slices"

	"github.com/scoll/scoll/schedule"
)

// Shared building blocks of the rooted collectives (bcast, reduce, gather,
// scatter): k-nomial trees laid on a line of ranks, in-order binary trees,
// and four schedule engines that walk a tree:
//
//   - rtScatter: receive a range from the parent, forward sub-ranges to the
//     children level by level (bcast, scatter, the scatter phase of
//     scatter-allgather bcast);
//   - rtGather: the reverse (gather);
//   - rtReduce: a segmented, order-preserving tree reduction (reduce);
//   - rtBcastStreams: segmented (pipelined) broadcast down one or more trees
//     at once (pipeline, binary, split-binary and two-tree bcast).
//
// Every helper builds one rank's schedule in O(rounds × children) time,
// independent of the number of ranks.

// Conventions of the broadcasts (bcast_*.go). The buffer is the receive
// buffer of every rank; the root's holds the message. Ranks are numbered
// relative to the root where the shape does not matter for correctness:
// v = (r − root) mod P. In the costs, n is the message in bytes, P the
// ranks, s the segment in bytes and S = ⌈n/s⌉ the segments.
//
// Conventions of the reductions (reduce_*.go). The result lands in the
// root's receive buffer; other ranks have none and accumulate in scratch.
// All of them keep contributions in rank order, so non-commutative
// operators are safe: the tree algorithms use trees whose every subtree is
// a contiguous range of ranks (rtTwoSided, rtInOrder, a two-sided chain) and
// combine a lower range as the left operand. In the costs, n is the vector
// in bytes, s the segment in bytes and S the number of segments.
//
// Conventions of gather and scatter (gather_*.go, scatter_*.go). Blocks are
// in absolute rank order in the root's buffer. In place, the root's gather
// block is already in its receive buffer, and a scatter root keeps its
// block in the send buffer and receives nothing.

// bcastBuf returns the broadcast's buffer: the message in the receive
// buffer of every rank.
func bcastBuf(p *Params) schedule.Region { return schedule.RecvBuf(0, p.Count) }

// bcastRel returns the absolute rank of relative rank v.
func bcastRel(p *Params, v int) int { return mod(v+p.Root, p.Size) }

// rtK returns the radix of a k-nomial tree algorithm: k, or for k = 0 (the
// k-nomial algorithms) p.Radix when it is at least 2, else 4.
func rtK(p *Params, k int) int {
	switch {
	case k > 0:
		return k
	case p.Radix >= 2:
		return p.Radix
	}
	return 4
}

// rtKnomialCost returns the cost of a k-nomial tree (radix rtK(p, k)) that
// moves the whole vector in each of its ⌈log_k P⌉(k−1) rounds, and reduces it
// too when reduces: ⌈log_k P⌉(k−1)(α + nβ [+ nγ]).
func rtKnomialCost(k int, reduces bool) func(*Params) Cost {
	return func(p *Params) Cost {
		k := rtK(p, k)
		return rtHopsCost(p, rtLogK(p.Size, k)*(k-1), reduces)
	}
}

// rtHopsCost is the cost of hops whole-vector messages one after another
// (combined on arrival when reduces): hops·(α + nβ [+ nγ]).
func rtHopsCost(p *Params, hops int, reduces bool) Cost {
	h, nb := float64(hops), p.bytes(p.Count)
	c := Cost{Alpha: h, Beta: h * nb}
	if reduces {
		c.Gamma = h * nb
	}
	return c
}

// rtLogK returns ⌈log_k p⌉.
func rtLogK(p, k int) int {
	l := 0
	for w := 1; w < p; w *= k {
		l++
	}
	return l
}

// registerKnomial registers coll's binomial (k = 2) and k-nomial (radix
// p.Radix, default 4) algorithms, build(k) their builders, with their doc
// lines.
func registerKnomial(coll schedule.Collective, build func(k int) func(*schedule.Builder, *Params), binomialDoc, knomialDoc string) {
	register(Info{Name: Binomial, Build: build(2), Cost: rtKnomialCost(2, coll.Reduces()), Doc: binomialDoc,
		Source: "Heath-Solomonik notes sec. 5.1; Thakur, Rabenseifner, Gropp 2005"}, coll)
	register(Info{Name: KNomial, Build: build(0), Cost: rtKnomialCost(0, coll.Reduces()), Doc: knomialDoc,
		Source: "Hoefler-Moor 2014 sec. 3.1.2"}, coll)
}

// rtPipeCost is the cost of pipelining n elements of p's segments along a
// tree of depth depth: depth + S − 1 steps for S segments, each sending msgs
// messages of one segment and reducing red of them. It is 0 for one rank or
// no data.
func rtPipeCost(p *Params, n, depth, msgs, red int) Cost {
	seg := rtSegment(p)
	S := rtSegs(n, seg)
	steps := depth + S - 1
	if p.Size == 1 || S == 0 || steps <= 0 {
		return Cost{}
	}
	st, sb := float64(steps), p.bytes(min(seg, n))
	return Cost{Alpha: st * float64(msgs), Beta: st * float64(msgs) * sb, Gamma: st * float64(red) * sb}
}

// rtBlockOff returns the offset of block i when n elements are cut into m
// blocks as split does (the first n mod m blocks one longer), in O(1).
func rtBlockOff(n, m, i int) int { return i*(n/m) + min(i, n%m) }

// rtBlockLen returns rank r's block length in a gather or scatter, in O(1).
func rtBlockLen(p *Params, r int) int {
	if p.Coll.Vector() {
		return p.Counts[r]
	}
	return p.Count
}

// flatTree emits the one round of a flat tree at p.Root (the linear bcast,
// gather and scatter): a rank other than the root posts leaf with the root,
// which posts block(q) with every other rank q and then adds its local
// operations (self, if not nil). Messages go to the root when up, else from
// it.
func flatTree(b *schedule.Builder, p *Params, up bool, leaf schedule.Region, block func(q int) schedule.Region, self func()) {
	leafOp, rootOp := b.Recv, b.Send
	if up {
		leafOp, rootOp = b.Send, b.Recv
	}
	if p.Rank != p.Root {
		leafOp(p.Root, leaf)
	} else {
		for q := range p.Size {
			if q != p.Root {
				rootOp(q, block(q))
			}
		}
		if self != nil {
			self()
		}
	}
	b.EndRound()
}

// rtRootBlocks returns the blocks of a gather's or scatter's root buffer, in
// rank order (Gatherv, Scatterv: Counts at their displacements). Only the
// root needs them: other ranks get none and skip the v-variants' O(P)
// displacements.
func rtRootBlocks(p *Params) redscatLayout {
	if p.Rank != p.Root {
		return redscatLayout{}
	}
	return allgatherLayout(p)
}

// rtLine is a k-nomial tree laid on a line of m positions: position i is rank
// mod(base+dir·i, p) and position 0 is the tree's root. The subtree of
// position i > 0 is [i, i+k^l) ∩ [0, m), where l is the place of i's lowest
// non-zero base-k digit (its level); its parent clears that digit. With k = 2
// this is the binomial tree of MPICH and Open MPI.
//
//	k=2, m=8:  0 ─┬─ 1
//	              ├─ 2 ── 3
//	              └─ 4 ─┬─ 5
//	                    └─ 6 ── 7
//
// Invariant: every subtree is a contiguous run of positions, and children of
// a position are listed nearest first (ascending level).
type rtLine struct {
	base, dir int // position i is rank mod(base+dir*i, p); dir is +1 or -1
	m, k, p   int
}

func (l rtLine) rank(i int) int { return mod(l.base+l.dir*i, l.p) }

func (l rtLine) pos(r int) int { return mod(l.dir*(r-l.base), l.p) }

// level returns the level of position i and its weight k^level: the subtree
// of i spans at most weight positions.
func (l rtLine) level(i int) (lev, w int) {
	w = 1
	if i == 0 {
		for w < l.m {
			w *= l.k
			lev++
		}
		return lev, w
	}
	for (i/w)%l.k == 0 {
		w *= l.k
		lev++
	}
	return lev, w
}

// rtKid is a child in a rooted tree.
type rtKid struct {
	rank  int
	level int  // step at which the child's subtree is complete (see rtReduce)
	lo    int  // the child's subtree covers indices [lo, hi)
	hi    int  //
	left  bool // the subtree holds lower ranks than its parent
}

// rtNode is one rank's view of a rooted tree. Indices (lo, hi) are positions
// on the line for trees laid over relative ranks, absolute ranks otherwise.
//
// Invariant: kids are sorted by ascending level, and among the kids on one
// side of the node nearer subtrees come first; every kid's level is below
// the node's level.
type rtNode struct {
	member bool
	parent int // -1 at the root
	level  int
	lo, hi int
	kids   []rtKid
}

// node returns position i's view of the line tree, with indices in positions.
func (l rtLine) node(i int) rtNode {
	lev, w := l.level(i)
	n := rtNode{member: true, parent: -1, level: lev, lo: i, hi: min(i+w, l.m)}
	if i > 0 {
		n.parent = l.rank(i - ((i/w)%l.k)*w)
	}
	cw := 1
	for cl := 0; cl < lev; cl++ {
		for j := 1; j < l.k; j++ {
			c := i + j*cw
			if c >= l.m {
				break
			}
			n.kids = append(n.kids, rtKid{rank: l.rank(c), level: cl, lo: c, hi: min(c+cw, l.m), left: l.dir < 0})
		}
		cw *= l.k
	}
	return n
}

// absolute converts a node's position ranges to absolute rank ranges. The
// line must not wrap around rank p-1.
func (l rtLine) absolute(n rtNode) rtNode {
	conv := func(lo, hi int) (int, int) {
		if l.dir > 0 {
			return l.base + lo, l.base + hi
		}
		return l.base - hi + 1, l.base - lo + 1
	}
	n.lo, n.hi = conv(n.lo, n.hi)
	for i := range n.kids {
		n.kids[i].lo, n.kids[i].hi = conv(n.kids[i].lo, n.kids[i].hi)
	}
	return n
}

// rtRelative returns rank r's node of the k-nomial tree over the relative
// ranks 0..m-1 (relative rank v is rank (root+v) mod p). Ranks whose relative
// rank is m or more are not members. Indices are relative ranks.
func rtRelative(p, m, root, k, r int) rtNode {
	l := rtLine{base: root, dir: 1, m: m, k: k, p: p}
	v := l.pos(r)
	if v >= m {
		return rtNode{parent: -1}
	}
	return l.node(v)
}

// rtTwoSided returns rank r's node of an order-preserving k-nomial tree over
// ranks 0..p-1 rooted at root, with indices in absolute ranks.
//
// The root and the larger side of it form the main line, a k-nomial tree
// growing away from the root; the other side forms a second k-nomial tree
// (mirrored, rooted next to the root) that hangs off the root as one more
// child. Every subtree is then a contiguous range of absolute ranks, so a
// reduction can combine in rank order and a gather or scatter moves one
// contiguous block per message, whatever the root. With k = 2 the depth is
// ⌈lg p⌉, as for the classic binomial tree over relative ranks, because the
// smaller side has at most (p-1)/2 ranks.
//
//	p=6, root=2 (k=2):  main line 2..5    2 ─┬─ 3
//	                                         ├─ 4 ── 5
//	                    other side 1..0      └─ 1 ── 0
func rtTwoSided(p, root, k, r int) rtNode {
	main := rtLine{base: root, dir: 1, m: p - root, k: k, p: p}
	extra := rtLine{base: root - 1, dir: -1, m: root, k: k, p: p}
	if root+1 > p-root {
		main = rtLine{base: root, dir: -1, m: root + 1, k: k, p: p}
		extra = rtLine{base: root + 1, dir: 1, m: p - 1 - root, k: k, p: p}
	}
	inMain := (main.dir > 0) == (r >= root) || r == root
	if !inMain {
		n := extra.absolute(extra.node(extra.pos(r)))
		if n.parent < 0 {
			n.parent = root
		}
		return n
	}
	n := main.absolute(main.node(main.pos(r)))
	if r == root && extra.m > 0 {
		e := extra.absolute(extra.node(0))
		kid := rtKid{rank: extra.rank(0), level: e.level, lo: e.lo, hi: e.hi, left: extra.dir < 0}
		at := len(n.kids)
		for i, c := range n.kids {
			if c.level > kid.level {
				at = i
				break
			}
		}
		n.kids = slices.Insert(n.kids, at, kid)
		n.lo, n.hi = 0, p
		n.level = max(n.level, kid.level+1)
	}
	return n
}

// rtInOrder returns rank r's node of the in-order binary tree over ranks
// 0..p-1 rooted at root: the root's left subtree is a balanced in-order tree
// over [0, root) and its right one over [root+1, p); a balanced tree over
// [lo, hi) is rooted at lo+(hi-lo)/2. Every subtree is a contiguous range of
// ranks with its root inside, lower ranks to the left. A node's level is the
// height of its subtree (⌊lg size⌋); the root is one above its children.
//
//	p=7, root=3:   3 ─┬─ 1 ─┬─ 0       p=5, root=0:  0 ── 3 ─┬─ 2 ── 1
//	                  │     └─ 2                             └─ 4
//	                  └─ 5 ─┬─ 4
//	                        └─ 6
func rtInOrder(p, root, r int) rtNode {
	height := func(lo, hi int) int { return bits.Len(uint(hi-lo)) - 1 }
	kid := func(lo, hi int, left bool) (rtKid, bool) {
		if lo >= hi {
			return rtKid{}, false
		}
		return rtKid{rank: lo + (hi-lo)/2, level: height(lo, hi), lo: lo, hi: hi, left: left}, true
	}
	node := func(parent, lo, hi, mid int) rtNode {
		n := rtNode{member: true, parent: parent, lo: lo, hi: hi}
		for _, side := range [2][2]int{{lo, mid}, {mid + 1, hi}} {
			if c, ok := kid(side[0], side[1], side[0] == lo); ok {
				n.kids = append(n.kids, c)
				n.level = max(n.level, c.level+1)
			}
		}
		slices.SortStableFunc(n.kids, func(a, b rtKid) int { return a.level - b.level })
		return n
	}
	if r == root {
		return node(-1, 0, p, root)
	}
	lo, hi, parent := 0, root, root
	if r > root {
		lo, hi = root+1, p
	}
	for {
		mid := lo + (hi-lo)/2
		if r == mid {
			return node(parent, lo, hi, mid)
		}
		parent = mid
		if r < mid {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
}

// rtRounds ends rounds, adding the caller's local operations (first) to the
// first round it ends.
type rtRounds struct {
	b       *schedule.Builder
	first   func()
	emitted bool
}

func (r *rtRounds) end() {
	if !r.emitted && r.first != nil {
		r.first()
	}
	r.emitted = true
	r.b.EndRound()
}

// rtScatter emits a tree scatter (or broadcast) for node: receive the
// node's range [lo, hi) from the parent, then send each child its range, the
// farthest (highest level) children first, one round per level. reg maps an
// index range to this rank's region holding it. first, if not nil, adds
// local operations to the first round (after its receive).
func rtScatter(b *schedule.Builder, n rtNode, reg func(lo, hi int) schedule.Region, first func()) {
	if !n.member {
		return
	}
	rr := rtRounds{b: b, first: first}
	end := rr.end
	if n.parent >= 0 {
		b.Recv(n.parent, reg(n.lo, n.hi))
		end()
	}
	for i := len(n.kids) - 1; i >= 0; {
		lev := n.kids[i].level
		for ; i >= 0 && n.kids[i].level == lev; i-- {
			c := n.kids[i]
			b.Send(c.rank, reg(c.lo, c.hi))
		}
		end()
	}
	if !rr.emitted {
		end()
	}
}

// rtGather emits a tree gather for node: receive the children's ranges level
// by level (nearest first), then send the node's range [lo, hi) to the
// parent. reg and first are as for rtScatter.
func rtGather(b *schedule.Builder, n rtNode, reg func(lo, hi int) schedule.Region, first func()) {
	if !n.member {
		return
	}
	rr := rtRounds{b: b, first: first}
	end := rr.end
	for i := 0; i < len(n.kids); {
		lev := n.kids[i].level
		for ; i < len(n.kids) && n.kids[i].level == lev; i++ {
			c := n.kids[i]
			b.Recv(c.rank, reg(c.lo, c.hi))
		}
		end()
	}
	if n.parent >= 0 {
		b.Send(n.parent, reg(n.lo, n.hi))
	}
	end()
}

// rtSegment returns the segment length in elements of pipelined algorithms:
// p.Segment, or 64 KiB worth of elements.
func rtSegment(p *Params) int {
	if p.Segment > 0 {
		return p.Segment
	}
	es := max(p.ElemSize, 1)
	return max(64<<10/es, 1)
}

// rtSegs returns the number of segments of seg elements covering n elements.
func rtSegs(n, seg int) int { return (n + seg - 1) / seg }

// rtSegRegion returns segment s of region r cut into segments of seg elements.
func rtSegRegion(r schedule.Region, s, seg int) schedule.Region {
	off := s * seg
	return r.Sub(off, min(seg, r.Len-off))
}

// rtReduce emits a segmented tree reduction for node with segments of seg
// elements; the result lands in the root's receive buffer.
func rtReduce(b *schedule.Builder, p *Params, n rtNode, seg int) {
	rtReduceStreams(b, []rtRedStream{{node: n, in: p.input(), out: schedule.RecvBuf(0, p.Count)}}, seg)
}

// rtRedStream is one rank's part in one tree of rtReduceStreams: its node,
// the part of its input the tree reduces (in), and at the tree's root where
// the result goes (out). A relay root (relay) adds no input of its own: it
// receives its kids' segments straight into out (it must have one kid).
type rtRedStream struct {
	node    rtNode
	in, out schedule.Region
	relay   bool
}

// rtReduceStreams emits segmented tree reductions over several trees at
// once (each stream its own data), with segments of seg elements.
//
// Steps are global labels shared by both ends of every message: a node sends
// segment s to its parent at step s+level, so the parent receives it at that
// step too. Every rank handles its steps in increasing order, one round a
// step, and every message has the same label at both ends, so the schedule
// cannot deadlock; since a child's level is below its parent's, a segment
// is complete before it is forwarded. Within a step the streams are emitted
// in order (so two messages between the same pair of ranks match) and a
// stream's pieces are combined (after every stream's messages are posted)
// in the kids' order, a left kid as left
// operand: contributions stay in rank order when every subtree is a
// contiguous rank range and, per side, nearer kids have lower levels (or
// come first on the same level).
func rtReduceStreams(b *schedule.Builder, streams []rtRedStream, seg int) {
	type state struct {
		rtRedStream
		acc  schedule.Region
		tmp  []schedule.Region
		seg  int
		nseg int
	}
	var ss []state
	first, last := 0, -1
	for _, st := range streams {
		n := st.node
		cnt := st.in.Len
		if st.relay {
			cnt = st.out.Len
		}
		if !n.member || cnt == 0 {
			continue
		}
		x := state{rtRedStream: st, seg: max(min(seg, cnt), 1)}
		x.nseg = rtSegs(cnt, x.seg)
		root := n.parent < 0
		x.acc = st.in
		switch {
		case root:
			x.acc = st.out
		case len(n.kids) > 0:
			x.acc = b.Alloc(cnt)
		}
		lo, hi := n.level, x.nseg-1+n.level
		if len(n.kids) > 0 {
			lo = n.kids[0].level
			if root {
				hi = x.nseg - 1 + n.kids[len(n.kids)-1].level
			}
		} else if root {
			b.Copy(x.acc, st.in)
			lo, hi = first, first
		}
		if !st.relay {
			// Receive buffers: one per kid when pipelining; unsegmented,
			// kids of different levels never arrive in the same step and
			// share.
			x.tmp = make([]schedule.Region, len(n.kids))
			var slots []schedule.Region
			for i, c := range n.kids {
				slot := i
				if x.nseg == 1 {
					slot = 0
					for j := i - 1; j >= 0 && n.kids[j].level == c.level; j-- {
						slot++
					}
				}
				for len(slots) <= slot {
					slots = append(slots, b.Alloc(x.seg))
				}
				x.tmp[i] = slots[slot]
			}
		}
		if last < first || lo < first {
			first = lo
		}
		last = max(last, hi)
		ss = append(ss, x)
	}
	for t := first; t <= last; t++ {
		for i := range ss {
			x := &ss[i]
			n := x.node
			for j, c := range n.kids {
				if s := t - c.level; s >= 0 && s < x.nseg {
					dst := rtSegRegion(x.acc, s, x.seg)
					if !x.relay {
						dst = x.tmp[j].Sub(0, dst.Len)
					}
					b.Recv(c.rank, dst)
				}
			}
			if s := t - n.level; n.parent >= 0 && s >= 0 && s < x.nseg {
				b.Send(n.parent, rtSegRegion(x.acc, s, x.seg))
			}
		}
		for i := range ss {
			x := &ss[i]
			if x.relay {
				continue
			}
			for j, c := range x.node.kids {
				s := t - c.level
				if s < 0 || s >= x.nseg {
					continue
				}
				dst := rtSegRegion(x.acc, s, x.seg)
				if j == 0 {
					b.Copy(dst, rtSegRegion(x.in, s, x.seg))
				}
				b.ReduceOrdered(dst, x.tmp[j].Sub(0, dst.Len), c.left)
			}
		}
		b.EndRound()
	}
}

// rtStream is one rank's part in a pipelined broadcast down one tree.
type rtStream struct {
	member bool
	parent int // -1 at the tree's root
	depth  int // 0 at the tree's root
	kids   []int
	data   schedule.Region
}

// rtBcastStreams emits pipelined broadcasts down several trees at once (each
// stream its own data), with segments of seg elements. A node at depth d
// receives segment s at step s+d-1 and sends it to all its children at step
// s+d; both ends of a message use the same step and every rank walks the
// steps in order, so streams sharing ranks cannot deadlock whatever their
// depths. Within a step the streams are emitted in order, so two messages
// between the same pair of ranks match.
func rtBcastStreams(b *schedule.Builder, streams []rtStream, seg int) {
	first, last := -1, -1
	nsegs := make([]int, len(streams))
	for i, st := range streams {
		if !st.member || st.data.Len == 0 {
			continue
		}
		nsegs[i] = rtSegs(st.data.Len, seg)
		lo, hi := st.depth, st.depth+nsegs[i]-1
		if st.parent >= 0 {
			lo--
		}
		if len(st.kids) == 0 {
			hi--
		}
		if first < 0 || lo < first {
			first = lo
		}
		last = max(last, hi)
	}
	if first < 0 {
		return
	}
	for t := first; t <= last; t++ {
		for i, st := range streams {
			if nsegs[i] == 0 {
				continue
			}
			if s := t - st.depth + 1; st.parent >= 0 && s >= 0 && s < nsegs[i] {
				b.Recv(st.parent, rtSegRegion(st.data, s, seg))
			}
			if s := t - st.depth; s >= 0 && s < nsegs[i] {
				for _, c := range st.kids {
					b.Send(c, rtSegRegion(st.data, s, seg))
				}
			}
		}
		b.EndRound()
	}
}
