package algorithms

import (
	"math/bits"
	"slices"

	"github.com/scoll/scoll/schedule"
)

// Chain: Moody, Ahn and de Supinski's collectives on a group kept as a
// chain ("Exascale algorithms for generalized MPI_Comm_split", EuroMPI
// 2011, sec. 2), registered for bcast, reduce, allreduce, gather, scatter,
// scan and exscan. A rank addresses only its neighbours and the partners
// whose addresses travel with the data (Fig. 1), so it holds O(1)
// addresses during and after the call, never the member table: the path
// of communicators made with scoll.WithChainGroup (internal/chain runs it,
// on any communicator when named).
//
// The stand-in schedules below are the chain's data messages: its
// address-only messages and the 8-byte address header of each message are
// left out, as in the costs. n ranks, m bytes per rank, root r; the root
// sees two arms, the ranks r−1 … 0 and r+1 … n−1, A and B long.
//
//	scan        Fig. 1: in round k rank i sends its partial scan to i+2^k;
//	            ⌈lg n⌉ rounds
//	exscan      the same, keeping the received values apart
//	allreduce   the double scan, both directions in each round; the result
//	            is left ⊕ own ⊕ right (floating Sum, Prod and user
//	            operators run a reduce and a bcast natively, so that every
//	            rank gets the same bits)
//	reduce,     on each arm the binomial tree by distance from the root: in
//	gather      round k the ranks at odd multiples of 2^k send toward the
//	            root, 2^k closer
//	bcast,      on each arm the binomial tree by doubling from the root: in
//	scatter     round k the ranks within 2^k of the root send 2^k farther
//	            out; a scatter's message carries the blocks of every 2^(k+1)-th
//	            rank beyond, packed
//
// Costs (exact on the critical path, the root's two arms serialising on its
// ports; a_k is the number of arms with a rank 2^k from the root):
//
//	scan        ⌈lg n⌉(α + mβ + mγ)
//	exscan      ⌈lg n⌉(α + mβ) + (2⌈lg n⌉ − 1)mγ
//	reduce      Σ_k a_k(α + mβ + mγ)
//	bcast       Σ_k a_k(α + mβ)
//	gather      Σ_k a_k α + (n−1)mβ
//	scatter     Σ_k a_k α + (n−1)mβ
//	allreduce   (2⌈lg n⌉ − 1)(α + mβ) + about 3⌈lg n⌉mγ (chainAllreduceCost)
//
// Source: Moody, Ahn, de Supinski, EuroMPI 2011, sec. 2.

// chainArms returns, for rank r of a chain of n ranks rooted at root, the
// node of the tree whose two arms are the binomial trees by distance from
// the root (the reduce and gather tree; rtLine's binomial tree on each
// arm). The root's kids on both arms are merged by level, the left arm's
// first.
func chainArms(n, root, r int) rtNode {
	left := rtLine{base: root, dir: -1, m: root + 1, k: 2, p: n}
	right := rtLine{base: root, dir: 1, m: n - root, k: 2, p: n}
	switch {
	case r < root:
		return left.absolute(left.node(left.pos(r)))
	case r > root:
		return right.absolute(right.node(right.pos(r)))
	}
	l, rt := left.absolute(left.node(0)), right.absolute(right.node(0))
	node := rtNode{member: true, parent: -1, level: max(l.level, rt.level), lo: 0, hi: n,
		kids: append(l.kids, rt.kids...)}
	slices.SortStableFunc(node.kids, func(a, b rtKid) int { return a.level - b.level })
	return node
}

// chainSpreadLevels is above every round of a spread (the bcast tree), so
// that round k of a kid's message is its level chainSpreadLevels−k.
const chainSpreadLevels = 64

// chainSpread returns, for rank r, the node of the bcast tree: on each arm
// the rank at distance d > 0 receives from d − 2^⌊lg d⌋ and sends to
// d + 2^k for every k with 2^k > d, in increasing k; the root sends to 2^k
// on both arms in round k. A kid's level is chainSpreadLevels − k, so that
// rtScatter, which serves the highest level last, sends in the chain's
// order. Ranges are not set (a bcast sends the whole buffer).
func chainSpread(n, root, r int) rtNode {
	node := rtNode{member: true, parent: -1}
	type arm struct{ dir, max int }
	var arms []arm
	d := 0
	switch {
	case r < root:
		arms, d = []arm{{-1, root}}, root-r
	case r > root:
		arms, d = []arm{{1, n - 1 - root}}, r-root
	default:
		arms = []arm{{-1, root}, {1, n - 1 - root}}
	}
	if d > 0 {
		hb := 1 << (bits.Len(uint(d)) - 1)
		node.parent = root + arms[0].dir*(d-hb)
	}
	for k := 0; 1<<k <= n; k++ {
		for _, a := range arms {
			if 1<<k > d && d+1<<k <= a.max {
				node.kids = append(node.kids, rtKid{rank: root + a.dir*(d+1<<k), level: chainSpreadLevels - k})
			}
		}
	}
	slices.SortStableFunc(node.kids, func(a, b rtKid) int { return a.level - b.level })
	return node
}

// chainReduce is the chain's reduce: the two arms' binomial trees by
// distance, combined in rank order.
func chainReduce(b *schedule.Builder, p *Params) {
	rtReduce(b, p, chainArms(p.Size, p.Root, p.Rank), p.Count)
}

// chainBcast is the chain's bcast: the binomial trees by doubling.
func chainBcast(b *schedule.Builder, p *Params) {
	buf := bcastBuf(p)
	rtScatter(b, chainSpread(p.Size, p.Root, p.Rank), func(lo, hi int) schedule.Region { return buf }, nil)
}

// chainGather is the chain's gather: the reduce's tree, each rank sending
// the contiguous blocks of its subtree.
func chainGather(b *schedule.Builder, p *Params) {
	gatherTree(b, p, chainArms(p.Size, p.Root, p.Rank))
}

// chainScatter is the chain's scatter. A rank at distance d > 0 from the
// root receives, in its first round, the blocks of the distances d, d+s,
// d+2s, … on its arm (s = 2^(⌊lg d⌋+1)) in one message, keeps the first
// and packs the others into the messages of its later rounds: to d + 2^k
// the blocks of d + 2^k, d + 2^k + 2^(k+1), …. The root packs every
// bundle of more than one block from its send buffer first.
func chainScatter(b *schedule.Builder, p *Params) {
	n, P, r, root := p.Count, p.Size, p.Rank, p.Root
	node := chainSpread(P, root, r)
	// dist returns the distance of rank q from the root, and the last
	// distance on q's arm.
	dist := func(q int) (f, top int) {
		if q < root {
			return root - q, root
		}
		return q - root, P - 1 - root
	}
	d, top := dist(r)
	// This rank's blocks: the root's are its send buffer's, indexed by
	// distance on each arm; another rank's are those it receives, of the
	// distances d, d+step, d+2·step, … on its arm.
	var held schedule.Region
	step := 1
	if r != root {
		step = 2 << (bits.Len(uint(d)) - 1)
		if len(node.kids) == 0 { // a leaf gets its own block alone
			held = schedule.RecvBuf(0, n)
			b.Recv(node.parent, held)
		} else {
			held = b.Alloc(((top-d)/step + 1) * n)
			b.Recv(node.parent, held)
			b.Copy(schedule.RecvBuf(0, n), held.Sub(0, n))
		}
	}
	block := func(to, i int) schedule.Region {
		if r != root {
			return held.Sub(i*n, n)
		}
		q := root + i
		if to < root {
			q = root - i
		}
		return schedule.SendBuf(q*n, n)
	}
	// Each kid's message, in node.kids' order: the blocks of the distances
	// f, f + 2^(k+1), … up to its arm's end, k its round.
	msgs := make([]schedule.Region, len(node.kids))
	for i, kid := range node.kids {
		f, end := dist(kid.rank)
		every := 2 << (chainSpreadLevels - kid.level)
		count := (end-f)/every + 1
		first := (f - d) / step
		if count == 1 {
			msgs[i] = block(kid.rank, first)
			continue
		}
		msgs[i] = b.Alloc(count * n)
		for j := range count {
			b.Copy(msgs[i].Sub(j*n, n), block(kid.rank, first+j*every/step))
		}
	}
	if r == root && !p.InPlaceAt(r) {
		b.Copy(schedule.RecvBuf(0, n), schedule.SendBuf(root*n, n))
	}
	b.EndRound()
	for i := len(node.kids) - 1; i >= 0; { // the chain's order: the nearest kid first
		lev := node.kids[i].level
		for ; i >= 0 && node.kids[i].level == lev; i-- {
			b.Send(node.kids[i].rank, msgs[i])
		}
		b.EndRound()
	}
}

// chainScan is the chain's scan and exscan (Fig. 1 to the right): in round
// k rank i sends its inclusive partial result (of the 2^k ranks ending with
// it) to i+2^k and folds the one of i−2^k in on its left; an exscan also
// keeps the received values apart, its result.
func chainScan(b *schedule.Builder, p *Params) {
	n, P, r := p.Count, p.Size, p.Rank
	in, out := p.input(), schedule.RecvBuf(0, n)
	excl := p.Coll == schedule.Exscan
	if P == 1 {
		if !excl && in != out {
			b.Copy(out, in)
			b.EndRound()
		}
		return
	}
	acc := out // the inclusive partial result
	if excl {
		acc = b.Alloc(n)
	}
	tmp := b.Alloc(n)
	got := false // an exscan has received a value
	for d := 1; d < P; d *= 2 {
		first := d == 1
		if r+d < P {
			if first {
				b.Send(r+d, in)
			} else {
				b.Send(r+d, acc)
			}
		}
		if r-d >= 0 {
			b.Recv(r-d, tmp)
		}
		if first && acc != in {
			b.Copy(acc, in)
		}
		if r-d >= 0 {
			switch {
			case excl && !got:
				b.Copy(out, tmp)
			case excl:
				b.ReduceLeft(out, tmp)
			}
			got = true
			b.ReduceLeft(acc, tmp)
		}
		b.EndRound()
	}
}

// chainAllreduce is the chain's allreduce: the double scan, in round k rank
// i sending its left-to-right partial result to i+2^k and its right-to-left
// one to i−2^k, then left ⊕ own ⊕ right.
func chainAllreduce(b *schedule.Builder, p *Params) {
	n, P, r := p.Count, p.Size, p.Rank
	in, accL := p.input(), schedule.RecvBuf(0, n)
	if P == 1 {
		if in != accL {
			b.Copy(accL, in)
			b.EndRound()
		}
		return
	}
	accR, exR, tmpL, tmpR := b.Alloc(n), b.Alloc(n), b.Alloc(n), b.Alloc(n)
	got := false // exR holds a value
	for d := 1; d < P; d *= 2 {
		first := d == 1
		srcL, srcR := accL, accR
		if first {
			srcL, srcR = in, in
		}
		hasL, hasR := r-d >= 0, r+d < P
		if hasR {
			b.Send(r+d, srcL)
			b.Recv(r+d, tmpR)
		}
		if hasL {
			b.Send(r-d, srcR)
			b.Recv(r-d, tmpL)
		}
		if first {
			b.Copy(accR, in)
			if in != accL {
				b.Copy(accL, in)
			}
		}
		if hasL {
			b.ReduceLeft(accL, tmpL)
		}
		if hasR {
			b.Reduce(accR, tmpR)
			if got {
				b.Reduce(exR, tmpR)
			} else {
				b.Copy(exR, tmpR)
			}
			got = true
		}
		if 2*d >= P && got {
			b.Reduce(accL, exR)
		}
		b.EndRound()
	}
}

// chainArmHops returns Σ_k a_k: the rounds in which the root sends or
// receives on each of its arms (⌊lg A⌋+1 for an arm of A ranks).
func chainArmHops(p *Params) float64 {
	return float64(bits.Len(uint(p.Root)) + bits.Len(uint(p.Size-1-p.Root)))
}

func chainCost(p *Params) Cost {
	m := p.bytes(p.Count)
	R := float64(ceilLog2(p.Size))
	switch p.Coll {
	case schedule.Scan:
		return Cost{Alpha: R, Beta: R * m, Gamma: R * m}
	case schedule.Exscan:
		return Cost{Alpha: R, Beta: R * m, Gamma: max(2*R-1, 0) * m}
	case schedule.Allreduce:
		return chainAllreduceCost(p)
	case schedule.Gather, schedule.Scatter:
		return Cost{Alpha: chainArmHops(p), Beta: float64(p.Size-1) * m}
	}
	h := chainArmHops(p)
	c := Cost{Alpha: h, Beta: h * m}
	if p.Coll == schedule.Reduce {
		c.Gamma = h * m
	}
	return c
}

// chainAllreduceCost is the double scan's cost: in each of its ⌈lg n⌉
// rounds but the last the critical ranks send and receive on both sides
// (2α + 2mβ), and they fold three values (left, right, the right's
// exclusive result) but the first, which copies one; the last round runs
// one direction, and the final fold of left ⊕ own ⊕ right adds mγ unless
// n > 3·2^(⌈lg n⌉−2), where it falls on the critical path's last round too:
// (2⌈lg n⌉ − 1)(α + mβ) + (3⌈lg n⌉ − 2 or − 1)mγ.
func chainAllreduceCost(p *Params) Cost {
	if p.Size < 2 {
		return Cost{}
	}
	m := p.bytes(p.Count)
	R := ceilLog2(p.Size)
	g := 3*R - 2
	if 4*p.Size > 3<<R {
		g++
	}
	return Cost{Alpha: float64(2*R - 1), Beta: float64(2*R-1) * m, Gamma: float64(g) * m}
}

// ChainRule is when the chain collectives run natively: blocking calls, on
// any communicator (the ranks in order as the chain); the default on a
// chain communicator that has not learnt its members.
var ChainRule = Rule{Needs: CapBlocking, Prefers: CapChain}

func init() {
	in := Info{Name: Chain, Path: ChainPath, Rule: &ChainRule, Cost: chainCost,
		Doc:    "Moody's chain collectives: a rank addresses its neighbours and the partners the data brings",
		Source: "Moody, Ahn, de Supinski, EuroMPI 2011, sec. 2"}
	for _, x := range []struct {
		build func(*schedule.Builder, *Params)
		colls []schedule.Collective
	}{
		{chainScan, []schedule.Collective{schedule.Scan, schedule.Exscan}},
		{chainAllreduce, []schedule.Collective{schedule.Allreduce}},
		{chainReduce, []schedule.Collective{schedule.Reduce}},
		{chainBcast, []schedule.Collective{schedule.Bcast}},
		{chainGather, []schedule.Collective{schedule.Gather}},
		{chainScatter, []schedule.Collective{schedule.Scatter}},
	} {
		in.Build = x.build
		register(in, x.colls...)
	}
}
