//go:build mpi

package main

/*
#include "dropin.h"
*/
import "C"

import (
	"fmt"
	"math/bits"
	"runtime"
	"sync"
	"unsafe"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// endpoint is scoll's transport over the drop-in's duplicate of
// MPI_COMM_WORLD: every message is one PMPI_Isend or PMPI_Irecv of its
// bytes, with a tag made of the call and the message's index. It has no
// goroutine of its own: operations are posted by the goroutine that posts
// them, and complete when a waiting goroutine polls (Poll, and Park, which
// polls until the waiter's operations are done instead of sleeping). In
// the drop-in that goroutine is the application's thread, inside its MPI
// call.
//
// Messages of one pair of ranks with equal tags match in the order they
// were posted (MPI's non-overtaking rule), and every rank makes the calls
// of a communicator in the same order, so tags that wrap around or collide
// between calls still match the right messages.
type endpoint struct {
	rank, size int
	seqBits    uint // the tag's high bits hold the call, the low tagBits the index
	tagBits    uint

	mu     sync.Mutex
	slots  []*pending // by slot; nil when free
	free   []int
	done   []C.int
	counts []C.int64_t
}

// pending is a posted operation: its message and the pin that keeps its
// buffer where MPI reads or writes it.
type pending struct {
	m    *transport.Msg
	recv bool
	pin  runtime.Pinner
}

func newEndpoint(rank, size int) *endpoint {
	// The largest 2^k − 1 not above MPI_TAG_UB.
	k := uint(bits.Len(uint(C.dropin_tag_ub())+1) - 1)
	tagBits := min(16, k/2)
	return &endpoint{rank: rank, size: size, seqBits: k - tagBits, tagBits: tagBits,
		done: make([]C.int, 256), counts: make([]C.int64_t, 256)}
}

func (e *endpoint) Rank() int { return e.rank }
func (e *endpoint) Size() int { return e.size }

// tag is the MPI tag of messages with key k.
func (e *endpoint) tag(k transport.Key) int {
	call := (k.Comm*0x9e3779b97f4a7c15 ^ k.Seq) & (1<<e.seqBits - 1)
	return int(call<<e.tagBits | uint64(k.Tag)&(1<<e.tagBits-1))
}

func (e *endpoint) Isend(m *transport.Msg) error { return e.post(m, false) }
func (e *endpoint) Irecv(m *transport.Msg) error { return e.post(m, true) }

func (e *endpoint) post(m *transport.Msg, recv bool) error {
	if m.Peer < 0 || m.Peer >= e.size {
		return fmt.Errorf("%w: peer %d of %d ranks", errs.InvalidArgument, m.Peer, e.size)
	}
	if m.Combine != nil {
		return fmt.Errorf("%w: combining receives", errs.Unsupported)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	slot := len(e.slots)
	if n := len(e.free); n > 0 {
		slot, e.free = e.free[n-1], e.free[:n-1]
	} else {
		e.slots = append(e.slots, nil)
	}
	p := &pending{m: m, recv: recv}
	var buf unsafe.Pointer
	if len(m.Buf) > 0 {
		p.pin.Pin(&m.Buf[0])
		buf = unsafe.Pointer(&m.Buf[0])
	}
	tag := C.int(e.tag(m.Key))
	var rc C.int
	if recv {
		rc = C.dropin_irecv(buf, C.int64_t(len(m.Buf)), C.int(m.Peer), tag, C.int(slot))
	} else {
		rc = C.dropin_isend(buf, C.int64_t(len(m.Buf)), C.int(m.Peer), tag, C.int(slot))
	}
	if rc != 0 {
		p.pin.Unpin()
		e.free = append(e.free, slot)
		return fmt.Errorf("%w: MPI error %d posting a message to rank %d", errs.PeerFailed, int(rc), m.Peer)
	}
	e.slots[slot] = p
	return nil
}

// Poll completes the operations MPI has completed.
func (e *endpoint) Poll() {
	e.mu.Lock()
	n := int(C.dropin_testsome(&e.done[0], &e.counts[0], C.int(len(e.done))))
	if n <= 0 {
		e.mu.Unlock() // the usual poll of a waiting rank: nothing to do
		return
	}
	finished := make([]*pending, 0, n)
	for i := range n {
		slot := int(e.done[i])
		p := e.slots[slot]
		e.slots[slot] = nil
		e.free = append(e.free, slot)
		switch c := int64(e.counts[i]); {
		case c < 0:
			p.m.Err = fmt.Errorf("%w: MPI error %d on a message with rank %d", errs.PeerFailed, -c-1, p.m.Peer)
		case p.recv:
			p.m.N = int(c)
		}
		finished = append(finished, p)
	}
	e.mu.Unlock()
	for _, p := range finished {
		p.pin.Unpin()
		p.m.W.Done()
	}
}

// Park polls until w's operations are done: no other goroutine would
// complete them.
func (e *endpoint) Park(w *transport.Waiter) {
	for w.Pending() > 0 {
		e.Poll()
		if w.Pending() > 0 {
			C.dropin_yield()
		}
	}
}

func (e *endpoint) Unpark(*transport.Waiter) {}

// Cancel withdraws nothing: a posted operation completes when its peer's
// does.
func (e *endpoint) Cancel(*transport.Msg) bool { return false }

func (e *endpoint) Close() error { return nil }
