//go:build mpi

package mpi

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// Transport is this process's rank of MPI_COMM_WORLD as a scoll transport.
// It implements transport.Transport, transport.Poller and
// transport.SpinHinter; it is safe for concurrent use.
type Transport struct {
	rank, size int
	// tagMod is MPI_TAG_UB+1: a payload travels with tag id mod tagMod.
	tagMod uint64
	s      *C.scoll_mpi

	finalize chan chan error // to the goroutine that initialised MPI
	wake     chan struct{}   // wakes the pump
	stop     chan struct{}   // closed by Close: the pump exits
	pumpDone chan struct{}
	polls    atomic.Uint64 // Poll calls, so that the pump steps aside
	pumpIdle atomic.Bool   // the pump waits for a kick
	parked   atomic.Int32  // waiters parked (Park without Unpark)

	mu sync.Mutex // serialises MPI calls (MPI_THREAD_SERIALIZED) and guards the rest
	// Invariant: closed ⇒ no MPI call is made any more.
	closed bool
	broken error // set when MPI reported an error; every later post fails

	// slots[i] describes the request in the C table's slot i; the first
	// ringLen slots are the pre-posted header receives.
	slots []slot
	free  []int32
	// Header receives complete in posting order, which is ring order from
	// ringNext (see progress).
	ringMem   unsafe.Pointer // ringLen buffers of stride bytes
	ringReady []bool
	ringSrc   []int   // a completed header receive's source,
	ringCount []int   // length,
	ringErr   []error // and error
	ringNext  int
	stride    int // hdrSize + the largest inline payload
	inlineMax int // largest payload sent inside its header
	chunk     int // largest payload chunk (MPI counts are C ints)

	recvs   map[matchKey][]*transport.Msg // posted receives without a header, in posting order
	unexp   map[matchKey][]*arrival       // headers without a receive, in arrival order
	waiting map[srcTag]*arrival           // unmatched headers whose payload receive is not posted
	sends   map[*transport.Msg]*op        // payload sends in flight
	sendID  []uint64                      // next message id per destination
	pool    []unsafe.Pointer              // free staging buffers of stride bytes

	// active counts posted user operations that have not completed plus
	// MPI requests other than header receives; the pump runs while it is
	// positive. inflight counts payload requests (data moving).
	active, inflight int
	events           uint64 // completions seen, for the pump's back-off

	x exchState // exchange.go

	// Responder: handlers by service, and services no longer served.
	services map[uint64]func(int, []byte) []byte
	unserved map[uint64]bool
}

var (
	_ transport.Transport  = (*Transport)(nil)
	_ transport.Poller     = (*Transport)(nil)
	_ transport.SpinHinter = (*Transport)(nil)
	_ transport.Modeler    = (*Transport)(nil)
)

type matchKey struct {
	peer int
	key  transport.Key
}

type srcTag struct {
	src int
	tag uint64
}

type slotKind uint8

const (
	slotFree    slotKind = iota
	slotRing             // a pre-posted header receive
	slotStaged           // a send from a staging buffer: a header, maybe with its payload
	slotPayload          // one chunk of a payload send or receive
)

type slot struct {
	kind slotKind
	buf  unsafe.Pointer // the staging buffer of a slotStaged
	op   *op            // the transfer of a slotPayload
}

// op is a payload transfer at the MPI level: a send from the user's buffer,
// a receive into the user's buffer, or a receive into scratch memory (a
// pull) when the payload cannot go to a user buffer straight away.
type op struct {
	m    *transport.Msg // nil for a pull no receive has matched yet
	a    *arrival       // the header a receive belongs to
	id   uint64         // a send's message id
	send bool
	pin  runtime.Pinner
	left int // chunks not completed yet
	err  error

	scratch   unsafe.Pointer // C memory a pull lands in
	discard   bool           // a pull for a cancelled send: nobody will read it
	cancelled bool           // a send whose receiver was asked to drop it
}

// arrival is a header that has been received.
type arrival struct {
	src    int
	key    transport.Key
	sig    uint64
	n      int    // payload length
	id     uint64 // the sender's message id; the payload's tag is id mod tagMod
	chunk  int    // the sender's chunk size
	inline bool
	data   []byte // an inline payload, copied out of the ring
	pull   *op    // the payload's receive into scratch memory, if any
}

// Header layout: a message kind, then the fields below, little endian.
const (
	kindInline   = 1 // payload follows the header
	kindPayload  = 2 // payload follows on the data communicator
	kindCancel   = 3 // the sender withdraws message id (sent with its key)
	kindAbort    = 4 // call key.Comm/key.Seq failed: a mismatch (header only; exchange.go)
	kindReady    = 5 // the sender waits for messages of call key.Comm/key.Seq (header only; exchange.go)
	hdrKind      = 0
	hdrComm      = 8
	hdrSeq       = 16
	hdrTag       = 24
	hdrSig       = 32
	hdrLen       = 40
	hdrID        = 48
	hdrChunk     = 56
	hdrSize      = 64
	ringLen      = 32
	inlineBytes  = 8 << 10 // default and largest inline payload
	defaultChunk = 1 << 30
	keepStaging  = 64 // staging buffers kept for reuse
	headerTag    = 0
)

// spinHint is the number of polls a waiter makes before parking; one poll
// costs 0.1–0.3 µs when nothing arrives.
const spinHint = 4096

// initMu keeps two Init calls from racing: MPI is initialised once per
// process.
var initMu sync.Mutex

// Launched reports whether the process looks started by an MPI launcher
// (Open MPI's or MPICH's mpirun/mpiexec, or a PMIx-based one such as
// srun). Init also works without one, as a singleton of size 1, where the
// MPI library allows it.
func Launched() bool {
	for _, v := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"} {
		if _, ok := os.LookupEnv(v); ok {
			return true
		}
	}
	return false
}

// Init initialises MPI with MPI_THREAD_SERIALIZED and returns the transport
// for this process's rank of MPI_COMM_WORLD (on duplicates of it). MPI can
// be initialised once per process: Init fails with errs.Unsupported when
// MPI is already initialised or finalized. Close finalizes MPI.
func Init() (*Transport, error) {
	initMu.Lock()
	defer initMu.Unlock()
	switch C.scoll_state() {
	case 1:
		return nil, fmt.Errorf("%w: mpi: MPI is already initialised", errs.Unsupported)
	case 2:
		return nil, fmt.Errorf("%w: mpi: MPI has been finalized", errs.Unsupported)
	}
	started := make(chan error)
	fin := make(chan chan error)
	go mainThread(started, fin)
	if err := <-started; err != nil {
		return nil, err
	}
	t := &Transport{
		finalize:  fin,
		wake:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		pumpDone:  make(chan struct{}),
		stride:    hdrSize + inlineBytes,
		inlineMax: inlineBytes,
		chunk:     defaultChunk,
		recvs:     make(map[matchKey][]*transport.Msg),
		unexp:     make(map[matchKey][]*arrival),
		waiting:   make(map[srcTag]*arrival),
		sends:     make(map[*transport.Msg]*op),
	}
	var rank, size C.int
	var tagUB C.longlong
	if rc := C.scoll_open(&t.s, &rank, &size, &tagUB); rc != 0 {
		err := mpiError("opening the communicators", rc)
		t.finalizeMPI()
		return nil, err
	}
	t.rank, t.size, t.tagMod = int(rank), int(size), uint64(tagUB)+1
	t.sendID = make([]uint64, t.size)
	t.ringMem = C.malloc(C.size_t(ringLen * t.stride))
	t.ringReady = make([]bool, ringLen)
	t.ringSrc = make([]int, ringLen)
	t.ringCount = make([]int, ringLen)
	t.ringErr = make([]error, ringLen)
	t.mu.Lock()
	var err error
	for i := range ringLen {
		t.slots = append(t.slots, slot{kind: slotRing})
		if err = t.grow(); err == nil {
			err = t.postRing(i)
		}
		if err != nil {
			break
		}
	}
	t.mu.Unlock()
	if err != nil {
		for i := range ringLen {
			var c C.int
			C.scoll_cancel(t.s, C.int(i), &c)
		}
		C.scoll_close(t.s)
		C.free(t.ringMem)
		t.finalizeMPI()
		return nil, err
	}
	go t.pump()
	return t, nil
}

// mainThread initialises MPI and later finalizes it on the same OS thread,
// as MPI requires of MPI_Finalize.
func mainThread(started chan<- error, fin <-chan chan error) {
	runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
	var provided C.int
	if rc := C.scoll_init_thread(2, &provided); rc != 0 {
		started <- mpiError("MPI_Init_thread", rc)
		return
	}
	if provided < 2 {
		C.scoll_finalize()
		started <- fmt.Errorf("%w: mpi: the MPI library does not provide MPI_THREAD_SERIALIZED", errs.Unsupported)
		return
	}
	started <- nil
	reply := <-fin
	var err error
	if rc := C.scoll_finalize(); rc != 0 {
		err = mpiError("MPI_Finalize", rc)
	}
	reply <- err
}

func (t *Transport) finalizeMPI() error {
	reply := make(chan error)
	t.finalize <- reply
	return <-reply
}

// mpiError wraps errs.PeerFailed with MPI's description of rc.
func mpiError(what string, rc C.int) error {
	var buf [512]C.char
	C.scoll_error_string(rc, &buf[0], C.int(len(buf)))
	return fmt.Errorf("%w: mpi: %s: %s (MPI error %d)", errs.PeerFailed, what, C.GoString(&buf[0]), int(rc))
}

// Rank returns this process's rank in MPI_COMM_WORLD.
func (t *Transport) Rank() int { return t.rank }

// Size returns the size of MPI_COMM_WORLD.
func (t *Transport) Size() int { return t.size }

// SpinHint returns how many times a waiter should poll before parking.
func (t *Transport) SpinHint() int { return spinHint }

// Model returns the α and β the default algorithm choice assumes over MPI:
// 2 µs per message and 6 GB/s, as measured between two ranks of one host
// over Open MPI's shared memory (TestMeasure). Across a network both are
// worse; the choice then errs towards algorithms with more messages.
func (t *Transport) Model() (alpha, beta float64) { return 2e-6, 1 / 6e9 }

// Library returns the MPI library's version string.
func (t *Transport) Library() string {
	var buf [1024]C.char
	C.scoll_library_version(&buf[0], C.int(len(buf)))
	return C.GoString(&buf[0])
}

func (t *Transport) checkPeer(m *transport.Msg) error {
	if m.Peer < 0 || m.Peer >= t.size {
		return fmt.Errorf("%w: peer %d out of range [0,%d)", errs.InvalidArgument, m.Peer, t.size)
	}
	return nil
}

// usable reports why no operation may be posted, or nil. Called with mu held.
func (t *Transport) usable() error {
	if t.closed {
		return fmt.Errorf("%w: mpi transport closed", errs.Closed)
	}
	return t.broken
}

// Isend posts m. A payload of up to 8 KiB is copied into the header message
// and m completes at once; a larger one is sent from m.Buf, which must not
// be touched until m completes (when MPI has sent it: for large payloads
// once the receive is posted). m.Eager is implied for small payloads and
// ignored for large ones.
func (t *Transport) Isend(m *transport.Msg) error {
	if err := t.checkPeer(m); err != nil {
		return err
	}
	t.mu.Lock()
	if err := t.usable(); err != nil {
		t.mu.Unlock()
		return err
	}
	done, err := t.send(m)
	t.mu.Unlock()
	t.kickPump()
	if done {
		m.W.Done()
	}
	return err
}

// send posts m's header, and its payload when it does not fit inline.
// It reports whether m has completed. Called with mu held.
func (t *Transport) send(m *transport.Msg) (bool, error) {
	id := t.sendID[m.Peer]
	n := len(m.Buf)
	kind := kindPayload
	if n <= t.inlineMax {
		kind = kindInline
	}
	b, err := t.stage(m.Peer, kind, m.Key, m.Sig, n, id, t.chunk)
	if err != nil {
		return false, err
	}
	t.sendID[m.Peer]++
	if kind == kindInline {
		copy(b[hdrSize:], m.Buf)
		if err := t.postStaged(b, m.Peer, hdrSize+n); err != nil {
			return false, err
		}
		t.events++
		return true, nil
	}
	if err := t.postStaged(b, m.Peer, hdrSize); err != nil {
		return false, err
	}
	o := &op{m: m, id: id, send: true}
	o.pin.Pin(&m.Buf[0])
	t.active++
	t.sends[m] = o
	return false, t.postPayload(o, unsafe.Pointer(&m.Buf[0]), n, m.Peer, id, t.chunk, true)
}

// stage takes a staging buffer and writes a header into it.
func (t *Transport) stage(peer, kind int, key transport.Key, sig uint64, n int, id uint64, chunk int) ([]byte, error) {
	var p unsafe.Pointer
	if k := len(t.pool); k > 0 {
		p = t.pool[k-1]
		t.pool = t.pool[:k-1]
	} else if p = C.malloc(C.size_t(t.stride)); p == nil {
		return nil, fmt.Errorf("%w: mpi: out of memory for a staging buffer", errs.PeerFailed)
	}
	b := unsafe.Slice((*byte)(p), t.stride)
	le := binary.LittleEndian
	le.PutUint64(b[hdrKind:], uint64(kind))
	le.PutUint64(b[hdrComm:], key.Comm)
	le.PutUint64(b[hdrSeq:], key.Seq)
	le.PutUint64(b[hdrTag:], uint64(key.Tag))
	le.PutUint64(b[hdrSig:], sig)
	le.PutUint64(b[hdrLen:], uint64(n))
	le.PutUint64(b[hdrID:], id)
	le.PutUint64(b[hdrChunk:], uint64(chunk))
	return b, nil
}

// postStaged sends the first count bytes of staging buffer b to peer's
// header stream; the buffer returns to the pool when MPI is done with it.
func (t *Transport) postStaged(b []byte, peer, count int) error {
	p := unsafe.Pointer(&b[0])
	i, err := t.alloc()
	if err != nil {
		t.release(p)
		return err
	}
	t.slots[i] = slot{kind: slotStaged, buf: p}
	if rc := C.scoll_isend(t.s, C.int(i), p, C.int(count), C.int(peer), headerTag, C.SCOLL_HDR); rc != 0 {
		t.slots[i] = slot{}
		t.free = append(t.free, int32(i))
		t.release(p)
		return t.breakWith(mpiError("MPI_Isend", rc))
	}
	t.active++
	return nil
}

func (t *Transport) release(p unsafe.Pointer) {
	if len(t.pool) < keepStaging {
		t.pool = append(t.pool, p)
		return
	}
	C.free(p)
}

// postPayload posts the chunks of a payload transfer of n bytes at p with
// peer: sends when send, else receives.
func (t *Transport) postPayload(o *op, p unsafe.Pointer, n, peer int, id uint64, chunk int, send bool) error {
	tag := C.int(id % t.tagMod)
	for off := 0; off < n; off += chunk {
		c := min(chunk, n-off)
		i, err := t.alloc()
		if err != nil {
			return err
		}
		t.slots[i] = slot{kind: slotPayload, op: o}
		q := unsafe.Add(p, off)
		var rc C.int
		if send {
			rc = C.scoll_isend(t.s, C.int(i), q, C.int(c), C.int(peer), tag, C.SCOLL_DATA)
		} else {
			rc = C.scoll_irecv(t.s, C.int(i), q, C.int(c), C.int(peer), tag, C.SCOLL_DATA)
		}
		if rc != 0 {
			t.slots[i] = slot{}
			t.free = append(t.free, int32(i))
			return t.breakWith(mpiError("posting a payload", rc))
		}
		o.left++
		t.active++
		t.inflight++
	}
	return nil
}

// alloc returns a free request slot.
func (t *Transport) alloc() (int, error) {
	if k := len(t.free); k > 0 {
		i := t.free[k-1]
		t.free = t.free[:k-1]
		return int(i), nil
	}
	if len(t.slots) >= math.MaxInt32 {
		return 0, fmt.Errorf("%w: mpi: too many requests in flight", errs.Unsupported)
	}
	t.slots = append(t.slots, slot{})
	return len(t.slots) - 1, t.grow()
}

// grow makes the C request table as long as t.slots.
func (t *Transport) grow() error {
	if rc := C.scoll_grow(t.s, C.int(len(t.slots))); rc != 0 {
		// Grow by doubling next time round; a failure is out of memory.
		return t.breakWith(mpiError("growing the request table", rc))
	}
	return nil
}

// breakWith records a failure of MPI: every later post fails with err.
func (t *Transport) breakWith(err error) error {
	if t.broken == nil {
		t.broken = err
	}
	return err
}

// Irecv posts m. Messages from m.Peer with m.Key match posted receives in
// posting order. m.Buf belongs to the transport until m completes; m.N is the
// message length, and a message longer than m.Buf fails m with an error
// wrapping errs.InvalidArgument after its first len(m.Buf) bytes are stored.
// Combining receives are not supported (errs.Unsupported).
func (t *Transport) Irecv(m *transport.Msg) error {
	if err := t.checkPeer(m); err != nil {
		return err
	}
	if m.Combine != nil {
		return fmt.Errorf("%w: mpi transport: combining receive", errs.Unsupported)
	}
	t.mu.Lock()
	if err := t.usable(); err != nil {
		t.mu.Unlock()
		return err
	}
	k := matchKey{m.Peer, m.Key}
	t.active++
	var done bool
	var err error
	if a := popFront(t.unexp, k); a != nil {
		done, err = t.match(m, a)
	} else if e := t.abortedErr(m.Key); e != nil {
		m.Err = e
		t.finished()
		done = true
	} else {
		t.recvs[k] = append(t.recvs[k], m)
		if m.Announce && m.Key.Seq != 0 {
			t.x.announce = append(t.x.announce, announced{m, k, time.Now()})
		}
	}
	t.mu.Unlock()
	t.kickPump()
	if done {
		m.W.Done()
	}
	return err
}

// match hands arrival a to receive m and reports whether m has completed.
// Called with mu held.
func (t *Transport) match(m *transport.Msg, a *arrival) (bool, error) {
	if a.inline {
		deliver(m, a.sig, a.data)
		t.finished()
		return true, nil
	}
	st := srcTag{a.src, a.id % t.tagMod}
	if t.waiting[st] == a {
		delete(t.waiting, st)
	}
	if o := a.pull; o != nil {
		if o.left > 0 {
			o.m = m // delivered when the pull completes
			return false, nil
		}
		t.finishPull(o, m)
		return true, nil
	}
	if m.Sig != a.sig || a.n > len(m.Buf) {
		// The payload cannot go straight into m.Buf.
		return false, t.pull(a, m)
	}
	o := &op{m: m, a: a}
	o.pin.Pin(&m.Buf[0])
	return false, t.postPayload(o, unsafe.Pointer(&m.Buf[0]), a.n, a.src, a.id, a.chunk, false)
}

// pull receives a's payload into scratch memory, for receive m if not nil.
func (t *Transport) pull(a *arrival, m *transport.Msg) error {
	p := C.malloc(C.size_t(a.n))
	if p == nil {
		return t.breakWith(fmt.Errorf("%w: mpi: out of memory for a %d-byte message", errs.PeerFailed, a.n))
	}
	o := &op{m: m, a: a, scratch: p}
	a.pull = o
	return t.postPayload(o, p, a.n, a.src, a.id, a.chunk, false)
}

// finishPull delivers a completed pull to m, which completes, and frees
// its memory.
func (t *Transport) finishPull(o *op, m *transport.Msg) {
	if o.err != nil {
		m.Err = o.err
	} else {
		deliver(m, o.a.sig, unsafe.Slice((*byte)(o.scratch), o.a.n))
	}
	C.free(o.scratch)
	o.scratch = nil
	t.finished()
}

// deliver completes receive m with the payload src of a send with
// signature sig.
func deliver(m *transport.Msg, sig uint64, src []byte) {
	if sig != m.Sig {
		m.Err = fmt.Errorf("%w: message signatures differ (collective calls do not match)", errs.Mismatch)
		return
	}
	transport.Finish(m, src)
}

// finished notes that a user operation has completed.
func (t *Transport) finished() {
	t.active--
	t.events++
}

// done notes that user operation m has completed and appends it to ds.
func (t *Transport) done(m *transport.Msg, ds []*transport.Msg) []*transport.Msg {
	t.finished()
	return append(ds, m)
}

// complete tells the waiters of completed operations; called without mu.
func complete(ds []*transport.Msg) {
	for _, m := range ds {
		m.W.Done()
	}
}

// Cancel withdraws receive m if no message has matched it. It never
// withdraws a send: a small send has completed at once, and for a large
// one Cancel asks the receiver to drop the message if no receive has
// matched it, so that the send completes (having delivered nothing).
func (t *Transport) Cancel(m *transport.Msg) bool {
	if m.Peer < 0 || m.Peer >= t.size {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	k := matchKey{m.Peer, m.Key}
	for i, r := range t.recvs[k] {
		if r == m {
			removeAt(t.recvs, k, i)
			t.active--
			return true
		}
	}
	if o := t.sends[m]; o != nil && !o.cancelled && t.usable() == nil {
		o.cancelled = true
		// The payload's id is the header's; the receiver finds it by key.
		if b, err := t.stage(m.Peer, kindCancel, m.Key, 0, len(m.Buf), o.id, 0); err == nil {
			t.postStaged(b, m.Peer, hdrSize)
		}
	}
	return false
}

// Close cancels what it can, fails every pending operation with an error
// wrapping errs.Closed, and finalizes MPI (a collective operation: it
// returns when every rank has called it). Later calls return nil and
// later operations fail with errs.Closed.
func (t *Transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	ds, held := t.drain(nil)
	t.freeExchanges()
	C.scoll_close(t.s)
	t.s = nil
	err := t.finalizeMPI()
	for _, o := range held {
		o.pin.Unpin()
		if o.scratch != nil {
			C.free(o.scratch)
		}
	}
	C.free(t.ringMem)
	for _, p := range t.pool {
		C.free(p)
	}
	t.pool = nil
	t.mu.Unlock()
	close(t.stop)
	<-t.pumpDone
	complete(ds)
	return err
}
