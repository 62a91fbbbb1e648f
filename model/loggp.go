package model

import (
	"fmt"
	"math"

	"github.com/scoll/scoll/schedule"
)

// This file is the LogGP half of the critical path: an event-driven
// simulation of LogGP as Alexandrov et al. define it and as LogGOPSim
// simulates it, on the schedules' dependencies as schedule.WriteGOAL
// exports them. Each rank has one CPU and a network interface with a send
// gap and a receive gap:
//
//   - a send starts once the CPU and the send gap are free, at t; it holds
//     the CPU until t + o and the send gap until t + g + (s−1)·G, and its
//     message reaches the receiver at t + o + L;
//   - a message that has reached its receiver is taken once the receiver's
//     CPU and receive gap are free, at t, whether or not its receive is
//     posted yet; it holds the CPU until t + o + (s−1)·G and the receive
//     gap until t + g + (s−1)·G, and completes its receive (at once if
//     posted, else when the receive is posted);
//   - a receive costs nothing to post;
//   - when a round's messages have completed the rank's CPU computes the
//     round's reductions (γ per byte), and the next round's operations are
//     posted when the CPU is free: sends at once (each waiting its turn for
//     the CPU and the gap), receives matched against messages already taken.
//
// A message of s bytes thus costs o + (s−1)·G + L + o end to end, and zero-
// byte messages are charged as one-byte ones. Events at the same time are
// taken in the order they were created; a round's sends are created before
// its receives, in posting order.
//
// The simulation is a consumer of the schedule replay (schedule.Replay),
// which streams the rounds, matches messages and moves ranks from round to
// round; what is LogGP's is the clock. The replay is eager (a message meets
// its receive when the receiver's CPU takes it: Replay.Arrive) and holds a
// rank whose round's messages have completed (ReplayOptions.Hold) until its
// CPU has computed the round's reductions: only then is the next round
// posted. The replay posts a round's receives when the round starts; the
// simulation posts them, in LogGP time, by one event when the CPU is free,
// and a message matched before that completes its receive then.
//
// A rank's sends wait for its CPU and send gap in creation order, and so do
// the messages at a rank for its CPU and receive gap: creation order is
// time order for both (a round's sends are created together, a message at
// its send's time plus o + L). So each rank keeps them in two queues and
// only a queue's head is among the events: a rank that posts P sends at
// once costs O(P log P), not P events waiting and retried P times each.
// Times are kept as integer multiples of a decimal quantum (a femtosecond,
// or coarser when the schedules are long), so that equal sums are equal
// whatever their order, as LogGOPSim's integer nanoseconds are.

// lgKind is what a LogGP event is.
type lgKind uint8

const (
	lgSend   lgKind = iota // a posted send waiting for the CPU and send gap
	lgRecv                 // a round's receives being posted
	lgMsg                  // a message at its receiver
	lgMarker               // the end of a round's messages
	lgCalc                 // a round's computation
)

// lgEvent is one event of the LogGP simulation.
type lgEvent struct {
	t     int64  // quanta
	seq   uint64 // creation order, for events at the same time
	rank  int32  // where it happens
	peer  int32  // send: the destination; message: the source
	kind  lgKind //
	bytes int64  // send, message: the bytes; calc: the quanta
}

// lgRank is one rank's state in the LogGP simulation.
type lgRank struct {
	cpu, sendGap, recvGap int64 // when each is free
	calc                  int64 // the current round's computation, in quanta
	comm                  bool  // the current round has messages
	posted                bool  // its receives are posted (its lgRecv has run)
	early                 int32 // its receives matched before they were posted
	sends, msgs           lgQueue
}

// lgQueue is a FIFO of a rank's sends or arrived messages, whose head alone
// is among the simulation's events.
type lgQueue struct {
	q    []lgEvent
	head int
}

func (q *lgQueue) len() int { return len(q.q) - q.head }

// add appends ev and reports whether it is the head.
func (q *lgQueue) add(ev lgEvent) bool {
	if q.head > 0 && q.head == len(q.q) {
		q.q, q.head = q.q[:0], 0
	}
	q.q = append(q.q, ev)
	return q.len() == 1
}

// drop removes the head and returns the next one, if any.
func (q *lgQueue) drop() (lgEvent, bool) {
	q.head++
	if q.len() == 0 {
		q.q, q.head = q.q[:0], 0
		return lgEvent{}, false
	}
	return q.q[q.head], true
}

// lgSim is the LogGP simulation of one set of schedules: the hooks of an
// eager, holding replay (schedule.ReplayHooks) and the events that drive
// it.
type lgSim struct {
	rp      *schedule.Replay
	es      int64
	o, g, l int64   // quanta
	perByte float64 // G in quanta per byte
	gamma   float64 // γ in quanta per byte
	ranks   []lgRank
	events  lgEvents
	seq     uint64
}

// quanta returns how many of the finest decimal time quantum, no finer than
// a femtosecond, make a second, such that times up to bound seconds fit an
// int64 eight times over. It is a power of ten, exact in a float64.
func quanta(bound float64) float64 {
	return math.Pow(10, min(15, -math.Ceil(math.Log10(bound/(1<<60)))))
}

// logGPBound bounds the LogGP time of schedules with counts c: the time
// every resource of every rank could be held, plus every message's
// latency, after the last arrival.
func logGPBound(c Counts, p Params, lastArrival float64) float64 {
	t := c.Total
	return lastArrival + float64(t.MsgsSent+t.MsgsRecv)*(p.L+p.O+p.G) +
		2*float64(t.BytesSent+t.BytesRecv)*p.GPerByte + float64(t.BytesReduced)*p.Gamma
}

// logGPPath runs the LogGP simulation of gen on size ranks, rank r starting
// at arrival[r] (nil: all at 0), and returns the time in seconds at which
// the last rank's CPU is free. bound bounds that time (logGPBound).
func logGPPath(size, elemSize int, gen schedule.Generator, p Params, arrival []float64, bound float64) (float64, error) {
	q := quanta(bound)
	in := func(s float64) int64 { return int64(math.Round(s * q)) }
	e := &lgSim{
		es: int64(elemSize), o: in(p.O), g: in(p.G), l: in(p.L), perByte: p.GPerByte * q, gamma: p.Gamma * q,
		ranks: make([]lgRank, size),
	}
	e.rp = schedule.NewReplay(size, gen, e, schedule.ReplayOptions{Eager: true, Hold: true, Arrival: arrival})
	defer e.rp.Close()
	// Every rank posts its first round at its arrival, in rank order.
	for r := range size {
		t := in(e.rp.Arrival(r))
		e.ranks[r].cpu, e.ranks[r].sendGap, e.ranks[r].recvGap = t, t, t
		if err := e.rp.Begin(r); err != nil {
			return 0, fmt.Errorf("model: %w", err)
		}
		if err := e.rp.Drain(); err != nil {
			return 0, fmt.Errorf("model: %w", err)
		}
	}
	for e.events.len() > 0 {
		if err := e.step(e.events.pop()); err != nil {
			return 0, fmt.Errorf("model: %w", err)
		}
	}
	end := int64(0)
	for r := range e.ranks {
		if !e.rp.Done(r) {
			_, i, _ := e.rp.Round(r)
			return 0, fmt.Errorf("%w: rank %d waits forever in its round %d (unmatched messages)", ErrArgument, r, i)
		}
		end = max(end, e.ranks[r].cpu)
	}
	return float64(end) / q, nil
}

// push adds an event created now.
func (e *lgSim) push(ev lgEvent) {
	e.seq++
	ev.seq = e.seq
	e.events.add(ev, true)
}

// queue adds an event created now to a rank's queue, and to the events if
// it is the queue's head.
func (e *lgSim) queue(q *lgQueue, ev lgEvent) {
	e.seq++
	ev.seq = e.seq
	if q.add(ev) {
		e.events.add(ev, true)
	}
}

// advance drops the head of a queue, just taken, and puts the next one
// among the events, no earlier than free.
func (e *lgSim) advance(q *lgQueue, free int64) {
	if ev, ok := q.drop(); ok {
		ev.t = max(ev.t, free)
		e.events.add(ev, false)
	}
}

// Start posts rank r's round, its CPU being free: its sends wait for the
// CPU and the send gap, its receives are posted by an event when the CPU
// is free.
func (e *lgSim) Start(r, _ int, rd schedule.Round, _ int) error {
	rk := &e.ranks[r]
	rk.comm, rk.posted, rk.early = false, false, 0
	recv := false
	var reduced int64
	for _, op := range rd {
		n := int64(op.Len()) * e.es
		switch op.Kind {
		case schedule.OpSend:
			if op.Peer < 0 || op.Peer >= len(e.ranks) {
				return fmt.Errorf("rank %d: message between ranks %d and %d of %d", r, r, op.Peer, len(e.ranks))
			}
			rk.comm = true
			e.queue(&rk.sends, lgEvent{t: max(rk.cpu, rk.sendGap), rank: int32(r), peer: int32(op.Peer), kind: lgSend, bytes: n})
		case schedule.OpRecvReduce:
			reduced += n
			recv = true
		case schedule.OpRecv:
			recv = true
		case schedule.OpReduce:
			reduced += n
		}
	}
	if recv {
		rk.comm = true
		e.push(lgEvent{t: rk.cpu, rank: int32(r), kind: lgRecv})
	}
	rk.calc = int64(math.Round(e.gamma * float64(reduced)))
	return nil
}

// Match completes a receive whose message the receiver's CPU has taken,
// or counts it until its round's receives are posted.
func (e *lgSim) Match(_, recv schedule.Ref) error {
	if rk := &e.ranks[recv.Rank]; !rk.posted {
		rk.early++
		return nil
	}
	e.rp.Complete(int(recv.Rank))
	return nil
}

// Finish ends rank r's round, whose messages have all completed: the CPU
// computes the round's reductions when it is free, then the rank moves on.
func (e *lgSim) Finish(r int) error {
	rk := &e.ranks[r]
	switch {
	case rk.comm:
		e.push(lgEvent{t: rk.cpu, rank: int32(r), kind: lgMarker})
	case rk.calc > 0:
		e.push(lgEvent{t: rk.cpu, rank: int32(r), kind: lgCalc, bytes: rk.calc})
	default:
		return e.rp.Advance(r)
	}
	return nil
}

// wire is the per-byte time of a message of n bytes: (n−1)·G.
func (e *lgSim) wire(n int64) int64 {
	return int64(math.Round(e.perByte * float64(max(n-1, 0))))
}

// step takes one event, or puts it back for when its resources are free.
func (e *lgSim) step(ev lgEvent) error {
	rk := &e.ranks[ev.rank]
	switch ev.kind {
	case lgSend:
		if free := max(rk.cpu, rk.sendGap); free > ev.t {
			ev.t = free
			e.events.add(ev, false)
			return nil
		}
		rk.cpu = ev.t + e.o
		rk.sendGap = ev.t + e.g + e.wire(ev.bytes)
		e.advance(&rk.sends, max(rk.cpu, rk.sendGap))
		e.queue(&e.ranks[ev.peer].msgs, lgEvent{t: ev.t + e.o + e.l, rank: ev.peer, peer: ev.rank, kind: lgMsg, bytes: ev.bytes})
		e.rp.Complete(int(ev.rank))
	case lgRecv:
		rk.posted = true
		for ; rk.early > 0; rk.early-- {
			e.rp.Complete(int(ev.rank))
		}
	case lgMsg:
		if free := max(rk.cpu, rk.recvGap); free > ev.t {
			ev.t = free
			e.events.add(ev, false)
			return nil
		}
		w := e.wire(ev.bytes)
		rk.cpu = ev.t + e.o + w
		rk.recvGap = ev.t + e.g + w
		e.advance(&rk.msgs, max(rk.cpu, rk.recvGap))
		if err := e.rp.Arrive(int(ev.peer), int(ev.rank), schedule.Ref{Rank: ev.peer}); err != nil {
			return err
		}
	case lgMarker, lgCalc:
		if rk.cpu > ev.t {
			ev.t = rk.cpu
			e.events.add(ev, false)
			return nil
		}
		if ev.kind == lgMarker && rk.calc > 0 {
			e.push(lgEvent{t: rk.cpu, rank: ev.rank, kind: lgCalc, bytes: rk.calc})
			return nil
		}
		rk.cpu = ev.t + ev.bytes
		if err := e.rp.Advance(int(ev.rank)); err != nil {
			return err
		}
	}
	return e.rp.Drain()
}

// lgEvents orders the simulation's events by (time, creation). Events
// created at the current time come after every other event of that time, in
// creation order: they wait in a FIFO, and only the others go through the
// heap.
type lgEvents struct {
	heap lgHeap
	now  lgQueue // events created at the current time
	t    int64   // the current time
}

func (q *lgEvents) len() int { return len(q.heap) + q.now.len() }

// add adds an event, created now if fresh.
func (q *lgEvents) add(ev lgEvent, fresh bool) {
	if fresh && ev.t == q.t {
		q.now.add(ev)
		return
	}
	q.heap.push(ev)
}

// pop removes and returns the first event.
func (q *lgEvents) pop() lgEvent {
	var ev lgEvent
	if q.now.len() > 0 && (len(q.heap) == 0 || q.now.q[q.now.head].before(q.heap[0])) {
		ev = q.now.q[q.now.head]
		q.now.drop()
	} else {
		ev = q.heap.pop()
	}
	q.t = ev.t
	return ev
}

// lgHeap is a 4-ary min-heap of events by (time, creation): shallower
// than a binary heap, and each level's children share a cache line or two.
type lgHeap []lgEvent

func (h lgEvent) before(o lgEvent) bool { return h.t < o.t || h.t == o.t && h.seq < o.seq }

func (h *lgHeap) push(ev lgEvent) {
	*h = append(*h, ev)
	q := *h
	i := len(q) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !ev.before(q[p]) {
			break
		}
		q[i] = q[p]
		i = p
	}
	q[i] = ev
}

func (h *lgHeap) pop() lgEvent {
	q := *h
	top := q[0]
	last := q[len(q)-1]
	q = q[:len(q)-1]
	*h = q
	if len(q) == 0 {
		return top
	}
	i := 0
	for {
		c := 4*i + 1
		if c >= len(q) {
			break
		}
		m := c
		for k := c + 1; k < min(c+4, len(q)); k++ {
			if q[k].before(q[m]) {
				m = k
			}
		}
		if !q[m].before(last) {
			break
		}
		q[i] = q[m]
		i = m
	}
	q[i] = last
	return top
}
