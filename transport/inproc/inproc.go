// Package inproc is the in-process transport: every rank is a goroutine of
// the same process and messages move by a single copy from the sender's buffer
// into the posted receive buffer.
//
// Each rank owns a mailbox holding its posted receives that have not matched
// and the sends addressed to it that found no receive yet (the sender's buffer
// is referenced, not copied). Whichever side arrives second finds the other
// in the mailbox, copies the data once and completes both. Sends are therefore
// rendezvous: a send completes when its receive is posted, unless the Msg asks
// for eager delivery (point-to-point sends do), in which case an unmatched send
// is copied into the mailbox and completes at once.
//
// Starting and ending ranks costs O(1) each while nothing waits on them: a
// rank's exit visits only the mailboxes that hold receives from it (each
// rank's mailbox indexes them), and the lanes, meetings and exchanges only
// when some are in use, so that a world of 2^18 goroutine ranks starts and
// ends in O(P) (see docs/world-scaling.md).
package inproc

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// World is a group of in-process ranks.
type World struct {
	size   int
	boxes  []mailbox
	exited []atomic.Bool
	closed atomic.Bool
	spin   int

	comms    sync.Map // comm id → *commState
	services sync.Map // svcKey → request handler (Responder)
	meets    sync.Map // meetKey → *meeting
	baseDone <-chan struct{}
	lanes    []laneState

	lanesSet, lanesWanted       bool
	exchOn, exchSet, exchWanted bool
	exchParked                  atomic.Int32 // ranks parked in any exchange

	nmeets    atomic.Int32 // meetings made and not ended by their last rank
	exitLocks atomic.Int64 // mailbox locks Exit took (tests)
}

// mailbox is a rank's receiving side, and the index of the receives posted
// from the rank at any rank (waiting), which Exit reads instead of
// searching every mailbox.
//
// Invariant: boxes[s].waiting[d] is the number of receives from rank s in
// boxes[d].recvs; it changes only under boxes[d].mu, and grows only while
// s has not exited (checked under boxes[s].wmu).
type mailbox struct {
	mu    sync.Mutex
	recvs []*transport.Msg // posted receives, in posting order
	sends []sendEntry      // sends without a receive, in posting order
	_     [8]byte

	// Lock order: any mailbox's mu before any mailbox's wmu.
	wmu     sync.Mutex
	waiting map[int32]int32 // mailbox → receives from this rank in it
	_       [48]byte        // mailboxes, and their two halves, on separate cache lines
}

var _ = [1]struct{}{}[unsafe.Sizeof(mailbox{})%64]

type sendEntry struct {
	src int
	m   *transport.Msg // nil for an eager copy
	key transport.Key
	sig uint64
	buf []byte
}

// Option configures a World.
type Option func(*World)

// Lanes turns the lock-free lanes for collective messages on or off
// (default: on when the world has 2..256 ranks and no more than GOMAXPROCS).
func Lanes(on bool) Option {
	return func(w *World) { w.lanesSet, w.lanesWanted = true, on }
}

// NewWorld returns a world of size ranks.
func NewWorld(size int, opts ...Option) *World {
	w := &World{size: size, boxes: make([]mailbox, size), exited: make([]atomic.Bool, size)}
	for _, o := range opts {
		o(w)
	}
	on := size > 1 && size <= laneMaxRanks && size <= runtime.GOMAXPROCS(0)
	if w.lanesSet {
		on = w.lanesWanted && size > 1
	}
	if on {
		w.lanes = make([]laneState, size)
		for d := range w.lanes {
			w.lanes[d].in = make([]atomic.Pointer[lane], size)
		}
	}
	w.initExchanges()
	// Busy-polling helps only while every rank can have a core.
	if size <= runtime.GOMAXPROCS(0) {
		w.spin = 20000
	}
	return w
}

// Size returns the number of ranks.
func (w *World) Size() int { return w.size }

// Endpoint returns rank r's transport.
func (w *World) Endpoint(r int) *Endpoint { return &Endpoint{w: w, rank: r} }

// Exit marks rank r as gone: operations that wait on it fail with
// errs.PeerFailed, and so do later ones addressed to it. It visits only the
// mailboxes that hold receives from r, besides r's own, so a rank that
// nobody waits for exits in O(1).
func (w *World) Exit(r int) {
	if w.exited[r].Swap(true) {
		return
	}
	// The common case, a rank nobody waits for, takes two locks and calls
	// nothing deep, so that the rank's goroutine ends on the stack it
	// started with. Once exited[r] is set, no receive from r joins the
	// index (addWaiting checks it under wmu) and nothing joins r's mailbox
	// (Isend and Irecv check it under mu).
	if w.hasWaiting(r) {
		w.failWaiting(r)
	}
	if w.ownBusy(r) {
		w.failOwn(r)
	}
	if w.lanesOn() {
		w.laneExit(r)
	}
	if w.nmeets.Load() != 0 {
		w.meetExit(r)
	}
	if w.exchOn && w.exchParked.Load() != 0 {
		w.exchExit(r)
	}
}

// exitErr is the error of operations that wait on rank r after it exited.
func exitErr(r int) error { return fmt.Errorf("%w: rank %d has exited", errs.PeerFailed, r) }

func (w *World) hasWaiting(r int) bool {
	f := &w.boxes[r]
	f.wmu.Lock()
	n := len(f.waiting)
	f.wmu.Unlock()
	return n > 0
}

func (w *World) ownBusy(r int) bool {
	b := &w.boxes[r]
	b.mu.Lock()
	w.exitLocks.Add(1)
	n := len(b.recvs) + len(b.sends)
	b.mu.Unlock()
	return n > 0
}

// failWaiting fails the receives from r posted in other ranks' mailboxes.
func (w *World) failWaiting(r int) {
	failed := exitErr(r)
	var done []*transport.Msg
	for _, d := range w.waitingAt(r) {
		b := &w.boxes[d]
		b.mu.Lock()
		w.exitLocks.Add(1)
		keep := b.recvs[:0]
		for _, m := range b.recvs {
			if m.Peer == r {
				m.Err = failed
				done = append(done, m)
				w.dropWaiting(r, int(d))
			} else {
				keep = append(keep, m)
			}
		}
		clear(b.recvs[len(keep):])
		b.recvs = keep
		b.mu.Unlock()
	}
	for _, m := range done {
		m.W.Done()
	}
}

// failOwn fails what waits in r's own mailbox: every receive r posted and
// every send to r that r did not take.
func (w *World) failOwn(r int) {
	failed := exitErr(r)
	var done []*transport.Msg
	b := &w.boxes[r]
	b.mu.Lock()
	w.exitLocks.Add(1)
	for _, m := range b.recvs {
		m.Err = failed
		done = append(done, m)
		w.dropWaiting(m.Peer, r)
	}
	b.recvs = nil
	for _, s := range b.sends {
		if s.m != nil {
			s.m.Err = failed
			done = append(done, s.m)
		}
	}
	b.sends = nil
	b.mu.Unlock()
	for _, m := range done {
		m.W.Done()
	}
}

// waitingAt returns the mailboxes other than r's own that hold receives
// from r.
func (w *World) waitingAt(r int) []int32 {
	f := &w.boxes[r]
	f.wmu.Lock()
	defer f.wmu.Unlock()
	if len(f.waiting) == 0 {
		return nil
	}
	at := make([]int32, 0, len(f.waiting))
	for d := range f.waiting {
		if int(d) != r {
			at = append(at, d)
		}
	}
	return at
}

// addWaiting records a receive from src posted in mailbox d, unless src has
// exited. Caller holds boxes[d].mu.
func (w *World) addWaiting(src, d int) bool {
	f := &w.boxes[src]
	f.wmu.Lock()
	defer f.wmu.Unlock()
	if w.exited[src].Load() {
		return false
	}
	if f.waiting == nil {
		f.waiting = make(map[int32]int32)
	}
	f.waiting[int32(d)]++
	return true
}

// dropWaiting records that a receive from src left mailbox d. Caller holds
// boxes[d].mu.
func (w *World) dropWaiting(src, d int) {
	f := &w.boxes[src]
	f.wmu.Lock()
	if n := f.waiting[int32(d)]; n > 1 {
		f.waiting[int32(d)] = n - 1
	} else {
		delete(f.waiting, int32(d))
	}
	f.wmu.Unlock()
}

// Close ends every rank: posted operations fail as Exit fails them
// (errs.PeerFailed), later ones with errs.Closed.
func (w *World) Close() {
	w.closed.Store(true)
	for r := range w.boxes {
		w.Exit(r)
	}
}

// Endpoint is one rank's view of a World. It implements transport.Transport.
type Endpoint struct {
	w    *World
	rank int

	last atomic.Pointer[commState] // the world communicator used last
}

// The interface assertions every transport carries (STYLE.md 5); the
// blocks of record.go, tcp.go and group.go are alike by design.
var (
	_ transport.Transport = (*Endpoint)(nil)
	_ transport.Checker   = (*Endpoint)(nil)
	_ transport.Poller    = (*Endpoint)(nil)
	_ transport.Combiner  = (*Endpoint)(nil)
	_ transport.Meeter    = (*Endpoint)(nil)
	_ transport.Exchanger = (*Endpoint)(nil)
)

// Rank returns the endpoint's rank.
func (e *Endpoint) Rank() int { return e.rank }

// Size returns the number of ranks.
func (e *Endpoint) Size() int { return e.w.size }

// SpinHint returns how many times a waiter should poll before parking.
func (e *Endpoint) SpinHint() int { return e.w.spin }

// SharesClock implements transport.ClockSharer: the ranks are goroutines
// of one process.
func (e *Endpoint) SharesClock() bool { return true }

// Close marks this rank as exited.
func (e *Endpoint) Close() error {
	e.w.Exit(e.rank)
	return nil
}

func (e *Endpoint) gone(r int) error {
	if e.w.closed.Load() {
		return errs.Closed
	}
	return fmt.Errorf("%w: rank %d has exited", errs.PeerFailed, r)
}

func (e *Endpoint) checkPeer(m *transport.Msg) error {
	if m.Peer < 0 || m.Peer >= e.w.size {
		return fmt.Errorf("%w: peer %d out of range [0,%d)", errs.InvalidArgument, m.Peer, e.w.size)
	}
	if e.w.exited[e.rank].Load() {
		return e.gone(e.rank)
	}
	return nil
}

// deliver completes the receive r with data src of a send with signature
// sig (send may be nil for an eager copy). A signature mismatch fails both.
func deliver(r *transport.Msg, src []byte, sig uint64, send *transport.Msg) {
	if sig != r.Sig {
		// The sender's rank in the communicator is not known here.
		err := &errs.MismatchError{Rank: -1, Other: -1, Sig: r.Sig, OtherSig: sig}
		r.Err = err
		if send != nil {
			send.Err = err
		}
		return
	}
	transport.Finish(r, src)
}

// deferBytes is the message size from which the receiver's goroutine, not the
// sender's, moves the data, so that both sides of an exchange share the work.
const deferBytes = 16 << 10

// CanCombine reports that the endpoint accepts combining receives.
func (e *Endpoint) CanCombine() bool { return true }

// Isend posts m. When m.Eager is set, an unmatched send is buffered.
func (e *Endpoint) Isend(m *transport.Msg) error {
	if err := e.checkPeer(m); err != nil {
		return err
	}
	if e.w.onLane(m) {
		return e.laneSend(m)
	}
	b := &e.w.boxes[m.Peer]
	b.mu.Lock()
	if e.w.exited[m.Peer].Load() {
		b.mu.Unlock()
		return e.gone(m.Peer)
	}
	for i, r := range b.recvs {
		if r.Peer == e.rank && r.Key == m.Key {
			b.recvs = dropAt(b.recvs, i)
			e.w.dropWaiting(e.rank, m.Peer)
			b.mu.Unlock()
			if len(m.Buf) >= deferBytes {
				r.W.Defer(func() {
					deliver(r, m.Buf, m.Sig, m)
					r.W.Done()
					m.W.Done()
				})
				return nil
			}
			deliver(r, m.Buf, m.Sig, m)
			r.W.Done()
			m.W.Done()
			return nil
		}
	}
	if m.Eager && transport.IsRequest(m.Key) {
		if h := e.w.handler(m.Peer, m.Key.Comm); h != nil {
			b.mu.Unlock()
			// Take the reply's receive out of this rank's mailbox first:
			// the server may exit as soon as the handler has run, which
			// must not fail a reply the handler already made.
			r := e.takeRecv(m.Peer, transport.ReplyKey(m.Key))
			rep := h(e.rank, m.Buf)
			m.W.Done()
			if r != nil {
				deliver(r, rep, r.Sig, nil)
				r.W.Done()
				return nil
			}
			e.w.Endpoint(m.Peer).reply(e.rank, m.Key, rep)
			return nil
		}
	}
	if m.Eager {
		b.sends = append(b.sends, sendEntry{src: e.rank, key: m.Key, sig: m.Sig, buf: append([]byte(nil), m.Buf...)})
		b.mu.Unlock()
		m.W.Done()
		return nil
	}
	b.sends = append(b.sends, sendEntry{src: e.rank, m: m, key: m.Key, sig: m.Sig, buf: m.Buf})
	b.mu.Unlock()
	return nil
}

// Irecv posts m.
//
// Its opening (checks, the lane, the mailbox lock) is shaped like Isend's,
// kept apart: the two differ in the lane call and the mailbox they lock,
// and a helper returning a mailbox, a done flag and an error would be
// longer than the lines it saves on the transport's hottest path.
func (e *Endpoint) Irecv(m *transport.Msg) error {
	if err := e.checkPeer(m); err != nil {
		return err
	}
	if e.w.onLane(m) {
		return e.laneRecv(m)
	}
	b := &e.w.boxes[e.rank]
	b.mu.Lock()
	for i, s := range b.sends {
		if s.src == m.Peer && s.key == m.Key {
			b.sends = dropAt(b.sends, i)
			b.mu.Unlock()
			deliver(m, s.buf, s.sig, s.m)
			m.W.Done()
			if s.m != nil {
				s.m.W.Done()
			}
			return nil
		}
	}
	if e.w.exited[e.rank].Load() { // Exit ran since checkPeer
		b.mu.Unlock()
		return e.gone(e.rank)
	}
	if !e.w.addWaiting(m.Peer, e.rank) {
		b.mu.Unlock()
		return e.gone(m.Peer)
	}
	b.recvs = append(b.recvs, m)
	b.mu.Unlock()
	return nil
}

// Cancel withdraws m if it has not matched.
func (e *Endpoint) Cancel(m *transport.Msg) bool {
	if m.Peer < 0 || m.Peer >= e.w.size {
		return false
	}
	if e.w.onLane(m) {
		return e.laneCancel(m)
	}
	// m is either a receive in our mailbox or a send in the peer's.
	b := &e.w.boxes[e.rank]
	b.mu.Lock()
	for i, r := range b.recvs {
		if r == m {
			b.recvs = dropAt(b.recvs, i)
			e.w.dropWaiting(m.Peer, e.rank)
			b.mu.Unlock()
			return true
		}
	}
	b.mu.Unlock()
	b = &e.w.boxes[m.Peer]
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, s := range b.sends {
		if s.m == m {
			b.sends = dropAt(b.sends, i)
			return true
		}
	}
	return false
}

// callTable records, per communicator, the signatures of each rank's recent
// collectives in a ring indexed by sequence number. Each rank writes only its
// own ring (no shared cache lines on the fast path); a rank that has to wait
// reads the others'.
type callTable struct {
	ranks [][callRing]sigSlot
}

const callRing = 64

type sigSlot struct {
	seq atomic.Uint64
	sig atomic.Uint64
	_   [48]byte
}

// worldMember returns this rank's view of communicator comm of the whole
// world in world order.
func (e *Endpoint) worldMember(comm uint64) member {
	return member{e: e, cs: e.worldState(comm), rank: e.rank}
}

// RecordCall notes that this rank starts collective seq of comm with
// signature sig.
func (e *Endpoint) RecordCall(comm, seq, sig uint64) {
	if e.w.size == 1 {
		return
	}
	e.worldMember(comm).recordCall(seq, sig)
}

// CheckCall fails with errs.Mismatch when a rank has recorded collective seq
// of comm with another signature (see member.checkCall).
func (e *Endpoint) CheckCall(comm, seq, sig uint64, full bool) error {
	return e.worldMember(comm).checkCall(seq, sig, full)
}

// takeRecv removes and returns the receive this rank posted from src with
// key k, or nil.
func (e *Endpoint) takeRecv(src int, k transport.Key) *transport.Msg {
	b := &e.w.boxes[e.rank]
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, r := range b.recvs {
		if r.Peer == src && r.Key == k {
			b.recvs = dropAt(b.recvs, i)
			e.w.dropWaiting(src, e.rank)
			return r
		}
	}
	return nil
}

// dropAt removes element i of a mailbox queue. Matches are mostly at the
// front (messages of one pair arrive in order), where it takes O(1) by
// reslicing instead of shifting every later entry: a receiver draining a
// queue of k early sends would otherwise take Θ(k²).
func dropAt[E any](q []E, i int) []E {
	if i == 0 {
		var zero E
		q[0] = zero // let the entry's buffers go
		return q[1:]
	}
	return slices.Delete(q, i, i+1)
}
