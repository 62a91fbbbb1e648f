package algorithms

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/schedule"
)

// Clairvoyant schedule generation (Marendic, Lemeire, Vucinic and
// Schelkens, Algorithm 1): a segmented reduction that starts with the ranks
// that have arrived and lets the late ones join when they come, so that the
// early ones work while the late ones still compute.
//
// Time runs in rounds of length d = α + B(β + γ) (receiving and combining
// one segment of B bytes) on one global clock: round k starts k·d after the
// earliest arrival, and a rank takes part from the first round that starts
// at or after its arrival. In a round each rank receives and combines at
// most one segment and sends at most one. The ranks of a round are taken in
// order — the root first once it has arrived, then the others by arrival
// and rank — and each, as a receiver, greedily takes the lowest segment it
// still holds (the sink: any segment) from the first rank of the round that
// holds that segment, has not sent yet in this round, and did not receive
// that segment in this round. The sink is the root once it has arrived,
// before that the earliest rank. A rank that has sent every segment is
// done; the schedule ends when only the root holds data.
//
// This is what the printed algorithm means, with its errors fixed: the
// rounds follow one clock (the printed grouping, aᵢ ≤ a_Q0 + d and then
// aᵢ += d, lets a rank act up to d before it arrives and loops forever
// when arrivals are off the d grid); the receiver's segment becomes partial
// (line 33 writes M(j, z)); a receiver that finds no sender for segment j
// tries j + 1 (the printed i = i + 1) and is idle when none is left; and a
// rank never forwards a segment in the round it receives it (which would
// lose the contribution it receives).

// ClairvoyantMsg is one message of a Clairvoyant schedule: the peer rank
// and the segment. Peer is −1 for none.
type ClairvoyantMsg struct{ Peer, Segment int }

// ClairvoyantStep is what one rank does in one round: at most one receive,
// whose segment it combines into its own, and at most one send.
type ClairvoyantStep struct {
	Round      int
	Send, Recv ClairvoyantMsg
}

// ClairvoyantPlan is a generated Clairvoyant schedule: every message of
// every round, and each rank's inbound and outbound queue (the paper's I
// and O) as indices into them.
type ClairvoyantPlan struct {
	P, N, Root int
	// Rounds is the schedule's length R: rounds from the earliest arrival
	// to the end of the last one in which a message moves.
	Rounds int
	// Start is each rank's first round (the first that starts at or after
	// its arrival).
	Start []int
	msgs  []clairvoyantMsg // in round order
	// Rank r's queues as lists through msgs: its first message received
	// (in) and sent (out), −1 for none; each message links to its
	// receiver's and its sender's next.
	in, out []int32
}

// Messages returns the number of messages of the schedule.
func (pl *ClairvoyantPlan) Messages() int { return len(pl.msgs) }

// Steps returns rank r's steps in round order: only the rounds in which it
// sends or receives.
func (pl *ClairvoyantPlan) Steps(r int) []ClairvoyantStep {
	var steps []ClairvoyantStep
	none := ClairvoyantMsg{-1, -1}
	in, out := pl.in[r], pl.out[r]
	for in >= 0 || out >= 0 {
		st := ClairvoyantStep{Round: math.MaxInt, Send: none, Recv: none}
		if in >= 0 {
			st.Round = int(pl.msgs[in].round)
		}
		if out >= 0 {
			st.Round = min(st.Round, int(pl.msgs[out].round))
		}
		if in >= 0 && int(pl.msgs[in].round) == st.Round {
			m := &pl.msgs[in]
			st.Recv, in = ClairvoyantMsg{int(m.from), int(m.seg)}, m.nextIn
		}
		if out >= 0 && int(pl.msgs[out].round) == st.Round {
			m := &pl.msgs[out]
			st.Send, out = ClairvoyantMsg{int(m.to), int(m.seg)}, m.nextOut
		}
		steps = append(steps, st)
	}
	return steps
}

// Segment states of the generator (the paper's M): the rank holds its own
// contribution (available), a combination (partial), or nothing (empty).
const (
	segAvailable uint8 = iota
	segPartial
	segEmpty
)

// arrivalSlack absorbs rounding in arrival times given in units of d: a
// rank that arrives within it of a round's start takes part in that round.
const arrivalSlack = 1e-9

// GenerateClairvoyant returns the Clairvoyant schedule of P ranks reducing N
// segments to root, with the ranks' arrival times in units of the round
// time d (any origin; nil means balanced arrivals). Arrivals must be finite
// and not negative.
func GenerateClairvoyant(P, N, root int, arrivals []float64) (*ClairvoyantPlan, error) {
	switch {
	case P < 1:
		return nil, fmt.Errorf("%w: clairvoyant: %d ranks", errs.InvalidArgument, P)
	case N < 1:
		return nil, fmt.Errorf("%w: clairvoyant: %d segments (need at least 1)", errs.InvalidArgument, N)
	case root < 0 || root >= P:
		return nil, fmt.Errorf("%w: clairvoyant: root %d of %d ranks", errs.InvalidArgument, root, P)
	case arrivals != nil && len(arrivals) != P:
		return nil, fmt.Errorf("%w: clairvoyant: %d arrival times for %d ranks", errs.InvalidArgument, len(arrivals), P)
	}
	first := math.Inf(1)
	for r, a := range arrivals {
		if math.IsNaN(a) || math.IsInf(a, 0) || a < 0 {
			return nil, fmt.Errorf("%w: clairvoyant: arrival time %v of rank %d", errs.InvalidArgument, a, r)
		}
		first = min(first, a)
	}
	g := newClairvoyantGen(P, N, root)
	for r := range P {
		if arrivals != nil {
			g.start[r] = int(math.Ceil(arrivals[r] - first - arrivalSlack))
		}
	}
	g.run(arrivals, first)
	return &g.plan, nil
}

// clairvoyantGen is the generator's state. Ranks are kept at positions:
// the root first, then the others by arrival and rank (the order of a
// round's group). Bit sets over positions find a round's senders, and bit
// sets over segments a receiver's candidates, without scanning.
type clairvoyantGen struct {
	plan   ClairvoyantPlan
	p, n   int
	words  int // of a bit set over positions
	swords int // of a bit set over segments

	start  []int // first round of each rank
	rankAt []int // position → rank
	// holders[j*words:]: the positions that hold segment j (available or
	// partial); held[pos*swords:]: the segments position pos holds (the
	// paper's state matrix M: set, available or partial; clear, empty). A
	// position that holds nothing is done.
	holders []uint64
	held    []uint64
	// recvd[j*words:]: the positions that received segment j in this
	// round, which must not forward it in the same round.
	recvd   []uint64
	free    []uint64 // positions that have not sent in this round
	active  []uint64 // positions that have arrived and are not done
	segFree []uint64 // segments that may have a free holder in this round
	msgs    []clairvoyantMsg
	// lastIn, lastOut: each rank's last message received and sent (−1:
	// none), to link the next.
	lastIn, lastOut []int32
}

// clairvoyantMsg is one generated message, linked to the next message its
// receiver receives and its sender sends (−1: none).
type clairvoyantMsg struct {
	round, from, to, seg int32
	nextIn, nextOut      int32
}

func newClairvoyantGen(P, N, root int) *clairvoyantGen {
	w, sw := (P+63)/64, (N+63)/64
	g := &clairvoyantGen{
		p: P, n: N, words: w, swords: sw,
		start:   make([]int, P),
		rankAt:  make([]int, 0, P),
		holders: make([]uint64, N*w),
		held:    make([]uint64, P*sw),
		recvd:   make([]uint64, N*w),
		free:    make([]uint64, w),
		active:  make([]uint64, w),
		segFree: make([]uint64, sw),
	}
	g.plan = ClairvoyantPlan{P: P, N: N, Root: root, Start: g.start}
	links := make([]int32, 4*P)
	for i := range links {
		links[i] = -1
	}
	g.plan.in, g.plan.out, g.lastIn, g.lastOut = links[:P], links[P:2*P], links[2*P:3*P], links[3*P:]
	// Every contribution but the root's moves at least once.
	g.msgs = make([]clairvoyantMsg, 0, (P-1)*N+P)
	return g
}

func (g *clairvoyantGen) run(arrivals []float64, first float64) {
	P, N, root, w, sw := g.p, g.n, g.plan.Root, g.words, g.swords
	g.rankAt = append(g.rankAt, root)
	for r := range P {
		if r != root {
			g.rankAt = append(g.rankAt, r)
		}
	}
	if arrivals != nil {
		rest := g.rankAt[1:]
		slices.SortStableFunc(rest, func(a, b int) int {
			if c := cmp.Compare(arrivals[a], arrivals[b]); c != 0 {
				return c
			}
			return a - b
		})
	}
	// Positions in order of arrival round, to activate ranks as their
	// rounds come.
	byStart := make([]int, P)
	for i := range byStart {
		byStart[i] = i
	}
	slices.SortStableFunc(byStart, func(a, b int) int { return g.start[g.rankAt[a]] - g.start[g.rankAt[b]] })
	next := 0 // in byStart
	undone := P - 1
	for k := 0; undone > 0; k++ {
		for next < P && g.start[g.rankAt[byStart[next]]] <= k {
			pos := byStart[next]
			bit, word := uint64(1)<<(pos%64), pos/64
			g.active[word] |= bit
			for j := range N {
				g.holders[j*w+word] |= bit
			}
			mine := g.held[pos*sw : (pos+1)*sw]
			for x := range mine {
				mine[x] = ^uint64(0)
			}
			if N%64 != 0 {
				mine[sw-1] = 1<<(N%64) - 1
			}
			next++
		}
		if popcount(g.active) < 2 {
			// Nobody to exchange with: skip to the next arrival.
			if next == P {
				break // cannot happen: the root has arrived and another holds data
			}
			k = g.start[g.rankAt[byStart[next]]] - 1
			continue
		}
		copy(g.free, g.active)
		clear(g.segFree)
		for j := range N {
			for _, x := range g.holders[j*w : (j+1)*w] {
				if x != 0 {
					g.segFree[j/64] |= 1 << (j % 64)
					break
				}
			}
		}
		sink := firstBit(g.active)
		for wi, word := range g.active {
			for word != 0 {
				pos := wi*64 + bits.TrailingZeros64(word)
				word &= word - 1
				if j, zpos := g.sender(pos, pos == sink); zpos >= 0 {
					g.move(k, pos, zpos, j)
				}
			}
		}
		clear(g.recvd)
		// Only this round's senders can have emptied their hands.
		for wi := range g.active {
			sent := g.active[wi] &^ g.free[wi]
			for sent != 0 {
				pos := wi*64 + bits.TrailingZeros64(sent)
				sent &= sent - 1
				if g.rankAt[pos] != root && isEmpty64(g.held[pos*sw:(pos+1)*sw]) {
					g.active[wi] &^= 1 << (pos % 64)
					undone--
				}
			}
		}
	}
	g.plan.msgs = g.msgs
	if len(g.msgs) > 0 {
		g.plan.Rounds = int(g.msgs[len(g.msgs)-1].round) + 1
	}
}

// sender finds what the receiver at position pos takes in this round: the
// lowest segment it holds (the sink: any segment) that a free position
// other than its own holds, and the first such position. zpos is −1 when
// there is none. A segment found without any free holder leaves segFree
// for the rest of the round (free positions and holders only shrink
// within a round).
func (g *clairvoyantGen) sender(pos int, sink bool) (j, zpos int) {
	sw, w := g.swords, g.words
	mine := g.held[pos*sw : (pos+1)*sw]
	free := g.free[:w]
	me, meBit := pos/64, uint64(1)<<(pos%64)
	for wi := range g.segFree {
		word := g.segFree[wi]
		if !sink {
			word &= mine[wi]
		}
		for word != 0 {
			j := wi*64 + bits.TrailingZeros64(word)
			word &= word - 1
			h := g.holders[j*w : (j+1)*w : (j+1)*w]
			rv := g.recvd[j*w : (j+1)*w : (j+1)*w]
			none := true // no free position holds j
			for x := range free {
				f := h[x] & free[x] &^ rv[x]
				c := f
				if x == me {
					c &^= meBit
				}
				if c != 0 {
					return j, x*64 + bits.TrailingZeros64(c)
				}
				if f != 0 {
					none = false
				}
			}
			if none {
				g.segFree[wi] &^= 1 << (j % 64)
			}
		}
	}
	return -1, -1
}

// move records segment j going from position zpos to position pos in
// round k and updates the state: the sender is no longer free and holds
// the segment no more; the receiver holds it and does not forward it in
// this round.
func (g *clairvoyantGen) move(k, pos, zpos, j int) {
	w, sw := g.words, g.swords
	i, z := int32(g.rankAt[pos]), int32(g.rankAt[zpos])
	n := int32(len(g.msgs))
	g.msgs = append(g.msgs, clairvoyantMsg{int32(k), z, i, int32(j), -1, -1})
	if l := g.lastIn[i]; l >= 0 {
		g.msgs[l].nextIn = n
	} else {
		g.plan.in[i] = n
	}
	if l := g.lastOut[z]; l >= 0 {
		g.msgs[l].nextOut = n
	} else {
		g.plan.out[z] = n
	}
	g.lastIn[i], g.lastOut[z] = n, n
	jw, jb := j/64, uint64(1)<<(j%64)
	g.free[zpos/64] &^= 1 << (zpos % 64)
	g.holders[j*w+zpos/64] &^= 1 << (zpos % 64)
	g.held[zpos*sw+jw] &^= jb
	// The receiver holds the segment (combined, or taken into an empty
	// place) but must not send it in this round.
	g.holders[j*w+pos/64] |= 1 << (pos % 64)
	g.held[pos*sw+jw] |= jb
	g.recvd[j*w+pos/64] |= 1 << (pos % 64)
}

// firstBit returns the first bit set in s; −1 if none.
func firstBit(s []uint64) int {
	for wi, word := range s {
		if word != 0 {
			return wi*64 + bits.TrailingZeros64(word)
		}
	}
	return -1
}

// isEmpty64 reports whether no bit of s is set.
func isEmpty64(s []uint64) bool {
	for _, x := range s {
		if x != 0 {
			return false
		}
	}
	return true
}

func popcount(s []uint64) int {
	n := 0
	for _, word := range s {
		n += bits.OnesCount64(word)
	}
	return n
}

// clairvoyantPlans holds the plans the ranks of a call build their
// schedules from (every rank of a call asks for the same one).
var clairvoyantPlans = newMemo[string, clairvoyantResult](32)

type clairvoyantResult struct {
	plan *ClairvoyantPlan
	err  error
}

// clairvoyantPlanOf returns the plan of p, generated once for all ranks.
func clairvoyantPlanOf(p *Params, n int) (*ClairvoyantPlan, error) {
	key := fmt.Sprint(p.Size, n, p.Root, p.Arrivals)
	res := clairvoyantPlans.get(key, func() clairvoyantResult {
		pl, err := GenerateClairvoyant(p.Size, n, p.Root, p.Arrivals)
		return clairvoyantResult{pl, err}
	})
	return res.plan, res.err
}

// ClairvoyantSegments returns the number of segments the clairvoyant
// reduce uses for p: p.Segments when set, else the optimal count of an
// equi-segmenting reduction (Marendic et al. sec. 5.2), N = √((n−1)·m(β+γ)/α)
// with n = ⌈lg P⌉ and m the bytes per rank under the machine model m0; at
// least 1 and at most the count of elements (at least 1) and, by default,
// maxDefaultSegments.
// A segment length (p.Segment, elements) gives ⌈count/Segment⌉ segments.
func ClairvoyantSegments(p *Params, m0 Machine) int {
	n := p.Segments
	switch {
	case n > 0:
	case p.Segment > 0:
		n = (p.Count + p.Segment - 1) / p.Segment
	default:
		bytes := float64(p.Count * max(p.ElemSize, 1))
		hops := float64(max(ceilLog2(p.Size)-1, 0))
		opt := math.Sqrt(hops * bytes * (m0.Beta + m0.Gamma) / m0.Alpha)
		n = int(math.Round(min(opt, maxDefaultSegments))) // α = 0: +Inf; 0/0: NaN, then 1
		if math.IsNaN(opt) {
			n = 1
		}
	}
	return max(1, min(n, p.Count))
}

// maxDefaultSegments bounds the default segment count (reached only where
// α is tiny against the bytes: the generator's time grows with N).
const maxDefaultSegments = 1024

// ClairvoyantRound returns the clairvoyant reduce's round time under the
// machine model m: d = α + B(β + γ) for its segments of B bytes (p.Segments
// of them, or ClairvoyantSegments' count when unset).
func ClairvoyantRound(p *Params, m Machine) float64 {
	n := p.Segments
	if n <= 0 {
		n = ClairvoyantSegments(p, m)
	}
	b := float64(p.Count*max(p.ElemSize, 1)) / float64(n)
	return m.Alpha + b*(m.Beta+m.Gamma)
}

// SetArrivals prepares p for the clairvoyant reduce: its segment count
// (segments, or ClairvoyantSegments' default under m when 0) and the
// arrival times in seconds (nil: balanced) as multiples of the round time
// (round seconds, or ClairvoyantRound under m when 0).
func (p *Params) SetArrivals(m Machine, segments int, arrivals []float64, round float64) {
	p.Segments = segments
	p.Segments = ClairvoyantSegments(p, m)
	if round <= 0 && arrivals != nil {
		round = ClairvoyantRound(p, m)
	}
	p.Arrivals = InRounds(arrivals, round)
}

// InRounds returns arrival times in seconds as multiples of the round time
// d (seconds), as Params.Arrivals holds them; nil stays nil.
func InRounds(arrivals []float64, d float64) []float64 {
	if arrivals == nil {
		return nil
	}
	out := make([]float64, len(arrivals))
	for r, a := range arrivals {
		out[r] = a / d
	}
	return out
}

// reduceClairvoyant builds p.Rank's part of the Clairvoyant plan of p: a
// round per step, receiving and combining one segment and sending one. A
// segment still holding the rank's own contribution is sent from (and
// combined with) the input; a segment it sent away is replaced by what it
// receives (the sink's case); the others are combined in the rank's work
// buffer (the receive buffer at the root, scratch elsewhere).
func reduceClairvoyant(b *schedule.Builder, p *Params) { clairvoyantInto(b, p, false) }

// allreduceClairvoyant is the clairvoyant reduce to rank 0, every rank
// combining in its receive buffer, then a binomial broadcast of the
// result (allreduceTreeBcast).
func allreduceClairvoyant(b *schedule.Builder, p *Params) {
	if p.Count == 0 {
		return
	}
	clairvoyantInto(b, p, true)
	allreduceTreeBcast(b, p.Rank, p.Size, schedule.RecvBuf(0, p.Count))
}

// clairvoyantInto builds the reduce of reduceClairvoyant; everywhere
// combines in the receive buffer (the allreduce's ranks all have one).
func clairvoyantInto(b *schedule.Builder, p *Params, everywhere bool) {
	cnt, in := p.Count, p.input()
	if cnt == 0 {
		return
	}
	n := ClairvoyantSegments(p, InProcess)
	pl, err := clairvoyantPlanOf(p, n)
	if err != nil {
		b.Fail(err)
		return
	}
	steps := pl.Steps(p.Rank)
	work := schedule.RecvBuf(0, cnt)
	if !everywhere && p.Rank != p.Root && slices.ContainsFunc(steps, func(s ClairvoyantStep) bool { return s.Recv.Peer >= 0 }) {
		work = b.Alloc(cnt)
	}
	seg := func(r schedule.Region, j int) schedule.Region {
		lo, hi := j*cnt/n, (j+1)*cnt/n
		return r.Sub(lo, hi-lo)
	}
	state := make([]uint8, n) // segAvailable: the input holds it
	for _, st := range steps {
		if m := st.Recv; m.Peer >= 0 {
			j := m.Segment
			switch state[j] {
			case segAvailable:
				b.RecvReduce(m.Peer, seg(work, j), seg(in, j), false)
			case segPartial:
				b.RecvReduce(m.Peer, seg(work, j), seg(work, j), false)
			default:
				b.Recv(m.Peer, seg(work, j))
			}
		}
		if m := st.Send; m.Peer >= 0 {
			j := m.Segment
			if state[j] == segAvailable {
				b.Send(m.Peer, seg(in, j))
			} else {
				b.Send(m.Peer, seg(work, j))
			}
			state[j] = segEmpty
		}
		if m := st.Recv; m.Peer >= 0 {
			state[m.Segment] = segPartial
		}
		b.EndRound()
	}
	if p.Rank == p.Root {
		// Segments never received hold the root's input alone (one rank).
		for j, s := range state {
			if s == segAvailable && in.Space != work.Space {
				b.Copy(seg(work, j), seg(in, j))
			}
		}
		b.EndRound()
	}
}

// costClairvoyant is Table 3's row for the segment count used, with
// balanced arrivals: R(α + B(β + γ)) for R = ⌈lg P⌉ + N − 1 rounds of
// segments of B bytes (the generator's length for P a power of two; at
// other P it can need a round more).
func costClairvoyant(p *Params) Cost {
	if p.Size <= 1 || p.Count == 0 {
		return Cost{}
	}
	n := ClairvoyantSegments(p, InProcess)
	rounds := float64(ceilLog2(p.Size) + n - 1)
	seg := float64(p.Count*max(p.ElemSize, 1)) / float64(n)
	return Cost{Alpha: rounds, Beta: rounds * seg, Gamma: rounds * seg}
}

// costAllreduceClairvoyant adds the broadcast's ⌈lg P⌉(α + nβ).
func costAllreduceClairvoyant(p *Params) Cost {
	c := costClairvoyant(p)
	if p.Size > 1 && p.Count > 0 {
		lg := float64(ceilLog2(p.Size))
		c.Alpha += lg
		c.Beta += lg * float64(p.Count*max(p.ElemSize, 1))
	}
	return c
}

func init() {
	Register(Info{
		Coll: schedule.Allreduce, Name: Clairvoyant,
		Doc:      "the clairvoyant reduce (WithArrivals) to rank 0, then a binomial broadcast: late ranks' slack absorbed in the reduce only; commutative only, picked by name",
		Source:   "Marendic, Lemeire, Vucinic, Schelkens 2016 (reduce); binomial broadcast",
		Requires: NeedsCommutative,
		Explicit: true,
		Build:    allreduceClairvoyant,
		Cost:     costAllreduceClairvoyant,
	})
	Register(Info{
		Coll: schedule.Reduce, Name: Clairvoyant,
		Doc:      "segmented reduction scheduled for the ranks' arrival times (WithArrivals): early ranks reduce while late ones compute; commutative only, picked by name",
		Source:   "Marendic, Lemeire, Vucinic, Schelkens 2016, Algorithm 1 (errata fixed, see algorithms/clairvoyant.go)",
		Requires: NeedsCommutative,
		Explicit: true,
		Build:    reduceClairvoyant,
		Cost:     costClairvoyant,
	})
}
