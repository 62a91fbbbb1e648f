//go:build mpi

package mpi

/*
#include <stdlib.h>
#include <sched.h>
#include "shim.h"
*/
import "C"

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"time"
	"unsafe"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// Exchanges (transport.Exchanger). A small blocking collective of the
// world communicator costs one MPI_Iallgather of fixed-size records on a
// communicator of its own instead of a schedule of scoll messages: each
// record holds the call's communicator, sequence number, signature and the
// rank's payload, and every rank computes its result from all of them. The
// allgather is posted and then tested in a loop inside one cgo call, so a
// call that completes at once crosses into C once. Records whose calls or
// signatures differ fail the call with errs.Mismatch on every rank.
//
// Ranks may disagree about taking the exchange (a count that differs, a
// blocking call on some ranks and a non-blocking one on others): then some
// run the call as messages and never post the allgather. A rank waiting in
// an exchange watches for messages of the same call (their headers) and
// for a peer's word that it waits for messages of the call (kindReady,
// which a receive of a collective call that has waited readyAfter sends
// once to its peer); it then fails the call and tells every rank
// (kindAbort), whose operations of the call fail with errs.Mismatch. The
// exchange's allgather stays posted: it completes together with the
// others' allgather of their next exchange, which then fails with
// errs.Mismatch on every rank (the records name different calls), and the
// ranks are in step again from the exchange after. An allgather left by a
// context that ended completes the same way, with the late ranks' records
// of the same call, and the next exchange proceeds.

const (
	exchLimit  = 96 // largest payload of an exchange
	xhdr       = 32 // record header: comm, seq, sig, payload length
	xrec       = xhdr + exchLimit
	xSpins     = 256 // MPI_Test calls per cgo call
	readyAfter = 500 * time.Microsecond
)

// callKey names a collective call.
type callKey struct{ comm, seq uint64 }

// exchState is the exchanges' state, guarded by Transport.mu.
type exchState struct {
	rec, all unsafe.Pointer // C memory: this rank's record; all ranks' records
	stale    bool           // an allgather of an earlier call is still posted
	staleKey callKey
	aborted  map[callKey]error // calls failed by a peer's kindAbort
	ready    map[callKey]bool  // calls a peer waits for messages of
	announce []announced       // receives to announce if they wait readyAfter
}

// announced is a receive of a collective call posted at a time.
type announced struct {
	m  *transport.Msg
	k  matchKey
	at time.Time
}

// ExchangeLimit returns the largest payload of an exchange.
func (t *Transport) ExchangeLimit() int { return exchLimit }

// Exchange runs this rank's part of exchange x (transport.Exchanger).
func (t *Transport) Exchange(ctx context.Context, x *transport.Exchange) error {
	if len(x.Payload) > exchLimit {
		return fmt.Errorf("%w: mpi: exchange payload of %d bytes exceeds %d", errs.InvalidArgument, len(x.Payload), exchLimit)
	}
	call := callKey{x.Comm, x.Seq}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.usable(); err != nil {
		return err
	}
	if t.x.rec == nil {
		t.x.rec = C.calloc(1, xrec)
		t.x.all = C.calloc(C.size_t(t.size), xrec)
		if t.x.rec == nil || t.x.all == nil {
			return fmt.Errorf("%w: mpi: out of memory for exchanges", errs.PeerFailed)
		}
	}
	if t.x.stale {
		// An earlier call's allgather: it completes with the others'
		// allgather of that call (they were late) or of this one (they
		// never posted one for it).
		if err := t.xwait(ctx, call); err != nil {
			return err
		}
		t.x.stale = false
		if t.recordsOf(t.x.staleKey) != nil {
			t.abort(call)
			return fmt.Errorf("%w: mpi: exchange of call %d met the ranks' exchange of another call (an earlier call was mismatched)", errs.Mismatch, x.Seq)
		}
	}
	rec := unsafe.Slice((*byte)(t.x.rec), xrec)
	le := binary.LittleEndian
	le.PutUint64(rec[0:], x.Comm)
	le.PutUint64(rec[8:], x.Seq)
	le.PutUint64(rec[16:], x.Sig)
	le.PutUint64(rec[24:], uint64(len(x.Payload)))
	copy(rec[xhdr:], x.Payload)
	done := C.scoll_xstart(t.s, t.x.rec, t.x.all, xrec, xSpins)
	if done < 0 {
		return t.breakWith(mpiError("starting an exchange's allgather", -done))
	}
	t.x.stale, t.x.staleKey = true, call
	if done == 0 {
		if err := t.xwait(ctx, call); err != nil {
			return err
		}
	}
	t.x.stale = false
	if err := t.recordsOf(call); err != nil {
		return err
	}
	if cap(x.Data) < t.size {
		x.Data = make([][]byte, t.size)
	}
	x.Data = x.Data[:t.size]
	for r := range t.size {
		b := unsafe.Slice((*byte)(unsafe.Add(t.x.all, r*xrec)), xrec)
		x.Data[r] = b[xhdr : xhdr+int(le.Uint64(b[24:]))]
	}
	return nil
}

// recordsOf checks that every rank's record is of call with this rank's
// signature. Called with mu held.
func (t *Transport) recordsOf(call callKey) error {
	le := binary.LittleEndian
	mine := unsafe.Slice((*byte)(t.x.rec), xrec)
	for r := range t.size {
		b := unsafe.Slice((*byte)(unsafe.Add(t.x.all, r*xrec)), xrec)
		switch {
		case le.Uint64(b[0:]) != call.comm || le.Uint64(b[8:]) != call.seq:
			return fmt.Errorf("%w: mpi: rank %d exchanged for call %d, this rank for call %d", errs.Mismatch, r, le.Uint64(b[8:]), call.seq)
		case le.Uint64(b[16:]) != le.Uint64(mine[16:]):
			return fmt.Errorf("%w: mpi: rank %d made another call (signatures differ)", errs.Mismatch, r)
		case le.Uint64(b[24:]) > exchLimit:
			return fmt.Errorf("%w: mpi: rank %d sent a bad exchange record", errs.PeerFailed, r)
		}
	}
	return nil
}

// xwait waits, with mu held (released while it lets others run), until the
// posted allgather completes, which may be an earlier call's. It fails call
// (and tells the other ranks) when a rank shows it runs the call with
// messages: they post no allgather that would complete it.
func (t *Transport) xwait(ctx context.Context, call callKey) error {
	start := time.Now()
	for i := 0; ; i++ {
		if err := t.mixed(call); err != nil {
			t.abort(call)
			return err
		}
		if err := ctx.Err(); err != nil {
			return transport.CtxErr(ctx)
		}
		// Let the header matching run (and other goroutines of this rank).
		var buf [8]*transport.Msg
		ds := t.progress(buf[:0])
		t.mu.Unlock()
		complete(ds)
		if time.Since(start) > pumpSpin {
			C.sched_yield()
		} else {
			runtime.Gosched()
		}
		t.mu.Lock()
		if err := t.usable(); err != nil {
			return err
		}
		switch done := C.scoll_xtest(t.s, xSpins); {
		case done < 0:
			return t.breakWith(mpiError("MPI_Test of an exchange", -done))
		case done > 0:
			return nil
		}
	}
}

// mixed reports whether a rank shows that it runs call with messages: a
// message of the call arrived, a peer waits for one (kindReady), or a peer
// aborted the call. Called with mu held.
func (t *Transport) mixed(call callKey) error {
	if err := t.x.aborted[call]; err != nil {
		return err
	}
	if t.x.ready[call] {
		return fmt.Errorf("%w: mpi: a rank runs call %d with messages, this rank with an exchange", errs.Mismatch, call.seq)
	}
	for k := range t.unexp {
		if k.key.Comm == call.comm && k.key.Seq == call.seq {
			return fmt.Errorf("%w: mpi: rank %d sent a message of call %d, which this rank runs as an exchange", errs.Mismatch, k.peer, call.seq)
		}
	}
	return nil
}

// abort tells every other rank that call failed with a mismatch. Called
// with mu held.
func (t *Transport) abort(call callKey) {
	for r := range t.size {
		if r != t.rank {
			t.control(r, kindAbort, call)
		}
	}
}

// control sends a header-only message of kind about call to peer. Called
// with mu held.
func (t *Transport) control(peer, kind int, call callKey) {
	b, err := t.stage(peer, kind, transport.Key{Comm: call.comm, Seq: call.seq}, 0, 0, 0, 0)
	if err == nil {
		t.postStaged(b, peer, hdrSize)
	}
}

// onAbort fails this rank's receives of call (a peer found it mismatched)
// and remembers it, for receives posted later and an exchange of the call.
// Called with mu held.
func (t *Transport) onAbort(call callKey, src int, ds []*transport.Msg) []*transport.Msg {
	err := fmt.Errorf("%w: rank %d found call %d mismatched (ranks ran it in different ways)", errs.Mismatch, src, call.seq)
	if t.x.aborted == nil {
		t.x.aborted = map[callKey]error{}
	}
	if len(t.x.aborted) > 1024 {
		clear(t.x.aborted)
	}
	t.x.aborted[call] = err
	for k, q := range t.recvs {
		if k.key.Comm != call.comm || k.key.Seq != call.seq {
			continue
		}
		for _, m := range q {
			m.Err = err
			ds = t.done(m, ds)
		}
		delete(t.recvs, k)
	}
	return ds
}

// onReady notes that peer src waits for messages of call. Called with mu
// held.
func (t *Transport) onReady(call callKey) {
	if t.x.ready == nil {
		t.x.ready = map[callKey]bool{}
	}
	if len(t.x.ready) > 1024 {
		clear(t.x.ready)
	}
	t.x.ready[call] = true
}

// abortedErr returns the error of a receive of an aborted call, or nil.
// Called with mu held.
func (t *Transport) abortedErr(k transport.Key) error {
	if len(t.x.aborted) == 0 || k.Seq == 0 {
		return nil
	}
	return t.x.aborted[callKey{k.Comm, k.Seq}]
}

// announceLate sends kindReady for the announced receives that have waited
// readyAfter and drops those that matched. Called with mu held.
func (t *Transport) announceLate(now time.Time) {
	t.x.announce = slices.DeleteFunc(t.x.announce, func(a announced) bool {
		if !slices.Contains(t.recvs[a.k], a.m) {
			return true // matched or failed
		}
		if now.Sub(a.at) < readyAfter {
			return false
		}
		t.control(a.k.peer, kindReady, callKey{a.k.key.Comm, a.k.key.Seq})
		return true
	})
}

// freeExchanges releases the exchanges' memory; an allgather still posted
// keeps it (MPI may write it). Called with mu held, at Close.
func (t *Transport) freeExchanges() {
	if !t.x.stale {
		C.free(t.x.rec)
		C.free(t.x.all)
	}
	t.x.rec, t.x.all = nil, nil
}

var _ transport.Exchanger = (*Transport)(nil)
