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
// apply as to the connection's Read. One goroutine reads it at a time.
type pollReader struct {
	rc       syscall.RawConn
	spinners *atomic.Int32         // the transport's polling readers
	read     func(fd uintptr) bool // r.readOnce, bound once: no allocation per read
	b        []byte                // the current read's buffer
	n        int                   // what the last read returned
	errno    error
	block    bool // wait in the network poller when the socket is empty
	// budget is how many empty polls the next read makes before it blocks.
	// Invariant: minPolls ≤ budget ≤ spinPolls.
	budget int
}

// newPollReader returns a polling reader of conn, or conn itself when conn
// is not a socket (TLS, in-memory connections).
func newPollReader(conn net.Conn, spinners *atomic.Int32) io.Reader {
	tc, ok := conn.(*net.TCPConn)
	if !ok || !canPoll {
		return conn
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return conn
	}
	r := &pollReader{rc: rc, spinners: spinners, budget: spinPolls}
	r.read = r.readOnce
	return r
}

// readOnce reads the socket once; false makes rc.Read wait in the network
// poller until it is readable, then call it again.
func (r *pollReader) readOnce(fd uintptr) bool {
	r.n, r.errno = readFD(fd, r.b)
	return r.errno != syscall.EAGAIN || !r.block
}

// Read reads at most len(b) bytes, at least one unless it fails.
func (r *pollReader) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	r.b = b
	spinning := false // counted in r.spinners
	defer func() {
		r.b = nil
		if spinning {
			r.spinners.Add(-1)
		}
	}()
	for i := 0; ; i++ {
		r.block = i >= r.budget
		if r.block && spinning {
			r.spinners.Add(-1)
			spinning = false
			r.budget = max(r.budget/2, minPolls)
		}
		err := r.rc.Read(r.read)
		switch {
		case err != nil:
			return 0, err
		case r.errno == syscall.EAGAIN:
			if i == 0 {
				if r.spinners.Add(1) > maxSpinners {
					r.spinners.Add(-1)
					i = r.budget - 1 // block
					continue
				}
				spinning = true
			}
			runtime.Gosched()
			if i%osYieldEvery == osYieldEvery-1 {
				osYield()
			}
			continue
		case r.errno != nil:
			return 0, &net.OpError{Op: "read", Net: "tcp", Err: r.errno}
		case r.n == 0:
			return 0, io.EOF
		}
		if spinning {
			r.budget = min(2*r.budget, spinPolls)
		}
		return r.n, nil
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
