// Package transport defines the small point-to-point interface scoll's
// executor runs schedules over, and the completion primitive shared by every
// implementation.
//
// A transport moves byte buffers between ranks of one group. Messages match by
// source and Key, in posting order among messages with equal source and Key.
// Implementations: transport/inproc (goroutine ranks in one process); others
// live in their own packages. Every implementation passes the conformance
// suite in transport/transporttest.
package transport

import (
	"context"
	"fmt"
	"github.com/scoll/scoll/internal/mem"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/scoll/scoll/internal/errs"
)

// Key identifies a message for matching.
type Key struct {
	// Comm is the communicator's context id.
	Comm uint64
	// Seq is the collective's sequence number on the communicator, or 0 for
	// point-to-point messages.
	Seq uint64
	// Tag is the message's index between a pair of ranks within a collective,
	// or the user's tag for point-to-point messages.
	Tag int64
}

// Msg is one posted send or receive. The caller owns it; it must not be
// reused or its buffer touched until the Msg has completed (W.Done called).
type Msg struct {
	// Peer is the destination of a send or the source of a receive.
	Peer int
	Key  Key
	// Buf is the data to send, or the space to receive into.
	Buf []byte
	// N is set on completion of a receive: the number of bytes received.
	N int
	// Err is set on completion when the operation failed.
	Err error
	// W is told when the operation completes. It must not be nil.
	W *Waiter
	// Combine, when set on a receive, makes it a combining receive: the
	// message M is not copied but combined with Local into Buf:
	// Buf = Local ⊕ M when LocalLeft, else M ⊕ Local. Local has Buf's length
	// and is Buf itself or disjoint from it; M must have the same length.
	// Only transports that implement Combiner accept it.
	Combine   func(dst, a, b []byte)
	Local     []byte
	LocalLeft bool
	// Sig is the signature of the call the message belongs to. A receive
	// matched by a send with another signature fails, and so does the send,
	// with an error wrapping errs.Mismatch.
	Sig uint64
	// Eager allows the transport to buffer an unmatched send and complete it
	// at once (point-to-point sends); otherwise a send may complete only when
	// its receive is posted.
	Eager bool
	// Announce, on a receive of a collective call, tells the transport
	// that this rank has sent the peer nothing in the call so far, so the
	// peer cannot know this rank has joined it: a transport whose sends
	// wait for their receivers may tell the peer at once (the receive's
	// key and signature), so that its sends of the call complete when
	// written instead of a round trip later.
	Announce bool
}

// Transport moves messages between the ranks of one group.
//
// Isend and Irecv post an operation and return at once; completion is reported
// through m.W. On transports that implement Poller, receives progress only
// while the receiving rank polls, so m.W must poll that transport
// (Waiter.SetPoller) when waiting. A receive whose buffer is shorter than the
// matching message completes with an error wrapping errs.InvalidArgument.
// Implementations must be safe for concurrent use by several goroutines of
// the same rank.
type Transport interface {
	// Rank returns this endpoint's rank in [0, Size()).
	Rank() int
	// Size returns the number of ranks.
	Size() int
	// Isend posts a send of m.Buf to m.Peer.
	Isend(m *Msg) error
	// Irecv posts a receive from m.Peer into m.Buf.
	Irecv(m *Msg) error
	// Cancel withdraws a posted operation that has not matched yet and
	// reports whether it did; an operation it did not withdraw completes
	// normally.
	Cancel(m *Msg) bool
	// Close releases the endpoint; posted operations fail with errs.Closed.
	Close() error
}

// Checker is implemented by transports that can tell whether the ranks agree
// on a collective call. Each rank records its calls; CheckCall, used when a
// call has to wait (cheaply, full false) or has failed (full true), returns
// an error wrapping errs.Mismatch when another rank recorded the same
// communicator and sequence number with another signature.
type Checker interface {
	RecordCall(comm, seq, sig uint64)
	CheckCall(comm, seq, sig uint64, full bool) error
}

// Poller is implemented by transports whose receives progress when the
// receiving rank polls (lock-free small-message paths). A Waiter with a
// Poller polls while it spins, and calls Park before parking its goroutine so
// that the transport kicks it (Waiter.Kick) when a message arrives, and
// Unpark after.
type Poller interface {
	Poll()
	Park(w *Waiter)
	Unpark(w *Waiter)
}

// Meeter is implemented by transports whose ranks share memory. Meet is a
// rendezvous of all ranks for the call identified by key (communicator and
// sequence number; Tag unused): each rank deposits val, the last to arrive
// runs fn with every rank's value (indexed by rank) unless the ranks' sigs
// differ (errs.Mismatch), and every rank's Meet returns fn's error. A rank
// whose ctx ends first, or that exits without meeting, fails the meeting
// for all; fn must not keep the values.
type Meeter interface {
	Meet(ctx context.Context, key Key, sig uint64, val any, fn func(vals []any) error) error
}

// CallAborter is implemented by transports whose ranks cannot see each
// other's state (separate processes). AbortCall fails this rank's
// outstanding operations of the collective call (comm, seq) with err and
// tells the other ranks, whose operations of that call then fail too (with
// an error wrapping errs.Mismatch or errs.InvalidArgument when err wraps
// one of them, else errs.PeerFailed); operations of the call posted later
// fail at once. The executor calls it when a call fails or its context
// ends, so that no rank waits for a call another rank has given up.
type CallAborter interface {
	AbortCall(comm, seq uint64, err error)
}

// Settler is implemented by transports whose sends of collective calls
// may complete once written, before their receivers took them (eager
// sends): the receivers of a mismatched call then fail in it, while a
// sender whose part was only such sends completes it. Settle, called when
// call seq on communicator comm has done its own work (and with seq
// ^uint64(0) when the communicator closes), waits until the eager sends of
// comm's earlier calls were taken and returns the failure of one that was
// not, naming it (wrapping errs.Mismatch when its receiver was in another
// call): the sender learns of the mismatch no later than its next call on
// the communicator or its Close. It must return at once when nothing is
// pending.
type Settler interface {
	Settle(ctx context.Context, comm, seq uint64) error
}

// Modeler is implemented by transports that tell the default algorithm
// choice what a message costs on them: alpha seconds per message and beta
// seconds per byte moved (the α and β of the α-β-γ model). Transports
// without it are costed as in-process ranks.
type Modeler interface {
	Model() (alpha, beta float64)
}

// Noder is implemented by transports that know the node (host) of every
// rank: Nodes()[r] is rank r's node, numbered from 0 in the order of the
// nodes' lowest ranks; ranks with equal numbers share memory. The result
// must not be modified.
type Noder interface {
	Nodes() []int
}

// ClockSharer is implemented by transports whose ranks read one clock (the
// ranks of one process): a time one rank reads is comparable with
// another's without correcting for clock offsets.
type ClockSharer interface {
	SharesClock() bool
}

// Combiner is implemented by transports that accept combining receives
// (Msg.Combine). Executors emulate them on other transports.
type Combiner interface {
	CanCombine() bool
}

// Finish completes receive m with the data src the way m asks: it copies
// or, for a combining receive, combines. It sets m.N, and m.Err on a length
// mismatch. Transports call it when they deliver a message.
func Finish(m *Msg, src []byte) {
	if m.Combine != nil {
		if len(src) != len(m.Buf) {
			m.Err = fmt.Errorf("%w: combining receive of %d bytes got %d", errs.Mismatch, len(m.Buf), len(src))
			return
		}
		if m.LocalLeft {
			m.Combine(m.Buf, m.Local, src)
		} else {
			m.Combine(m.Buf, src, m.Local)
		}
		m.N = len(src)
		return
	}
	if len(src) > len(m.Buf) {
		m.Err = fmt.Errorf("%w: message of %d bytes truncated to %d", errs.InvalidArgument, len(src), len(m.Buf))
	}
	m.N = mem.Copy(m.Buf, src)
}

// spinYield+1 polls happen between yields of a spinning waiter.
const spinYield = 255

// SpinHinter is implemented by transports that suggest how many times a
// waiter should poll before parking.
type SpinHinter interface {
	SpinHint() int
}

// Waiter counts outstanding operations and wakes the goroutine waiting for
// them all to complete. The zero value is not usable; use NewWaiter.
//
// Invariant: pending ≥ 0.
type Waiter struct {
	pending atomic.Int64
	parked  atomic.Bool
	wake    chan struct{}
	spin    int

	mu      sync.Mutex
	work    []func()
	hasWork atomic.Bool

	poller Poller
}

// SetPoller makes the waiter poll p while it waits (nil: no polling).
func (w *Waiter) SetPoller(p Poller) { w.poller = p }

// Kick wakes the goroutine parked on w, if any, so that it polls again.
func (w *Waiter) Kick() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Defer hands f to the goroutine waiting on w, which runs it while it waits
// (transports use it to make the receiver, not the sender, copy large
// messages). f must not block.
func (w *Waiter) Defer(f func()) {
	w.mu.Lock()
	w.work = append(w.work, f)
	w.hasWork.Store(true)
	w.mu.Unlock()
	if w.parked.Load() {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// progress polls the transport, runs the work handed to the waiter and
// reports whether nothing is pending any more.
func (w *Waiter) progress(poller Poller) bool {
	if poller != nil {
		poller.Poll()
	}
	if w.hasWork.Load() {
		w.runWork()
	}
	return w.pending.Load() == 0
}

func (w *Waiter) runWork() {
	for _, f := range TakeList(&w.mu, &w.work, &w.hasWork) {
		f()
	}
}

// NewWaiter returns a Waiter that busy-polls for up to spin checks before it
// parks. Spinning pays only when the ranks have a core each.
func NewWaiter(spin int) *Waiter {
	return &Waiter{wake: make(chan struct{}, 1), spin: spin}
}

// TakeList empties a list that mu guards and has flags as non-empty, and
// returns what it held (the waiter's work, the in-process transport's
// overflowing messages).
func TakeList[T any](mu *sync.Mutex, list *[]T, has *atomic.Bool) []T {
	mu.Lock()
	l := *list
	*list = nil
	has.Store(false)
	mu.Unlock()
	return l
}

// Post counts m as outstanding on its waiter m.W and posts it, a send or a
// receive; when the transport refuses it, the count is undone and the
// error returned.
func Post(t Transport, m *Msg, send bool) error {
	m.W.Add(1)
	var err error
	if send {
		err = t.Isend(m)
	} else {
		err = t.Irecv(m)
	}
	if err != nil {
		m.W.Done()
	}
	return err
}

// SetSpin changes the number of polls before parking.
func (w *Waiter) SetSpin(spin int) { w.spin = spin }

// Add adds n outstanding operations.
func (w *Waiter) Add(n int) { w.pending.Add(int64(n)) }

// Pending returns the number of outstanding operations.
func (w *Waiter) Pending() int { return int(w.pending.Load()) }

// Done marks one operation complete.
func (w *Waiter) Done() {
	if w.pending.Add(-1) == 0 && w.parked.Load() {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// Wait blocks until every outstanding operation has completed or ctx is done.
// It is WaitHook without a hook.
func (w *Waiter) Wait(ctx context.Context) error { return w.WaitHook(ctx, nil) }

// WaitHook is Wait that calls hook once before parking the goroutine (after
// the polling phase) and returns hook's error, if any, without waiting
// further. Checks too costly for the fast path go there.
// On a context error it returns an error matching both errs.Canceled and the
// context's error; the caller must then cancel or drain what it posted.
func (w *Waiter) WaitHook(ctx context.Context, hook func() error) error {
	poller := w.poller
	for i := 0; i < w.spin; i++ {
		if w.progress(poller) {
			return nil
		}
		if i&spinYield == spinYield {
			// Let a runnable rank sharing this thread make progress.
			runtime.Gosched()
		}
	}
	if hook != nil && w.pending.Load() != 0 {
		if err := hook(); err != nil {
			return err
		}
	}
	done := ctx.Done()
	w.parked.Store(true)
	defer w.parked.Store(false)
	if poller != nil {
		poller.Park(w)
		defer poller.Unpark(w)
	}
	for {
		if w.progress(poller) {
			return nil
		}
		select {
		case <-w.wake:
		case <-done:
			if w.pending.Load() == 0 {
				return nil
			}
			return CtxErr(ctx)
		}
	}
}

// WaitAll waits without a context (used to drain operations that could not be
// cancelled: they complete because their peer is running).
func (w *Waiter) WaitAll() {
	w.parked.Store(true)
	defer w.parked.Store(false)
	if w.poller != nil {
		w.poller.Park(w)
		defer w.poller.Unpark(w)
	}
	for {
		if w.poller != nil {
			w.poller.Poll()
		}
		if w.hasWork.Load() {
			w.runWork()
		}
		if w.pending.Load() == 0 {
			return
		}
		<-w.wake
	}
}

// CtxErr returns ctx's error wrapped so that it matches errs.Canceled too.
func CtxErr(ctx context.Context) error {
	return &ctxError{err: context.Cause(ctx)}
}

type ctxError struct{ err error }

// Error describes the cancellation.
func (e *ctxError) Error() string { return errs.Canceled.Error() + ": " + e.err.Error() }

// Unwrap returns errs.Canceled and the context's cause.
func (e *ctxError) Unwrap() []error { return []error{errs.Canceled, e.err} }
