//go:build linux

package shm

import (
	"fmt"
	"slices"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// callKey names a collective call: its communicator and sequence number.
type callKey struct{ comm, seq uint64 }

// idMsg is a send waiting for its ack, and the id the ack names.
type idMsg struct {
	id uint64
	m  *transport.Msg
}

// callSig is a collective call and its signature. A message of call c from
// a peer proves that the peer is in c: it serves as the ack of this rank's
// sync sends of c to the peer, as this rank's messages of c serve the peer.
type callSig struct{ comm, seq, sig uint64 }

// incoming is a message being received or received unexpectedly.
type incoming struct {
	key   transport.Key
	sig   uint64
	id    uint64
	sync  bool
	total int
	got   int
	data  []byte         // unexpected: the bytes so far
	m     *transport.Msg // matched: the receive
	short bool           // matched receive too short: data is dropped
	own   bool           // the drainer has seen m set: only it touches x
	proof bool           // this rank sent the sender a message of the same call, which acks
	cma   bool           // single copy: read total bytes at addr in the sender
	addr  uint64
}

// Irecv posts a receive.
func (t *Transport) Irecv(m *transport.Msg) error {
	src, err := t.peer(m)
	if err != nil {
		return err
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return errs.Closed
	}
	if x := take(&t.unexp[src], func(x *incoming) bool { return x.key == m.Key }); x != nil {
		if x.cma {
			t.mu.Unlock()
			x.m = m
			t.read(src, x)
			return nil
		}
		if x.got < x.total {
			// Still arriving: the rest goes straight to the receive.
			x.m = m
			x.short = len(m.Buf) < x.total
			if !x.short && x.sig == m.Sig && m.Combine == nil {
				copy(m.Buf, x.data)
				x.data = nil
			}
			t.mu.Unlock()
			t.ack(src, x)
			return nil
		}
		t.mu.Unlock()
		finish(m, x.data, x.sig, m.Peer)
		t.ack(src, x)
		m.W.Done()
		return nil
	}
	if err := t.refusal(src, m.Key); err != nil {
		t.mu.Unlock()
		return err
	}
	t.posted[src] = append(t.posted[src], m)
	t.mu.Unlock()
	return nil
}

// Cancel withdraws a posted receive that has not matched yet.
func (t *Transport) Cancel(m *transport.Msg) bool {
	src, err := t.peer(m)
	if err != nil {
		return false
	}
	t.mu.Lock()
	r := take(&t.posted[src], func(r *transport.Msg) bool { return r == m })
	t.mu.Unlock()
	if r == nil {
		return false
	}
	m.Err = errs.Canceled
	m.W.Done()
	return true
}

// takePosted removes and returns the first receive posted for a message
// from p with key; t.mu is held.
func (t *Transport) takePosted(p int, key transport.Key) *transport.Msg {
	return take(&t.posted[p], func(m *transport.Msg) bool { return m.Key == key })
}

// take removes and returns the first element of *q that match accepts, or
// the zero value. The queues are short (the operations in flight with one
// peer), so a scan beats a map.
func take[T comparable](q *[]T, match func(T) bool) T {
	var zero T
	for i, v := range *q {
		if match(v) {
			*q = slices.Delete(*q, i, i+1)
			return v
		}
	}
	return zero
}

// filter removes the elements of *q that drop accepts and returns them.
func filter[T any](q *[]T, drop func(T) bool) []T {
	var out []T
	keep := (*q)[:0]
	for _, v := range *q {
		if drop(v) {
			out = append(out, v)
		} else {
			keep = append(keep, v)
		}
	}
	clear((*q)[len(keep):])
	*q = keep
	return out
}

// finish completes receive r with data from rank from, as tcp does: a
// signature mismatch fails it, a short buffer too.
func finish(r *transport.Msg, data []byte, sig uint64, from int) {
	if sig != r.Sig {
		r.Err = mismatch(from)
		return
	}
	transport.Finish(r, data)
}

// mismatch is the error of a message from rank from that belongs to
// another call than the receive it matched.
func mismatch(from int) error {
	return fmt.Errorf("%w: message from rank %d belongs to another call", errs.Mismatch, from)
}

// proveLocked records that p, which sent x, is in x's call, and returns
// the sync sends to p that this completes (removed from t.syncs; not the
// single-copy ones, which wait for their read). It also notes in x whether
// this rank's own message of the call to p serves p as the ack of x.
// t.mu is held.
func (t *Transport) proveLocked(p int, x *incoming) []*transport.Msg {
	if x.key.Seq == 0 {
		return nil
	}
	c := callSig{x.key.Comm, x.key.Seq, x.sig}
	x.proof = t.sent[p] == c
	if t.proof[p] == c {
		return nil
	}
	t.proof[p] = c
	if len(t.syncs[p]) == 0 {
		return nil
	}
	var done []*transport.Msg
	for _, s := range filter(&t.syncs[p], func(s idMsg) bool { return (callSig{s.m.Key.Comm, s.m.Key.Seq, s.m.Sig}) == c }) {
		done = append(done, s.m)
	}
	return done
}
