//go:build linux

package shm

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/scoll/scoll/internal/clock"
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
	clk        clock.Clock // cfg.clock or clock.Real

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
	sock      *sockBell         // the doorbell socket (Config.BellSocket), or nil
	exchMu    sync.Mutex        // guards exch: an exchange, or Settle
	unchecked atomic.Bool       // exch.prev needs checkPrev (Settle's fast path)
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
	clk := cfg.clock
	if clk == nil {
		clk = clock.Real{}
	}
	t := &Transport{rank: rank, size: size, global: global, localOf: localOf, seg: seg, cfg: cfg, clk: clk,
		outMu: make([]sync.Mutex, size), out: make([]*Ring, size), pending: make([][][]byte, size),
		in: make([]*Ring, size), inMsg: make([]*incoming, size), broken: make([]bool, size), failed: make([]atomic.Bool, size), final: make([]bool, size), kick: make(chan struct{}, 1),
		posted: make([][]*transport.Msg, size), unexp: make([][]*incoming, size), syncs: make([][]idMsg, size),
		reads: make([][]idMsg, size), probe: new(uint64), probed: make([]bool, size),
		proof: make([]callSig, size), sent: make([]callSig, size),
		peerErr: make([]error, size), failErr: make([]error, size), watches: make([]*Watch, size), aborted: map[callKey]error{}, stop: make(chan struct{}), done: make(chan struct{})}
	t.exchOff = size*lineSize + size*size*RingSize(rb)
	t.exchLimit = t.exchangeLimit()
	t.shared = oversubscribed(max(size, cfg.MachineRanks))
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
	if cfg.BellSocket != "" {
		if t.sock, err = newSockBell(cfg.BellSocket, rank, size); err != nil {
			return nil, err
		}
	}
	*t.probe = rand.Uint64() | 1
	u32(mem, rank*lineSize+slotPid).Store(uint32(os.Getpid()))
	u64(mem, rank*lineSize+slotProbe).Store(uint64(uintptr(unsafe.Pointer(t.probe))))
	u64(mem, rank*lineSize+slotMagic).Store(*t.probe)
	u32(mem, rank*lineSize+slotState).Store(stateUp)
	go t.progress()
	return t, nil
}

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
	u32(t.seg.Bytes(), t.rank*lineSize+slotState).Store(stateClosed)
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
	if t.sock != nil {
		t.sock.close()
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
