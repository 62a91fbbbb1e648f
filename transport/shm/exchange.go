//go:build linux

package shm

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// Exchanges between processes (transport.Exchanger): the leaderless
// shared-memory all-to-all that small blocking collectives of the world
// communicator use when every rank of the job is on this segment.
//
// Each rank has two slots in the segment, one per exchange parity. In its
// e-th exchange a rank writes its payload and the call's signature into
// slot e%2 and publishes them by storing the call's sequence number last;
// then it polls every peer's slot e%2 until it shows the same number, and
// reads the payloads there. A rank writes slot e%2 again only in exchange
// e+2, after exchange e+1, which needed every peer's publication of e+1,
// made after that peer had finished reading exchange e. A rank whose
// exchange ended early (context, failed peer) has no such proof: before it
// writes again it waits until every live peer has published the exchange
// it abandoned or a later one (settle).
//
//	rank 0: write slot[0][e%2], seq <- s --+   poll slot[1][e%2] until seq = s, read
//	rank 1: write slot[1][e%2], seq <- s --+   poll slot[0][e%2] until seq = s, read
//
// An exchange costs about one cache-line transfer per peer, where a
// message schedule costs records, matching and acks. A waiting rank polls
// up to its spin budget, then sleeps on its doorbell, which publishers
// ring; it wakes every millisecond to look at its context and its peers.

// exchBytes is the largest payload of an exchange.
const exchBytes = 1024

// exchSlotSize is the bytes of a slot: sequence number, signature, length
// (8 bytes each), then the payload, padded to whole cache lines; the
// header and the first 40 payload bytes share a line.
const exchSlotSize = (24 + exchBytes + lineSize - 1) / lineSize * lineSize

// exchState is a rank's own state in its exchanges; only the goroutine
// running an exchange (one at a time) touches it.
type exchState struct {
	comm     uint64 // the communicator whose exchanges these are (0: none yet)
	count    uint64 // exchanges started
	prev     uint64 // sequence number of the exchange started last
	prevSig  uint64 // its signature
	prevFlow transport.Flow
	checked  bool // the peers' signatures of exchange prev were compared (checkPrev)
	dirty    bool // it ended before every peer had published it
	data     [][]byte
}

// exchSlot returns rank r's slot of parity b.
func (t *Transport) exchSlot(r, b int) []byte {
	off := t.exchOff + (2*r+b)*exchSlotSize
	return t.seg.Bytes()[off : off+exchSlotSize]
}

// exchSeq returns the sequence number rank r published in its slot of
// parity b.
func (t *Transport) exchSeq(r, b int) uint64 { return u64(t.exchSlot(r, b), 0).Load() }

// ExchangeLimit returns the largest payload of an exchange, or -1 when
// the endpoint offers none: when the segment's ranks are not the whole job.
// Ranks that share cores exchange too: a waiting rank yields its core at
// every poll (see Poll).
func (t *Transport) ExchangeLimit() int { return t.exchLimit }

// exchangeLimit computes ExchangeLimit once.
func (t *Transport) exchangeLimit() int {
	if t.size != t.Size() {
		return -1
	}
	return exchBytes
}

// SetChecker gives the endpoint the call records its exchanges consult
// when they wait (transport.Checker; the network's, in a mixed endpoint),
// so that a rank that ran a message schedule for the call is found out.
func (t *Transport) SetChecker(c transport.Checker) { t.checker = c }

// Exchange runs this rank's part of exchange x (transport.Exchanger).
// Only one communicator's calls may use the endpoint's exchanges (the
// world communicator's); another's are refused with errs.Unsupported.
func (t *Transport) Exchange(ctx context.Context, x *transport.Exchange) error {
	if t.exchLimit < 0 {
		return fmt.Errorf("%w: shm: exchanges are off", errs.Unsupported)
	}
	if len(x.Payload) > exchBytes {
		return fmt.Errorf("%w: shm: exchange payload of %d bytes (limit %d)", errs.InvalidArgument, len(x.Payload), exchBytes)
	}
	st := &t.exch
	if st.comm == 0 {
		st.comm = x.Comm
	} else if st.comm != x.Comm {
		return fmt.Errorf("%w: shm: exchanges of communicator %#x (the endpoint's are %#x's)", errs.Unsupported, x.Comm, st.comm)
	}
	if t.shut.Load() {
		return errs.Closed
	}
	t.exchMu.Lock()
	defer t.exchMu.Unlock()
	if t.shared {
		// Ranks that share cores gain nothing by running ahead (the
		// settling it costs later takes the cores' time instead: 4
		// processes on 2 cores, 8-byte bcast 2.9-3.2 µs rooted against
		// 2.6-2.8 µs waiting for all): every rank waits for all.
		x.Flow = transport.FlowAll
	}
	root := -1
	if x.Flow != transport.FlowAll {
		if x.Root < 0 || x.Root >= len(t.localOf) || t.localOf[x.Root] < 0 {
			return fmt.Errorf("%w: shm: exchange rooted at rank %d", errs.InvalidArgument, x.Root)
		}
		root = t.localOf[x.Root]
	}
	b := int(st.count & 1)
	st.count++
	var late error // a mismatch of the previous exchange, found now
	if st.dirty {
		if err := t.settle(ctx, x); err != nil {
			st.prev = x.Seq // this exchange is started (and abandoned) too
			return err
		}
		if st.prevFlow != transport.FlowAll && !st.checked {
			late = t.checkPrev()
		}
	}
	st.prev, st.prevSig, st.prevFlow, st.checked = x.Seq, x.Sig, x.Flow, false
	t.unchecked.Store(x.Flow != transport.FlowAll)
	// need reports whether this rank waits for peer r's payload.
	need := func(r int) bool {
		switch x.Flow {
		case transport.FlowFromRoot:
			return r == root && t.rank != root
		case transport.FlowToRoot:
			return t.rank == root
		}
		return true
	}
	slot := t.exchSlot(t.rank, b)
	u64(slot, 8).Store(x.Sig)
	u64(slot, 16).Store(uint64(len(x.Payload)))
	copy(slot[24:], x.Payload)
	u64(slot, 0).Store(x.Seq)
	for p := range t.size {
		if p != t.rank {
			t.bell(p).Ring()
		}
	}
	if len(x.Data) < t.size {
		x.Data = make([][]byte, t.size)
	}

	// Poll every peer's slot, then sleep if that takes too long.
	i := 0
	for r := range t.size {
		if r == t.rank || !need(r) {
			continue
		}
		for t.exchSeq(r, b) != x.Seq {
			i++
			if i < x.Spin {
				if t.shared {
					schedYield() // the rank waited for may need this core
				}
				if i&255 == 255 {
					t.polls.Add(1) // keep the progress goroutine out of the way
					runtime.Gosched()
					if ctx.Err() != nil {
						st.dirty = true
						return t.exchFail(x, transport.CtxErr(ctx))
					}
				}
				continue
			}
			if err := t.exchWait(ctx, b, x, need); err != nil {
				st.dirty = true
				return err
			}
			break
		}
	}
	// A rank that did not wait for every peer cannot tell when they are
	// done with its slot: its next exchange settles first.
	st.dirty = x.Flow != transport.FlowAll

	// Everyone needed has published: compare signatures and expose the
	// payloads.
	for r := range t.size {
		if r != t.rank && !need(r) {
			x.Data[t.global[r]] = nil
			continue
		}
		ps := t.exchSlot(r, b)
		if other := u64(ps, 8).Load(); other != x.Sig {
			return &errs.MismatchError{Seq: x.Seq, Rank: t.Rank(), Other: t.global[r], Sig: x.Sig, OtherSig: other}
		}
		n := min(int(u64(ps, 16).Load()), exchBytes)
		x.Data[t.global[r]] = ps[24 : 24+n : 24+n]
	}
	return late
}

// Settle, called when call seq on communicator comm has done its own work
// (transport.Settler; seq ^uint64(0): comm closes), checks, when this
// rank's last exchange on comm came before and it did not wait for every
// peer there, that the peers made the same call: a bcast's root learns of
// a mismatch no later than its next call, whatever path that call takes.
// It waits until every live peer has published that exchange.
func (t *Transport) Settle(ctx context.Context, comm, seq uint64) error {
	if !t.unchecked.Load() {
		return nil
	}
	t.exchMu.Lock()
	defer t.exchMu.Unlock()
	st := &t.exch
	if st.checked || st.prevFlow == transport.FlowAll || comm != st.comm || seq <= st.prev {
		return nil
	}
	if err := t.settle(ctx, &transport.Exchange{}); err != nil {
		return err
	}
	st.checked = true
	t.unchecked.Store(false)
	return t.checkPrev()
}

// checkPrev compares the signatures the peers published for this
// rank's previous exchange, whose peers it did not all wait for, with its
// own: a peer that made another call then has failed it, and this rank,
// which completed it, learns of it now. Called after settle, before this
// rank publishes again (so no peer has overwritten that publication).
func (t *Transport) checkPrev() error {
	st := &t.exch
	for r := range t.size {
		if r == t.rank {
			continue
		}
		for pb := range 2 {
			ps := t.exchSlot(r, pb)
			if u64(ps, 0).Load() == st.prev && u64(ps, 8).Load() != st.prevSig {
				return fmt.Errorf("%w: an earlier collective (#%d), which this rank completed, failed at rank %d: called with other arguments there", errs.Mismatch, st.prev, t.global[r])
			}
		}
	}
	return nil
}

// exchWait waits, sleeping between polls, until every peer needed has published
// exchange x in its slot of parity b, or the exchange fails.
func (t *Transport) exchWait(ctx context.Context, b int, x *transport.Exchange, need func(int) bool) error {
	// Ranks that run a message schedule for this call check the records
	// when they wait, as this rank checks theirs below.
	if t.checker != nil {
		t.checker.RecordCall(x.Comm, x.Seq, x.Sig)
	}
	bell := t.bell(t.rank)
	for {
		seq := bell.Arm()
		ready, err := t.exchPoll(b, x, need)
		if err != nil || ready {
			bell.Disarm()
			return err
		}
		if ctx.Err() != nil {
			bell.Disarm()
			return t.exchFail(x, transport.CtxErr(ctx))
		}
		bell.Sleep(seq, time.Millisecond)
	}
}

// exchPoll reports whether every peer needed has published exchange x in its
// slot of parity b, or why it never will.
func (t *Transport) exchPoll(b int, x *transport.Exchange, need func(int) bool) (bool, error) {
	ready := true
	for r := range t.size {
		if r == t.rank || !need(r) {
			continue
		}
		// Load the other parity first: a peer publishes this exchange
		// before its next one, so a later number there means this slot
		// already shows the peer's publication of x, if it made one.
		other := t.exchSeq(r, 1-b)
		s := t.exchSeq(r, b)
		switch {
		case s == x.Seq:
			continue
		case other == x.Seq:
			return false, fmt.Errorf("%w: collective #%d: rank %d counts its exchanges differently (after an earlier mismatch)", errs.Mismatch, x.Seq, t.global[r])
		case s > x.Seq || other > x.Seq:
			return false, fmt.Errorf("%w: collective #%d: rank %d went past it without taking part", errs.Mismatch, x.Seq, t.global[r])
		}
		if err := t.gone(r); err != nil {
			// A peer publishes before it exits; look once more.
			if t.exchSeq(r, b) == x.Seq {
				continue
			}
			return false, t.exchFail(x, err)
		}
		ready = false
	}
	if ready {
		return true, nil
	}
	if t.checker != nil {
		if err := t.checker.CheckCall(x.Comm, x.Seq, x.Sig, true); err != nil {
			return false, err
		}
	}
	return false, nil
}

// gone returns why peer r can no longer take part, or nil.
func (t *Transport) gone(r int) error {
	if t.state(r) == stateClosed {
		return fmt.Errorf("%w: rank %d closed its endpoint", errs.PeerFailed, t.global[r])
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return errs.Closed
	}
	return t.failErr[r]
}

// exchFail prefers a mismatch report, if the call records show one, to the
// error err it caused (a rank that ran another call, then failed or left).
func (t *Transport) exchFail(x *transport.Exchange, err error) error {
	if t.checker == nil {
		return err
	}
	t.checker.RecordCall(x.Comm, x.Seq, x.Sig)
	if cerr := t.checker.CheckCall(x.Comm, x.Seq, x.Sig, true); cerr != nil {
		return fmt.Errorf("%w (then: %w)", cerr, err)
	}
	return err
}

// settle waits until no peer can still be reading this rank's slot of the
// parity it is about to write: until every live peer has published the
// exchange this rank started last, or a later one. Only a rank whose last
// exchange ended early needs it.
func (t *Transport) settle(ctx context.Context, x *transport.Exchange) error {
	settled := func() bool {
		for r := range t.size {
			if r == t.rank || max(t.exchSeq(r, 0), t.exchSeq(r, 1)) >= t.exch.prev {
				continue
			}
			if t.gone(r) == nil {
				return false
			}
		}
		return true
	}
	bell := t.bell(t.rank)
	for i := 0; ; i++ {
		if i < x.Spin {
			if settled() {
				return nil
			}
			if t.shared {
				schedYield() // the rank waited for may need this core
			}
			if i&255 == 255 {
				runtime.Gosched()
			}
			continue
		}
		seq := bell.Arm()
		if settled() {
			bell.Disarm()
			return nil
		}
		if ctx.Err() != nil {
			bell.Disarm()
			return transport.CtxErr(ctx)
		}
		bell.Sleep(seq, time.Millisecond)
	}
}

var _ transport.Exchanger = (*Transport)(nil)
