//go:build linux

package shm

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scoll/scoll/internal/clock"
)

// A socket bell lets a progress goroutine sleep in the Go runtime's
// network poller instead of in futex(2). A goroutine in a futex call keeps
// its thread and, until the runtime's monitor takes it back (20 µs to
// 10 ms later), the runtime's processor: with GOMAXPROCS=1 nothing else of
// the process runs meanwhile, and in particular no network reader (the
// messages of the ranks on other hosts wait in their sockets). With the
// socket bell the process sleeps in one place, the runtime's epoll, on its
// TCP connections and its doorbell alike, and whichever wakes it runs at
// once.
//
// Each rank of the segment binds a datagram socket in the abstract
// namespace (no file to clean up) named Config.BellSocket + "." + its
// segment rank; a producer that finds a socket sleeper armed on the bell
// sends it one byte. A lost or refused datagram loses nothing: the
// sleeper's timeout and its recheck before sleeping cover it, as with the
// futex.
type sockBell struct {
	conn  *net.UnixConn
	raw   syscall.RawConn
	out   int // an unbound datagram socket the producers' wakes go through
	addrs []unix.SockaddrUnix
	drain func(fd uintptr) bool
	buf   [16]byte
}

// sockSleeper is what a socket sleeper adds to the bell's sleeper count
// (futex sleepers add 1): the count keeps both kinds apart.
const sockSleeper = 1 << 16

// newSockBell binds rank's socket of the segment's size ranks.
func newSockBell(prefix string, rank, size int) (*sockBell, error) {
	s := &sockBell{addrs: make([]unix.SockaddrUnix, size)}
	for r := range size {
		s.addrs[r].Name = prefix + "." + strconv.Itoa(r)
	}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: s.addrs[rank].Name, Net: "unixgram"})
	if err != nil {
		return nil, fmt.Errorf("shm: doorbell socket: %w", err)
	}
	raw, err := conn.SyscallConn()
	if err != nil {
		conn.Close()
		return nil, err
	}
	out, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("shm: doorbell socket: %w", os.NewSyscallError("socket", err))
	}
	s.conn, s.raw, s.out = conn, raw, out
	s.drain = func(fd uintptr) bool {
		for {
			if _, _, err := unix.Recvfrom(int(fd), s.buf[:], unix.MSG_DONTWAIT); err != nil {
				return true
			}
		}
	}
	return s, nil
}

var wakeByte = []byte{1}

// wake sends rank r's socket a byte, without blocking. A full socket
// already holds a wake; a refused one has no sleeper.
func (s *sockBell) wake(r int) { unix.Sendto(s.out, wakeByte, unix.MSG_DONTWAIT, &s.addrs[r]) }

// sleep waits for a wake for at most d, in the network poller, then
// discards the wakes that queued up. The socket's deadline is on the real
// clock: endpoints on a test clock use the futex.
func (s *sockBell) sleep(clk clock.Clock, d time.Duration) {
	s.conn.SetReadDeadline(clk.Now().Add(d))
	if _, err := s.conn.Read(s.buf[:]); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		clock.Sleep(clk, d, nil) // closed: Close wakes the progress goroutine otherwise
		return
	}
	s.raw.Read(s.drain)
}

// close releases both sockets.
func (s *sockBell) close() {
	s.conn.Close()
	unix.Close(s.out)
}
