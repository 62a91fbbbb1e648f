package tcp

import (
	"io"
	"net"
	"runtime"
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

// spinPolls is how many empty non-blocking reads a reader makes before it
// blocks in the network poller: with a few hundred ns per read and the
// goroutine switches between them, some 100-300 µs.
const spinPolls = 200

// osYieldEvery: every this many empty polls the reader also gives the CPU
// to other processes (sched_yield), which matters when the ranks outnumber
// the cores.
const osYieldEvery = 8

// pollReader reads a connection with the socket's own non-blocking reads,
// polling spinPolls times before blocking. Read deadlines and Close apply as
// to the connection's Read.
type pollReader struct {
	rc syscall.RawConn
}

// newPollReader returns a polling reader of conn, or conn itself when conn
// is not a socket (TLS, in-memory connections).
func newPollReader(conn net.Conn) io.Reader {
	tc, ok := conn.(*net.TCPConn)
	if !ok || !canPoll {
		return conn
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return conn
	}
	return &pollReader{rc: rc}
}

// Read reads at most len(b) bytes, at least one unless it fails.
func (r *pollReader) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n int
	var errno error
	for i := 0; ; i++ {
		block := i >= spinPolls
		err := r.rc.Read(func(fd uintptr) bool {
			n, errno = readFD(fd, b)
			// false: wait in the network poller, then read again.
			return errno != syscall.EAGAIN || !block
		})
		switch {
		case err != nil:
			return 0, err
		case errno == syscall.EAGAIN:
			runtime.Gosched()
			if i%osYieldEvery == osYieldEvery-1 {
				osYield()
			}
			continue
		case errno != nil:
			return 0, &net.OpError{Op: "read", Net: "tcp", Err: errno}
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}
