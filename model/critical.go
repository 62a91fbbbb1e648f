package model

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/scoll/scoll/schedule"
)

// Critical is the dependency-driven time of a collective call: the
// finishing time of the last rank when every rank starts at time 0 and runs
// its rounds as the schedule IR says (a round starts when the rank's
// previous round has ended), in two models.
type Critical struct {
	// AlphaBetaGamma is the time in seconds in the α-β-γ model with a send
	// port and a receive port per rank.
	AlphaBetaGamma float64
	// LogGP is the time in seconds in LogGP as Alexandrov et al. define it
	// and LogGOPSim simulates it: one CPU per rank that pays o for every
	// send and every receive, gaps g + (s−1)·G between a network
	// interface's messages, L on the wire.
	LogGP float64
}

// CriticalPath evaluates the schedules of gen on size ranks along their
// dependencies rather than round-synchronously (compare AlphaBetaGamma and
// LogGP of Count's counts).
//
// In the α-β-γ model each rank has a send port and a receive port that
// carry one message at a time, in the order the round posts them. A
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
// then.
//
// LogGP is simulated event by event on the dependencies a GOAL export
// states (schedule.WriteGOAL), so that LogGOPSim run on the export gives
// the same time: a send takes the rank's CPU for o and its send gap for
// g + (s−1)·G and arrives L after its overhead; an arrived message takes the
// receiver's CPU for o + (s−1)·G (when it is free, posted receive or not)
// and its receive gap for g + (s−1)·G; a round's reductions take the CPU for
// γ per byte once its messages have completed, copies are free. A rank's
// sends and receives thus compete for its one CPU, as in LogGP, where the
// α-β-γ ports overlap them. For rounds of one message each way with
// G = 0 and g ≤ o both give the round-synchronous L + 2o per round. Zero-
// byte messages cost as one-byte ones; times are exact to a decimal quantum
// (a femtosecond, coarser for long schedules) with ties taken in order.
//
// Unlike the round-synchronous view this charges pipelines (a rank's first
// round waits for its first segment) and sparse schedules (a ring whose
// empty blocks drop rounds still passes each block hop by hop) along their
// real chains of messages. Messages are served in posting order, never out
// of order, and links are not shared: network contention is the
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
// the schedules' size: each rank's schedule is generated twice, once per
// model, at about a microsecond per round of a rank.
//
// A schedule whose messages cannot all be matched (it would deadlock) is an
// error wrapping ErrArgument; builder errors are returned with the rank.
func CriticalPath(size, elemSize int, gen schedule.Generator, p Params) (Critical, error) {
	_, c, _, err := run(size, elemSize, gen, p, -1, nil)
	return c, err
}

// CriticalPathArrivals is CriticalPath with ranks that do not arrive
// together: rank r starts its first round at arrival[r] seconds (in both
// models) instead of 0, as in an application whose processes reach the
// collective at different times. The result is the finishing time of the
// last rank on the same clock. arrival must have size entries, finite and
// not negative.
func CriticalPathArrivals(size, elemSize int, gen schedule.Generator, p Params, arrival []float64) (Critical, error) {
	if len(arrival) != size {
		return Critical{}, fmt.Errorf("%w: %d arrival times for %d ranks", ErrArgument, len(arrival), size)
	}
	for r, a := range arrival {
		if !(a >= 0) || math.IsInf(a, 1) {
			return Critical{}, fmt.Errorf("%w: rank %d arrives at %g", ErrArgument, r, a)
		}
	}
	_, c, _, err := run(size, elemSize, gen, p, -1, arrival)
	return c, err
}

// run evaluates the critical path and counts the schedules (as Count) in
// one pass. With limit ≥ 0 it gives up, returning ok false, as soon as the
// ranks' largest rounds so far hold more than limit operations in all.
func run(size, elemSize int, gen schedule.Generator, p Params, limit int64, arrival []float64) (cnt Counts, c Critical, ok bool, err error) {
	if err := checkArgs(size, elemSize, gen); err != nil {
		return Counts{}, Critical{}, false, err
	}
	if err := p.Validate(); err != nil {
		return Counts{}, Critical{}, false, err
	}
	e := &engine{p: p, es: int64(elemSize), ranks: make([]cpRank, size), limit: limit}
	for r := range e.ranks {
		if arrival != nil {
			e.ranks[r].end = arrival[r]
		}
	}
	e.rp = schedule.NewReplay(size, gen, e, schedule.ReplayOptions{Arrival: arrival})
	defer e.rp.Close()
	if err := e.rp.Run(); err != nil {
		if err == errOver {
			return Counts{}, Critical{}, false, nil
		}
		return Counts{}, Critical{}, false, fmt.Errorf("model: %w", err)
	}
	for r := range e.ranks {
		rk := &e.ranks[r]
		if !e.rp.Done(r) {
			return Counts{}, Critical{}, false, fmt.Errorf("%w: rank %d waits forever in its round %d (unmatched messages)",
				ErrArgument, r, rk.rc.Rounds-1)
		}
		rk.rc.Scratch = int64(e.rp.Streams().Scratch(r)) * int64(elemSize)
		e.t.add(rk.rc)
		c.AlphaBetaGamma = max(c.AlphaBetaGamma, rk.end)
	}
	cnt, err = e.t.counts(size, elemSize)
	if err != nil {
		return Counts{}, Critical{}, false, err
	}
	last := 0.0
	for _, a := range arrival {
		last = max(last, a)
	}
	if c.LogGP, err = logGPPath(size, elemSize, gen, p, arrival, logGPBound(cnt, p, last)); err != nil {
		return Counts{}, Critical{}, false, err
	}
	return cnt, c, true, nil
}

// errOver stops a replay whose rounds hold more operations than the limit.
var errOver = errors.New("model: over the operation limit")

// cpOp is a message of a rank's current round.
type cpOp struct {
	// at is the message's place on its rank's port: it is the at.n-th
	// message posted in its direction in the round, and at.bytes are the
	// bytes of those messages up to and including it.
	at port
	// partner is the other end's round start and place on its port.
	partnerStart float64
	partner      port
}

// port is a message's place in the queue of its rank's send or receive port.
type port struct{ n, bytes int64 }

// cpRank is one rank's progress.
type cpRank struct {
	rc    RankCounts // the rank's counts so far (rc.Rounds rounds pulled)
	start float64    // start of the current round
	end   float64    // end of the last finished round (the arrival before the first)
	ops   []cpOp     // the current round's messages, by operation index
	// bytes the current round reduces and copies
	reduced, copied int64
}

// engine is the critical path's hooks on the schedule replay.
type engine struct {
	p     Params
	es    int64
	rp    *schedule.Replay
	ranks []cpRank
	t     tally
	held  int64 // Σ over ranks of their largest round so far, in operations
	limit int64 // give up when held exceeds it (< 0: never)
}

// Start begins rank r's round at the end of its previous one and places
// its messages on its ports.
func (e *engine) Start(r, _ int, rd schedule.Round, _ int) error {
	rk := &e.ranks[r]
	rk.start = rk.end
	rk.ops = slices.Grow(rk.ops[:0], len(rd))[:len(rd)]
	var sent, recv port
	var l load
	for i, op := range rd {
		n := int64(op.Len()) * e.es
		l.add(op.Kind, n)
		switch op.Kind {
		case schedule.OpSend:
			sent.n++
			sent.bytes += n
			rk.ops[i] = cpOp{at: sent}
		case schedule.OpRecv, schedule.OpRecvReduce:
			recv.n++
			recv.bytes += n
			rk.ops[i] = cpOp{at: recv}
		}
	}
	e.held -= rk.rc.RoundOps
	e.t.round(int(rk.rc.Rounds), l, &rk.rc)
	e.held += rk.rc.RoundOps
	rk.reduced, rk.copied = l.reduced, l.copied
	if e.limit >= 0 && e.held > e.limit {
		return errOver
	}
	return nil
}

// Match records each end's partner: its round start and place on its port.
func (e *engine) Match(send, recv schedule.Ref) error {
	s, d := &e.ranks[send.Rank], &e.ranks[recv.Rank]
	so, do := &s.ops[send.Op], &d.ops[recv.Op]
	so.partnerStart, so.partner = d.start, do.at
	do.partnerStart, do.partner = s.start, so.at
	e.rp.Complete(int(send.Rank))
	e.rp.Complete(int(recv.Rank))
	return nil
}

// Finish ends rank r's round, all of whose messages are matched, at the
// last completion of its messages, then its local operations. A message
// completes when both ends' ports have carried it and the messages queued
// before it (Critical's formulas).
func (e *engine) Finish(r int) error {
	rk := &e.ranks[r]
	rd, _, _ := e.rp.Round(r)
	end := rk.start
	for i, o := range rd {
		if !o.Kind.IsComm() {
			continue
		}
		op := &rk.ops[i]
		end = max(end, rk.start+e.cost(op.at), op.partnerStart+e.cost(op.partner))
	}
	rk.end = end + e.p.Gamma*float64(rk.reduced) + e.p.Beta*float64(rk.copied)
	return nil
}

// cost is the time from a round's start until its port has carried the
// messages up to q in the α-β-γ model.
func (e *engine) cost(q port) float64 {
	return e.p.Alpha*float64(q.n) + e.p.Beta*float64(q.bytes)
}
