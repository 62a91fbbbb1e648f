//go:build mpi

package mpi

/*
#include "caller.h"
#include "shim.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"runtime"
	"sync"
	"unsafe"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// Caller is a scoll transport that calls MPI only from the goroutines
// that post and wait: every message is one PMPI_Isend or PMPI_Irecv of its
// bytes on its own duplicate of a communicator, with a tag made of the
// call and the message's index. It has no goroutine of its own: operations
// are posted by the goroutine that posts them, and complete when a waiting
// goroutine polls (Poll, and Park, which polls until the waiter's
// operations are done instead of sleeping). Under scoll's drop-in library
// (cmd/libscollmpi) that goroutine is the application's thread inside its
// MPI call, so every MPI thread level works; a Go program that runs its
// calls on one goroutine locked to the thread that initialised MPI
// (runtime.LockOSThread) can use it with MPI_THREAD_FUNNELED. Its MPI
// calls are PMPI_ ones.
//
// Messages of one pair of ranks with equal tags match in the order they
// were posted (MPI's non-overtaking rule), and every rank makes the calls
// of a communicator in the same order, so tags that wrap around or collide
// between calls still match the right messages.
//
// A call that fails on one rank (its ranks disagree: a message of the
// wrong size, say) may leave the others waiting for messages it will not
// send: the rank that failed tells every rank (Fail), and their waiting
// operations of that call fail instead.
type Caller struct {
	c          *C.scoll_caller
	rank, size int
	seqBits    uint // the tag's high bits hold the call, the low tagBits the index
	tagBits    uint

	mu     sync.Mutex
	slots  []*pending // by slot; nil when free
	free   []int
	done   []C.int
	counts []C.int64_t
	// pin keeps the Go buffers of posted operations where MPI reads or
	// writes them: one Pinner for all (Pin on a fresh Pinner sets a
	// finalizer, which costs as much as a small message), unpinned when
	// no pinned operation is left. pinned counts them.
	pin    runtime.Pinner
	pinned int
	// Poll's results from C (fields: passed to C, locals would escape).
	events, src, nb C.int
	notice          [2]C.uint64_t
	// last is the call of the latest message posted; failed are the
	// calls some rank reported failed (the latest few), and the rank.
	last       call
	failed     map[call]int
	failedList []call
	// The request channel (caller_respond.go): services and their
	// handlers, the services withdrawn, point-to-point receives posted and
	// arrivals no receive or service took yet.
	reqTag   int
	reqBuf   []byte
	services map[uint64]func(int, []byte) []byte
	unserved map[uint64]bool
	local    []*transport.Msg
	unexp    []reqArrival
}

// call names a collective call: its communicator's context id and its
// sequence number there.
type call struct{ comm, seq uint64 }

// maxFailed is how many failed calls an endpoint remembers.
const maxFailed = 64

// pending is a posted operation: its message and the pin that keeps its
// buffer where MPI reads or writes it. An orphan's message was completed
// with an error when its call failed elsewhere; MPI still holds its
// buffer until the operation completes or is cancelled.
type pending struct {
	m      *transport.Msg
	recv   bool
	orphan bool
	pinned bool   // its buffer is pinned (counted in Caller.pinned)
	keep   []byte // the buffer MPI sends from, when not m.Buf
}

// NewCaller returns a Caller over a duplicate of the communicator whose
// Fortran handle (MPI_Comm_c2f) is fcomm, which MPI must have initialised.
// It is collective over that communicator, as Close is.
func NewCaller(fcomm int) (*Caller, error) {
	var c *C.scoll_caller
	var rank, size, ub C.int
	if rc := C.scoll_caller_open(C.int(fcomm), &c, &rank, &size, &ub); rc != 0 {
		return nil, mpiError("MPI_Comm_dup", rc)
	}
	// The largest 2^k − 1 not above MPI_TAG_UB; messages take tags below
	// 2^(k-1), the control channel MPI_TAG_UB.
	k := uint(bits.Len(uint(ub)+1)-1) - 1
	tagBits := min(16, k/2)
	return &Caller{c: c, rank: int(rank), size: int(size), seqBits: k - tagBits, tagBits: tagBits,
		done: make([]C.int, 256), counts: make([]C.int64_t, 256), failed: map[call]int{},
		reqTag: int(ub) - 1, reqBuf: make([]byte, 16+transport.MaxRequest)}, nil
}

func (e *Caller) Rank() int { return e.rank }
func (e *Caller) Size() int { return e.size }

// tag is the MPI tag of messages with key k.
func (e *Caller) tag(k transport.Key) int {
	call := (k.Comm*0x9e3779b97f4a7c15 ^ k.Seq) & (1<<e.seqBits - 1)
	return int(call<<e.tagBits | uint64(k.Tag)&(1<<e.tagBits-1))
}

func (e *Caller) Isend(m *transport.Msg) error { return e.post(m, false) }
func (e *Caller) Irecv(m *transport.Msg) error { return e.post(m, true) }

func (e *Caller) post(m *transport.Msg, recv bool) error {
	if m.Peer < 0 || m.Peer >= e.size {
		return fmt.Errorf("%w: peer %d of %d ranks", errs.InvalidArgument, m.Peer, e.size)
	}
	if m.Combine != nil {
		return fmt.Errorf("%w: combining receives", errs.Unsupported)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.c == nil {
		return errs.Closed
	}
	buf, tag := m.Buf, e.tag(m.Key)
	if transport.IsRequest(m.Key) { // on the request channel
		if recv {
			return e.postLocal(m)
		}
		if len(m.Buf) > transport.MaxRequest {
			return fmt.Errorf("%w: a point-to-point message or request of %d bytes (at most %d on this transport)",
				errs.Unsupported, len(m.Buf), transport.MaxRequest)
		}
		buf = make([]byte, 16+len(m.Buf))
		binary.LittleEndian.PutUint64(buf, m.Key.Comm)
		binary.LittleEndian.PutUint64(buf[8:], uint64(m.Key.Tag))
		copy(buf[16:], m.Buf)
		tag = e.reqTag
	} else {
		k := call{m.Key.Comm, m.Key.Seq}
		if r, ok := e.failed[k]; ok {
			return fmt.Errorf("%w: rank %d failed this call", errs.PeerFailed, r)
		}
		e.last = k
	}
	slot := len(e.slots)
	if n := len(e.free); n > 0 {
		slot, e.free = e.free[n-1], e.free[:n-1]
	} else {
		e.slots = append(e.slots, nil)
	}
	p := &pending{m: m, recv: recv, keep: buf}
	var ptr unsafe.Pointer
	if len(buf) > 0 {
		e.pin.Pin(&buf[0])
		e.pinned++
		p.pinned = true
		ptr = unsafe.Pointer(&buf[0])
	}
	var rc C.int
	if recv {
		rc = C.scoll_caller_irecv(e.c, ptr, C.int64_t(len(buf)), C.int(m.Peer), C.int(tag), C.int(slot))
	} else {
		rc = C.scoll_caller_isend(e.c, ptr, C.int64_t(len(buf)), C.int(m.Peer), C.int(tag), C.int(slot))
	}
	if rc != 0 {
		e.release(p)
		e.free = append(e.free, slot)
		return fmt.Errorf("%w: MPI error %d posting a message to rank %d", errs.PeerFailed, int(rc), m.Peer)
	}
	e.slots[slot] = p
	return nil
}

// Poll completes the operations MPI has completed, and fails those of
// calls another rank reported failed.
func (e *Caller) Poll() {
	e.mu.Lock()
	if e.c == nil {
		e.mu.Unlock()
		return
	}
	n := int(C.scoll_caller_testsome(e.c, &e.done[0], &e.counts[0], C.int(len(e.done)), &e.events))
	var finished []*pending
	if e.events&1 != 0 && C.scoll_caller_ctrl_test(e.c, &e.notice[0], &e.src) != 0 {
		finished = e.failCall(call{uint64(e.notice[0]), uint64(e.notice[1])}, int(e.src), finished)
	}
	var replies []*transport.Msg
	if e.events&2 != 0 && C.scoll_caller_req_test(e.c, unsafe.Pointer(&e.reqBuf[0]), &e.nb, &e.src) != 0 {
		replies = e.arrive(int(e.src), e.reqBuf[:e.nb], replies)
	}
	if n <= 0 && finished == nil && replies == nil {
		e.mu.Unlock() // the usual poll of a waiting rank: nothing to do
		return
	}
	for i := range max(n, 0) {
		slot := int(e.done[i])
		p := e.slots[slot]
		e.slots[slot] = nil
		e.free = append(e.free, slot)
		e.release(p)
		if p.orphan { // completed already, with its call's failure
			continue
		}
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
		p.m.W.Done()
	}
	e.sendReplies(replies)
}

// release unpins p's buffer: MPI is done with it. Called with mu held.
func (e *Caller) release(p *pending) {
	if !p.pinned {
		return
	}
	p.pinned = false
	if e.pinned--; e.pinned == 0 {
		e.pin.Unpin()
	}
}

// failCall records that rank src failed call k, and completes this rank's
// operations of k with an error (orphans: MPI releases them later; their
// receives are cancelled). It returns finished with them appended.
func (e *Caller) failCall(k call, src int, finished []*pending) []*pending {
	if _, ok := e.failed[k]; !ok {
		if len(e.failedList) == maxFailed {
			delete(e.failed, e.failedList[0])
			e.failedList = e.failedList[1:]
		}
		e.failed[k] = src
		e.failedList = append(e.failedList, k)
	}
	for slot, p := range e.slots {
		if p == nil || p.orphan || p.m.Key.Comm != k.comm || p.m.Key.Seq != k.seq {
			continue
		}
		p.orphan = true
		p.m.Err = fmt.Errorf("%w: rank %d failed this call", errs.PeerFailed, src)
		if p.recv {
			C.scoll_caller_cancel(e.c, C.int(slot))
		}
		finished = append(finished, p)
	}
	return finished
}

// Ended says that a call ended well: Fail after the next one, if it posts
// nothing, reports no call.
func (e *Caller) Ended() {
	e.mu.Lock()
	e.last = call{}
	e.mu.Unlock()
}

// Fail tells every other rank that this rank's call, the one that posted
// the latest message since the last Ended (none: nothing to tell), failed
// — unless another rank's report of that call is why — so that none waits
// for its messages.
func (e *Caller) Fail() {
	e.mu.Lock()
	k := e.last
	e.last = call{}
	if _, ok := e.failed[k]; ok || k == (call{}) {
		e.mu.Unlock()
		return
	}
	finished := e.failCall(k, e.rank, nil)
	e.mu.Unlock()
	for _, p := range finished {
		p.m.W.Done()
	}
	for r := range e.size {
		if r != e.rank {
			C.scoll_caller_ctrl_send(e.c, C.int(r), C.uint64_t(k.comm), C.uint64_t(k.seq))
		}
	}
}

// Park polls until w's operations are done: no other goroutine would
// complete them.
func (e *Caller) Park(w *transport.Waiter) {
	for w.Pending() > 0 {
		e.Poll()
		if w.Pending() > 0 {
			C.scoll_caller_yield()
		}
	}
}

func (e *Caller) Unpark(*transport.Waiter) {}

// Cancel withdraws nothing: a posted operation completes when its peer's
// does.
func (e *Caller) Cancel(*transport.Msg) bool { return false }

// Close frees the duplicate communicator (collective, as MPI_Comm_free);
// later calls fail. Call it before MPI_Finalize.
func (e *Caller) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.c != nil {
		C.scoll_caller_close(e.c)
		e.c = nil
	}
	return nil
}

// Native collectives the benchmarks compare with (scoll tune --mpi).
const (
	NativeAllreduce          = C.SCOLL_NATIVE_ALLREDUCE            // sum of float64s
	NativeBcast              = C.SCOLL_NATIVE_BCAST                // bytes
	NativeAllgather          = C.SCOLL_NATIVE_ALLGATHER            // bytes per rank
	NativeReduceScatterBlock = C.SCOLL_NATIVE_REDUCE_SCATTER_BLOCK // sum of float64s, per block
	NativeAlltoall           = C.SCOLL_NATIVE_ALLTOALL             // bytes per block
	NativeBarrier            = C.SCOLL_NATIVE_BARRIER
)

// Native runs the MPI library's own collective coll (a Native constant)
// on the Caller's communicator: n elements per rank or block (float64s for
// the reductions, bytes for the others) from send into recv, bcast in
// recv from root. Every rank must make the same calls; none may be waiting
// for this rank's messages of a scoll call meanwhile.
func (e *Caller) Native(coll int, send, recv []byte, n, root int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.c == nil {
		return errs.Closed
	}
	var sp, rp unsafe.Pointer
	if len(send) > 0 {
		sp = unsafe.Pointer(&send[0])
	}
	if len(recv) > 0 {
		rp = unsafe.Pointer(&recv[0])
	}
	if rc := C.scoll_caller_native(e.c, C.int(coll), sp, rp, C.int(n), C.int(root)); rc != 0 {
		return mpiError("a native collective", rc)
	}
	return nil
}

// Wtime is MPI_Wtime.
func Wtime() float64 { return float64(C.scoll_caller_wtime()) }

// InitCaller initialises MPI (MPI_THREAD_FUNNELED) on the calling thread,
// which the caller must have locked (runtime.LockOSThread) and must use for
// every later MPI call, and returns a Caller on MPI_COMM_WORLD. Finalize
// ends MPI. For programs that are MPI programs themselves, as scoll tune
// --mpi is; Init's transport is the one for Go programs.
func InitCaller() (*Caller, error) {
	if C.scoll_state() != 0 {
		return nil, fmt.Errorf("%w: mpi: MPI was initialised already", errs.InvalidArgument)
	}
	var provided C.int
	if rc := C.scoll_init_thread(1, &provided); rc != 0 {
		return nil, mpiError("MPI_Init_thread", rc)
	}
	return NewCaller(int(C.scoll_caller_world_f()))
}

// Finalize closes c and ends MPI (MPI_Finalize), on the thread that
// initialised it.
func Finalize(c *Caller) error {
	c.Close()
	if rc := C.scoll_finalize(); rc != 0 {
		return mpiError("MPI_Finalize", rc)
	}
	return nil
}
