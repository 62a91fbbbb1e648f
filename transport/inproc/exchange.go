package inproc

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// Exchanges: a leaderless shared-memory all-to-all for small blocking
// collectives (transport.Exchanger).
//
// Each communicator has, per rank, two slots on cache lines of their own.
// Exchange e of a communicator (its per-rank count of exchange calls, which
// every rank agrees on because ranks call collectives in the same order)
// uses slot e%2: the rank copies its payload and the call's signature into
// its slot and publishes them by storing the call's sequence number last,
// then polls each peer's slot e%2 until it carries the same number. Nobody
// leads: every rank reads all the payloads and computes its own result.
//
//	rank 0: write slot[0][e%2], seq ← s ─┐   poll slot[1][e%2] until seq = s, read
//	rank 1: write slot[1][e%2], seq ← s ─┘   poll slot[0][e%2] until seq = s, read
//
// Two slots suffice: rank r writes slot e%2 again only in exchange e+2,
// after finishing exchange e+1, which needed every rank's publication of
// exchange e+1, made after that rank had finished reading exchange e. A
// rank whose exchange e+1 ended early (context, failed peer) has no such
// proof; before it writes again it waits until every peer has published
// exchange e+1 or later, or has exited (settle).
//
// A rank polls up to its spin budget, then parks on its wake channel after
// counting itself in nparked; a publisher that sees nparked > 0 kicks the
// parked ranks, and so does Exit. Exchanges are on by default when every
// rank can have a CPU (size ≤ GOMAXPROCS when the world is made): then
// polling costs nothing another rank needs, and an exchange costs about one
// cache-line transfer per peer.

// exchBytes is the largest payload of an exchange, the capacity of a slot
// (a communicator holds two per rank). Callers choose smaller limits by
// their own costs; on 2 ranks exchanges beat message schedules up to a few
// KiB (see scoll's exchange.go), so the slots are not what limits them.
const exchBytes = 1024

// exchSlot is one rank's payload for one exchange parity. seq is stored
// last (it publishes); header and the first 40 payload bytes share a
// cache line.
type exchSlot struct {
	seq  atomic.Uint64 // sequence number of the exchange published here
	sig  uint64
	n    int
	data [exchBytes]byte
	_    [(64 - (24+exchBytes)%64) % 64]byte
}

// exchRank is a rank's own state in a communicator's exchanges. The owner's
// goroutine (one exchange at a time) writes count, prev and dirty; parked
// and wake are shared with the ranks that kick it.
type exchRank struct {
	count  uint64 // exchanges started
	prev   uint64 // sequence number of the exchange started last
	dirty  bool   // that exchange ended before every peer had published it
	parked atomic.Bool
	wake   chan struct{}
	_      [32]byte
}

// Slots and rank states fill whole cache lines, so that ranks do not
// write each other's lines.
var (
	_ = [1]struct{}{}[unsafe.Sizeof(exchSlot{})%64]
	_ = [1]struct{}{}[unsafe.Sizeof(exchRank{})%64]
)

// exchTable is one communicator's exchange memory.
//
// Invariant: slot 2r+b is written only by rank r's goroutine.
type exchTable struct {
	_       [64]byte
	nparked atomic.Int32 // ranks parked in an exchange of this table
	_       [60]byte
	ranks   []exchRank
	slots   []exchSlot // rank r's slot for parity b at 2r+b
}

// Exchanges turns exchanges on or off (default: on when the world has no
// more ranks than GOMAXPROCS).
func Exchanges(on bool) Option {
	return func(w *World) { w.exchSet, w.exchWanted = true, on }
}

func (w *World) initExchanges() {
	w.exchOn = w.size <= runtime.GOMAXPROCS(0)
	if w.exchSet {
		w.exchOn = w.exchWanted
	}
}

// ExchangeLimit implements transport.Exchanger.
func (e *Endpoint) ExchangeLimit() int {
	if !e.w.exchOn {
		return -1
	}
	return exchBytes
}

// exchTable returns the communicator's exchange memory, made on first use.
func (cs *commState) exchTable() *exchTable {
	if t := cs.exch.Load(); t != nil {
		return t
	}
	n := cs.size
	nt := &exchTable{ranks: make([]exchRank, n), slots: make([]exchSlot, 2*n)}
	for r := range nt.ranks {
		nt.ranks[r].wake = make(chan struct{}, 1)
	}
	cs.exch.CompareAndSwap(nil, nt)
	return cs.exch.Load()
}

// kick wakes the ranks parked in an exchange of t.
func (t *exchTable) kick() {
	for i := range t.ranks {
		r := &t.ranks[i]
		if r.parked.Load() {
			select {
			case r.wake <- struct{}{}:
			default:
			}
		}
	}
}

// exchExit wakes every parked exchange so that it sees that rank r exited.
// Exit calls it only while some rank is parked: a rank counts itself in
// w.exchParked before it looks, for the last time, whether its peers have
// exited, and Exit reads the count after marking r.
func (w *World) exchExit(int) {
	w.comms.Range(func(_, v any) bool {
		if t := v.(*commState).exch.Load(); t != nil && t.nparked.Load() != 0 {
			t.kick()
		}
		return true
	})
}

// park counts rank me as parked in an exchange of t (before it looks at
// its peers again and waits on me.wake); unpark undoes it.
func (w *World) park(t *exchTable, me *exchRank) {
	me.parked.Store(true)
	t.nparked.Add(1)
	w.exchParked.Add(1)
}

func (w *World) unpark(t *exchTable, me *exchRank) {
	w.exchParked.Add(-1)
	t.nparked.Add(-1)
	me.parked.Store(false)
}

// Exchange implements transport.Exchanger.
func (e *Endpoint) Exchange(ctx context.Context, x *transport.Exchange) error {
	return e.worldMember(x.Comm).exchange(ctx, x)
}

// ExchangeLimit implements transport.Exchanger: the world's limit for a
// group whose members are known, else -1.
func (v *View) ExchangeLimit() int {
	if !v.m.cs.known {
		return -1
	}
	return v.m.e.ExchangeLimit()
}

// Exchange implements transport.Exchanger.
func (v *View) Exchange(ctx context.Context, x *transport.Exchange) error {
	if !v.m.cs.known {
		return fmt.Errorf("%w: exchanges on a communicator whose members are not known here", errs.Unsupported)
	}
	return v.m.exchange(ctx, x)
}

func (m member) exchange(ctx context.Context, x *transport.Exchange) error {
	e := m.e
	w := e.w
	if !w.exchOn {
		return fmt.Errorf("%w: exchanges are off", errs.Unsupported)
	}
	if len(x.Payload) > exchBytes {
		return fmt.Errorf("%w: exchange payload of %d bytes (limit %d)", errs.InvalidArgument, len(x.Payload), exchBytes)
	}
	if w.exited[e.rank].Load() {
		return e.gone(e.rank)
	}
	t := m.cs.exchTable()
	me := &t.ranks[m.rank]
	b := int(me.count & 1)
	me.count++
	if me.dirty {
		if err := m.settle(ctx, t, me, x); err != nil {
			me.prev = x.Seq // this exchange is started (and abandoned) too
			return err
		}
	}
	me.prev = x.Seq
	s := &t.slots[2*m.rank+b]
	s.sig, s.n = x.Sig, len(x.Payload)
	copy(s.data[:], x.Payload)
	s.seq.Store(x.Seq)
	if t.nparked.Load() != 0 {
		t.kick()
	}
	size := m.cs.size
	if len(x.Data) < size {
		x.Data = make([][]byte, size)
	}

	// Poll every peer's slot, then park if that takes too long.
	i := 0
	for r := range size {
		if r == m.rank {
			continue
		}
		ps := &t.slots[2*r+b]
		for ps.seq.Load() != x.Seq {
			i++
			if i < x.Spin {
				if i&255 == 255 {
					runtime.Gosched() // a rank sharing this thread may be the one we wait for
					if ctx.Err() != nil {
						me.dirty = true
						return m.exchFail(x, transport.CtxErr(ctx))
					}
				}
				continue
			}
			if err := m.exchPark(ctx, t, me, b, x); err != nil {
				me.dirty = true
				return err
			}
			break
		}
	}
	me.dirty = false

	// Everyone has published: compare signatures and expose the payloads.
	for r := range size {
		ps := &t.slots[2*r+b]
		if ps.sig != x.Sig {
			return fmt.Errorf("%w: collective #%d: rank %d called it with other arguments than rank %d", errs.Mismatch, x.Seq, r, m.rank)
		}
		x.Data[r] = ps.data[:ps.n:ps.n]
	}
	return nil
}

// exchPark waits, parked between polls, until every peer has published
// exchange x in slots of parity b, or the exchange fails. Peers that
// publish kick it, and so does Exit.
func (m member) exchPark(ctx context.Context, t *exchTable, me *exchRank, b int, x *transport.Exchange) error {
	// Ranks that run a message schedule for this call check the record
	// when they wait, as this rank checks theirs below: whichever of two
	// such ranks checks second sees the other's record.
	m.recordCall(x.Seq, x.Sig)
	m.e.w.park(t, me)
	defer m.e.w.unpark(t, me)
	done := ctx.Done()
	for {
		ready, err := m.exchPoll(t, b, x)
		if err != nil || ready {
			return err
		}
		select {
		case <-me.wake:
		case <-done:
			return m.exchFail(x, transport.CtxErr(ctx))
		}
	}
}

// exchPoll reports whether every peer has published exchange x in slots
// of parity b, or why it never will.
func (m member) exchPoll(t *exchTable, b int, x *transport.Exchange) (bool, error) {
	ready := true
	for r := range m.cs.size {
		if r == m.rank {
			continue
		}
		// Load the other parity first: a peer publishes this exchange
		// before its next one, so a later number there means this slot
		// already shows the peer's publication of x, if it made one.
		other := t.slots[2*r+1-b].seq.Load()
		s := t.slots[2*r+b].seq.Load()
		switch {
		case s == x.Seq:
			continue
		case other == x.Seq:
			return false, fmt.Errorf("%w: collective #%d: rank %d counts its exchanges differently (after an earlier mismatch)", errs.Mismatch, x.Seq, r)
		case s > x.Seq || other > x.Seq:
			return false, fmt.Errorf("%w: collective #%d: rank %d went past it without taking part", errs.Mismatch, x.Seq, r)
		}
		if m.exited(r) {
			// A peer publishes before it exits; look once more.
			if t.slots[2*r+b].seq.Load() == x.Seq {
				continue
			}
			return false, m.exchFail(x, m.e.gone(m.cs.world(r)))
		}
		ready = false
	}
	if ready {
		return true, nil
	}
	if err := m.checkCall(x.Seq, x.Sig, true); err != nil {
		return false, err
	}
	return false, nil
}

// exchFail prefers a mismatch report, if the call records show one, to the
// error err it caused (a rank that ran another call, then failed or left).
func (m member) exchFail(x *transport.Exchange, err error) error {
	m.recordCall(x.Seq, x.Sig) // for the peers' own reports
	if cerr := m.checkCall(x.Seq, x.Sig, true); cerr != nil {
		return fmt.Errorf("%w (then: %w)", cerr, err)
	}
	return err
}

// settle waits until no peer can still be reading this rank's slots of
// the parity it is about to write: until every peer has published an
// exchange numbered me.prev (the last this rank started) or later, or has
// exited. Only a rank whose last exchange ended early needs it.
func (m member) settle(ctx context.Context, t *exchTable, me *exchRank, x *transport.Exchange) error {
	settled := func() bool {
		for r := range m.cs.size {
			if r == m.rank || m.exited(r) {
				continue
			}
			if max(t.slots[2*r].seq.Load(), t.slots[2*r+1].seq.Load()) < me.prev {
				return false
			}
		}
		return true
	}
	for i := 0; i < x.Spin; i++ {
		if settled() {
			return nil
		}
		if i&255 == 255 {
			runtime.Gosched()
		}
	}
	m.e.w.park(t, me)
	defer m.e.w.unpark(t, me)
	for !settled() {
		select {
		case <-me.wake:
		case <-ctx.Done():
			return transport.CtxErr(ctx)
		}
	}
	return nil
}
