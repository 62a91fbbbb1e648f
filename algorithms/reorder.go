package algorithms

import "github.com/scoll/scoll/schedule"

// Sack's non-minimal recursive doubling (thesis sec. 3.4.1): allgather stages
// taken in any order S of the rank bits, made correct by one extra exchange
// before the allgather (after the reduce-scatter) that puts every block where
// the reordered stages will carry it to its place in rank order.
//
// With V = 2^L participants ("virtual ranks"), stage s of the allgather pairs
// virtual rank u with u XOR 2^S[s]. Virtual rank u starts with the block of
// position σ(u), where bit s of σ(u) is bit S[s] of u; after stage s it holds
// the aligned run of 2^(s+1) positions around σ(u), so every message is one
// contiguous run of the gathered buffer. Distance doubling (S[s] = s) needs
// no exchange; distance halving (S[s] = L−1−s) makes σ the bit reversal; the
// torus order interleaves the dimensions of a process grid.
//
// Any rank count P: with V the largest power of two ≤ P and rem = P − V, the
// first 2·rem ranks pair up (2u, 2u+1) as virtual rank u, which the even rank
// stands for; the odd rank sends its block in the exchange stage and receives
// the whole result from its partner at the end (two stages more, as in
// MPICH's old recursive-doubling workaround; Sack borrows the variant that
// defers a missing partner's stage instead). Positions are virtual ranks, so
// a position covers the one or two blocks of its ranks.

// rdPlan is a stage order of the reordered recursive doubling over P
// items (blocks, or sections of one lane), run by participants in the order
// of a line of ranks: the participant at line place t folds like item t.
type rdPlan struct {
	P, V, rem int
	S         []int // S[s]: the virtual-rank bit flipped in allgather stage s
	// rankAt(t) is the rank at place t of the line, place(r) rank r's
	// place; nil for rank order.
	rankAt, place func(int) int
}

// newRDPlan returns the plan for P ≥ 1 items with stage order S over lg V
// bits, or distance halving when S is nil, in rank order.
func newRDPlan(P int, S []int) *rdPlan {
	V := floorPow2(P)
	pl := &rdPlan{P: P, V: V, rem: P - V, S: S}
	if S == nil {
		L := ceilLog2(V)
		pl.S = make([]int, L)
		for s := range L {
			pl.S[s] = L - 1 - s
		}
	}
	return pl
}

// onLine sets the participants' order: line[t] is the rank at place t and
// at[r] rank r's place.
func (pl *rdPlan) onLine(line, at []int) *rdPlan {
	pl.rankAt = func(t int) int { return line[t] }
	pl.place = func(r int) int { return at[r] }
	return pl
}

// rdHalvingPlan is distance halving: S[s] = lg V − 1 − s.
func rdHalvingPlan(p *Params) *rdPlan { return newRDPlan(p.Size, nil) }

// rdOptimalPlan is the torus order of p's grid when its dimensions are powers
// of two, else distance halving.
func rdOptimalPlan(p *Params) *rdPlan {
	if S, ok := torusStages(p.grid()); ok && isPow2(p.Size) {
		return newRDPlan(p.Size, S)
	}
	return newRDPlan(p.Size, nil)
}

// sigma returns the position virtual rank u starts the allgather with.
func (pl *rdPlan) sigma(u int) int {
	q := 0
	for s, bit := range pl.S {
		q |= (u >> bit & 1) << s
	}
	return q
}

// sigmaInv returns the virtual rank that starts with position q.
func (pl *rdPlan) sigmaInv(q int) int {
	u := 0
	for s, bit := range pl.S {
		u |= (q >> s & 1) << bit
	}
	return u
}

// first returns the lowest item of position q (first(V) = P): the items of
// positions [q0, q1) are [first(q0), first(q1)). Participants fold the same
// way over the line: u stands for places first(u) and, when u < rem,
// first(u)+1.
func (pl *rdPlan) first(q int) int {
	if q < pl.rem {
		return 2 * q
	}
	return q + pl.rem
}

// fold returns the position of item (or place) i and whether it is the
// position's first.
func (pl *rdPlan) fold(i int) (q int, first bool) {
	if i < 2*pl.rem {
		return i / 2, i%2 == 0
	}
	return i - pl.rem, true
}

// rank returns the rank that stands for participant u.
func (pl *rdPlan) rank(u int) int {
	if pl.rankAt == nil {
		return pl.first(u)
	}
	return pl.rankAt(pl.first(u))
}

// idle returns the other rank participant u < rem stands for.
func (pl *rdPlan) idle(u int) int {
	if pl.rankAt == nil {
		return pl.first(u) + 1
	}
	return pl.rankAt(pl.first(u) + 1)
}

// part returns rank r's participant and whether r stands for it.
func (pl *rdPlan) part(r int) (u int, owner bool) {
	if pl.place != nil {
		r = pl.place(r)
	}
	return pl.fold(r)
}

// holder returns the rank whose participant starts the allgather with (and
// ends the reduce-scatter with) item i.
func (pl *rdPlan) holder(i int) int {
	q, _ := pl.fold(i)
	return pl.rank(pl.sigmaInv(q))
}

// held returns the items rank r starts the allgather with: none when r
// stands for no participant.
func (pl *rdPlan) held(r int) (i0, i1 int) {
	u, owner := pl.part(r)
	if !owner {
		return 0, 0
	}
	q := pl.sigma(u)
	return pl.first(q), pl.first(q + 1)
}

// rdLane is one recursive doubling over sections [off, off+P) of a
// sections layout; several lanes run at once on disjoint sections.
type rdLane struct {
	pl  *rdPlan
	x   *sections
	off int
}

// blockLane is recursive doubling over whole blocks (one section each).
func blockLane(pl *rdPlan, l redscatLayout) []rdLane {
	return []rdLane{{pl: pl, x: &sections{l: l, k: 1}}}
}

// singleLane adapts a one-lane plan.
func singleLane(plan func(*Params) *rdPlan) func(*Params, redscatLayout) []rdLane {
	return func(p *Params, l redscatLayout) []rdLane { return blockLane(plan(p), l) }
}

// runs returns the regions of base holding positions [q0, q1).
func (ln *rdLane) runs(base schedule.Region, q0, q1 int) []schedule.Region {
	return ln.x.runs(base, ln.off+ln.pl.first(q0), ln.off+ln.pl.first(q1))
}

// exchange reports whether the plan needs the reordering exchange stage.
func (pl *rdPlan) exchange() bool {
	if pl.rem > 0 || pl.rankAt != nil {
		return true
	}
	for s, bit := range pl.S {
		if bit != s {
			return true
		}
	}
	return false
}

// rdHolder and rdHeld describe where the sections of lanes start the
// allgather, for laneExchange.
func rdHolder(lanes []rdLane) func(s int) int {
	return func(s int) int {
		ln := &lanes[s/lanes[0].pl.P]
		return ln.pl.holder(s - ln.off)
	}
}

func rdHeld(lanes []rdLane) func(b, r int) (s0, s1 int) {
	return func(b, r int) (int, int) {
		ln := &lanes[b]
		i0, i1 := ln.pl.held(r)
		return ln.off + i0, ln.off + i1
	}
}

// laneExchange is the reordering exchange before an allgather over k·P
// sections in k lanes (k sections per block): section s = k·r + j of rank
// r's block own goes to holder(s), which stores it at its place in base;
// held(b, r) is the range of section ids of lane b that rank r starts with.
func laneExchange(b *schedule.Builder, x *sections, r int, own, base schedule.Region, holder func(s int) int, held func(b, r int) (s0, s1 int)) {
	k := x.k
	c := x.l.count(r)
	var copies [][2]schedule.Region
	for j := range k {
		s := k*r + j
		sec := own.Sub(secOff(c, k, j), secLen(c, k, j))
		if h := holder(s); h != r {
			b.Send(h, sec)
		} else {
			copies = append(copies, [2]schedule.Region{x.region(base, s), sec})
		}
	}
	for bk := range k {
		s0, s1 := held(bk, r)
		for s := s0; s < s1; s++ {
			if i := s / k; i != r {
				b.Recv(i, x.region(base, s))
			}
		}
	}
	for _, cp := range copies {
		b.Copy(cp[0], cp[1])
	}
	b.EndRound()
}

// laneReturn is laneExchange's mirror after a reduce-scatter: the sections
// rank r ends with in acc go to their owners, and r receives the sections
// of its block into out.
func laneReturn(b *schedule.Builder, x *sections, r int, acc, out schedule.Region, holder func(s int) int, held func(b, r int) (s0, s1 int)) {
	k := x.k
	for bk := range k {
		s0, s1 := held(bk, r)
		for s := s0; s < s1; s++ {
			if i := s / k; i != r {
				b.Send(i, x.region(acc, s))
			}
		}
	}
	var copies [][2]schedule.Region
	c := x.l.count(r)
	for j := range k {
		s := k*r + j
		dst := out.Sub(secOff(c, k, j), secLen(c, k, j))
		if h := holder(s); h != r {
			b.Recv(h, dst)
		} else {
			copies = append(copies, [2]schedule.Region{dst, x.region(acc, s)})
		}
	}
	for _, cp := range copies {
		b.Copy(cp[0], cp[1])
	}
	b.EndRound()
}

// rdAllgatherStages emits the allgather stages of lanes for rank r, which
// starts with the sections rdHeld gives at their places in base, then
// sends each lane's result to the rank its participant stands for. When
// first is set (one lane, no exchange), stage 0 sends first instead and
// copies it to firstCopy. A partner equal to skip already has the result
// and is left out.
func rdAllgatherStages(b *schedule.Builder, lanes []rdLane, r int, base schedule.Region, first, firstCopy *schedule.Region, skip int) {
	stages := 0
	for i := range lanes {
		stages = max(stages, len(lanes[i].pl.S))
	}
	for s := range stages {
		for i := range lanes {
			ln := &lanes[i]
			pl := ln.pl
			u, owner := pl.part(r)
			if !owner || s >= len(pl.S) {
				continue
			}
			peer := pl.rank(u ^ 1<<pl.S[s])
			a := pl.sigma(u) &^ (1<<s - 1)
			pa := a ^ 1<<s
			if first != nil && s == 0 {
				b.Send(peer, *first)
			} else {
				for _, reg := range ln.runs(base, a, a+1<<s) {
					b.Send(peer, reg)
				}
			}
			for _, reg := range ln.runs(base, pa, pa+1<<s) {
				b.Recv(peer, reg)
			}
			if first != nil && s == 0 {
				b.Copy(*firstCopy, *first)
			}
		}
		b.EndRound()
	}
	for i := range lanes {
		ln := &lanes[i]
		pl := ln.pl
		u, owner := pl.part(r)
		switch {
		case !owner && r != skip:
			for _, reg := range ln.runs(base, 0, pl.V) {
				b.Recv(pl.rank(u), reg)
			}
		case owner && u < pl.rem && pl.idle(u) != skip:
			for _, reg := range ln.runs(base, 0, pl.V) {
				b.Send(pl.idle(u), reg)
			}
		}
	}
	b.EndRound()
}

// rdReduceScatterStages emits the fold and the reduce-scatter stages of
// lanes for rank r on the vector in: a rank a participant stands for sends
// the lane's part of its vector; a participant ends with the reduced
// sections rdHeld gives at their offsets in acc (which may be in).
func rdReduceScatterStages(b *schedule.Builder, lanes []rdLane, r int, in, acc schedule.Region) {
	src := make([]schedule.Region, len(lanes)) // where each lane's partials are
	stages := 0
	for i := range lanes {
		ln := &lanes[i]
		pl := ln.pl
		stages = max(stages, len(pl.S))
		src[i] = in
		u, owner := pl.part(r)
		switch {
		case !owner:
			for _, reg := range ln.runs(in, 0, pl.V) {
				b.Send(pl.rank(u), reg)
			}
		case u < pl.rem:
			idle := pl.idle(u)
			for _, reg := range ln.runs(acc, 0, pl.V) {
				b.RecvReduce(idle, reg, in.Sub(reg.Off-acc.Off, reg.Len), idle > r)
			}
			src[i] = acc
		}
	}
	b.EndRound()
	for s := stages - 1; s >= 0; s-- {
		for i := range lanes {
			ln := &lanes[i]
			pl := ln.pl
			u, owner := pl.part(r)
			if !owner || s >= len(pl.S) {
				continue
			}
			v := u ^ 1<<pl.S[s]
			peer := pl.rank(v)
			keep := pl.sigma(u) &^ (1<<s - 1)
			give := keep ^ 1<<s
			for _, reg := range ln.runs(src[i], give, give+1<<s) {
				b.Send(peer, reg)
			}
			for _, reg := range ln.runs(acc, keep, keep+1<<s) {
				b.RecvReduce(peer, reg, src[i].Sub(reg.Off-acc.Off, reg.Len), v > u)
			}
			src[i] = acc
		}
		b.EndRound()
	}
}
