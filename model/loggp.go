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
// A rank's sends wait for its CPU and send gap in creation order, and so do
// the messages at a rank for its CPU and receive gap: creation order is
// time order for both (a round's sends are created together, a message at
// its send's time plus o + L). So each rank keeps them in two queues and
// only a queue's head is among the events: a rank that posts P sends at
// once costs O(P log P), not P events waiting and retried P times each. A
// round's receives are posted by one event: they are created together, so
// nothing comes between them. Times are kept as integer multiples of a
// decimal quantum (a femtosecond, or coarser when the schedules are long),
// so that equal sums are equal whatever their order, as LogGOPSim's integer
// nanoseconds are.

// lgKind is what a LogGP event is.
type lgKind uint8

const (
	lgSend   lgKind = iota // a posted send waiting for the CPU and send gap
	lgRecv                 // a receive being posted
	lgMsg                  // a message at its receiver
	lgMarker               // the end of a round's messages (zero computation)
	lgCalc                 // a round's computation
)

// lgEvent is one event of the LogGP simulation.
type lgEvent struct {
	t     int64  // quanta
	seq   uint64 // creation order, for events at the same time
	rank  int32  // where it happens
	peer  int32  // send: the destination; receive, message: the source
	kind  lgKind //
	bytes int64  // send, message: the bytes; calc: the picoseconds
}

// lgRank is one rank's state in the LogGP simulation.
type lgRank struct {
	cpu, sendGap, recvGap int64 // when each is free
	left                  int   // message operations of the round not yet complete
	calc                  int64 // the current round's computation, in quanta
	done                  bool  // no more rounds
	sends, msgs           lgQueue
	recvs                 []int32 // the sources of the current round's receives
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

// lgSim is the LogGP simulation of one set of schedules.
type lgSim struct {
	s         *schedule.Streams
	es        int64
	o, g, l   int64   // quanta
	perByte   float64 // G in quanta per byte
	gamma     float64 // γ in quanta per byte
	ranks     []lgRank
	events    lgEvents
	seq       uint64
	posted    map[uint64]int32 // posted receives not yet matched, by (rank, source)
	taken     map[uint64]int32 // messages taken and not yet matched, by (rank, source)
	roundsRun []int            // rounds started, for errors
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
		s: schedule.NewStreams(size, gen, nil), es: int64(elemSize),
		o: in(p.O), g: in(p.G), l: in(p.L), perByte: p.GPerByte * q, gamma: p.Gamma * q,
		ranks: make([]lgRank, size), posted: map[uint64]int32{}, taken: map[uint64]int32{},
		roundsRun: make([]int, size),
	}
	defer e.s.Close()
	for r := range size {
		if arrival != nil {
			t := in(arrival[r])
			e.ranks[r] = lgRank{cpu: t, sendGap: t, recvGap: t}
		}
		if err := e.next(r); err != nil {
			return 0, err
		}
	}
	for e.events.len() > 0 {
		if err := e.step(e.events.pop()); err != nil {
			return 0, err
		}
	}
	end := int64(0)
	for r := range e.ranks {
		rk := &e.ranks[r]
		if !rk.done {
			return 0, fmt.Errorf("%w: rank %d waits forever in its round %d (unmatched messages)", ErrArgument, r, e.roundsRun[r]-1)
		}
		end = max(end, rk.cpu)
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

// next starts rank r's next round that has operations, when its CPU is
// free, or marks the rank done.
func (e *lgSim) next(r int) error {
	rk := &e.ranks[r]
	for {
		rd, _, ok, err := e.s.Next(r)
		if err != nil {
			return fmt.Errorf("model: rank %d: %w", r, err)
		}
		if !ok {
			rk.done = true
			return nil
		}
		e.roundsRun[r]++
		var reduced int64
		rk.left = 0
		for _, op := range rd {
			n := int64(op.Len()) * e.es
			if op.Kind == schedule.OpSend {
				rk.left++
				e.queue(&rk.sends, lgEvent{t: max(rk.cpu, rk.sendGap), rank: int32(r), peer: int32(op.Peer), kind: lgSend, bytes: n})
			}
			if op.Kind == schedule.OpRecvReduce || op.Kind == schedule.OpReduce {
				reduced += n
			}
		}
		rk.recvs = rk.recvs[:0]
		for _, op := range rd {
			if op.Kind.IsRecv() {
				rk.left++
				rk.recvs = append(rk.recvs, int32(op.Peer))
			}
		}
		if len(rk.recvs) > 0 {
			e.push(lgEvent{t: rk.cpu, rank: int32(r), kind: lgRecv})
		}
		rk.calc = int64(math.Round(e.gamma * float64(reduced)))
		if rk.left > 0 {
			return nil
		}
		if rk.calc > 0 {
			e.push(lgEvent{t: rk.cpu, rank: int32(r), kind: lgCalc, bytes: rk.calc})
			return nil
		}
	}
}

// key names the pair (rank, source) in the matching tables.
func key(rank, src int32) uint64 { return uint64(uint32(rank))<<32 | uint64(uint32(src)) }

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
		return e.complete(int(ev.rank))
	case lgRecv:
		for _, src := range rk.recvs {
			k := key(ev.rank, src)
			if e.taken[k] > 0 {
				decr(e.taken, k)
				if err := e.complete(int(ev.rank)); err != nil {
					return err
				}
				continue
			}
			e.posted[k]++
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
		k := key(ev.rank, ev.peer)
		if e.posted[k] > 0 {
			decr(e.posted, k)
			return e.complete(int(ev.rank))
		}
		e.taken[k]++
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
		return e.next(int(ev.rank))
	}
	return nil
}

// complete ends one message operation of rank r's round; the last one
// marks the end of the round's messages.
func (e *lgSim) complete(r int) error {
	rk := &e.ranks[r]
	if rk.left--; rk.left == 0 {
		e.push(lgEvent{t: rk.cpu, rank: int32(r), kind: lgMarker})
	}
	return nil
}

// decr decrements a count in a matching table, deleting it at zero.
func decr(m map[uint64]int32, k uint64) {
	if m[k]--; m[k] == 0 {
		delete(m, k)
	}
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
