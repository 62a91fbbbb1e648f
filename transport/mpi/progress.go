//go:build mpi

package mpi

/*
#include <stdlib.h>
#include <sched.h>
#include "shim.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"time"
	"unsafe"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// Poll makes progress if no other goroutine is doing so: it tests the
// outstanding MPI requests, matches the headers that have arrived and
// completes what has finished. Waiters call it while they spin.
func (t *Transport) Poll() {
	t.polls.Add(1)
	if !t.mu.TryLock() {
		return
	}
	if t.closed {
		t.mu.Unlock()
		return
	}
	var buf [8]*transport.Msg
	ds := t.progress(buf[:0])
	t.mu.Unlock()
	complete(ds)
}

// Park is called before a waiter parks: the pump takes over the polling.
func (t *Transport) Park(w *transport.Waiter) {
	t.parked.Add(1)
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// Unpark is called when a parked waiter resumes.
func (t *Transport) Unpark(w *transport.Waiter) { t.parked.Add(-1) }

// busy reports whether the pump has work: operations in flight, a waiter
// parked (it may wait for what a request delivers, such as a split's
// post, which no operation of its own stands for), or a service whose
// requests must be answered while this rank makes no call at all.
// Called with mu held.
func (t *Transport) busy() bool {
	return t.active > 0 || t.parked.Load() > 0 || len(t.services) > 0
}

// kickPump wakes the pump if it is idle (a post made work for it).
func (t *Transport) kickPump() {
	if !t.pumpIdle.Load() {
		return
	}
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// Pump back-off, by the time since anything last happened: the pump polls
// without pause for pumpSpin; then, while a waiter is parked or a payload
// is in flight (MPI moves data only when polled), it yields the CPU to
// other processes between polls until pumpYield; then it sleeps between
// polls, from pumpMinSleep doubling to pumpMaxSleep. A rank whose peers
// are late thus burns at most pumpYield of CPU.
const (
	pumpSpin     = 50 * time.Microsecond
	pumpYield    = 5 * time.Millisecond
	pumpMinSleep = 10 * time.Microsecond
	pumpMaxSleep = time.Millisecond
	// pollerGrace is how long the pump stands by while waiters poll.
	pollerGrace = 50 * time.Microsecond
)

// pump progresses MPI while operations are outstanding and no waiter
// polls: a waiter polls only while it spins, and a posted operation must
// progress even when nobody waits for it.
func (t *Transport) pump() {
	defer close(t.pumpDone)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	sleep := func(d time.Duration) bool {
		timer.Reset(d)
		select {
		case <-timer.C:
		case <-t.wake:
			timer.Stop()
		case <-t.stop:
			timer.Stop()
			return false
		}
		return true
	}
	var buf [16]*transport.Msg
	for {
		// Posts kick an idle pump only. Whoever increments active after
		// the check below sees pumpIdle set and kicks.
		t.pumpIdle.Store(true)
		t.mu.Lock()
		busy := t.busy()
		t.mu.Unlock()
		if !busy {
			select {
			case <-t.wake:
			case <-t.stop:
				return
			}
		}
		t.pumpIdle.Store(false)
		polls := t.polls.Load()
		last := time.Now() // when something last happened
		nap := pumpMinSleep
		for {
			if p := t.polls.Load(); p != polls {
				// A waiter is polling: leave the progress to it, and stand
				// by in case it parks (Park kicks the pump) or stops.
				polls, last, nap = p, time.Now(), pumpMinSleep
				if !sleep(pollerGrace) {
					return
				}
				continue
			}
			t.mu.Lock()
			if t.closed {
				t.mu.Unlock()
				return
			}
			ev := t.events
			ds := t.progress(buf[:0])
			busy, inflight := t.busy(), t.inflight
			now := time.Now()
			if t.events != ev {
				last, nap = now, pumpMinSleep
			}
			t.mu.Unlock()
			complete(ds)
			clear(buf[:])
			if !busy {
				break
			}
			switch quiet := now.Sub(last); {
			case quiet < pumpSpin:
				runtime.Gosched()
			case quiet < pumpYield && (inflight > 0 || t.parked.Load() > 0):
				C.sched_yield()
			default:
				if !sleep(nap) {
					return
				}
				nap = min(2*nap, pumpMaxSleep)
			}
		}
	}
}

// progress tests the outstanding requests, handles what completed and
// appends the user operations that completed to ds. Called with mu held.
//
// Header receives are all posted with MPI_ANY_SOURCE on one tag, so MPI
// matches them with incoming headers in posting order, and headers from
// one sender in sending order (MPI's non-overtaking rule). progress handles
// them in posting order, which is ring order from ringNext since each is
// reposted when handled; a later one that completes first waits. The
// headers of each sender are thus handled in sending order.
func (t *Transport) progress(ds []*transport.Msg) []*transport.Msg {
	if t.broken != nil {
		ds = t.failWith(t.broken, ds)
	}
	out := C.scoll_testsome(t.s, C.int(len(t.slots)))
	if out < 0 {
		t.breakWith(mpiError("MPI_Testsome", -out))
		return ds
	}
	if n := int(out); n > 0 {
		idxs := unsafe.Slice(C.scoll_indices(t.s), n)
		sts := unsafe.Slice(C.scoll_statuses(t.s), n)
		for j := range n {
			i, s := int(idxs[j]), &sts[j]
			var err error
			if s.error != 0 {
				err = mpiError("request failed", s.error)
			}
			switch sl := t.slots[i]; sl.kind {
			case slotRing:
				t.ringReady[i] = true
				t.ringSrc[i], t.ringCount[i], t.ringErr[i] = int(s.source), int(s.count), err
			case slotStaged:
				t.release(sl.buf)
				t.freeSlot(i)
				t.active--
				if err != nil {
					t.breakWith(err)
				}
			case slotPayload:
				t.freeSlot(i)
				t.active--
				t.inflight--
				o := sl.op
				o.left--
				if err != nil && o.err == nil {
					o.err = err
				}
				if o.left == 0 {
					ds = t.opDone(o, ds)
				}
			}
		}
	}
	for t.ringReady[t.ringNext] {
		i := t.ringNext
		t.ringReady[i] = false
		ds = t.header(i, ds)
		if t.closed {
			break
		}
		if err := t.postRing(i); err != nil {
			break
		}
		t.ringNext = (i + 1) % ringLen
	}
	if len(t.x.announce) > 0 {
		t.announceLate(time.Now())
	}
	return ds
}

func (t *Transport) freeSlot(i int) {
	t.slots[i] = slot{}
	t.free = append(t.free, int32(i))
}

// postRing posts header receive i.
func (t *Transport) postRing(i int) error {
	p := unsafe.Add(t.ringMem, i*t.stride)
	if rc := C.scoll_irecv(t.s, C.int(i), p, C.int(t.stride), -1, headerTag, C.SCOLL_HDR); rc != 0 {
		return t.breakWith(mpiError("posting a header receive", rc))
	}
	return nil
}

// opDone finishes a payload transfer whose chunks have all completed.
func (t *Transport) opDone(o *op, ds []*transport.Msg) []*transport.Msg {
	t.events++
	switch {
	case o.send:
		o.pin.Unpin()
		delete(t.sends, o.m)
		o.m.Err = o.err
		return t.done(o.m, ds)
	case o.scratch != nil: // a pull
		if o.discard {
			C.free(o.scratch)
			o.scratch = nil
			return ds
		}
		if o.m != nil {
			t.finishPull(o, o.m)
			return append(ds, o.m)
		}
		return ds // the arrival waits for a receive with its payload
	default: // a receive into the user's buffer
		o.pin.Unpin()
		if o.m.Err = o.err; o.err == nil {
			o.m.N = o.a.n
		}
		return t.done(o.m, ds)
	}
}

// header handles the header that ring receive i holds.
func (t *Transport) header(i int, ds []*transport.Msg) []*transport.Msg {
	t.events++
	if err := t.ringErr[i]; err != nil {
		t.breakWith(err)
		return ds
	}
	b := unsafe.Slice((*byte)(unsafe.Add(t.ringMem, i*t.stride)), t.ringCount[i])
	src := t.ringSrc[i]
	if len(b) < hdrSize {
		t.breakWith(fmt.Errorf("%w: mpi: %d-byte header from rank %d", errs.PeerFailed, len(b), src))
		return ds
	}
	le := binary.LittleEndian
	kind := le.Uint64(b[hdrKind:])
	key := transport.Key{Comm: le.Uint64(b[hdrComm:]), Seq: le.Uint64(b[hdrSeq:]), Tag: int64(le.Uint64(b[hdrTag:]))}
	// a is copied to the heap only if it has to wait.
	a := arrival{
		src:   src,
		key:   key,
		sig:   le.Uint64(b[hdrSig:]),
		n:     int(le.Uint64(b[hdrLen:])),
		id:    le.Uint64(b[hdrID:]),
		chunk: int(le.Uint64(b[hdrChunk:])),
	}
	k := matchKey{src, key}
	switch kind {
	case kindCancel:
		t.dropCancelled(k, a.id)
		return ds
	case kindAbort:
		return t.onAbort(callKey{key.Comm, key.Seq}, src, ds)
	case kindReady:
		t.onReady(callKey{key.Comm, key.Seq})
		return ds
	case kindInline:
		if a.n != len(b)-hdrSize {
			t.breakWith(fmt.Errorf("%w: mpi: header from rank %d announces %d bytes and carries %d", errs.PeerFailed, src, a.n, len(b)-hdrSize))
			return ds
		}
		if m := t.popRecv(k); m != nil {
			deliver(m, a.sig, b[hdrSize:])
			return t.done(m, ds)
		}
		if h := t.handler(key); h != nil {
			t.answer(src, key, h, b[hdrSize:])
			return ds
		}
		a.inline = true
		a.data = append([]byte(nil), b[hdrSize:]...)
		ap := new(arrival)
		*ap = a
		t.unexp[k] = append(t.unexp[k], ap)
		return ds
	case kindPayload:
		if a.chunk <= 0 || a.n <= 0 {
			t.breakWith(fmt.Errorf("%w: mpi: bad payload header from rank %d", errs.PeerFailed, src))
			return ds
		}
		// The payload's tag repeats every tagMod messages of the sender.
		// An older payload with the same tag whose receive is not posted
		// yet must be received first, or MPI would hand it to the newer
		// message's receive: pull it into scratch memory now.
		st := srcTag{src, a.id % t.tagMod}
		if old := t.waiting[st]; old != nil {
			delete(t.waiting, st)
			t.pull(old, nil)
		}
		ap := new(arrival)
		*ap = a
		if m := t.popRecv(k); m != nil {
			if done, _ := t.match(m, ap); done {
				ds = append(ds, m)
			}
			return ds
		}
		t.waiting[st] = ap
		t.unexp[k] = append(t.unexp[k], ap)
		return ds
	}
	t.breakWith(fmt.Errorf("%w: mpi: header of unknown kind %d from rank %d", errs.PeerFailed, kind, src))
	return ds
}

// popRecv removes and returns the first posted receive for k, or nil.
func (t *Transport) popRecv(k matchKey) *transport.Msg { return popFront(t.recvs, k) }

// dropCancelled drops unmatched message id of k, whose sender cancelled
// it, and receives its payload into scratch memory so that the send
// completes.
func (t *Transport) dropCancelled(k matchKey, id uint64) {
	for i, a := range t.unexp[k] {
		if a.inline || a.id != id {
			continue
		}
		removeAt(t.unexp, k, i)
		st := srcTag{a.src, a.id % t.tagMod}
		if t.waiting[st] == a {
			delete(t.waiting, st)
		}
		if a.pull == nil {
			if t.pull(a, nil) != nil {
				return
			}
		}
		if a.pull.left > 0 {
			a.pull.discard = true
		} else {
			C.free(a.pull.scratch)
			a.pull.scratch = nil
		}
		return
	}
}

// closeWait bounds how long Close waits for sends to complete.
const closeWait = time.Second

// drain is Close's part before MPI_Finalize: it cancels the header and
// payload receives, gives sends up to closeWait to complete, and fails
// every operation left. It returns the failed operations, and the
// transfers MPI still holds, whose memory can be released only after
// MPI_Finalize. Called with mu held and closed set.
func (t *Transport) drain(ds []*transport.Msg) ([]*transport.Msg, []*op) {
	closed := fmt.Errorf("%w: mpi transport closed", errs.Closed)
	for i := range ringLen {
		var c C.int
		C.scoll_cancel(t.s, C.int(i), &c)
		t.ringReady[i] = false
		t.slots[i] = slot{}
	}
	for i, sl := range t.slots {
		if sl.kind != slotPayload || sl.op.send {
			continue
		}
		var c C.int
		if rc := C.scoll_cancel(t.s, C.int(i), &c); rc == 0 {
			t.freeSlot(i)
			t.active--
			t.inflight--
			o := sl.op
			o.left--
			if c != 0 && o.err == nil {
				o.err = closed
			}
			if o.left == 0 {
				ds = t.opDone(o, ds)
			}
		}
	}
	for end := time.Now().Add(closeWait); t.requests() > 0 && time.Now().Before(end); {
		ds = t.progress(ds)
		runtime.Gosched()
	}
	// What is left: receives without a header, and transfers in flight.
	ds = t.failWith(closed, ds)
	var held []*op
	seen := make(map[*op]bool)
	for i, sl := range t.slots {
		if sl.kind == slotPayload && !seen[sl.op] {
			seen[sl.op] = true
			held = append(held, sl.op)
			if m := sl.op.m; m != nil {
				m.Err = closed
				ds = t.done(m, ds)
			}
		}
		if sl.kind == slotStaged {
			held = append(held, &op{scratch: sl.buf})
		}
		t.slots[i] = slot{}
	}
	for _, q := range t.unexp {
		for _, a := range q {
			if a.pull != nil && a.pull.left == 0 && a.pull.scratch != nil {
				C.free(a.pull.scratch)
			}
		}
	}
	clear(t.unexp)
	clear(t.waiting)
	clear(t.sends)
	return ds, held
}

// requests counts the MPI requests in flight.
func (t *Transport) requests() int {
	return len(t.slots) - len(t.free) - ringLen
}

// failWith fails the receives no header has matched with err.
func (t *Transport) failWith(err error, ds []*transport.Msg) []*transport.Msg {
	for k, q := range t.recvs {
		for _, m := range q {
			m.Err = err
			ds = t.done(m, ds)
		}
		delete(t.recvs, k)
	}
	return ds
}
