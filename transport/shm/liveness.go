//go:build linux

package shm

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/scoll/scoll/internal/errs"
)

// Watch observes another process of the job on this host, so that a rank
// waiting on shared memory learns that its peer died instead of waiting
// forever: through a pidfd where the kernel has them (Linux 5.3), which
// also survives the reuse of the pid by an unrelated process, else by
// signalling the pid with signal 0.
type Watch struct {
	pid   int
	pidfd int // -1 without pidfd_open
}

// WatchProcess starts watching process pid. It fails when pid does not run.
func WatchProcess(pid int) (*Watch, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("shm: watch of pid %d", pid)
	}
	fd, err := unix.PidfdOpen(pid, 0)
	switch {
	case err == nil:
		return &Watch{pid: pid, pidfd: fd}, nil
	case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM):
		w := &Watch{pid: pid, pidfd: -1}
		if !w.Alive() {
			return nil, fmt.Errorf("shm: process %d does not run", pid)
		}
		return w, nil
	default:
		return nil, fmt.Errorf("shm: watching process %d: %w", pid, err)
	}
}

// Alive reports whether the process still runs (has not exited; a zombie
// not yet reaped counts as exited).
func (w *Watch) Alive() bool {
	if w.pidfd >= 0 {
		fds := []unix.PollFd{{Fd: int32(w.pidfd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, 0)
			switch {
			case err == unix.EINTR:
				// The runtime's preemption signals interrupt system
				// calls: ask again.
				continue
			case err != nil:
				return true // cannot tell: not dead as far as we know
			}
			return n == 0 || fds[0].Revents&(unix.POLLIN|unix.POLLHUP) == 0
		}
	}
	err := unix.Kill(w.pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// Close stops watching.
func (w *Watch) Close() error {
	if w.pidfd < 0 {
		return nil
	}
	err := unix.Close(w.pidfd)
	w.pidfd = -1
	return err
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
		pid := t.pid(p)
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
