package model

import (
	"fmt"
	"iter"

	"github.com/scoll/scoll/schedule"
)

// Critical is the dependency-driven time of a collective call: the
// finishing time of the last rank when every rank starts at time 0 and runs
// its rounds as the schedule IR says (a round starts when the rank's
// previous round has ended), in two models.
type Critical struct {
	// AlphaBetaGamma is the time in seconds in the α-β-γ model.
	AlphaBetaGamma float64
	// LogGP is the time in seconds in Hoefler and Moor's LogGP accounting.
	LogGP float64
}

// CriticalPath evaluates the schedules of gen on size ranks along their
// dependencies rather than round-synchronously (compare AlphaBetaGamma and
// LogGP of Count's counts). Each rank has a send port and a receive port
// that carry one message at a time, in the order the round posts them. A
// message m that is the j-th send of a round starting at S_s and the j'-th
// receive of a round starting at S_r completes at
//
//	T_m = max(S_s + α·j + β·B_s,  S_r + α·j' + β·B_r)
//
// where B_s (B_r) are the bytes of the sender's first j sends (the
// receiver's first j' receives) of the round: it cannot complete before both
// ports have carried it and what was queued before it. A round ends when its
// last message has completed (at its start if it has none), plus γ per byte
// it reduces and β per byte it copies, and the rank's next round starts
// then. In LogGP a port's first j messages of B bytes take
// L + 2o + (j−1)·max(o, g) + G·B, and local operations are free. For a
// round in which every rank sends and receives alike this is the
// round-synchronous cost.
//
// Unlike the round-synchronous view this charges pipelines (a rank's first
// round waits for its first segment) and sparse schedules (a ring whose
// empty blocks drop rounds still passes each block hop by hop) along their
// real chains of messages. Ports serve messages in posting order, never
// out of order, and links are not shared: network contention is the
// simulator's business (package sim).
//
// Every rank's schedule is streamed round by round (iter.Pull per rank, one
// round per rank in memory at a time, as the simulator does); messages
// between two ranks match in posting order. The ranks' calls of gen are in
// progress together but run one at a time, never concurrently. Memory is
// proportional to the largest round each rank has had so far (a builder
// keeps its round buffer), at most Counts.Total.RoundOps operations: small
// for tree, butterfly and ring algorithms, Θ(P²) for those whose ranks post
// all their messages in one round (linear allgather, direct alltoall) or
// combine P vectors in one (allgather-reduce allreduce). Time is linear in
// the schedules' size, about a microsecond per round of a rank.
//
// A schedule whose messages cannot all be matched (it would deadlock) is an
// error wrapping ErrArgument; builder errors are returned with the rank.
func CriticalPath(size, elemSize int, gen schedule.Generator, p Params) (Critical, error) {
	_, c, _, err := run(size, elemSize, gen, p, -1)
	return c, err
}

// run evaluates the critical path and counts the schedules (as Count) in
// one pass. With limit ≥ 0 it gives up, returning ok false, as soon as the
// ranks' largest rounds so far hold more than limit operations in all.
func run(size, elemSize int, gen schedule.Generator, p Params, limit int64) (cnt Counts, c Critical, ok bool, err error) {
	if err := checkArgs(size, elemSize, gen); err != nil {
		return Counts{}, Critical{}, false, err
	}
	if err := p.Validate(); err != nil {
		return Counts{}, Critical{}, false, err
	}
	e := &engine{p: p, es: int64(elemSize), size: size, ranks: make([]cpRank, size), pairs: make(map[int64]pairQ), limit: limit}
	defer e.stop()
	for r := range size {
		rk := &e.ranks[r]
		rk.next, rk.halt = iter.Pull(func(yield func(schedule.Round) bool) {
			b := schedule.NewStream(r, size, func(rd schedule.Round, _ int) bool { return yield(rd) })
			gen(b)
			b.EndRound()
			rk.err = b.Err()
			rk.rc.Scratch = int64(b.ScratchLen()) * int64(elemSize)
		})
	}
	for r := range size {
		if err := e.advance(r, [2]float64{}); err != nil || e.over {
			return Counts{}, Critical{}, false, err
		}
	}
	for len(e.ready) > 0 {
		r := e.ready[len(e.ready)-1]
		e.ready = e.ready[:len(e.ready)-1]
		if err := e.advance(r, e.finish(r)); err != nil || e.over {
			return Counts{}, Critical{}, false, err
		}
	}
	for r := range e.ranks {
		rk := &e.ranks[r]
		if !rk.done {
			return Counts{}, Critical{}, false, fmt.Errorf("%w: rank %d waits forever in its round %d (unmatched messages)",
				ErrArgument, r, rk.rc.Rounds-1)
		}
		c.AlphaBetaGamma = max(c.AlphaBetaGamma, rk.end[0])
		c.LogGP = max(c.LogGP, rk.end[1])
	}
	cnt, err = e.t.counts(size, elemSize)
	if err != nil {
		return Counts{}, Critical{}, false, err
	}
	return cnt, c, true, nil
}

// The engine's times are pairs: [0] in the α-β-γ model, [1] in LogGP.

// cpOp is a message of a rank's current round.
type cpOp struct {
	send bool
	peer int
	// at is the message's place on its rank's port: it is the at.n-th
	// message posted in its direction in the round, and at.bytes are the
	// bytes of those messages up to and including it.
	at port
	// partner is the other end's round start and place on its port.
	partnerStart [2]float64
	partner      port
}

// port is a message's place in the queue of its rank's send or receive port.
type port struct{ n, bytes int64 }

// cpRank is one rank's progress.
type cpRank struct {
	next  func() (schedule.Round, bool)
	halt  func()
	err   error
	rc    RankCounts // the rank's counts so far (rc.Rounds rounds pulled)
	start [2]float64 // start of the current round
	end   [2]float64 // end of the last finished round
	ops   []cpOp
	// pending counts the messages of the current round not yet matched
	pending int
	// bytes the current round reduces and copies
	reduced, copied int64
	done            bool
}

// pairQ holds the unmatched messages from one rank to another, in posting
// order: only sends or only receives are ever waiting. Entries refer to the
// current round of their rank (a round cannot end before its messages are
// matched). The first entry is kept inline, so that the common single
// message in flight costs no allocation.
type pairQ struct {
	sends bool // the waiting messages are sends
	head  opRef
	rest  []opRef
}

type opRef struct{ rank, op int32 }

type engine struct {
	p     Params
	es    int64
	size  int
	ranks []cpRank
	pairs map[int64]pairQ
	ready []int
	t     tally
	held  int64 // Σ over ranks of their largest round so far, in operations
	limit int64 // give up when held exceeds it (< 0: never)
	over  bool  // gave up
}

func (e *engine) stop() {
	for i := range e.ranks {
		if e.ranks[i].halt != nil {
			e.ranks[i].halt()
		}
	}
}

// advance moves rank r to its next round, which starts at t, and posts its
// messages.
func (e *engine) advance(r int, t [2]float64) error {
	rk := &e.ranks[r]
	rk.end = t
	rk.ops = rk.ops[:0]
	rd, ok := rk.next()
	if !ok {
		if rk.err != nil {
			return fmt.Errorf("model: rank %d: %w", r, rk.err)
		}
		rk.done = true
		e.t.add(rk.rc)
		return nil
	}
	rk.start = t
	var sent, recv port
	var l load
	for _, op := range rd {
		n := int64(op.Len()) * e.es
		l.add(op.Kind, n)
		switch op.Kind {
		case schedule.OpSend:
			sent.n++
			sent.bytes += n
			rk.ops = append(rk.ops, cpOp{send: true, peer: op.Peer, at: sent})
		case schedule.OpRecv, schedule.OpRecvReduce:
			recv.n++
			recv.bytes += n
			rk.ops = append(rk.ops, cpOp{peer: op.Peer, at: recv})
		}
	}
	e.held -= rk.rc.RoundOps
	e.t.round(int(rk.rc.Rounds), l, &rk.rc)
	e.held += rk.rc.RoundOps
	rk.reduced, rk.copied = l.reduced, l.copied
	if e.limit >= 0 && e.held > e.limit {
		e.over = true
		return nil
	}
	rk.pending = len(rk.ops)
	if rk.pending == 0 {
		e.ready = append(e.ready, r)
		return nil
	}
	for i := range rk.ops {
		e.post(r, i)
	}
	return nil
}

// post matches message i of rank r's current round with the oldest waiting
// message of the opposite kind between the same ranks, or makes it wait.
func (e *engine) post(r, i int) {
	op := &e.ranks[r].ops[i]
	src, dst := r, op.peer
	if !op.send {
		src, dst = op.peer, r
	}
	key := int64(src)*int64(e.size) + int64(dst)
	me := opRef{int32(r), int32(i)}
	q, ok := e.pairs[key]
	switch {
	case !ok:
		e.pairs[key] = pairQ{sends: op.send, head: me}
	case q.sends == op.send:
		q.rest = append(q.rest, me)
		e.pairs[key] = q
	default:
		m := q.head
		if len(q.rest) == 0 {
			delete(e.pairs, key)
		} else {
			q.head, q.rest = q.rest[0], q.rest[1:]
			e.pairs[key] = q
		}
		e.match(r, i, m)
		e.match(int(m.rank), int(m.op), me)
	}
}

// match records that message i of rank r's current round is matched by
// message o.
func (e *engine) match(r, i int, o opRef) {
	rk := &e.ranks[r]
	op := &rk.ops[i]
	peer := &e.ranks[o.rank]
	op.partnerStart = peer.start
	op.partner = peer.ops[o.op].at
	rk.pending--
	if rk.pending == 0 {
		e.ready = append(e.ready, r)
	}
}

// finish returns the end of rank r's current round, all of whose messages
// are matched: the last completion of its messages, then its local
// operations. A message completes when both ends' ports have carried it and
// the messages queued before it (Critical's formulas).
func (e *engine) finish(r int) [2]float64 {
	rk := &e.ranks[r]
	end := rk.start
	for _, op := range rk.ops {
		for m := range 2 {
			t := max(rk.start[m]+e.cost(m, op.at), op.partnerStart[m]+e.cost(m, op.partner))
			end[m] = max(end[m], t)
		}
	}
	end[0] += e.p.Gamma*float64(rk.reduced) + e.p.Beta*float64(rk.copied)
	return end
}

// cost is the time from a round's start until its port has carried the
// messages up to q: model 0 is α-β-γ, model 1 LogGP.
func (e *engine) cost(model int, q port) float64 {
	p := e.p
	if model == 0 {
		return p.Alpha*float64(q.n) + p.Beta*float64(q.bytes)
	}
	return p.L + 2*p.O + float64(q.n-1)*max(p.O, p.G) + p.GPerByte*float64(q.bytes)
}
