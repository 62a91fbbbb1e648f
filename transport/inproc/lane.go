package inproc

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/scoll/scoll/transport"
)

// Lanes: the path of collective messages.
//
// Every ordered pair of ranks (s → d) has a ring of slots. The sender
// publishes a message in the next slot by writing its sequence number last.
// A message of at most laneBytes is copied into the slot and its send
// completes at once (eager; schedules are verified under stricter rendezvous
// semantics, so eager sends never deadlock); when the ring is full it waits
// for the receiver like a long message, which bounds eager buffering. A longer one is published by
// reference: the receiver copies (or combines) it straight from the sender's
// buffer, in the receiver's goroutine, and then completes the send. The
// receiver drains its lanes when it posts a receive and when it polls while
// waiting (transport.Poller), so an exchange costs a cache-line handoff
// instead of mailbox locks and cross-goroutine wake-ups; a receiver about to
// park registers its waiter and senders kick it.
//
// Lanes carry collective messages (Key.Seq ≠ 0) when the world has them (by
// default when every rank can have a CPU and there are at most laneMaxRanks
// ranks: with more ranks than CPUs waiters park, and the mailbox path, which
// wakes exactly the waiter whose operation completed, is cheaper). Both ends
// of a message apply the same rule, so they always meet on the same path.
// Messages leave a lane in the order they entered it: the ring's slots
// first, then the overflow list, which later messages join while it is not
// empty.
const (
	laneBytes    = 64
	laneSlots    = 16
	laneMaxRanks = 256
)

// laneSlot holds one message. seq = i+1 publishes the i-th message of the
// lane; header and a short message share the slot's first cache line.
type laneSlot struct {
	seq  atomic.Uint64
	key  transport.Key
	sig  uint64
	n    int32
	data [laneBytes]byte
	big  *transport.Msg // a long message's send, or nil
	_    [128 - 8 - 24 - 8 - 4 - laneBytes - 8]byte
}

type lane struct {
	// Sender side, guarded by pmu (goroutines of the sending rank).
	pmu       sync.Mutex
	tail      uint64 // messages published
	headCache uint64 // last seen head
	_         [40]byte
	head      atomic.Uint64 // messages consumed; written by the receiver
	_         [56]byte

	slots [laneSlots]laneSlot

	// Receiver side, guarded by the receiving endpoint's rmu.
	posted []*transport.Msg
	early  []earlyMsg

	// Messages that found the ring full.
	omu         sync.Mutex
	overflow    []earlyMsg
	hasOverflow atomic.Bool
}

// earlyMsg is a message drained before its receive was posted: a copy of a
// short one, or the send of a long one.
type earlyMsg struct {
	key  transport.Key
	sig  uint64
	data []byte
	big  *transport.Msg
}

// laneState is a rank's receiving side of all lanes into it. Fields are
// grouped by who writes them and padded apart.
type laneState struct {
	_       [64]byte
	in      []atomic.Pointer[lane] // by source rank; read-only after creation
	_       [64]byte
	rmu     sync.Mutex
	active  []int // sources with posted receives
	nposted atomic.Int32
	_       [64]byte
	nparked atomic.Int32
	parkMu  sync.Mutex
	parked  []*transport.Waiter
	_       [64]byte
}

func (w *World) lanesOn() bool { return w.lanes != nil }

func (w *World) onLane(m *transport.Msg) bool { return m.Key.Seq != 0 && w.lanesOn() }

// laneFor returns the lane from s to d, creating it on first use.
func (w *World) laneFor(s, d int) *lane {
	p := &w.lanes[d].in[s]
	if l := p.Load(); l != nil {
		return l
	}
	p.CompareAndSwap(nil, &lane{})
	return p.Load()
}

// laneSend publishes m on the lane to m.Peer.
func (e *Endpoint) laneSend(m *transport.Msg) error {
	w := e.w
	if w.exited[m.Peer].Load() {
		return e.gone(m.Peer)
	}
	short := len(m.Buf) <= laneBytes
	l := w.laneFor(e.rank, m.Peer)
	l.pmu.Lock()
	t := l.tail
	if t-l.headCache >= laneSlots {
		l.headCache = l.head.Load()
	}
	// Once messages wait in the overflow list, later ones queue behind
	// them there until the receiver has taken them: messages with equal
	// keys keep their order.
	if t-l.headCache < laneSlots && !l.hasOverflow.Load() {
		sl := &l.slots[t%laneSlots]
		sl.key, sl.sig, sl.n, sl.big = m.Key, m.Sig, int32(len(m.Buf)), nil
		if short {
			copy(sl.data[:], m.Buf)
		} else {
			sl.big = m
		}
		sl.seq.Store(t + 1)
		l.tail = t + 1
		l.pmu.Unlock()
		if short {
			m.W.Done()
		}
	} else {
		// Ring full: the receiver is behind. Publish by reference, so the
		// send completes only when the message is taken; this bounds how
		// far a sender can run ahead (a root that only sends, say).
		l.omu.Lock()
		l.overflow = append(l.overflow, earlyMsg{key: m.Key, sig: m.Sig, big: m})
		l.hasOverflow.Store(true)
		l.omu.Unlock()
		l.pmu.Unlock()
	}
	ls := &w.lanes[m.Peer]
	if ls.nparked.Load() > 0 {
		ls.parkMu.Lock()
		for _, pw := range ls.parked {
			pw.Kick()
		}
		ls.parkMu.Unlock()
	}
	// A long send to a rank that exited meanwhile is failed by laneExit.
	return nil
}

// completion is a receive, and for long messages the send, to complete once
// the receiving endpoint's lock is released.
type completion struct {
	r, s *transport.Msg
}

// give matches message em with receive r: copy or combine, done later.
func give(r *transport.Msg, em earlyMsg, done []completion) []completion {
	if em.big != nil {
		deliver(r, em.big.Buf, em.sig, em.big)
		return append(done, completion{r, em.big})
	}
	deliver(r, em.data, em.sig, nil)
	return append(done, completion{r: r})
}

func finish(done []completion) {
	for _, c := range done {
		c.r.W.Done()
		if c.s != nil {
			c.s.W.Done()
		}
	}
}

// drain moves every published message of l to the posted receive it
// matches, or to l.early. Caller holds the receiving endpoint's rmu.
func (l *lane) drain(done []completion) []completion {
	for h := l.head.Load(); ; h++ {
		sl := &l.slots[h%laneSlots]
		if sl.seq.Load() != h+1 {
			break
		}
		em := earlyMsg{key: sl.key, sig: sl.sig, big: sl.big}
		if i := l.findPosted(sl.key); i >= 0 {
			r := l.posted[i]
			l.posted = slices.Delete(l.posted, i, i+1)
			if em.big == nil {
				em.data = sl.data[:sl.n]
			}
			done = give(r, em, done)
		} else {
			if em.big == nil {
				em.data = slices.Clone(sl.data[:sl.n])
			}
			l.early = append(l.early, em)
		}
		sl.big = nil
		l.head.Store(h + 1)
	}
	if l.hasOverflow.Load() {
		for _, em := range transport.TakeList(&l.omu, &l.overflow, &l.hasOverflow) {
			if i := l.findPosted(em.key); i >= 0 {
				r := l.posted[i]
				l.posted = slices.Delete(l.posted, i, i+1)
				done = give(r, em, done)
			} else {
				l.early = append(l.early, em)
			}
		}
	}
	return done
}

// ready reports whether a message is published and not consumed. Caller
// holds the receiving endpoint's rmu.
func (l *lane) ready() bool {
	h := l.head.Load()
	return l.slots[h%laneSlots].seq.Load() == h+1 || l.hasOverflow.Load()
}

func (l *lane) findPosted(k transport.Key) int {
	for i, r := range l.posted {
		if r.Key == k {
			return i
		}
	}
	return -1
}

// takeEarly removes and returns an already drained message with key k.
func (l *lane) takeEarly(k transport.Key) (earlyMsg, bool) {
	for i, em := range l.early {
		if em.key == k {
			l.early = slices.Delete(l.early, i, i+1)
			return em, true
		}
	}
	return earlyMsg{}, false
}

func (ls *laneState) countPosted() int32 {
	n := 0
	for _, s := range ls.active {
		n += len(ls.in[s].Load().posted)
	}
	return int32(n)
}

// laneRecv posts the collective receive m.
func (e *Endpoint) laneRecv(m *transport.Msg) error {
	ls := &e.w.lanes[e.rank]
	l := e.w.laneFor(m.Peer, e.rank)
	var buf [4]completion
	done := buf[:0]
	ls.rmu.Lock()
	if l.ready() {
		done = l.drain(done)
	}
	// early completes m with a message drained before it was posted.
	early := func() bool {
		em, ok := l.takeEarly(m.Key)
		if ok {
			done = give(m, em, done)
			ls.rmu.Unlock()
			finish(done)
		}
		return ok
	}
	if early() {
		return nil
	}
	if e.w.exited[m.Peer].Load() {
		// The peer published everything before it exited: look again.
		done = l.drain(done)
		if early() {
			return nil
		}
		ls.rmu.Unlock()
		finish(done)
		return e.gone(m.Peer)
	}
	l.posted = append(l.posted, m)
	if !slices.Contains(ls.active, m.Peer) {
		ls.active = append(ls.active, m.Peer)
	}
	ls.nposted.Store(ls.countPosted())
	ls.rmu.Unlock()
	finish(done)
	return nil
}

// Poll completes posted receives whose messages have arrived.
func (e *Endpoint) Poll() {
	if !e.w.lanesOn() {
		return
	}
	ls := &e.w.lanes[e.rank]
	if ls.nposted.Load() == 0 {
		return
	}
	var buf [8]completion
	done := buf[:0]
	ls.rmu.Lock()
	keep := ls.active[:0]
	for _, s := range ls.active {
		l := ls.in[s].Load()
		if l.ready() {
			done = l.drain(done)
		}
		if len(l.posted) > 0 {
			keep = append(keep, s)
		}
	}
	ls.active = keep
	ls.nposted.Store(ls.countPosted())
	ls.rmu.Unlock()
	finish(done)
}

// Park registers w to be kicked when a message arrives for this rank.
func (e *Endpoint) Park(w *transport.Waiter) {
	if !e.w.lanesOn() {
		return
	}
	ls := &e.w.lanes[e.rank]
	ls.parkMu.Lock()
	ls.parked = append(ls.parked, w)
	ls.nparked.Add(1)
	ls.parkMu.Unlock()
}

// Unpark removes w from the parked waiters.
func (e *Endpoint) Unpark(w *transport.Waiter) {
	if !e.w.lanesOn() {
		return
	}
	ls := &e.w.lanes[e.rank]
	ls.parkMu.Lock()
	ls.parked = slices.DeleteFunc(ls.parked, func(x *transport.Waiter) bool { return x == w })
	ls.nparked.Add(-1)
	ls.parkMu.Unlock()
}

// laneCancel withdraws m if it is a posted receive, or a long send its
// receiver has not taken.
func (e *Endpoint) laneCancel(m *transport.Msg) bool {
	// A receive posted here?
	if l := e.w.lanes[e.rank].in[m.Peer].Load(); l != nil {
		ls := &e.w.lanes[e.rank]
		ls.rmu.Lock()
		n := len(l.posted)
		l.posted = slices.DeleteFunc(l.posted, func(r *transport.Msg) bool { return r == m })
		found := len(l.posted) < n // read under rmu: the lane is shared
		ls.nposted.Store(ls.countPosted())
		ls.rmu.Unlock()
		if found {
			return true
		}
	}
	// A long send waiting at the peer?
	if len(m.Buf) <= laneBytes {
		return false
	}
	l := e.w.lanes[m.Peer].in[e.rank].Load()
	if l == nil {
		return false
	}
	ls := &e.w.lanes[m.Peer]
	ls.rmu.Lock()
	done := l.drain(nil)
	n := len(l.early)
	l.early = slices.DeleteFunc(l.early, func(em earlyMsg) bool { return em.big == m })
	found := len(l.early) < n
	ls.rmu.Unlock()
	finish(done)
	return found
}

// laneExit fails what waits on rank r: receives posted at any rank from r,
// and long sends to r that r did not take. It looks at the lane from r into
// every rank (one load each; a lock only where the lane exists) and at every
// lane into r: O(P) per exit, in proportion to the lanes' own memory.
func (w *World) laneExit(r int) {
	var failed error
	for d := range w.lanes {
		ls := &w.lanes[d]
		in := ls.in[r : r+1] // the lane from r
		if d == r {
			in = ls.in // every lane into r
		} else if in[0].Load() == nil {
			// A lane made later finds r exited (laneRecv checks under rmu).
			continue
		}
		var done []completion
		var fail []*transport.Msg
		ls.rmu.Lock()
		for i := range in {
			l := in[i].Load()
			if l == nil {
				continue
			}
			done = l.drain(done) // messages published before the exit still count
			fail = append(fail, l.posted...)
			l.posted = nil
			if d == r {
				for _, em := range l.early {
					if em.big != nil {
						fail = append(fail, em.big)
					}
				}
				l.early = nil
			}
		}
		ls.nposted.Store(ls.countPosted())
		ls.rmu.Unlock()
		finish(done)
		if len(fail) > 0 && failed == nil {
			failed = exitErr(r)
		}
		for _, m := range fail {
			m.Err = failed
			m.W.Done()
		}
	}
}
