//go:build linux

package shm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"math/rand/v2"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// Transport is one rank's endpoint of a group of processes (or, in tests,
// goroutines) that share a segment. Every ordered pair of ranks has a ring
// in the segment; a message is one record or, when longer than a record,
// consecutive records (chunks) that its sender writes and its receiver
// copies out, a chunk at a time, while the sender writes the next. A large
// message of a collective call goes by single copy instead where the
// receiver can read the sender's memory (Config.CMAMin). Every rank has a
// slot with its pid, its state and the doorbell its receiver sleeps on when
// all its rings are empty, and two exchange slots (exchange.go).
//
// Whoever waits drains the incoming rings: the Transport is a
// transport.Poller, so a waiter polls it while it spins, and handles the
// records, matches messages with posted receives (by source and key, in
// posting order) and writes what did not fit in a full ring, on its own
// goroutine, without a hand-off. A progress goroutine per endpoint does the
// same for waiters that parked, sleeping on the doorbell, and otherwise
// checks the peers and drains now and then on a timer (progress). A send of
// a collective call (not Eager) completes when its receiver has matched it
// and acknowledged, or has sent this rank a message of the same call, so
// that a mismatched call fails at both ends; an eager send completes once
// written.
type Transport struct {
	rank, size int   // local: among the segment's ranks
	global     []int // the job's rank of each local rank
	localOf    []int // the local rank of each of the job's ranks, -1 elsewhere
	seg        *Segment
	cfg        Config

	outMu   []sync.Mutex // per destination: its ring and pending records
	out     []*Ring      // rings to each rank (nil for self)
	pending [][][]byte   // records waiting for room in out[d], in order
	in      []*Ring      // rings from each rank
	npend   atomic.Int64 // records in pending, over every destination

	drainMu sync.Mutex    // held while draining the incoming rings; guards:
	inMsg   []*incoming   // the message being received from each rank
	broken  []bool        // rings that held a corrupted record
	failed  []atomic.Bool // peers failed (failPeer), to be finished once their rings are drained
	final   []bool        // peers finished (finishPeer)

	probe  *uint64 // what a peer reads to learn whether it can read this process
	probed []bool  // peers probed (progress goroutine only)

	exch      exchState         // this rank's exchanges (exchange.go)
	exchOff   int               // where the exchange slots start in the segment
	exchLimit int               // ExchangeLimit
	shut      atomic.Bool       // Close has begun
	shared    bool              // the segment's ranks share cores (oversubscribed)
	segMu     sync.RWMutex      // FailRank reads, Close unmaps the segment
	checker   transport.Checker // call records for the exchanges, if any

	polls  atomic.Uint64 // Poll calls: a changing count means a caller polls
	parked atomic.Int32  // waiters parked on this endpoint
	kick   chan struct{} // wakes the progress goroutine when a waiter parks

	mu      sync.Mutex
	posted  [][]*transport.Msg // per peer: receives posted, in order
	unexp   [][]*incoming      // per peer: messages no receive took yet, in order
	syncs   [][]idMsg          // per peer: sync sends waiting for their ack
	reads   [][]idMsg          // per peer: single-copy sends: the receiver reads them, then acks
	proof   []callSig          // per peer: the last call it sent this rank a message of
	sent    []callSig          // per peer: the last call this rank sent it a message of
	nextID  uint64
	closed  bool
	peerErr []error  // why a peer is unusable, once finished (finishPeer)
	failErr []error  // why a peer failed (failPeer)
	watches []*Watch // the peers' processes, once seen (progress goroutine only)
	aborted map[callKey]error

	stop chan struct{}
	done chan struct{}
}

// Config configures an endpoint.
type Config struct {
	// RingBytes is the data capacity of each ring, a power of two (default
	// 64 KiB).
	RingBytes int
	// Poll is how often a sleeping endpoint checks its peers' liveness
	// (default 10 ms).
	Poll time.Duration
	// Ranks, when set, places the segment's ranks in a larger job: Ranks[i]
	// is the job's rank of the segment's rank i, JobSize the job's size.
	// The endpoint then speaks the job's ranks (Rank, Size, Msg.Peer), and
	// a peer off the segment is an invalid argument. Without them the
	// segment's ranks are the job.
	Ranks   []int
	JobSize int
	// CMAMin is the size from which a message of a collective call (not
	// Eager) goes by single copy: its receiver reads it from the sender's
	// memory with process_vm_readv(2) where the system permits (default
	// 64 KiB; negative: never). Smaller messages, eager ones and those to
	// ranks that cannot read this process go through the ring.
	CMAMin int
	// Spin is how long an idle progress goroutine polls its rings before
	// it sleeps on its doorbell (default 50 µs when the segment's ranks
	// have a core each, else none; negative: never polls).
	Spin time.Duration
}

// spin returns how long the progress goroutine of a segment of size ranks
// polls before it sleeps.
func (c Config) spin(size int) time.Duration {
	if c.Spin == 0 {
		if oversubscribed(size) {
			return 0
		}
		return 50 * time.Microsecond
	}
	return max(c.Spin, 0)
}

// oversubscribed reports whether size ranks of a segment have fewer cores
// than ranks between them, so that a rank spinning takes a peer's core.
// It counts the host's online CPUs, not this process's share (a launcher
// that binds each rank to a core leaves it one).
func oversubscribed(size int) bool { return size > hostCPUs() }

// hostCPUs returns the number of online CPUs of the host.
var hostCPUs = sync.OnceValue(func() int {
	if b, err := os.ReadFile("/sys/devices/system/cpu/online"); err == nil {
		if n := countCPUs(strings.TrimSpace(string(b))); n > 0 {
			return n
		}
	}
	return runtime.NumCPU()
})

// countCPUs counts the CPUs of a Linux CPU list ("0-3,6,8-9"), or returns
// 0 when it cannot parse it.
func countCPUs(list string) int {
	n := 0
	for part := range strings.SplitSeq(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}

func (c Config) cmaMin() int {
	if c.CMAMin == 0 {
		return 64 << 10
	}
	return c.CMAMin
}

func (c Config) ringBytes() int {
	if c.RingBytes == 0 {
		return 64 << 10
	}
	return c.RingBytes
}

func (c Config) poll() time.Duration {
	if c.Poll == 0 {
		return 10 * time.Millisecond
	}
	return c.Poll
}

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

// Record types and the header every record starts with.
const (
	recFirst = 1 // first (or only) chunk of a message
	recMore  = 2 // a further chunk of the message in progress
	recAck   = 3 // the receiver matched sync send id (status: 0 ok, 1 mismatch)
	recAbort = 4 // call (comm, seq) failed (status: abortCode)

	hdrLen = 48 // type u8, flags u8, pad, comm, seq, tag, sig, id, total (u32) at 40
)

// Record flags.
const (
	flagSync = 1 // the sender waits for an ack
	flagCMA  = 2 // single copy: the record carries the data's address
)

// Ack statuses.
const (
	ackOK       = 0
	ackMismatch = 1
	ackFailed   = 2 // the receiver could not read the data or its call failed
)

// Slot layout per rank (one cache line): pid u32, state u32, bell (8
// bytes), the address of the rank's probe word (u64) and the value there
// (u64), and the bitmap of the ranks whose memory the rank can read
// (256 bits).
const (
	slotProbe   = 16
	slotMagic   = 24
	slotCanRead = 32
	maxCMARanks = 256

	stateUp     = 1
	stateClosed = 2
)

// NewLocalGroup starts n endpoints in this process on one segment, each
// with its own mapping, as n processes would have: for tests and
// benchmarks of the transport itself.
func NewLocalGroup(n int, cfg Config) ([]*Transport, error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: shm: group of %d endpoints", errs.InvalidArgument, n)
	}
	size := SegmentSize(n, cfg.ringBytes())
	first, err := CreateSegment("local", size)
	if err != nil {
		return nil, err
	}
	eps := make([]*Transport, 0, n)
	fail := func(err error) ([]*Transport, error) {
		for _, e := range eps {
			e.Close()
		}
		return nil, err
	}
	for r := range n {
		seg := first
		if r > 0 {
			fd, err := unix.Dup(first.FD())
			if err != nil {
				return fail(err)
			}
			if seg, err = AttachSegment(fd, size); err != nil {
				return fail(err)
			}
		}
		ep, err := New(seg, r, n, cfg)
		if err != nil {
			seg.Close()
			return fail(err)
		}
		eps = append(eps, ep)
	}
	return eps, nil
}

// SegmentSize returns the bytes of a segment for n ranks with rings of
// ringBytes.
func SegmentSize(n, ringBytes int) int {
	return n*lineSize + n*n*RingSize(ringBytes) + 2*n*exchSlotSize
}

// New returns rank's endpoint on seg, a segment of SegmentSize(size,
// cfg.RingBytes) bytes shared by the group (zero before the first endpoint
// starts). The endpoint owns seg and closes it.
func New(seg *Segment, rank, size int, cfg Config) (*Transport, error) {
	rb := cfg.ringBytes()
	if size < 1 || rank < 0 || rank >= size || len(seg.Bytes()) < SegmentSize(size, rb) {
		return nil, fmt.Errorf("%w: shm: rank %d of %d on a segment of %d bytes", errs.InvalidArgument, rank, size, len(seg.Bytes()))
	}
	global, localOf, err := placement(size, cfg)
	if err != nil {
		return nil, err
	}
	t := &Transport{rank: rank, size: size, global: global, localOf: localOf, seg: seg, cfg: cfg,
		outMu: make([]sync.Mutex, size), out: make([]*Ring, size), pending: make([][][]byte, size),
		in: make([]*Ring, size), inMsg: make([]*incoming, size), broken: make([]bool, size), failed: make([]atomic.Bool, size), final: make([]bool, size), kick: make(chan struct{}, 1),
		posted: make([][]*transport.Msg, size), unexp: make([][]*incoming, size), syncs: make([][]idMsg, size),
		reads: make([][]idMsg, size), probe: new(uint64), probed: make([]bool, size),
		proof: make([]callSig, size), sent: make([]callSig, size),
		peerErr: make([]error, size), failErr: make([]error, size), watches: make([]*Watch, size), aborted: map[callKey]error{}, stop: make(chan struct{}), done: make(chan struct{})}
	t.exchOff = size*lineSize + size*size*RingSize(rb)
	t.exchLimit = t.exchangeLimit()
	t.shared = oversubscribed(size)
	mem := seg.Bytes()
	for p := range size {
		if p == rank {
			continue
		}
		var err error
		if t.out[p], err = NewRing(t.ringMem(rank, p), rb); err != nil {
			return nil, err
		}
		if t.in[p], err = NewRing(t.ringMem(p, rank), rb); err != nil {
			return nil, err
		}
	}
	*t.probe = rand.Uint64() | 1
	u32(mem, rank*lineSize).Store(uint32(os.Getpid()))
	u64(mem, rank*lineSize+slotProbe).Store(uint64(uintptr(unsafe.Pointer(t.probe))))
	u64(mem, rank*lineSize+slotMagic).Store(*t.probe)
	u32(mem, rank*lineSize+4).Store(stateUp)
	go t.progress()
	return t, nil
}

func (t *Transport) ringMem(from, to int) []byte {
	rs := RingSize(t.cfg.ringBytes())
	off := t.size*lineSize + (from*t.size+to)*rs
	return t.seg.Bytes()[off : off+rs]
}

func (t *Transport) bell(r int) *Bell {
	off := r*lineSize + 8
	return &Bell{mem: t.seg.Bytes()[off : off+8]}
}

func (t *Transport) state(r int) uint32 { return u32(t.seg.Bytes(), r*lineSize+4).Load() }

// placement returns the job's rank of each local rank and the local rank
// of each of the job's ranks.
func placement(size int, cfg Config) (global, localOf []int, err error) {
	if cfg.Ranks == nil {
		global = make([]int, size)
		for i := range global {
			global[i] = i
		}
		return global, global, nil
	}
	if len(cfg.Ranks) != size || cfg.JobSize < size {
		return nil, nil, fmt.Errorf("%w: shm: %d job ranks for %d local ranks in a job of %d", errs.InvalidArgument, len(cfg.Ranks), size, cfg.JobSize)
	}
	localOf = make([]int, cfg.JobSize)
	for i := range localOf {
		localOf[i] = -1
	}
	for i, g := range cfg.Ranks {
		if g < 0 || g >= cfg.JobSize || localOf[g] >= 0 {
			return nil, nil, fmt.Errorf("%w: shm: job rank %d of local rank %d", errs.InvalidArgument, g, i)
		}
		localOf[g] = i
	}
	return cfg.Ranks, localOf, nil
}

// Rank returns this endpoint's rank in the job.
func (t *Transport) Rank() int { return t.global[t.rank] }

// Size returns the number of ranks of the job.
func (t *Transport) Size() int { return len(t.localOf) }

// Local reports whether the job's rank r is on this segment.
func (t *Transport) Local(r int) bool { return r >= 0 && r < len(t.localOf) && t.localOf[r] >= 0 }

// peer returns the local rank of m's peer.
func (t *Transport) peer(m *transport.Msg) (int, error) {
	if !t.Local(m.Peer) {
		return 0, fmt.Errorf("%w: shm: peer %d is not one of the segment's ranks (job of %d)", errs.InvalidArgument, m.Peer, t.Size())
	}
	return t.localOf[m.Peer], nil
}

// refusal returns why an operation with peer p of the call key belongs
// to may not be posted: the endpoint is closed, p failed, or the call was
// aborted; nil otherwise. t.mu is held.
func (t *Transport) refusal(p int, key transport.Key) error {
	if t.closed {
		return errs.Closed
	}
	if err := t.peerErr[p]; err != nil {
		return err
	}
	if key.Seq != 0 {
		return t.aborted[callKey{key.Comm, key.Seq}]
	}
	return nil
}

// Isend posts a send.
func (t *Transport) Isend(m *transport.Msg) error {
	d, err := t.peer(m)
	if err != nil {
		return err
	}
	t.mu.Lock()
	if err := t.refusal(d, m.Key); err != nil {
		t.mu.Unlock()
		return err
	}
	t.nextID++
	id := t.nextID
	sync := !m.Eager
	if d == t.rank {
		t.mu.Unlock()
		t.deliverSelf(m)
		return nil
	}
	if m.Key.Seq != 0 {
		t.sent[d] = callSig{m.Key.Comm, m.Key.Seq, m.Sig}
	}
	if sync && len(m.Buf) >= t.cfg.cmaMin() && t.cfg.cmaMin() > 0 && t.canRead(d, t.rank) {
		t.reads[d] = append(t.reads[d], idMsg{id, m})
		t.mu.Unlock()
		var rec [hdrLen + 8]byte
		putMsgHeader(rec[:], recFirst, flagSync|flagCMA, m, id)
		binary.LittleEndian.PutUint64(rec[hdrLen:], uint64(uintptr(unsafe.Pointer(unsafe.SliceData(m.Buf)))))
		t.control(d, rec[:])
		return nil
	}
	if sync && m.Key.Seq != 0 && t.proof[d] == t.sent[d] {
		// d sent this rank a message of the call: it is in the call, and
		// its receive will match (or fail on its side).
		sync = false
	}
	if sync {
		t.syncs[d] = append(t.syncs[d], idMsg{id, m})
	}
	t.mu.Unlock()
	t.write(d, m, id, sync)
	if !sync {
		m.W.Done()
	}
	return nil
}

// deliverSelf delivers a send to this rank itself.
func (t *Transport) deliverSelf(m *transport.Msg) {
	x := &incoming{key: m.Key, sig: m.Sig, total: len(m.Buf), got: len(m.Buf), data: append([]byte(nil), m.Buf...)}
	t.mu.Lock()
	r := t.takePosted(t.rank, m.Key)
	if r == nil {
		t.unexp[t.rank] = append(t.unexp[t.rank], x)
	}
	t.mu.Unlock()
	if r != nil {
		finish(r, x.data, x.sig, t.Rank())
		r.W.Done()
	}
	m.W.Done()
}

// write queues message m's records to its peer; the caller's goroutine
// writes what fits and the progress goroutine the rest. The data is copied
// into the records, so m's buffer is free once this returns (an eager send
// completes then).
func (t *Transport) write(d int, m *transport.Msg, id uint64, sync bool) {
	t.outMu[d].Lock()
	defer t.outMu[d].Unlock()
	maxData := t.out[d].MaxRecord() - hdrLen
	buf := m.Buf
	var hdr [hdrLen]byte
	flags := byte(0)
	if sync {
		flags = flagSync
	}
	putMsgHeader(hdr[:], recFirst, flags, m, id)
	wrote := false
	for first := true; first || len(buf) > 0; first = false {
		n := min(len(buf), maxData)
		if len(t.pending[d]) == 0 {
			// The common case: straight from the caller's buffer into
			// the ring, one copy.
			if ok, _ := t.out[d].Write(hdr[:], buf[:n]); ok {
				wrote = true
				buf = buf[n:]
				hdr[0] = recMore
				continue
			}
		}
		rec := make([]byte, hdrLen+n)
		copy(rec, hdr[:])
		copy(rec[hdrLen:], buf[:n])
		buf = buf[n:]
		hdr[0] = recMore
		t.pending[d] = append(t.pending[d], rec)
		t.npend.Add(1)
	}
	if wrote {
		t.bell(d).Ring()
	}
	t.flushLocked(d)
}

// putMsgHeader fills the header of message m's first record.
func putMsgHeader(hdr []byte, typ, flags byte, m *transport.Msg, id uint64) {
	hdr[0], hdr[1] = typ, flags
	binary.LittleEndian.PutUint32(hdr[4:], uint32(len(m.Buf)))
	binary.LittleEndian.PutUint64(hdr[8:], m.Key.Comm)
	binary.LittleEndian.PutUint64(hdr[16:], m.Key.Seq)
	binary.LittleEndian.PutUint64(hdr[24:], uint64(m.Key.Tag))
	binary.LittleEndian.PutUint64(hdr[32:], m.Sig)
	binary.LittleEndian.PutUint64(hdr[40:], id)
}

// flushLocked writes d's pending records while they fit; outMu[d] is held.
// When the ring is full it asks d for room (Ring.WantRoom) and tries once
// more, so that d, consuming in between, rings this rank's bell.
func (t *Transport) flushLocked(d int) {
	wrote, asked := false, false
	for len(t.pending[d]) > 0 {
		ok, err := t.out[d].Write(t.pending[d][0])
		if err != nil {
			break
		}
		if !ok {
			if asked {
				break
			}
			t.out[d].WantRoom()
			asked = true
			continue
		}
		t.pending[d][0] = nil
		t.pending[d] = t.pending[d][1:]
		t.npend.Add(-1)
		wrote = true
	}
	if len(t.pending[d]) == 0 {
		t.pending[d] = nil
	}
	if wrote {
		t.bell(d).Ring()
	}
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

func mismatch(from int) error {
	return fmt.Errorf("%w: message from rank %d belongs to another call", errs.Mismatch, from)
}

// ack tells the sender of a sync message that its receive matched it.
func (t *Transport) ack(src int, x *incoming) {
	if !x.sync || src == t.rank || x.proof && x.m != nil && x.m.Sig == x.sig {
		return
	}
	status := byte(ackOK)
	if x.m != nil && x.m.Sig != x.sig {
		status = ackMismatch
	}
	t.ackID(src, x.id, status)
}

// ackID sends the ack of message id to src.
func (t *Transport) ackID(src int, id uint64, status byte) {
	var rec [hdrLen]byte
	rec[0], rec[1] = recAck, status
	binary.LittleEndian.PutUint64(rec[40:], id)
	t.control(src, rec[:])
}

// read completes the single-copy message x from p, matched by receive
// x.m: it reads the data from p's memory and then acks, so that p keeps
// its buffer until the copy is done.
func (t *Transport) read(p int, x *incoming) {
	m := x.m
	status := byte(ackOK)
	switch {
	case x.sig != m.Sig:
		m.Err = mismatch(t.global[p])
		status = ackMismatch
	case len(m.Buf) >= x.total && m.Combine == nil:
		if err := t.vmRead(p, m.Buf[:x.total], x.addr); err != nil {
			m.Err, status = err, ackFailed
		} else {
			m.N = x.total
		}
	default:
		data := make([]byte, x.total)
		if err := t.vmRead(p, data, x.addr); err != nil {
			m.Err, status = err, ackFailed
		} else {
			transport.Finish(m, data)
		}
	}
	t.ackID(p, x.id, status)
	m.W.Done()
}

// vmRead copies len(dst) bytes at addr in rank p's process into dst.
func (t *Transport) vmRead(p int, dst []byte, addr uint64) error {
	pid := int(u32(t.seg.Bytes(), p*lineSize).Load())
	for len(dst) > 0 {
		local := []unix.Iovec{{Base: &dst[0]}}
		local[0].SetLen(len(dst))
		remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(dst)}}
		n, err := unix.ProcessVMReadv(pid, local, remote, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return fmt.Errorf("%w: shm: reading %d bytes from rank %d (pid %d): %v", errs.PeerFailed, len(dst), t.global[p], pid, err)
		}
		dst, addr = dst[n:], addr+uint64(n)
	}
	return nil
}

// SingleCopy reports whether this endpoint sends the large messages of
// collective calls to the job's rank peer by single copy (Config.CMAMin):
// peer has found that it can read this process's memory. Until the peer's
// endpoint is up and has probed, it reports false.
func (t *Transport) SingleCopy(peer int) bool {
	return t.Local(peer) && t.cfg.cmaMin() > 0 && t.canRead(t.localOf[peer], t.rank)
}

// canRead reports whether rank r has found that it can read rank p's
// memory.
func (t *Transport) canRead(r, p int) bool {
	if p >= maxCMARanks {
		return false
	}
	return u32(t.seg.Bytes(), r*lineSize+slotCanRead+4*(p/32)).Load()&(1<<(p%32)) != 0
}

// probePeers reads the probe word of every peer whose endpoint is up and
// has not been probed, and publishes in this rank's slot those whose
// memory it can read (the same user, and ptrace(2) rules and seccomp
// permitting process_vm_readv). Only the progress goroutine calls it.
func (t *Transport) probePeers() {
	mem := t.seg.Bytes()
	for p := range min(t.size, maxCMARanks) {
		if t.probed[p] || p == t.rank || t.state(p) != stateUp {
			continue
		}
		t.probed[p] = true
		if t.cfg.cmaMin() <= 0 {
			continue
		}
		var v [8]byte
		err := t.vmRead(p, v[:], u64(mem, p*lineSize+slotProbe).Load())
		if err == nil && binary.NativeEndian.Uint64(v[:]) == u64(mem, p*lineSize+slotMagic).Load() {
			u32(mem, t.rank*lineSize+slotCanRead+4*(p/32)).Or(1 << (p % 32))
		}
	}
}

// control writes the control record rec (an ack or an abort) to d, after
// the records waiting for room there.
func (t *Transport) control(d int, rec []byte) {
	t.outMu[d].Lock()
	defer t.outMu[d].Unlock()
	if len(t.pending[d]) == 0 {
		if ok, _ := t.out[d].Write(rec); ok {
			t.bell(d).Ring()
			return
		}
	}
	t.pending[d] = append(t.pending[d], append([]byte(nil), rec...))
	t.npend.Add(1)
	t.flushLocked(d)
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

// Poll drains the incoming rings unless another goroutine is draining
// them (transport.Poller).
//
// When the segment's ranks share cores, a Poll that found nothing yields
// the core (sched_yield(2)) to the other processes, one of which may be the
// rank waited for: waiting ranks then take turns polling, as MPI libraries
// do when oversubscribed, where sleeping and waking by futex would cost a
// wake-up and a context switch per message.
func (t *Transport) Poll() {
	t.polls.Add(1)
	if t.drainMu.TryLock() {
		busy := t.drain()
		t.drainMu.Unlock()
		if !busy && t.shared {
			schedYield()
		}
	}
}

// schedYield gives the core to another runnable thread of the host.
func schedYield() { unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }

// Park tells the progress goroutine that a waiter stopped polling
// (transport.Poller): it drains the rings until Unpark.
func (t *Transport) Park(w *transport.Waiter) {
	t.parked.Add(1)
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

// Unpark undoes Park.
func (t *Transport) Unpark(w *transport.Waiter) { t.parked.Add(-1) }

// SpinHint returns how many times a waiter polls before it parks
// (transport.SpinHinter): about 50 µs of polling when the segment's ranks
// have a core each, a few polls when they share cores, where a spinning
// rank would take the time of the rank it waits for.
func (t *Transport) SpinHint() int {
	if t.shared {
		return sharedSpin
	}
	return 4096
}

// sharedSpin is the SpinHint of ranks that share cores: each poll that
// finds nothing yields the core; after these the waiter parks, so that
// ranks with work (a large copy) get the cores.
const sharedSpin = 64

// drain handles every record in the incoming rings and writes the records
// waiting for room; it reports whether it handled a record. drainMu is
// held.
func (t *Transport) drain() bool {
	busy := false
	for p := range t.size {
		if p == t.rank {
			continue
		}
		in := t.in[p]
		got := false
		for !t.broken[p] {
			rec, err := in.Peek()
			if err != nil {
				t.corrupt(p, err)
				break
			}
			if rec == nil {
				break
			}
			t.handle(p, rec)
			in.Release()
			got = true
		}
		if got {
			busy = true
			if in.TakeWant() {
				t.bell(p).Ring() // room for its pending records
			}
		}
		if t.failed[p].Load() && !t.final[p] {
			t.finishPeer(p) // what p wrote before it failed is in
		}
	}
	if t.npend.Load() > 0 {
		t.flushAll()
	}
	return busy
}

// dropInFlight fails the message in progress from p, a failed peer,
// whose ring is drained: the receive that matched it fails with p's error,
// and an unexpected one is forgotten. drainMu is held.
func (t *Transport) dropInFlight(p int) {
	x := t.inMsg[p]
	t.inMsg[p] = nil
	t.mu.Lock()
	m, err := x.m, t.peerErr[p]
	if m == nil {
		take(&t.unexp[p], func(y *incoming) bool { return y == x })
	}
	t.mu.Unlock()
	if m != nil {
		m.Err = err
		m.W.Done()
	}
}

// flushAll writes what waits for room, to every destination.
func (t *Transport) flushAll() {
	for p := range t.size {
		t.outMu[p].Lock()
		if len(t.pending[p]) > 0 {
			t.flushLocked(p)
		}
		t.outMu[p].Unlock()
	}
}

// yieldFor is how long the progress goroutine waits, on a timer, before
// it looks again at rings no waiter is parked on; it doubles, up to
// Config.Poll, while nothing happens.
const yieldFor = 200 * time.Microsecond

// progress drains the incoming rings for the waiters that parked, checks
// the peers' liveness, and otherwise stays out of the way, until Close.
//
// It sleeps on the doorbell (a futex: woken as soon as a record arrives,
// or room for its records waiting for it) only while a waiter is parked or
// records wait for room. A goroutine in a futex(2) call keeps its
// thread and the runtime's processor until the runtime takes the
// processor back, which can take milliseconds; with GOMAXPROCS=1 (a rank
// per core) the caller would wait that long at every runtime.Gosched.
// Without a parked waiter it waits on a timer instead, which frees the
// processor: a caller in a call polls the rings itself, and between calls
// records wait for the next call's poll, only the non-blocking calls
// left running progress at the timer's pace.
func (t *Transport) progress() {
	defer close(t.done)
	bell := t.bell(t.rank)
	checked := time.Now()
	polls := t.polls.Load()
	t.probed[t.rank] = true
	probing := true
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	idle := yieldFor
	for {
		select {
		case <-t.stop:
			return
		default:
		}
		if time.Since(checked) > t.cfg.poll() {
			t.checkPeers()
			checked = time.Now()
		}
		if probing {
			t.probePeers()
			probing = slices.Contains(t.probed, false)
		}
		n := t.polls.Load()
		if t.parked.Load() == 0 && t.npend.Load() == 0 {
			if n != polls {
				// A caller polls: it does the work.
				polls, idle = n, yieldFor
			} else if t.drainMu.TryLock() {
				busy := t.drain()
				t.drainMu.Unlock()
				if busy {
					idle = yieldFor
					continue
				}
				idle = min(2*idle, t.cfg.poll())
			}
			timer.Reset(idle)
			select {
			case <-t.stop:
				return
			case <-t.kick: // a waiter parked
			case <-timer.C:
			}
			continue
		}
		polls, idle = n, yieldFor
		if t.drainMu.TryLock() {
			busy := t.drain()
			t.drainMu.Unlock()
			if busy {
				continue
			}
		}
		if t.spinFor(t.cfg.spin(t.size), polls) {
			continue
		}
		seq := bell.Arm()
		if t.arrived() || t.polls.Load() != polls || t.parked.Load() == 0 && t.npend.Load() == 0 {
			bell.Disarm()
			continue
		}
		bell.Sleep(seq, t.cfg.poll())
	}
}

// arrived reports whether an incoming ring holds a record.
func (t *Transport) arrived() bool {
	for p := range t.size {
		if p != t.rank && !t.in[p].Empty() {
			return true
		}
	}
	return false
}

// spinFor polls the incoming rings for up to d and reports whether a
// record arrived, a caller started polling (the count of Poll calls is no
// longer polls), or a record waiting for room was written.
func (t *Transport) spinFor(d time.Duration, polls uint64) bool {
	if d <= 0 {
		return false
	}
	for start := time.Now(); time.Since(start) < d; {
		if t.arrived() || t.polls.Load() != polls {
			return true
		}
		if n := t.npend.Load(); n > 0 {
			if t.flushAll(); t.npend.Load() < n {
				return true
			}
		}
		runtime.Gosched()
	}
	return false
}

// handle processes one record from rank p.
func (t *Transport) handle(p int, rec []byte) {
	if len(rec) < hdrLen {
		t.corrupt(p, ErrCorrupt)
		return
	}
	id := binary.LittleEndian.Uint64(rec[40:])
	switch rec[0] {
	case recAck:
		byID := func(s idMsg) bool { return s.id == id }
		t.mu.Lock()
		m := take(&t.syncs[p], byID).m
		if m == nil {
			m = take(&t.reads[p], byID).m
		}
		t.mu.Unlock()
		if m != nil {
			switch rec[1] {
			case ackMismatch:
				m.Err = mismatch(t.global[p])
			case ackFailed:
				m.Err = fmt.Errorf("%w: rank %d could not receive the message", errs.PeerFailed, t.global[p])
			}
			m.W.Done()
		}
	case recAbort:
		t.failCall(callKey{binary.LittleEndian.Uint64(rec[8:]), binary.LittleEndian.Uint64(rec[16:])}, abortErr(rec[1], t.global[p]), p)
	case recFirst:
		key := transport.Key{Comm: binary.LittleEndian.Uint64(rec[8:]), Seq: binary.LittleEndian.Uint64(rec[16:]),
			Tag: int64(binary.LittleEndian.Uint64(rec[24:]))}
		x := &incoming{key: key, sig: binary.LittleEndian.Uint64(rec[32:]), id: id, sync: rec[1]&flagSync != 0,
			total: int(binary.LittleEndian.Uint32(rec[4:])), cma: rec[1]&flagCMA != 0}
		if x.cma {
			t.handleCMA(p, x, rec)
			return
		}
		t.mu.Lock()
		done := t.proveLocked(p, x)
		x.m = t.takePosted(p, key)
		matched := x.m != nil
		if matched {
			x.short = len(x.m.Buf) < x.total
			x.own = true
		} else {
			// Irecv may take it (and acknowledge it) as soon as the
			// lock is released.
			x.data = make([]byte, 0, x.total)
			t.unexp[p] = append(t.unexp[p], x)
		}
		t.mu.Unlock()
		for _, m := range done {
			m.W.Done()
		}
		if matched {
			t.ack(p, x)
		}
		t.inMsg[p] = x
		t.chunk(p, rec[hdrLen:])
	case recMore:
		if t.inMsg[p] == nil {
			t.corrupt(p, ErrCorrupt)
			return
		}
		t.chunk(p, rec[hdrLen:])
	default:
		t.corrupt(p, ErrCorrupt)
	}
}

// handleCMA takes the first record of a single-copy message x from p:
// the receive posted for it reads it now, else Irecv will; a message of a
// failed call is refused at once, so that its sender is not kept waiting.
func (t *Transport) handleCMA(p int, x *incoming, rec []byte) {
	if len(rec) != hdrLen+8 || !x.sync || t.inMsg[p] != nil {
		t.corrupt(p, ErrCorrupt)
		return
	}
	x.addr = binary.LittleEndian.Uint64(rec[hdrLen:])
	x.got = x.total
	t.mu.Lock()
	if t.aborted[callKey{x.key.Comm, x.key.Seq}] != nil && x.key.Seq != 0 {
		t.mu.Unlock()
		t.ackID(p, x.id, ackFailed)
		return
	}
	done := t.proveLocked(p, x)
	defer func() {
		for _, m := range done {
			m.W.Done()
		}
	}()
	m := t.takePosted(p, x.key)
	if m == nil {
		t.unexp[p] = append(t.unexp[p], x) // Irecv may take it at once
	} else {
		x.m = m
	}
	t.mu.Unlock()
	if m != nil {
		t.read(p, x)
	}
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

// chunk adds data to the message in progress from p and completes it when
// whole. drainMu is held.
func (t *Transport) chunk(p int, data []byte) {
	x := t.inMsg[p]
	if !x.own {
		t.mu.Lock()
		if x.m == nil {
			// Unexpected: Irecv may match it at any time.
			if x.got+len(data) > x.total {
				t.mu.Unlock()
				t.corrupt(p, ErrCorrupt)
				return
			}
			x.data = append(x.data, data...)
			x.got += len(data)
			if x.got == x.total {
				t.inMsg[p] = nil // Irecv completes it
			}
			t.mu.Unlock()
			return
		}
		x.own = true // Irecv matched it and copied what had arrived
		t.mu.Unlock()
	}
	m := x.m
	if x.got+len(data) > x.total {
		t.corrupt(p, ErrCorrupt)
		return
	}
	if !x.short && x.sig == m.Sig && m.Combine == nil {
		copy(m.Buf[x.got:], data)
	} else {
		x.data = append(x.data, data...)
	}
	x.got += len(data)
	if x.got < x.total {
		return
	}
	t.inMsg[p] = nil
	switch {
	case x.sig != m.Sig:
		m.Err = mismatch(t.global[p])
	case x.short || m.Combine != nil:
		transport.Finish(m, x.data)
	default:
		m.N = x.total
	}
	m.W.Done()
}

// checkPeers fails the operations of peers that closed or whose process
// died (watched through a pidfd once its endpoint is up).
func (t *Transport) checkPeers() {
	self := os.Getpid()
	for p := range t.size {
		if p == t.rank || t.failed[p].Load() {
			continue
		}
		switch t.state(p) {
		case stateClosed:
			t.failPeer(p, fmt.Errorf("%w: rank %d closed its endpoint", errs.PeerFailed, t.global[p]))
			continue
		case stateUp:
		default:
			continue
		}
		pid := int(u32(t.seg.Bytes(), p*lineSize).Load())
		if pid == self || pid == 0 {
			continue
		}
		if t.watches[p] == nil {
			w, err := WatchProcess(pid)
			if err != nil {
				t.failPeer(p, fmt.Errorf("%w: rank %d (pid %d) does not run: %v", errs.PeerFailed, t.global[p], pid, err))
				continue
			}
			t.watches[p] = w
		}
		if !t.watches[p].Alive() {
			t.failPeer(p, fmt.Errorf("%w: rank %d (pid %d) died", errs.PeerFailed, t.global[p], pid))
		}
	}
}

// failPeer marks p failed with err. The drainer then delivers what p wrote
// before it failed and fails every other operation with p, and every later
// one (finishPeer).
func (t *Transport) failPeer(p int, err error) {
	t.mu.Lock()
	if t.failErr[p] == nil {
		t.failErr[p] = err
	}
	t.mu.Unlock()
	t.failed[p].Store(true)
}

// FailRank fails the job's rank r, found failed by other means (a mixed
// endpoint's network): what it wrote is delivered, then its operations
// fail with err, as when this endpoint finds it dead.
func (t *Transport) FailRank(r int, err error) {
	if !t.Local(r) || r == t.Rank() {
		return
	}
	t.segMu.RLock()
	defer t.segMu.RUnlock()
	if t.shut.Load() {
		return // the segment may be unmapped
	}
	t.failPeer(t.localOf[r], err)
	t.bell(t.rank).Ring() // a sleeping progress goroutine drains and finishes it
}

// corrupt fails p, whose ring holds a corrupted record: nothing more is
// read from it. drainMu is held.
func (t *Transport) corrupt(p int, err error) {
	t.broken[p] = true
	t.failPeer(p, err)
}

// finishPeer fails the operations with p, a failed peer whose ring is
// drained (or broken), and makes later ones fail at once. drainMu is held.
func (t *Transport) finishPeer(p int) {
	t.final[p] = true
	t.mu.Lock()
	err := t.failErr[p]
	t.peerErr[p] = err
	t.mu.Unlock()
	if t.inMsg[p] != nil {
		t.dropInFlight(p) // the rest will never come
	}
	t.mu.Lock()
	fail := t.takeOps(func(q int, _ transport.Key) bool { return q == p }, func(m *transport.Msg) bool { return t.localOf[m.Peer] == p }, true)
	t.mu.Unlock()
	failAll(fail, err)
}

// takeOps removes and returns the posted receives whose peer and key recv
// accepts and the sync sends send accepts, single-copy sends too when
// reads is set (their receiver no longer reads them); t.mu is held.
func (t *Transport) takeOps(recv func(int, transport.Key) bool, send func(*transport.Msg) bool, reads bool) []*transport.Msg {
	var out []*transport.Msg
	for p := range t.posted {
		out = append(out, filter(&t.posted[p], func(m *transport.Msg) bool { return recv(p, m.Key) })...)
	}
	for p := range t.syncs {
		for _, s := range filter(&t.syncs[p], func(s idMsg) bool { return send(s.m) }) {
			out = append(out, s.m)
		}
		if reads {
			for _, s := range filter(&t.reads[p], func(s idMsg) bool { return send(s.m) }) {
				out = append(out, s.m)
			}
		}
	}
	return out
}

// failAll completes ms with err.
func failAll(ms []*transport.Msg, err error) {
	for _, m := range ms {
		m.Err = err
		m.W.Done()
	}
}

// AbortCall fails this rank's operations of the collective call (comm,
// seq) with err, and those posted later, and tells the other ranks of the
// segment, whose operations of the call then fail too (transport.
// CallAborter).
func (t *Transport) AbortCall(comm, seq uint64, err error) {
	if seq == 0 {
		return
	}
	t.failCall(callKey{comm, seq}, err, -1)
}

// Abort codes: what kind of failure a peer reports.
const (
	abortPeer     = 0
	abortMismatch = 1
	abortInvalid  = 2
)

func abortCode(err error) byte {
	switch {
	case errors.Is(err, errs.Mismatch):
		return abortMismatch
	case errors.Is(err, errs.InvalidArgument):
		return abortInvalid
	}
	return abortPeer
}

func abortErr(code byte, from int) error {
	switch code {
	case abortMismatch:
		return fmt.Errorf("%w: rank %d's call failed", errs.Mismatch, from)
	case abortInvalid:
		return fmt.Errorf("%w: rank %d's call failed", errs.InvalidArgument, from)
	}
	return fmt.Errorf("%w: rank %d's call failed", errs.PeerFailed, from)
}

// failCall records call k as failed, fails its operations here and, the
// first time, tells every peer but from.
func (t *Transport) failCall(k callKey, err error, from int) {
	t.mu.Lock()
	if _, ok := t.aborted[k]; ok || t.closed {
		t.mu.Unlock()
		return
	}
	t.aborted[k] = err
	inCall := func(key transport.Key) bool { return key.Comm == k.comm && key.Seq == k.seq }
	// Single-copy sends of the call stay until their receiver acks: it
	// may be reading them.
	fail := t.takeOps(func(_ int, key transport.Key) bool { return inCall(key) }, func(m *transport.Msg) bool { return inCall(m.Key) }, false)
	// Single-copy messages of the call that no receive took are refused,
	// so that their senders stop waiting.
	type refusal struct {
		src int
		id  uint64
	}
	var refuse []refusal
	for p := range t.unexp {
		for _, x := range filter(&t.unexp[p], func(x *incoming) bool { return x.cma && inCall(x.key) }) {
			refuse = append(refuse, refusal{p, x.id})
		}
	}
	t.mu.Unlock()
	failAll(fail, err)
	for _, r := range refuse {
		t.ackID(r.src, r.id, ackFailed)
	}
	rec := make([]byte, hdrLen)
	rec[0], rec[1] = recAbort, abortCode(err)
	binary.LittleEndian.PutUint64(rec[8:], k.comm)
	binary.LittleEndian.PutUint64(rec[16:], k.seq)
	for p := range t.size {
		if p != t.rank && p != from {
			t.control(p, rec)
		}
	}
}

// Close fails the outstanding operations with errs.Closed, tells the peers
// and releases the segment.
func (t *Transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.shut.Store(true)
	all := func(int, transport.Key) bool { return true }
	fail := t.takeOps(all, func(*transport.Msg) bool { return true }, true)
	t.mu.Unlock()
	failAll(fail, errs.Closed)
	u32(t.seg.Bytes(), t.rank*lineSize+4).Store(stateClosed)
	close(t.stop)
	t.bell(t.rank).Ring()
	<-t.done
	for _, w := range t.watches {
		if w != nil {
			w.Close()
		}
	}
	for p := range t.size {
		if p != t.rank {
			t.bell(p).Ring()
		}
	}
	t.segMu.Lock() // no FailRank in flight
	defer t.segMu.Unlock()
	return t.seg.Close()
}

var (
	_ transport.Poller      = (*Transport)(nil)
	_ transport.SpinHinter  = (*Transport)(nil)
	_ transport.CallAborter = (*Transport)(nil)
)
