package algorithms

import (
	"github.com/scoll/scoll/schedule"
)

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

// rdPlan is a stage order of the reordered recursive doubling for P ranks.
type rdPlan struct {
	V, rem int
	S      []int // S[s]: the virtual-rank bit flipped in allgather stage s
}

// newRDPlan returns the plan for P ≥ 2 ranks with stage order S over lg V
// bits, or distance halving when S is nil.
func newRDPlan(P int, S []int) *rdPlan {
	V := floorPow2(P)
	pl := &rdPlan{V: V, rem: P - V, S: S}
	if S == nil {
		L := ceilLog2(V)
		pl.S = make([]int, L)
		for s := range L {
			pl.S[s] = L - 1 - s
		}
	}
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

// first returns the lowest rank of virtual rank u (first(V) = P): the
// blocks of positions [q0, q1) are those of ranks [first(q0), first(q1)).
func (pl *rdPlan) first(u int) int {
	if u < pl.rem {
		return 2 * u
	}
	return u + pl.rem
}

// virt returns rank r's virtual rank and whether r stands for it.
func (pl *rdPlan) virt(r int) (u int, owner bool) {
	if r < 2*pl.rem {
		return r / 2, r%2 == 0
	}
	return r - pl.rem, true
}

// exchange reports whether the plan needs the reordering exchange stage.
func (pl *rdPlan) exchange() bool {
	if pl.rem > 0 {
		return true
	}
	for s, bit := range pl.S {
		if bit != s {
			return true
		}
	}
	return false
}

// Reordered recursive-doubling allgather.
//
//	rd-halving, P=8 (σ = bit reversal)
//	exchange: 1↔4 3↔6 (0, 2, 5, 7 keep their block)
//	stage 0:  0↔4 1↔5 2↔6 3↔7 (1 block)
//	stage 1:  0↔2 1↔3 4↔6 5↔7 (2 blocks)
//	stage 2:  0↔1 2↔3 4↔5 6↔7 (4 blocks)
//
// Cost: (lg V + 1)·α + ((V−1)/V·N + n)·β, plus α + (N + n)·β when P is not a
// power of two.
func allgatherReorder(plan func(*Params) *rdPlan) func(*schedule.Builder, *Params) {
	return func(b *schedule.Builder, p *Params) {
		l, own, mine, done := allgatherSetup(b, p)
		if done {
			return
		}
		pl := plan(p)
		r := p.Rank
		u, owner := pl.virt(r)
		runs := func(q0, q1 int) []schedule.Region { return allgatherRuns(&l, pl.first(q0), pl.first(q1)) }
		ex := pl.exchange()
		if ex {
			dst := pl.first(pl.sigmaInv(u))
			if dst != r {
				b.Send(dst, own)
			}
			if owner {
				q := pl.sigma(u)
				for j := pl.first(q); j < pl.first(q+1); j++ {
					if j != r {
						b.Recv(j, allgatherBlk(&l, j))
					}
				}
			}
			if dst == r {
				b.Copy(mine, own)
			}
			b.EndRound()
		}
		var first, firstCopy *schedule.Region
		if !ex {
			first, firstCopy = &own, &mine
		}
		rdAllgatherStages(b, pl, r, runs, first, firstCopy, -1)
	}
}

// rdAllgatherStages emits the allgather stages of plan pl for rank r, whose
// virtual rank starts with its position's blocks in place (runs(q0, q1)
// gives the regions of positions [q0, q1)), then sends the whole result to
// the partners the participants stand for. When first is set, stage 0 sends
// first instead and copies it to firstCopy (no exchange stage ran). A
// partner equal to skip already has the result and is left out.
func rdAllgatherStages(b *schedule.Builder, pl *rdPlan, r int, runs func(q0, q1 int) []schedule.Region, first, firstCopy *schedule.Region, skip int) {
	u, owner := pl.virt(r)
	if !owner {
		if r != skip {
			for _, reg := range runs(0, pl.V) {
				b.Recv(r-1, reg)
			}
			b.EndRound()
		}
		return
	}
	for s, bit := range pl.S {
		peer := pl.first(u ^ 1<<bit)
		a := pl.sigma(u) &^ (1<<s - 1)
		pa := a ^ 1<<s
		if first != nil && s == 0 {
			b.Send(peer, *first)
		} else {
			for _, reg := range runs(a, a+1<<s) {
				b.Send(peer, reg)
			}
		}
		for _, reg := range runs(pa, pa+1<<s) {
			b.Recv(peer, reg)
		}
		if first != nil && s == 0 {
			b.Copy(*firstCopy, *first)
		}
		b.EndRound()
	}
	if u < pl.rem && r+1 != skip {
		for _, reg := range runs(0, pl.V) {
			b.Send(r+1, reg)
		}
		b.EndRound()
	}
}

func allgatherReorderCost(plan func(*Params) *rdPlan) func(*Params) Cost {
	return func(p *Params) Cost {
		if p.Size <= 1 {
			return Cost{Copy: allgatherBytes(p)}
		}
		pl := plan(p)
		N := allgatherBytes(p)
		V, n := float64(pl.V), N/float64(p.Size)
		c := Cost{Alpha: float64(len(pl.S)), Beta: N * (V - 1) / V, Copy: n}
		if pl.exchange() {
			c.Alpha++
			c.Beta += n
		}
		if pl.rem > 0 {
			c.Alpha++
			c.Beta += N
		}
		return c
	}
}

// Reordered recursive-halving reduce-scatter: the allgather's mirror. The
// stages run in reverse order, each sending the half of the held positions
// the partner keeps and combining the other half with what arrives; then
// every participant sends the blocks of the position it ends with to their
// ranks. With distance halving mirrored (rh-doubling: partners at distance
// 1, 2, 4, …) every partial covers a contiguous group of ranks, combined
// lower group on the left, so the result keeps rank order; the torus order
// does not (commutative operators only).
//
//	rh-doubling, P=8: stage 0: 0↔1 2↔3 4↔5 6↔7 (half the vector)
//	                  stage 1: 0↔2 1↔3 4↔6 5↔7;  stage 2: 0↔4 1↔5 2↔6 3↔7
//	exchange: 1↔4 3↔6 (rank r held the block of bit-reverse(r))
//
// Cost: (lg V + 1)·α + ((V−1)/V·N + n)·β + (V−1)/V·N·γ, plus α + N·(β+γ)
// when P is not a power of two.
func redscatReorder(plan func(*Params) *rdPlan) func(*schedule.Builder, *Params) {
	return func(b *schedule.Builder, p *Params) {
		l, in, out, done := redscatSetup(b, p)
		if done {
			return
		}
		P, r := p.Size, p.Rank
		pl := plan(p)
		acc := b.Alloc(l.displ(P))
		rdReduceScatterStages(b, pl, r, &l, in, acc)
		if u, owner := pl.virt(r); owner {
			sig := pl.sigma(u)
			for j := pl.first(sig); j < pl.first(sig+1); j++ {
				if j != r {
					b.Send(j, acc.Sub(l.displ(j), l.count(j)))
				}
			}
		}
		ur, _ := pl.virt(r)
		if holder := pl.first(pl.sigmaInv(ur)); holder != r {
			b.Recv(holder, out)
		} else {
			b.Copy(out, acc.Sub(l.displ(r), l.count(r)))
		}
		b.EndRound()
	}
}

// rdReduceScatterStages emits the fold and the reduce-scatter stages of
// plan pl for rank r on the vector in (blocks l): a rank a participant
// stands for sends its whole vector; a participant ends with the reduced
// blocks of its position σ(u) at their offsets in acc (which may be in).
func rdReduceScatterStages(b *schedule.Builder, pl *rdPlan, r int, l *redscatLayout, in, acc schedule.Region) {
	u, owner := pl.virt(r)
	if !owner {
		b.Send(r-1, in)
		b.EndRound()
		return
	}
	span := func(base schedule.Region, q0, q1 int) schedule.Region {
		lo := l.displ(pl.first(q0))
		return base.Sub(lo, l.displ(pl.first(q1))-lo)
	}
	src := in // where the partial of the held positions is
	if u < pl.rem {
		b.RecvReduce(r+1, acc, in, true)
		b.EndRound()
		src = acc
	}
	sig := pl.sigma(u)
	for s := len(pl.S) - 1; s >= 0; s-- {
		v := u ^ 1<<pl.S[s]
		peer := pl.first(v)
		keep := sig &^ (1<<s - 1)
		give := keep ^ 1<<s
		b.Send(peer, span(src, give, give+1<<s))
		b.RecvReduce(peer, span(acc, keep, keep+1<<s), span(src, keep, keep+1<<s), v > u)
		b.EndRound()
		src = acc
	}
}

// redscatSetup returns the blocks, input and output of a reduce-scatter;
// with one rank it copies the input's block to the output and reports done.
func redscatSetup(b *schedule.Builder, p *Params) (l redscatLayout, in, out schedule.Region, done bool) {
	l = redscatBlocks(p)
	in, out = p.input(), redscatOut(p, &l)
	if p.Size == 1 {
		b.Copy(out, in.Sub(0, l.count(0)))
		b.EndRound()
		return l, in, out, true
	}
	return l, in, out, false
}

func redscatReorderCost(plan func(*Params) *rdPlan) func(*Params) Cost {
	return func(p *Params) Cost {
		N := redscatBytes(p)
		if p.Size <= 1 {
			return Cost{Copy: N}
		}
		pl := plan(p)
		V, n := float64(pl.V), N/float64(p.Size)
		c := Cost{Alpha: float64(len(pl.S)) + 1, Beta: N*(V-1)/V + n, Gamma: N * (V - 1) / V}
		if pl.rem > 0 {
			c.Alpha++
			c.Beta += N
			c.Gamma += N
		}
		return c
	}
}

func init() {
	for _, c := range []schedule.Collective{schedule.Allgather, schedule.Allgatherv} {
		Register(Info{
			Coll: c, Name: "rd-halving",
			Doc:    "recursive doubling with partners at distance P/2, P/4, ..., 1 after a bit-reversal exchange",
			Source: "Sack 2011 sec. 3.4.1",
			Build:  allgatherReorder(rdHalvingPlan), Cost: allgatherReorderCost(rdHalvingPlan),
		})
		Register(Info{
			Coll: c, Name: "rd-optimal",
			Doc:    "recursive doubling in torus order (largest dimensions first, far partners first) after a reordering exchange",
			Source: "Sack 2011 sec. 3.4.1",
			Build:  allgatherReorder(rdOptimalPlan), Cost: allgatherReorderCost(rdOptimalPlan),
		})
	}
	for _, c := range []schedule.Collective{schedule.ReduceScatterBlock, schedule.ReduceScatter} {
		Register(Info{
			Coll: c, Name: "rh-doubling",
			Doc:    "recursive halving with partners at distance 1, 2, ..., P/2, then a bit-reversal exchange; keeps rank order",
			Source: "Sack 2011 sec. 3.4.1",
			Build:  redscatReorder(rdHalvingPlan), Cost: redscatReorderCost(rdHalvingPlan),
		})
		Register(Info{
			Coll: c, Name: "rh-optimal", Requires: NeedsCommutative,
			Doc:    "recursive halving in reverse torus order (neighbours first), then a reordering exchange",
			Source: "Sack 2011 sec. 3.4.1",
			Build:  redscatReorder(rdOptimalPlan), Cost: redscatReorderCost(rdOptimalPlan),
		})
	}
}
