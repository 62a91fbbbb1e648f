//go:build linux

package tcp

import "golang.org/x/sys/unix"

// epoller is an epoll set of connections, each tagged with its peer's
// rank, asked without waiting which have data (level-triggered).
type epoller struct {
	fd     int
	events [64]unix.EpollEvent
	ranks  [64]int
}

// newEpoller returns an empty set, or nil when epoll is not at hand.
func newEpoller() *epoller {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil
	}
	return &epoller{fd: fd}
}

// add puts socket fd of peer rank in the set. A socket leaves it when it
// is closed.
func (e *epoller) add(fd, rank int) {
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(rank)}
	unix.EpollCtl(e.fd, unix.EPOLL_CTL_ADD, fd, &ev)
}

// ready returns the ranks whose connections have data or ended. The
// result is valid until the next call; one goroutine calls it at a time.
func (e *epoller) ready() []int {
	n, err := unix.EpollWait(e.fd, e.events[:], 0)
	if err != nil || n <= 0 {
		return nil
	}
	for i := range n {
		e.ranks[i] = int(e.events[i].Fd)
	}
	return e.ranks[:n]
}

// close releases the set.
func (e *epoller) close() { unix.Close(e.fd) }
