package tcp

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/scoll/scoll/transport"
)

// The ledger of eager sends (Config.DetachedSends). A small send of a
// collective call completes once written, as MPI's eager sends do, but its
// frame still asks the receiver to acknowledge it (a sync frame), and the
// ledger keeps it until the receiver does, refuses it (a mismatched call)
// or fails. Settle, which the executor calls when a call on a communicator
// has done its own work, waits for the entries of that communicator's
// earlier calls and returns the failure of any of them. So a rank whose
// part of a mismatched call was only eager sends (a bcast's root) completes
// that call, and its next call on the communicator, or its Close, fails
// with an error naming it, while the receivers fail in the call itself.
// Back-to-back bcasts then cost their root a write per call plus one ack
// it awaits a call later, instead of a round trip per call.

// ledger counts the written eager sends not taken yet, by communicator and
// call, and keeps the failures of those that were refused.
type ledger struct {
	n    atomic.Int64 // entries pending plus failures kept: 0 is the fast path
	mu   sync.Mutex
	pend map[callKey]int
	errs map[uint64]error // by communicator: the first failure not reported yet
	wake chan struct{}    // closed and replaced when an entry settles
}

func newLedger() *ledger {
	return &ledger{pend: map[callKey]int{}, errs: map[uint64]error{}, wake: make(chan struct{})}
}

// add enters an eager send of call k.
func (l *ledger) add(k transport.Key) {
	l.mu.Lock()
	l.pend[callKey{k.Comm, k.Seq}]++
	l.n.Add(1)
	l.mu.Unlock()
}

// done settles an entry of call k sent to rank peer: taken (err nil) or
// failed.
func (l *ledger) done(k transport.Key, peer int, err error) {
	ck := callKey{k.Comm, k.Seq}
	l.mu.Lock()
	if l.pend[ck]--; l.pend[ck] <= 0 {
		delete(l.pend, ck)
	}
	l.n.Add(-1)
	if err != nil && l.errs[k.Comm] == nil {
		l.errs[k.Comm] = &EagerError{Seq: k.Seq, Peer: peer, Err: err}
		l.n.Add(1)
	}
	close(l.wake)
	l.wake = make(chan struct{})
	l.mu.Unlock()
}

// Settle waits until the eager sends of the calls on communicator comm
// before call seq have been taken by their receivers, and returns the
// failure of one of them, if any, once (an *EagerError, wrapping the
// failure: errs.Mismatch when the receiver was in another call). seq of
// ^uint64(0) waits for every call of comm (its Close). It returns at once
// when nothing is pending, and an error wrapping errs.Canceled when ctx
// ends first.
func (t *Transport) Settle(ctx context.Context, comm, seq uint64) error {
	l := t.ledger
	if l.n.Load() == 0 {
		return nil
	}
	for {
		l.mu.Lock()
		if err := l.errs[comm]; err != nil {
			delete(l.errs, comm)
			l.n.Add(-1)
			l.mu.Unlock()
			return err
		}
		waiting := false
		for k := range l.pend {
			if k.comm == comm && k.seq < seq {
				waiting = true
				break
			}
		}
		wake := l.wake
		l.mu.Unlock()
		if !waiting {
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return transport.CtxErr(ctx)
		}
	}
}

// EagerError is the failure of an earlier call that this rank completed
// because its part was only eager sends (Config.DetachedSends): the
// receiver Peer (a transport rank) refused or lost the message of call Seq.
// Settle returns it to the next call on the communicator, or its Close.
type EagerError struct {
	Seq  uint64
	Peer int
	Err  error
}

// Error names the earlier call.
func (e *EagerError) Error() string {
	return fmt.Sprintf("an earlier call (number %d on this communicator) failed after this rank's part of it completed: rank %d did not take its eager send: %v", e.Seq, e.Peer, e.Err)
}

// Unwrap returns the receiver's failure (errs.Mismatch, errs.PeerFailed, ...).
func (e *EagerError) Unwrap() error { return e.Err }

// eagerEntry returns the ledger's record of eager send m: a copy with its
// key and signature only, since m itself completes when written and its
// owner may reuse it.
func eagerEntry(m *transport.Msg) *syncSend {
	return &syncSend{m: &transport.Msg{Peer: m.Peer, Key: m.Key, Sig: m.Sig}, eager: true}
}
