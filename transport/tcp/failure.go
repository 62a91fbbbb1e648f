package tcp

import (
	"errors"
	"fmt"
	"slices"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// Failure handling: a peer that breaks, goes silent or leaves fails every
// operation that involves it, and a failed operation aborts its collective
// call here and on every peer, so that no rank waits for a call that cannot
// complete.

// errClosing is the cause recorded for peers of a closed transport,
// errGoodbye for a peer that closed its own.
var (
	errClosing = errors.New("transport closed")
	errGoodbye = errors.New("closed its endpoint")
)

// failure is the error of the operations that fail because the peer is
// down. Called with p.mu held.
func (p *peer) failure() error {
	return p.peerErr(p.err)
}

// peerErr is the error of the operations that fail because of err, an
// error of the peer or of its connection.
func (p *peer) peerErr(err error) error {
	return fmt.Errorf("%w: rank %d: %v", errs.PeerFailed, p.rank, err)
}

// down marks the peer failed: its connection closes and every operation
// that involves it fails, as do the calls those operations belong to.
func (p *peer) down(cause error) {
	p.mu.Lock()
	if p.state == stateDown {
		p.mu.Unlock()
		return
	}
	p.state, p.err = stateDown, cause
	conn := p.conn
	fail := p.failure() // the error every operation with the peer gets
	if p.closing || p.t.isClosed() {
		fail = errs.Closed
	}
	failed := p.takePending(fail)
	for _, f := range p.out {
		if f.done() { // the others are in p.rts or p.acks
			failed = append(failed, f.m)
		}
	}
	p.ctrl = nil
	// Messages that arrived complete stay receivable (a peer may send and
	// then leave); announced ones can no longer come.
	p.unexp = slices.DeleteFunc(p.unexp, func(in *inbound) bool {
		if in.self != nil {
			failed = append(failed, in.self)
		}
		return in.rts || in.self != nil || in.part != nil
	})
	p.out = nil
	closing := p.closing
	p.mu.Unlock()
	p.markUp()
	if conn != nil {
		conn.Close()
	}
	p.wake()
	t := p.t
	if !closing && !t.isClosed() && !errors.Is(cause, errGoodbye) {
		t.log.Warn("scoll: peer failed", "peer", p.rank, "err", cause)
	}
	if fn := t.onDown.Load(); fn != nil && !closing && !t.isClosed() {
		(*fn)(p.rank, fail)
	}
	keys := make([]transport.Key, len(failed))
	for i, m := range failed {
		keys[i] = m.Key
		complete(m, fail)
	}
	for _, k := range keys {
		t.failCallOf(k, fail)
	}
}

// OnPeerDown makes the endpoint call fn(rank, err) when it finds peer rank
// failed (its process died, fell silent past the timeout, or closed its
// endpoint), err being what the peer's operations fail with, so that a
// transport carrying other messages between the same ranks (a host's
// shared memory) fails them too. fn runs on the endpoint's goroutines and
// must not block.
func (t *Transport) OnPeerDown(fn func(rank int, err error)) { t.onDown.Store(&fn) }

// takePending removes the operations with the peer that are under way
// and returns them for the caller to fail with err: posted receives,
// announced long sends, receives being filled and sync sends not yet
// answered. Frames still queued in p.out are left to the caller. Called
// with p.mu held.
func (p *peer) takePending(err error) []*transport.Msg {
	var failed []*transport.Msg
	failed = append(failed, p.posted...)
	for _, m := range p.rts {
		failed = append(failed, m)
	}
	for id := range p.data {
		if m := p.drop(id, err); m != nil {
			failed = append(failed, m)
		}
	}
	failed = append(failed, p.failSyncs(func(*transport.Msg) bool { return true }, err)...)
	p.posted = nil
	clear(p.rts)
	return failed
}

// drop removes long receive id and returns its Msg for the caller to fail
// with err, or nil when the reader is filling it: the reader then fails it
// with err once the chunk is in. Called with p.mu held.
func (p *peer) drop(id uint64, err error) *transport.Msg {
	in := p.data[id]
	delete(p.data, id)
	if in == nil {
		return nil
	}
	if in.busy {
		in.err = err
		return nil
	}
	if in.in != nil {
		in.in.part = nil // unexpected, incomplete: gone
		p.unexp = slices.DeleteFunc(p.unexp, func(x *inbound) bool { return x == in.in })
	}
	return in.m
}

// failCall fails this peer's operations of call k; with notify it also
// queues a fail frame to the peer.
func (p *peer) failCall(k callKey, err error, code uint8, notify bool) {
	in := func(key transport.Key) bool { return key.Seq == k.seq && key.Comm == k.comm }
	var failed []*transport.Msg
	p.mu.Lock()
	p.posted = slices.DeleteFunc(p.posted, func(m *transport.Msg) bool {
		if in(m.Key) {
			failed = append(failed, m)
			return true
		}
		return false
	})
	p.unexp = slices.DeleteFunc(p.unexp, func(x *inbound) bool {
		if in(x.key) && x.self != nil {
			failed = append(failed, x.self)
		}
		return in(x.key)
	})
	for id, m := range p.rts {
		if in(m.Key) {
			failed = append(failed, m)
			delete(p.rts, id)
		}
	}
	for id, x := range p.data {
		if in(x.key) {
			if m := p.drop(id, err); m != nil { // its data, if it comes, is dropped
				failed = append(failed, m)
			}
		}
	}
	failed = append(failed, p.failSyncs(func(m *transport.Msg) bool { return in(m.Key) }, err)...)
	p.out = slices.DeleteFunc(p.out, func(f *frame) bool {
		if f.m == nil || !in(f.m.Key) {
			return false
		}
		if f.done() {
			failed = append(failed, f.m)
		}
		return true
	})
	if notify && (p.state == stateUp || p.state == stateConnecting) && !p.closing {
		p.control(header{kind: kindFail, code: code, key: transport.Key{Comm: k.comm, Seq: k.seq}})
	}
	p.mu.Unlock()
	p.wake()
	for _, m := range failed {
		complete(m, err)
	}
}

// callErr returns the error of an aborted call, or nil.
func (t *Transport) callErr(k transport.Key) error {
	if k.Seq == 0 || t.nfailed.Load() == 0 {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed[callKey{k.Comm, k.Seq}]
}

// failCallOf aborts the call of a collective message.
func (t *Transport) failCallOf(k transport.Key, err error) {
	if k.Seq != 0 {
		t.failCall(callKey{k.Comm, k.Seq}, err, -1)
	}
}

// AbortCall fails the call (comm, seq) here and on every peer.
func (t *Transport) AbortCall(comm, seq uint64, err error) {
	if seq == 0 {
		return
	}
	t.failCall(callKey{comm, seq}, err, -1)
}

// failCall records call k as failed with err, fails its operations here and,
// unless it already knew, tells every connected peer but from.
func (t *Transport) failCall(k callKey, err error, from int) {
	t.mu.Lock()
	if _, ok := t.failed[k]; ok || t.closed {
		t.mu.Unlock()
		return
	}
	t.failed[k] = err
	t.nfailed.Add(1)
	t.mu.Unlock()
	code := errCode(err)
	for _, p := range t.peers {
		p.failCall(k, err, code, p.rank != from && p.rank != t.rank)
	}
}
