package tcp

import (
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/scoll/scoll/transport"
)

// The caller's progress engine. A rank that waits for messages polls the
// transport (transport.Poller: its Waiter calls Poll between checks): Poll
// asks one epoll set holding every connection of the endpoint which ones
// have data, and reads and acts on their frames itself, under the peer's
// read lock, so the message the caller waits for completes in the caller's
// goroutine, without a hand-off from the connection's reader goroutine.
// The reader goroutines stay for what no caller polls for (a caller that
// parked, requests to answer, acks between calls): each waits for its
// socket's data without the read lock and, while a caller polls, without
// spinning.

// engine is the endpoint's poller state.
type engine struct {
	ep     *epoller // nil: no epoll here (then Poll does nothing)
	mu     sync.Mutex
	polls  atomic.Uint64 // the callers' Poll calls so far
	shared bool          // the ranks on this machine outnumber its CPUs
	closed bool          // ep is closed (guarded by mu)
}

// startEngine makes the endpoint's epoll set.
func (t *Transport) startEngine() {
	t.eng.ep = newEpoller()
	t.eng.shared = t.localRanks() > onlineCPUs()
}

// watch adds conn, peer p's connection, to the epoll set.
func (t *Transport) watch(p *peer, conn net.Conn) {
	if t.eng.ep == nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		if rc, err := tc.SyscallConn(); err == nil {
			rc.Control(func(fd uintptr) { t.eng.ep.add(int(fd), p.rank) })
		}
	}
}

// callerPolling returns a function that reports whether a caller polled
// the transport since its previous call (a reader's previous wait): the
// reader then leaves the polling to callers.
func (t *Transport) callerPolling() func() bool {
	seen := t.eng.polls.Load()
	return func() bool {
		n := t.eng.polls.Load()
		polled := n != seen
		seen = n
		return polled
	}
}

// Poll reads and acts on the frames that have arrived on the connections
// (transport.Poller). A Poll that finds another one under way returns.
func (t *Transport) Poll() {
	e := &t.eng
	if e.ep == nil || e.shared {
		return // no connection is watched (reader.go)
	}
	e.polls.Add(1)
	if !e.mu.TryLock() {
		return
	}
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	for _, rank := range e.ep.ready() {
		if rank < 0 || rank >= len(t.peers) {
			continue
		}
		p := t.peers[rank]
		if !p.rd.TryLock() {
			continue // its reader goroutine is at it
		}
		if r := p.rs; r != nil && !r.done && r.pr != nil {
			p.frames(r, true)
		}
		p.rd.Unlock()
	}
}

// Park and Unpark do nothing: the reader goroutines progress the
// connections of a parked caller (transport.Poller).
func (t *Transport) Park(*transport.Waiter) {}

// Unpark does nothing (see Park).
func (t *Transport) Unpark(*transport.Waiter) {}

// SpinHint returns how many times a waiter polls before it parks
// (transport.SpinHinter): a millisecond or two of epoll_wait calls when
// the endpoint's machine has a CPU per rank; none when the ranks share
// CPUs, where the reader goroutines read alone, polling their sockets and
// yielding the CPU between polls (4 processes on 2 cores, 8-byte bcast:
// 78-94 µs with callers polling 16 times, 51-55 µs without), and none
// without an epoll set.
func (t *Transport) SpinHint() int {
	switch {
	case t.eng.ep == nil:
		return 0
	case t.eng.shared:
		return 0
	}
	return 4096
}

// localRanks counts the ranks whose address is on this machine: loopback,
// or this endpoint's own host.
func (t *Transport) localRanks() int {
	if t.rank >= len(t.addrs) {
		return 1
	}
	me := hostOf(t.addrs[t.rank])
	n := 0
	for _, a := range t.addrs {
		h := hostOf(a)
		if h == me || isLoopback(h) {
			n++
		}
	}
	return max(n, 1)
}

func hostOf(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return h
}

func isLoopback(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// onlineCPUs returns the number of online CPUs of the machine (not this
// process's share: a launcher may bind each rank to one).
func onlineCPUs() int {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return 1 << 20 // unknown: assume enough
	}
	n := 0
	for part := range strings.SplitSeq(strings.TrimSpace(string(b)), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return 1 << 20
		}
		z := a
		if isRange {
			if z, err = strconv.Atoi(hi); err != nil || z < a {
				return 1 << 20
			}
		}
		n += z - a + 1
	}
	return max(n, 1)
}

var (
	_ transport.Poller     = (*Transport)(nil)
	_ transport.SpinHinter = (*Transport)(nil)
)
