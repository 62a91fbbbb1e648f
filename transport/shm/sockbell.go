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
	"unsafe"

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
	out   int        // an unbound datagram socket the producers' wakes go through
	addrs []bellAddr // each rank's socket, read-only once made
	drain func(fd uintptr) bool
	buf   [16]byte
}

// bellAddr is a socket address in the form sendto(2) takes, made once:
// unix.SockaddrUnix rebuilds its own at every call, which concurrent
// producers cannot share.
type bellAddr struct {
	raw unix.RawSockaddrUnix
	len uintptr
}

// abstractAddr returns the address of the abstract socket name ("@...").
func abstractAddr(name string) bellAddr {
	var a bellAddr
	a.raw.Family = unix.AF_UNIX
	for i := 1; i < len(name) && i < len(a.raw.Path); i++ {
		a.raw.Path[i] = int8(name[i]) // Path[0] stays 0: the abstract namespace
	}
	a.len = unsafe.Offsetof(a.raw.Path) + uintptr(min(len(name), len(a.raw.Path)))
	return a
}

// sockSleeper is what a socket sleeper adds to the bell's sleeper count
// (futex sleepers add 1): the count keeps both kinds apart.
const sockSleeper = 1 << 16

// newSockBell binds rank's socket of the segment's size ranks.
func newSockBell(prefix string, rank, size int) (*sockBell, error) {
	s := &sockBell{addrs: make([]bellAddr, size)}
	for r := range size {
		s.addrs[r] = abstractAddr(bellName(prefix, r))
	}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: bellName(prefix, rank), Net: "unixgram"})
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

// bellName returns the socket name of segment rank r.
func bellName(prefix string, r int) string { return prefix + "." + strconv.Itoa(r) }

var wakeByte = [1]byte{1}

// wake sends rank r's socket a byte, without blocking. A full socket
// already holds a wake; a refused one has no sleeper.
func (s *sockBell) wake(r int) {
	a := &s.addrs[r]
	unix.Syscall6(unix.SYS_SENDTO, uintptr(s.out), uintptr(unsafe.Pointer(&wakeByte[0])), 1, unix.MSG_DONTWAIT, uintptr(unsafe.Pointer(&a.raw)), a.len)
}

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
