// Package record is a recording transport: it turns code that is not a
// static schedule (communicator split, programs that mix collectives with
// point-to-point messages) into schedules the simulator and the cost models
// consume, the LogGOPSim/Schedgen approach.
//
// Wrap puts a recording endpoint in front of another transport's. It
// forwards every operation and records, per rank and in posting order, each
// send and receive it posts: the peer (a transport rank), the byte count and
// the message key. Zero-byte messages are messages and are recorded. The
// operations a rank posts between two waits form one round: callers that
// wait (the executor, a split's rounds, blocking Send and Recv) tell the
// transport where their rounds end through transport.EndRound, and a rank
// starts its round r+1 when its round r has completed, as in a schedule.
//
// Recorder.Trace turns the recording into a Trace: per rank, its rounds of
// sends and receives with their sizes. Trace.Generator replays it as a
// schedule.Generator for package sim (stage and flow models) and package
// model (α-β-γ, LogGP, critical path, energy, memory); WriteTo and Read
// save and load it as text (see Read for the format).
//
// What a trace does not hold:
//
//   - Local work. Reductions and copies happen above the transport, so a
//     trace has only Send and Recv operations, and the rounds of a schedule
//     that hold only local operations (a final copy, a reordering step) are
//     not in it. Simulators charge no network time to such rounds, except
//     that Sack's stage model, which aligns round i of every rank, counts
//     each of them as a stage of its rank.
//   - Shared memory. The recording endpoint does not offer the
//     shared-memory meetings and exchanges (transport.Meeter,
//     transport.Exchanger) of the transport it wraps, so every collective
//     runs its schedule as real messages while it records. It forwards the
//     optional interfaces the executor needs for correctness and cost
//     (Poller, Combiner, Checker, CallAborter, Modeler, SpinHinter and
//     Grouper, whose communicator views it wraps the same way), and
//     Responder, whose requests (the lookups of distributed group tables)
//     it records at both ends: at the owner, the request and its reply
//     join the round the owner was waiting in when its handler answered,
//     or form a round of their own.
//   - Concurrency on one rank. Rounds of non-blocking calls that run at the
//     same time on one rank are kept whole but serialised in the order of
//     their first posted operation, so the replay waits where the program
//     overlapped (and a program whose progress depended on that overlap may
//     replay into a deadlock, which Trace.Validate reports).
//   - Messages to self, which cross no network.
//   - Message keys. A schedule matches the messages between two ranks in
//     posting order; the Recorder uses the keys to order each round's
//     messages so that posting order matches what the transport matched.
//     When a rank received a peer's messages in another order than the peer
//     sent them across rounds (concurrent calls, point-to-point tags taken
//     out of order), no schedule expresses that: the receives take the
//     sizes of the sends in the sender's order, which keeps the bytes and
//     the rounds and approximates which of the receiver's rounds waits for
//     which send.
package record

import (
	"fmt"
	"slices"
	"sync"

	"github.com/scoll/scoll/transport"
)

// Recorder collects what the endpoints wrapped with it post, for one group
// of ranks. It is safe for concurrent use. Endpoints wrapped later for a
// rank already recorded continue that rank's recording.
type Recorder struct {
	mu       sync.Mutex
	size     int // 0 until the first Wrap
	err      error
	logs     []*rankLog      // by rank
	services map[uint64]bool // served by a Responder (Key.Comm of requests and replies)
}

// New returns an empty Recorder.
func New() *Recorder { return &Recorder{} }

// log returns the log of rank of a group of size ranks, noting an error
// when the group does not fit the ranks recorded so far.
func (r *Recorder) log(rank, size int) *rankLog {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.size == 0 && size >= 1 && size <= MaxRanks:
		r.size = size
		r.logs = make([]*rankLog, size)
	case size != r.size:
		if r.err == nil {
			r.err = fmt.Errorf("%w: an endpoint of a group of %d ranks wrapped with a recorder of %d", ErrInconsistent, size, r.size)
		}
		return newRankLog() // recorded nowhere
	}
	if rank < 0 || rank >= size {
		if r.err == nil {
			r.err = fmt.Errorf("%w: an endpoint of rank %d of %d wrapped", ErrInconsistent, rank, size)
		}
		return newRankLog()
	}
	if r.logs[rank] == nil {
		r.logs[rank] = newRankLog()
	}
	return r.logs[rank]
}

// event is one recorded operation.
type event struct {
	key   transport.Key
	bytes int64
	peer  int32
	recv  bool
}

// rankLog is one rank's recording.
//
// Invariant: for each open round o, len(o.msgs) == len(rounds[o.idx]) and
// o.msgs[i] is the Msg that posted rounds[o.idx][i].
type rankLog struct {
	mu     sync.Mutex
	rounds [][]event
	open   map[*transport.Waiter]*openRound
}

// openRound is a round whose operations have not all completed yet.
type openRound struct {
	idx  int
	msgs []*transport.Msg
}

func newRankLog() *rankLog {
	return &rankLog{open: make(map[*transport.Waiter]*openRound)}
}

// add records an operation posted with the waiter w.
func (l *rankLog) add(w *transport.Waiter, m *transport.Msg, ev event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	o := l.open[w]
	if o == nil {
		o = &openRound{idx: len(l.rounds)}
		l.open[w] = o
		l.rounds = append(l.rounds, nil)
	}
	o.msgs = append(o.msgs, m)
	l.rounds[o.idx] = append(l.rounds[o.idx], ev)
}

// withdraw forgets the operation m, which was cancelled before it matched.
func (l *rankLog) withdraw(m *transport.Msg) {
	l.mu.Lock()
	defer l.mu.Unlock()
	o := l.open[m.W]
	if o == nil {
		return
	}
	if i := slices.Index(o.msgs, m); i >= 0 {
		o.msgs = slices.Delete(o.msgs, i, i+1)
		l.rounds[o.idx] = slices.Delete(l.rounds[o.idx], i, i+1)
	}
	if len(o.msgs) == 0 {
		delete(l.open, m.W) // nothing left to end (and its round stays empty)
	}
}

// serve records a request from src that this rank's Responder answered:
// the request's receive and the reply's send join the round the rank
// posted last among those not yet complete (the handler ran while the rank
// waited for it), or form a round of their own when none is open.
func (l *rankLog) serve(src int, service uint64, req, reply int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := transport.Key{Comm: service}
	evs := []event{
		{key: k, bytes: int64(req), peer: int32(src), recv: true},
		{key: transport.ReplyKey(k), bytes: int64(reply), peer: int32(src)},
	}
	var last *openRound
	for _, o := range l.open {
		if last == nil || o.idx > last.idx {
			last = o
		}
	}
	if last == nil {
		l.rounds = append(l.rounds, evs)
		return
	}
	last.msgs = append(last.msgs, nil, nil)
	l.rounds[last.idx] = append(l.rounds[last.idx], evs...)
}

// end closes the round of w.
func (l *rankLog) end(w *transport.Waiter) {
	l.mu.Lock()
	delete(l.open, w)
	l.mu.Unlock()
}

// snapshot returns a copy of the rounds recorded so far.
func (l *rankLog) snapshot() [][]event {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([][]event, len(l.rounds))
	for i, rd := range l.rounds {
		out[i] = slices.Clone(rd)
	}
	return out
}

// Wrap returns an endpoint that forwards every operation to t and records
// what this rank posts into rec. It offers (transport.CapsOf) the optional
// interfaces of t that the executor relies on (see the package
// documentation), never the shared-memory ones, and transport.RoundMarker.
// A nil rec returns t itself.
func Wrap(t transport.Transport, rec *Recorder) transport.Transport {
	if rec == nil || t == nil {
		return t
	}
	inner := transport.CapsOf(t)
	e := &endpoint{t: t, log: rec.log(t.Rank(), t.Size()), rec: rec, inner: inner}
	// Forwarding what t lacks would behave as its absence does, except for
	// these four, which change what callers do by being offered: the
	// endpoint offers them only when t does.
	e.caps = transport.Caps{Checker: e, Poller: e, CallAborter: e, SpinHinter: e, ClockSharer: e, RoundMarker: e}
	if inner.Combiner != nil {
		e.caps.Combiner = e
	}
	if inner.Modeler != nil {
		e.caps.Modeler = inner.Modeler
	}
	if inner.Grouper != nil {
		e.caps.Grouper = e
	}
	if inner.Responder != nil {
		e.caps.Responder = e
	}
	// Settling records nothing: t's own does.
	e.caps.Settler = inner.Settler
	return e
}

// endpoint is a recording endpoint. The optional interfaces it always
// implements behave as their absence does when t lacks them: a Poller that
// does not poll, a Checker that finds nothing, and so on.
type endpoint struct {
	t     transport.Transport
	log   *rankLog
	rec   *Recorder
	inner transport.Caps // what t offers
	caps  transport.Caps // what the endpoint offers
}

var (
	_ transport.Transport   = (*endpoint)(nil)
	_ transport.Capser      = (*endpoint)(nil)
	_ transport.RoundMarker = (*endpoint)(nil)
	_ transport.Poller      = (*endpoint)(nil)
	_ transport.Checker     = (*endpoint)(nil)
	_ transport.CallAborter = (*endpoint)(nil)
	_ transport.SpinHinter  = (*endpoint)(nil)
	_ transport.ClockSharer = (*endpoint)(nil)
	_ transport.Combiner    = (*endpoint)(nil)
	_ transport.Grouper     = (*endpoint)(nil)
	_ transport.Responder   = (*endpoint)(nil)
)

// Caps returns what the endpoint offers (see Wrap).
func (e *endpoint) Caps() transport.Caps { return e.caps }

// Rank returns t's rank.
func (e *endpoint) Rank() int { return e.t.Rank() }

// Size returns t's size.
func (e *endpoint) Size() int { return e.t.Size() }

// Isend posts the send on t and records it.
func (e *endpoint) Isend(m *transport.Msg) error { return e.post(m, false) }

// Irecv posts the receive on t and records it.
func (e *endpoint) Irecv(m *transport.Msg) error { return e.post(m, true) }

func (e *endpoint) post(m *transport.Msg, recv bool) error {
	// Read m before posting: once posted, the transport writes to it.
	w, ev := m.W, event{key: m.Key, bytes: int64(len(m.Buf)), peer: int32(m.Peer), recv: recv}
	var err error
	if recv {
		err = e.t.Irecv(m)
	} else {
		err = e.t.Isend(m)
	}
	if err == nil {
		e.log.add(w, m, ev)
	}
	return err
}

// Cancel withdraws m on t; a withdrawn operation is no longer recorded.
func (e *endpoint) Cancel(m *transport.Msg) bool {
	if !e.t.Cancel(m) {
		return false
	}
	e.log.withdraw(m)
	return true
}

// Close closes t.
func (e *endpoint) Close() error { return e.t.Close() }

// EndRound closes the round of the operations posted with w, and passes
// the mark on to t.
func (e *endpoint) EndRound(w *transport.Waiter) {
	e.log.end(w)
	transport.EndRound(e.t, w)
}

// Poll polls t if t is a Poller.
func (e *endpoint) Poll() {
	if e.inner.Poller != nil {
		e.inner.Poller.Poll()
	}
}

// Park forwards to t if t is a Poller.
func (e *endpoint) Park(w *transport.Waiter) {
	if e.inner.Poller != nil {
		e.inner.Poller.Park(w)
	}
}

// Unpark forwards to t if t is a Poller.
func (e *endpoint) Unpark(w *transport.Waiter) {
	if e.inner.Poller != nil {
		e.inner.Poller.Unpark(w)
	}
}

// RecordCall forwards to t if t is a Checker.
func (e *endpoint) RecordCall(comm, seq, sig uint64) {
	if e.inner.Checker != nil {
		e.inner.Checker.RecordCall(comm, seq, sig)
	}
}

// CheckCall forwards to t if t is a Checker.
func (e *endpoint) CheckCall(comm, seq, sig uint64, full bool) error {
	if e.inner.Checker != nil {
		return e.inner.Checker.CheckCall(comm, seq, sig, full)
	}
	return nil
}

// AbortCall forwards to t if t is a CallAborter.
func (e *endpoint) AbortCall(comm, seq uint64, err error) {
	if e.inner.CallAborter != nil {
		e.inner.CallAborter.AbortCall(comm, seq, err)
	}
}

// SpinHint returns t's hint, or 0 (do not spin) when t gives none.
func (e *endpoint) SpinHint() int {
	if e.inner.SpinHinter != nil {
		return e.inner.SpinHinter.SpinHint()
	}
	return 0
}

// SharesClock reports whether t's ranks read one clock (false when t
// does not say).
func (e *endpoint) SharesClock() bool {
	cs := e.inner.ClockSharer
	return cs != nil && cs.SharesClock()
}

// CanCombine reports whether t accepts combining receives (it is offered
// only when t is a Combiner).
func (e *endpoint) CanCombine() bool { return e.inner.Combiner != nil && e.inner.Combiner.CanCombine() }

// Join joins the communicator on t (offered only when t is a Grouper) and
// hides the shared-memory paths of the view.
func (e *endpoint) Join(g transport.Group) transport.GroupView {
	v := e.inner.Grouper.Join(g)
	return &groupView{v: v, checker: transport.CapsOf(v).Checker}
}

// groupView is a communicator view that offers only Checker.
type groupView struct {
	v       transport.GroupView
	checker transport.Checker
}

var _ transport.Checker = (*groupView)(nil)

// Caps returns what the view offers: a Checker.
func (v *groupView) Caps() transport.Caps { return transport.Caps{Checker: v} }

// Leave leaves the wrapped view.
func (v *groupView) Leave() { v.v.Leave() }

// RecordCall forwards to the view if it is a Checker.
func (v *groupView) RecordCall(comm, seq, sig uint64) {
	if v.checker != nil {
		v.checker.RecordCall(comm, seq, sig)
	}
}

// CheckCall forwards to the view if it is a Checker.
func (v *groupView) CheckCall(comm, seq, sig uint64, full bool) error {
	if v.checker != nil {
		return v.checker.CheckCall(comm, seq, sig, full)
	}
	return nil
}

// Serve serves service on t (offered only when t is a Responder) with h,
// recording each request it answers on this rank (rankLog.serve).
func (e *endpoint) Serve(service uint64, h func(src int, req []byte) []byte) {
	e.rec.serving(service)
	log := e.log
	e.inner.Responder.Serve(service, func(src int, req []byte) []byte {
		reply := h(src, req)
		log.serve(src, service, len(req), len(reply))
		return reply
	})
}

// Unserve stops serving service on t.
func (e *endpoint) Unserve(service uint64) { e.inner.Responder.Unserve(service) }

// serving notes that requests and replies on service go through a
// Responder: their keys carry tags the handlers do not see.
func (r *Recorder) serving(service uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.services == nil {
		r.services = make(map[uint64]bool)
	}
	r.services[service] = true
}
