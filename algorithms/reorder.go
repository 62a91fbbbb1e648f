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

// rdLane is one recursive doubling over sections [off, off+P) of a
// sections layout; several lanes run at once on disjoint sections.
type rdLane struct {
	pl  *rdPlan
	x   *sections
	off int
}

// runs returns the regions of base holding positions [q0, q1).
func (ln *rdLane) runs(base schedule.Region, q0, q1 int) []schedule.Region {
	return ln.x.runs(base, ln.off+ln.pl.first(q0), ln.off+ln.pl.first(q1))
}

// all returns the regions of base holding the lane's whole result.
func (ln *rdLane) all(base schedule.Region) []schedule.Region { return ln.runs(base, 0, ln.pl.V) }

// rdLanes are recursive doublings that run at once on the sections of one
// layout: one lane over whole blocks (blockLane), rd-paths' lanes, or a
// hybrid rank's sub-grid lanes. They are a compositeScheme.
type rdLanes []rdLane

// blockLane is recursive doubling over whole blocks (one section each).
func blockLane(pl *rdPlan, l redscatLayout) rdLanes {
	return rdLanes{{pl: pl, x: &sections{l: l, k: 1}}}
}

// singleLane adapts a one-lane plan.
func singleLane(plan func(*Params) *rdPlan) func(*Params, redscatLayout) rdLanes {
	return func(p *Params, l redscatLayout) rdLanes { return blockLane(plan(p), l) }
}

func (ls rdLanes) cut() *sections { return ls[0].x }

func (ls rdLanes) holder(s int) int {
	ln := &ls[s/ls[0].pl.P]
	return ln.pl.holder(s - ln.off)
}

func (ls rdLanes) held(b, r int) (s0, s1 int) {
	ln := &ls[b]
	i0, i1 := ln.pl.held(r)
	return ln.off + i0, ln.off + i1
}

// exchange reports whether the lanes need the reordering exchange.
func (ls rdLanes) exchange() bool { return len(ls) > 1 || ls[0].pl.exchange() }

// stages returns the number of stages of the longest lane.
func (ls rdLanes) stages() int {
	n := 0
	for i := range ls {
		n = max(n, len(ls[i].pl.S))
	}
	return n
}

func (ls rdLanes) rounds() int {
	pl := ls[0].pl
	n := len(pl.S)
	if pl.rem > 0 {
		n++
	}
	return n * len(ls)
}

// positions are the lanes' positions, one space per lane.
func (ls rdLanes) positions() *positions {
	return &positions{
		n: ls[0].pl.V, spaces: len(ls),
		holder: func(s, q int) int { return ls[s].pl.rank(ls[s].pl.sigmaInv(q)) },
		runs:   func(base schedule.Region, s, q0, q1 int) []schedule.Region { return ls[s].runs(base, q0, q1) },
		mine: func(s, r int) (int, bool) {
			u, owner := ls[s].pl.part(r)
			return ls[s].pl.sigma(u), owner
		},
	}
}

// stage calls f for every lane in which rank r takes part in stage s, with
// the rank of its partner, whether the partner's participant is the higher
// one, and the first positions of the runs of 2^s positions that r and the
// partner hold before the allgather's stage s (what the reduce-scatter's
// stage s keeps and gives away).
func (ls rdLanes) stage(r, s int, f func(i, peer int, higher bool, mine, theirs int)) {
	for i := range ls {
		pl := ls[i].pl
		u, owner := pl.part(r)
		if !owner || s >= len(pl.S) {
			continue
		}
		v := u ^ 1<<pl.S[s]
		a := pl.sigma(u) &^ (1<<s - 1)
		f(i, pl.rank(v), v > u, a, a^1<<s)
	}
}

// fold calls f for every lane in which rank r has a partner in the fold of
// the extra ranks: the rank that stands for r (stands false), or the other
// rank r stands for (stands true).
func (ls rdLanes) fold(r int, f func(i, peer int, stands bool)) {
	for i := range ls {
		pl := ls[i].pl
		switch u, owner := pl.part(r); {
		case !owner:
			f(i, pl.rank(u), false)
		case u < pl.rem:
			f(i, pl.idle(u), true)
		}
	}
}

func (ls rdLanes) allgather(b *schedule.Builder, r int, base schedule.Region, skip int) {
	ls.allgatherFrom(b, r, base, nil, nil, skip)
}

// allgatherFrom emits the allgather stages of rank r, which starts with the
// sections held gives at their places in base, then sends each lane's result
// to the rank its participant stands for. When own is set (one lane, no
// exchange), stage 0 sends *own instead and copies it to *mine. A partner
// equal to skip already has the result and is left out.
func (ls rdLanes) allgatherFrom(b *schedule.Builder, r int, base schedule.Region, own, mine *schedule.Region, skip int) {
	for s := range ls.stages() {
		ls.stage(r, s, func(i, peer int, _ bool, a, pa int) {
			if own != nil && s == 0 {
				b.Send(peer, *own)
			} else {
				sendAll(b, peer, ls[i].runs(base, a, a+1<<s))
			}
			recvAll(b, peer, ls[i].runs(base, pa, pa+1<<s))
			if own != nil && s == 0 {
				b.Copy(*mine, *own)
			}
		})
		b.EndRound()
	}
	ls.fold(r, func(i, peer int, stands bool) {
		switch {
		case stands && peer != skip:
			sendAll(b, peer, ls[i].all(base))
		case !stands && r != skip:
			recvAll(b, peer, ls[i].all(base))
		}
	})
	b.EndRound()
}

// reduceScatter emits the fold and the reduce-scatter stages of rank r on
// the vector in: a rank a participant stands for sends the lane's part of
// its vector; a participant ends with the reduced sections held gives at
// their offsets in acc (which may be in).
func (ls rdLanes) reduceScatter(b *schedule.Builder, r int, in, acc schedule.Region) {
	src := make([]schedule.Region, len(ls)) // where each lane's partials are
	for i := range src {
		src[i] = in
	}
	ls.fold(r, func(i, peer int, stands bool) {
		if !stands {
			sendAll(b, peer, ls[i].all(in))
			return
		}
		recvReduceAll(b, peer, ls[i].all(acc), acc, in, peer > r)
		src[i] = acc
	})
	b.EndRound()
	for s := ls.stages() - 1; s >= 0; s-- {
		ls.stage(r, s, func(i, peer int, higher bool, keep, give int) {
			sendAll(b, peer, ls[i].runs(src[i], give, give+1<<s))
			recvReduceAll(b, peer, ls[i].runs(acc, keep, keep+1<<s), acc, src[i], higher)
			src[i] = acc
		})
		b.EndRound()
	}
}

// reorderCost is the single-port accounting of the reordered recursive
// doubling of plan (rd-halving, rd-optimal), or of its mirror when reduces:
// (lg V + 1)·α + ((V−1)/V·N + n)·β [+ (V−1)/V·N·γ], plus α + N·β [+ N·γ]
// when P is not a power of two; an allgather whose stages keep rank order
// skips the exchange (α + nβ).
func reorderCost(plan func(*Params) *rdPlan, reduces bool) func(*Params) Cost {
	return func(p *Params) Cost {
		N := familyBytes(p, reduces)
		if p.Size <= 1 {
			return Cost{Copy: N}
		}
		pl := plan(p)
		V, n := float64(pl.V), N/float64(p.Size)
		c := Cost{Alpha: float64(len(pl.S)), Beta: N * (V - 1) / V}
		if reduces || pl.exchange() {
			c.Alpha++
			c.Beta += n
		}
		if reduces {
			c.Gamma = N * (V - 1) / V
		} else {
			c.Copy = n
		}
		if pl.rem > 0 {
			c.Alpha++
			c.Beta += N
			if reduces {
				c.Gamma += N
			}
		}
		return c
	}
}
