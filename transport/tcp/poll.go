package tcp

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
)

// Polling reads. A reader blocked in the Go runtime's network poller sleeps
// in epoll_wait when its process has nothing else to run, and on a VM the
// idle CPU halts: waking it for the next message costs tens of µs, more
// than the message itself. So a connection's reader, having drained the
// socket, first polls it with non-blocking reads for a while, letting the
// process's other goroutines run in between, and only then blocks. This is
// how MPI libraries make small messages fast over TCP (Open MPI's progress
// loop polls its sockets); it costs CPU only for spinPolls polls after each
// burst of traffic.

// spinPolls is the most empty non-blocking reads a reader makes before it
// blocks in the network poller: with a few hundred ns per read and the
// goroutine switches between them, some 100-300 µs. The reader adapts its
// budget between minPolls and spinPolls: it halves it each time polling
// found nothing (the peer is slow, or descheduled on a loaded machine,
// where polling only takes CPU from the ranks that would answer) and
// doubles it each time data came while polling.
const (
	spinPolls = 200
	minPolls  = 12
)

// osYieldEvery: every this many empty polls the reader also gives the CPU
// to other processes (sched_yield), which matters when the ranks outnumber
// the cores.
const osYieldEvery = 8

// maxSpinners is how many of a transport's readers poll at once; the others
// block at once. Polling readers share the process's CPU, each poll round
// costs every other one a few hundred ns, and a collective at any moment
// waits on a few peers (those that sent last are the ones polling).
const maxSpinners = 4

// pollReader reads a connection with the socket's own non-blocking reads,
// polling up to spinPolls times before blocking. Read deadlines and Close
// apply as to the connection's Read. One goroutine reads it at a time
// (the holder of the peer's read lock); another may wait for data with
// await meanwhile (the connection's reader goroutine, without the lock):
// the two keep their state apart.
type pollReader struct {
	rc       syscall.RawConn
	spinners *atomic.Int32 // the transport's polling readers
	reads    poller        // Read's
	awaits   poller        // await's
	readNow  func(fd uintptr)
	b        []byte // the current read's buffer
	// nowait makes Read return errWouldBlock instead of waiting when the
	// socket is empty (a caller polling the transport).
	nowait bool
}

// poller is the state of one kind of polling of a socket.
type poller struct {
	once  func(fd uintptr) bool // one try through rc.Read, bound once: no allocation per try
	n     int                   // what the last try returned
	errno error
	block bool // wait in the network poller when the socket is empty
	// budget is how many empty polls the next wait makes before it
	// blocks. Invariant: minPolls ≤ budget ≤ spinPolls.
	budget int
}

// errWouldBlock is what a nowait Read returns when the socket is empty.
var errWouldBlock = errors.New("tcp: no data")

// newPollReader returns a polling reader of conn, or nil when conn is not
// a socket (TLS, in-memory connections), whose reads then block.
func newPollReader(conn net.Conn, spinners *atomic.Int32) *pollReader {
	tc, ok := conn.(*net.TCPConn)
	if !ok || !canPoll {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	r := &pollReader{rc: rc, spinners: spinners}
	r.reads = poller{budget: spinPolls, once: func(fd uintptr) bool {
		r.reads.n, r.reads.errno = readFD(fd, r.b)
		return r.reads.errno != syscall.EAGAIN || !r.reads.block
	}}
	r.awaits = poller{budget: spinPolls, once: func(fd uintptr) bool {
		r.awaits.n, r.awaits.errno = peekFD(fd)
		return r.awaits.errno != syscall.EAGAIN || !r.awaits.block
	}}
	r.readNow = func(fd uintptr) { r.reads.n, r.reads.errno = readFD(fd, r.b) }
	return r
}

// Read reads at most len(b) bytes, at least one unless it fails.
func (r *pollReader) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	r.b = b
	defer func() { r.b = nil }()
	if r.nowait {
		// Not rc.Read: it holds the descriptor's read lock while it
		// waits, and the reader goroutine may be waiting in it.
		if err := r.rc.Control(r.readNow); err != nil {
			return 0, err
		}
		return r.result(errWouldBlock)
	}
	if err := r.poll(&r.reads, nil); err != nil {
		return 0, err
	}
	return r.result(nil)
}

// result turns the last read into Read's results; an empty socket gives
// empty.
func (r *pollReader) result(empty error) (int, error) {
	switch {
	case r.reads.errno == syscall.EAGAIN:
		return 0, empty
	case r.reads.errno != nil:
		return 0, &net.OpError{Op: "read", Net: "tcp", Err: r.reads.errno}
	case r.reads.n == 0:
		return 0, io.EOF
	}
	return r.reads.n, nil
}

// await returns when the socket has data to read (or an end, or an
// error), without reading it: it polls up to the budget, unless quiet
// reports that a caller polls the transport (and so reads for it), then
// waits in the network poller. Read deadlines and Close apply.
func (r *pollReader) await(quiet func() bool) error {
	if err := r.poll(&r.awaits, quiet); err != nil {
		return err
	}
	if e := r.awaits.errno; e != nil && e != syscall.EAGAIN {
		return &net.OpError{Op: "read", Net: "tcp", Err: e}
	}
	return nil
}

// poll tries (p.once) through the network poller until the socket is not
// empty: up to p's budget with the CPU given to other goroutines (and,
// every osYieldEvery, other processes) in between, then waiting in the
// poller. quiet, when it reports true at the start, skips the polling. At
// most maxSpinners readers of the transport poll at once.
func (r *pollReader) poll(p *poller, quiet func() bool) error {
	spinning := false // counted in r.spinners
	defer func() {
		if spinning {
			r.spinners.Add(-1)
		}
	}()
	for i := 0; ; i++ {
		p.block = i >= p.budget
		if p.block && spinning {
			r.spinners.Add(-1)
			spinning = false
			p.budget = max(p.budget/2, minPolls)
		}
		if err := r.rc.Read(p.once); err != nil {
			return err
		}
		if p.errno != syscall.EAGAIN {
			if spinning {
				p.budget = min(2*p.budget, spinPolls)
			}
			return nil
		}
		if i == 0 {
			if quiet != nil && quiet() {
				i = p.budget - 1 // a caller polls: wait in the poller
				continue
			}
			if r.spinners.Add(1) > maxSpinners {
				r.spinners.Add(-1)
				i = p.budget - 1
				continue
			}
			spinning = true
		}
		runtime.Gosched()
		if i%osYieldEvery == osYieldEvery-1 {
			osYield()
		}
	}
}

// rawWriter writes to a socket without waiting (sendControl). One
// goroutine uses it at a time.
type rawWriter struct {
	rc    syscall.RawConn
	write func(fd uintptr) bool // w.writeOnce, bound once
	b     []byte
	n     int
	errno error
}

func newRawWriter(rc syscall.RawConn) *rawWriter {
	w := &rawWriter{rc: rc}
	w.write = w.writeOnce
	return w
}

func (w *rawWriter) writeOnce(fd uintptr) bool {
	w.n, w.errno = writeFD(fd, w.b)
	return true // never wait
}

// tryWrite writes what the socket takes of b now, without waiting: n < len(b)
// when its buffer is full (n may be 0).
func (w *rawWriter) tryWrite(b []byte) (n int, err error) {
	w.b = b
	err = w.rc.Write(w.write)
	w.b = nil
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		// A write deadline the writer set for an earlier frame has
		// passed: nothing was tried; the writer sets a new one.
		return 0, nil
	case err != nil:
		return 0, err
	case w.errno == syscall.EAGAIN:
		return 0, nil
	}
	return w.n, w.errno
}

// newRawConnWriter returns a rawWriter of conn, or nil when conn is not a
// socket.
func newRawConnWriter(conn net.Conn) *rawWriter {
	tc, ok := conn.(*net.TCPConn)
	if !ok || !canPoll {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	return newRawWriter(rc)
}
