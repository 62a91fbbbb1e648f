package schedule

import (
	"fmt"
	"iter"
)

// This file is the one replay of schedules that every consumer shares: the
// verifier (Verify), the simulators (package sim), the critical-path model
// (package model: its α-β-γ and LogGP halves) and the executor's message
// numbering (package exec).
//
// A replay pulls every rank's schedule round by round from its generator
// ([Streams]: one round per rank in memory at a time, never the whole
// schedule), posts each round's messages, matches sends with receives by
// the rule of the IR (the k-th send from a to b meets the k-th receive at b
// from a: [MessageIndex]), and moves a rank to its next round once every
// message of its round has completed. What a match, a completion and the end
// of a round mean (data moved, time charged, a flow started) is the
// consumer's: it plugs in a [ReplayHooks].

// Streams yields every rank's schedule round by round.
type Streams struct {
	size    int
	next    []func() (Round, int, bool)
	stop    []func()
	errs    []error
	scratch []int
}

// NewStreams starts the per-rank streams of gen on size ranks. setup, if
// not nil, configures each rank's builder before gen runs (bounds,
// KeepEmpty, SkipOverlapCheck). The ranks' generators are in progress
// together but run one at a time, when their next round is pulled; Close
// stops those that did not finish.
func NewStreams(size int, gen Generator, setup func(b *Builder)) *Streams {
	s := &Streams{size: size, next: make([]func() (Round, int, bool), size), stop: make([]func(), size),
		errs: make([]error, size), scratch: make([]int, size)}
	for r := range size {
		s.next[r], s.stop[r] = iter.Pull2(func(yield func(Round, int) bool) {
			b := NewStream(r, size, yield)
			if setup != nil {
				setup(b)
			}
			gen(b)
			b.EndRound()
			s.errs[r] = b.Err()
			s.scratch[r] = b.ScratchLen()
		})
	}
	return s
}

// Size returns the number of ranks.
func (s *Streams) Size() int { return s.size }

// Next returns rank r's next round (valid until the next call for r) and
// the scratch elements its schedule has allocated so far, or ok false when
// r has no more rounds; err is the builder's error, once r has no more
// rounds.
func (s *Streams) Next(r int) (rd Round, scratch int, ok bool, err error) {
	if s.next[r] == nil {
		return nil, 0, false, nil
	}
	rd, scratch, ok = s.next[r]()
	if !ok {
		s.next[r] = nil
		s.stop[r] = nil
		return nil, 0, false, s.errs[r]
	}
	return rd, scratch, true, nil
}

// Scratch returns the scratch elements rank r's schedule allocated in all,
// once Next has reported its end.
func (s *Streams) Scratch(r int) int { return s.scratch[r] }

// Close stops every stream that has not ended.
func (s *Streams) Close() {
	for r, stop := range s.stop {
		if stop != nil {
			stop()
			s.stop[r] = nil
		}
	}
}

// Ref names a message end in a replay: operation Op of rank Rank's current
// round. Consumers that post sends themselves ([Replay.Arrive]) choose their
// own numbering for the send side.
type Ref struct{ Rank, Op int32 }

// ReplayHooks is what a replay's consumer does at its events. A hook that
// returns an error stops the replay with that error.
type ReplayHooks interface {
	// Start is called when rank r begins its round rd (index is the
	// round's number on r, from 0; scratch the elements its schedule has
	// allocated so far), before any of the round's messages is matched: a
	// send's data is the content of its region now.
	Start(r, index int, rd Round, scratch int) error
	// Match is called when a send and the receive it meets are both
	// posted (in Eager replays, when the send has arrived and the receive
	// is posted). The hook completes the operations it considers done
	// (Replay.Complete).
	Match(send, recv Ref) error
	// Finish is called when every message operation of rank r's current
	// round has completed, before the rank moves on (in Hold replays, when
	// the consumer calls Advance); the round's local operations belong
	// here.
	Finish(r int) error
}

// ReplayOptions configure a replay.
type ReplayOptions struct {
	// Eager leaves the send side of matching to the consumer: posted sends
	// are not queued, and the consumer reports each message's arrival with
	// Arrive (the flow simulator, whose sends complete when their bytes
	// have moved, before or after the receive is posted). Without it
	// every posted send is queued and matched at once (rendezvous).
	Eager bool
	// Hold keeps a rank in its finished round until the consumer calls
	// Advance, for timed consumers whose rounds take time of their own
	// once their messages have completed: the LogGP model's CPU computes
	// the round's reductions when it is free, and only then posts the next
	// round. Without it a rank moves on as soon as Finish returns.
	Hold bool
	// Arrival is every rank's arrival time at the collective (nil: all at
	// 0), for timed consumers. The replay itself is untimed: it starts
	// every rank at once, and Arrival says when each start happens.
	Arrival []float64
	// Setup configures each rank's builder (see NewStreams).
	Setup func(b *Builder)
}

// Replay drives the schedules of every rank in dependency order.
type Replay struct {
	s       *Streams
	h       ReplayHooks
	opt     ReplayOptions
	ranks   []replayRank
	pairs   map[int64]pairQueue
	ready   []int32
	moving  []int32 // held ranks the consumer has advanced
	started bool
}

// replayRank is one rank's progress.
type replayRank struct {
	round   Round
	index   int32 // rounds started
	pending int32 // message operations of the round not yet complete
	posted  bool  // the current round is posted and not finished
	held    bool  // the round is finished and waits for Advance (Hold)
	done    bool  // no more rounds
}

// pairQueue holds the unmatched message ends from one rank to another, in
// posting order: only sends or only receives are ever waiting. The first
// entry is kept inline, so that the common single message in flight costs
// no allocation.
type pairQueue struct {
	sends bool
	head  Ref
	rest  []Ref
}

// NewReplay prepares the replay of gen on size ranks; Run runs it and Close
// releases the streams.
func NewReplay(size int, gen Generator, h ReplayHooks, opt ReplayOptions) *Replay {
	return &Replay{s: NewStreams(size, gen, opt.Setup), h: h, opt: opt, ranks: make([]replayRank, size),
		pairs: make(map[int64]pairQueue)}
}

// Close stops the ranks' generators that have not ended.
func (e *Replay) Close() { e.s.Close() }

// Size returns the number of ranks.
func (e *Replay) Size() int { return len(e.ranks) }

// Arrival returns rank r's arrival time (ReplayOptions.Arrival).
func (e *Replay) Arrival(r int) float64 {
	if e.opt.Arrival == nil {
		return 0
	}
	return e.opt.Arrival[r]
}

// Streams returns the replay's streams (for the schedules' scratch sizes).
func (e *Replay) Streams() *Streams { return e.s }

// Round returns rank r's current round, its number, and whether it is
// posted and not finished (false before r's first round, after its last,
// and while a Hold replay holds it after Finish).
func (e *Replay) Round(r int) (rd Round, index int, posted bool) {
	rk := &e.ranks[r]
	return rk.round, int(rk.index) - 1, rk.posted
}

// Done reports whether rank r has run all its rounds.
func (e *Replay) Done(r int) bool { return e.ranks[r].done }

// Run starts every rank (in rank order) and drives them until no rank can
// move. It returns the first error of a hook or a generator (wrapped with
// the rank: "rank r: ..."); ranks left not Done are waiting for messages
// that never come (a deadlock), which the consumer reports.
func (e *Replay) Run() error {
	if !e.started {
		e.started = true
		for r := range e.ranks {
			if err := e.Begin(r); err != nil {
				return err
			}
		}
	}
	return e.Drain()
}

// Begin starts rank r's first round (for consumers that start ranks at
// their own times: call it once per rank instead of Run, then Drain).
func (e *Replay) Begin(r int) error {
	e.started = true
	return e.next(r)
}

// Drain finishes the rounds of the ranks whose messages have all completed
// and starts their next rounds (in Hold replays, those of the ranks
// advanced), until none is left.
func (e *Replay) Drain() error {
	for len(e.ready) > 0 || len(e.moving) > 0 {
		if n := len(e.ready); n > 0 {
			r := int(e.ready[n-1])
			e.ready = e.ready[:n-1]
			if err := e.finish(r); err != nil {
				return err
			}
			continue
		}
		r := int(e.moving[len(e.moving)-1])
		e.moving = e.moving[:len(e.moving)-1]
		if err := e.next(r); err != nil {
			return err
		}
	}
	return nil
}

func (e *Replay) finish(r int) error {
	rk := &e.ranks[r]
	rk.held = e.opt.Hold
	if err := e.h.Finish(r); err != nil {
		return err
	}
	rk.posted = false
	if e.opt.Hold {
		return nil
	}
	return e.next(r)
}

// Advance moves rank r, held in its finished round (ReplayOptions.Hold),
// on to its next round at the next Drain; called from Finish, as soon as
// Finish returns. A rank that is not held is an error.
func (e *Replay) Advance(r int) error {
	if r < 0 || r >= len(e.ranks) || !e.ranks[r].held {
		return fmt.Errorf("rank %d advanced, but it is not held after a round", r)
	}
	e.ranks[r].held = false
	e.moving = append(e.moving, int32(r))
	return nil
}

// next starts rank r's next round and posts its messages.
func (e *Replay) next(r int) error {
	rk := &e.ranks[r]
	rd, scratch, ok, err := e.s.Next(r)
	if !ok {
		rk.round = nil
		if err != nil {
			return fmt.Errorf("rank %d: %w", r, err)
		}
		rk.done = true
		return nil
	}
	rk.round = rd
	rk.index++
	rk.posted = true
	rk.pending = 0
	for _, o := range rd {
		if o.Kind.IsComm() {
			rk.pending++
		}
	}
	if err := e.h.Start(r, int(rk.index)-1, rd, scratch); err != nil {
		return err
	}
	if rk.pending == 0 {
		e.ready = append(e.ready, int32(r))
		return nil
	}
	for i, o := range rd {
		switch {
		case o.Kind == OpSend && !e.opt.Eager:
			if err := e.post(r, o.Peer, true, Ref{int32(r), int32(i)}); err != nil {
				return err
			}
		case o.Kind.IsRecv():
			if err := e.post(o.Peer, r, false, Ref{int32(r), int32(i)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Arrive reports, in an Eager replay, that a message from src has arrived
// at dst: it meets dst's oldest waiting receive from src, or waits for the
// next one dst posts. ref is the consumer's name for the message.
func (e *Replay) Arrive(src, dst int, ref Ref) error {
	return e.post(src, dst, true, ref)
}

// post matches a message end from src to dst with the oldest waiting end
// of the other kind between the same ranks, or makes it wait.
func (e *Replay) post(src, dst int, send bool, me Ref) error {
	if src < 0 || src >= len(e.ranks) || dst < 0 || dst >= len(e.ranks) {
		return fmt.Errorf("rank %d: message between ranks %d and %d of %d", me.Rank, src, dst, len(e.ranks))
	}
	key := int64(src)*int64(len(e.ranks)) + int64(dst)
	q, ok := e.pairs[key]
	switch {
	case !ok:
		e.pairs[key] = pairQueue{sends: send, head: me}
		return nil
	case q.sends == send:
		q.rest = append(q.rest, me)
		e.pairs[key] = q
		return nil
	}
	m := q.head
	if len(q.rest) == 0 {
		delete(e.pairs, key)
	} else {
		q.head, q.rest = q.rest[0], q.rest[1:]
		e.pairs[key] = q
	}
	if send {
		return e.h.Match(me, m)
	}
	return e.h.Match(m, me)
}

// Complete marks one message operation of rank r's current round done;
// when it was the last, the round is finished once the hook that called
// Complete returns.
func (e *Replay) Complete(r int) {
	rk := &e.ranks[r]
	rk.pending--
	if rk.pending == 0 {
		e.ready = append(e.ready, int32(r))
	}
}

// Pending returns how many message operations of rank r's current round
// have not completed.
func (e *Replay) Pending(r int) int { return int(e.ranks[r].pending) }

// MessageIndex numbers the messages of one rank's schedule: the i-th
// message operation (sends and receives, in schedule order) is the
// index[i]-th message the rank sends to (or receives from) that peer, from
// 0. A send and a receive meet exactly when they have the same index on
// their pair of ranks: the executor tags messages with it, and the replay
// matches in this order.
func MessageIndex(rounds []Round) []int64 {
	n := 0
	for _, rd := range rounds {
		for _, o := range rd {
			if o.Kind.IsComm() {
				n++
			}
		}
	}
	index := make([]int64, 0, n)
	sent := map[int]int64{}
	recvd := map[int]int64{}
	for _, rd := range rounds {
		for _, o := range rd {
			switch {
			case o.Kind == OpSend:
				index = append(index, sent[o.Peer])
				sent[o.Peer]++
			case o.Kind.IsRecv():
				index = append(index, recvd[o.Peer])
				recvd[o.Peer]++
			}
		}
	}
	return index
}
