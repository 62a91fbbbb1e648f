//go:build linux

package shm

import (
	"errors"
	"fmt"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scoll/scoll/internal/clock"
	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// The tests of peer checks and of the progress goroutine's timer run in
// testing/synctest bubbles: the endpoints take time from clock.Real, which
// tells the bubble's fake time, and that time advances only when every
// goroutine of the bubble waits. A progress goroutine waits on its timer
// while no waiter is parked on its endpoint and no record waits for room;
// asleep on its doorbell (a futex, in the kernel's time) or spinning it
// would hold the bubble's time still. So these tests wait with waiters
// that never poll or park (transport.NewWaiter(0) without a poller) and
// send messages that fit the rings.

// bubbleGroup starts n endpoints on one segment in the current bubble.
func bubbleGroup(t *testing.T, n int, cfg Config) []*Transport {
	t.Helper()
	eps, err := NewLocalGroup(n, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, e := range eps {
			e.Close()
		}
	})
	return eps
}

// quietPost posts a send (eager) or a receive of buf with peer and key on
// ep, with a waiter that neither polls nor parks on ep.
func quietPost(t *testing.T, ep *Transport, send bool, peer int, seq uint64, buf []byte) *transport.Msg {
	t.Helper()
	m := &transport.Msg{Peer: peer, Key: transport.Key{Comm: 1, Seq: seq}, Buf: buf, W: transport.NewWaiter(0), Eager: send}
	if err := transport.Post(ep, m, send); err != nil {
		t.Fatal(err)
	}
	return m
}

// advance lets d of the bubble's time pass, then waits until every
// goroutine of the bubble is blocked again.
func advance(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

// outcome describes operation m: "pending", "done" or its error.
func outcome(m *transport.Msg) string {
	switch {
	case m.W.Pending() != 0:
		return "pending"
	case m.Err != nil:
		return m.Err.Error()
	}
	return "done"
}

// expectPending fails the test unless m is still pending.
func expectPending(t *testing.T, when string, m *transport.Msg) {
	t.Helper()
	if got := outcome(m); got != "pending" {
		t.Fatalf("%s: %s, want the operation pending", when, got)
	}
}

// expectPeerFailed fails the test unless m failed with errs.PeerFailed and
// an error that says why.
func expectPeerFailed(t *testing.T, when string, m *transport.Msg, why string) {
	t.Helper()
	if got := outcome(m); !errors.Is(m.Err, errs.PeerFailed) || !strings.Contains(got, why) {
		t.Fatalf("%s: %s, want a peer failure: %q", when, got, why)
	}
}

// TestClosedPeerFound: a receive from a peer that closed its endpoint
// fails with errs.PeerFailed at the receiver's next peer check: not before
// Poll has passed since the endpoint started (checks are due every Poll,
// not at every wake-up of the progress goroutine), and within Poll of the
// close once the endpoint has been idle for long (its timer's wait grows
// up to Poll and no further).
func TestClosedPeerFound(t *testing.T) {
	const poll = time.Second
	synctest.Test(t, func(t *testing.T) {
		eps := bubbleGroup(t, 3, Config{Poll: poll})
		r1 := quietPost(t, eps[0], false, 1, 1, make([]byte, 4))
		eps[1].Close()
		advance(poll - 1)
		expectPending(t, "a nanosecond before Poll", r1)
		advance(poll + 1)
		expectPeerFailed(t, "2 Poll after the close", r1, "rank 1 closed its endpoint")

		r2 := quietPost(t, eps[0], false, 2, 2, make([]byte, 4))
		advance(20 * poll)
		expectPending(t, "idle for 20 Poll", r2)
		eps[2].Close()
		advance(poll)
		expectPeerFailed(t, "Poll after the close", r2, "rank 2 closed its endpoint")
	})
}

// TestIdleDrain: with nobody polling, the progress goroutine drains the
// rings on its timer, which waits at most Poll however long the endpoint
// was idle: a message reaches a receive whose waiter does not poll within
// Poll.
func TestIdleDrain(t *testing.T) {
	const poll = time.Second
	synctest.Test(t, func(t *testing.T) {
		eps := bubbleGroup(t, 2, Config{Poll: poll})
		buf := make([]byte, 2)
		r := quietPost(t, eps[0], false, 1, 1, buf)
		advance(20 * poll)
		quietPost(t, eps[1], true, 0, 1, []byte("hi"))
		advance(poll)
		if got := outcome(r); got != "done" || string(buf) != "hi" {
			t.Fatalf("Poll after the send: %s %q, want the message", got, buf)
		}
	})
}

// stillClock is clock.Real, the bubble's time, with a Now that stands
// still. Only endpoints that never spin may use it: a spin lasts until Now
// has moved.
type stillClock struct {
	clock.Real
	at time.Time
}

func (c stillClock) Now() time.Time { return c.at }

// TestPeerChecksByClock: the endpoint decides by its own clock that a peer
// check is due. On a clock whose Now stands still none is, so a closed
// peer goes unnoticed, while the timers (the bubble's) keep draining the
// rings: what the peer sent before it closed arrives.
func TestPeerChecksByClock(t *testing.T) {
	const poll = time.Second
	synctest.Test(t, func(t *testing.T) {
		eps := bubbleGroup(t, 2, Config{Poll: poll, clock: stillClock{at: time.Now()}})
		buf := make([]byte, 5)
		r1 := quietPost(t, eps[0], false, 1, 1, buf)
		quietPost(t, eps[1], true, 0, 1, []byte("bye"))
		eps[1].Close()
		advance(20 * poll)
		if got := outcome(r1); got != "done" || string(buf[:3]) != "bye" {
			t.Fatalf("message sent before the close: %s %q", got, buf)
		}
		r2 := quietPost(t, eps[0], false, 1, 2, buf)
		advance(20 * poll)
		expectPending(t, "20 Poll after the close, by a clock that stands still", r2)
	})
}

// unusedPid returns a pid no process can have: the kernel's pid_max.
func unusedPid(t *testing.T) int {
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		t.Skip("no pid_max:", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// TestDeadProcessFound: a peer whose endpoint is up (in its slot) but
// whose process does not run, or dies, is found at the next peer check and
// its operations fail with errs.PeerFailed. Rank 1 here is only a slot
// naming a process: a pid that no process has, or a child process killed
// meanwhile. The child is real (a pidfd watches it), but it is killed and
// waited for (until it is a zombie: a dead process not yet reaped) at a
// point of the bubble's time, so the peer checks run in that time: Poll
// late at most.
func TestDeadProcessFound(t *testing.T) {
	const poll = time.Second
	// peer runs a receive from a rank 1 with process pid; kill, if any,
	// makes that process die at 3 Poll.
	peer := func(t *testing.T, pid int, kill func() error) {
		synctest.Test(t, func(t *testing.T) {
			seg, err := CreateSegment("dead", SegmentSize(2, 4096))
			if err != nil {
				t.Fatal(err)
			}
			ep, err := New(seg, 0, 2, Config{RingBytes: 4096, Poll: poll})
			if err != nil {
				t.Fatal(err)
			}
			defer ep.Close()
			mem := seg.Bytes()
			u32(mem, lineSize+slotPid).Store(uint32(pid))
			u32(mem, lineSize+slotState).Store(stateUp)
			r := quietPost(t, ep, false, 1, 1, make([]byte, 4))
			advance(3 * poll)
			if kill == nil {
				expectPeerFailed(t, "3 Poll after the start", r, fmt.Sprintf("rank 1 (pid %d) does not run", pid))
				return
			}
			expectPending(t, "while the process runs", r)
			if err := kill(); err != nil {
				t.Fatal(err)
			}
			advance(poll)
			expectPeerFailed(t, "Poll after the death", r, fmt.Sprintf("rank 1 (pid %d) died", pid))
		})
	}
	t.Run("no process", func(t *testing.T) { peer(t, unusedPid(t), nil) })
	t.Run("dies", func(t *testing.T) {
		child := exec.Command("sleep", "60")
		if err := child.Start(); err != nil {
			t.Skip("no sleep command:", err)
		}
		defer child.Wait()
		defer child.Process.Kill()
		pid := child.Process.Pid
		peer(t, pid, func() error {
			if err := unix.Kill(pid, unix.SIGKILL); err != nil {
				return err
			}
			var info unix.Siginfo
			return unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		})
	})
}

// TestTimeFromClock: the endpoint's code reads no time from package time
// (no Now, Since, timer, ticker or sleep), only from its clock, so that a
// test can pass another one.
func TestTimeFromClock(t *testing.T) {
	banned := []string{"Now", "Since", "Until", "After", "AfterFunc", "NewTimer", "NewTicker", "Tick", "Sleep"}
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	read := 0
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		read++
		var s scanner.Scanner
		s.Init(fset.AddFile(name, -1, len(src)), src, nil, 0)
		// The last three tokens, newest last: time . Name
		var toks [3]string
		for {
			pos, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			if lit == "" {
				lit = tok.String()
			}
			toks = [3]string{toks[1], toks[2], lit}
			if toks[0] == "time" && toks[1] == "." && slices.Contains(banned, toks[2]) {
				t.Errorf("%s: time.%s: take time from the endpoint's clock", fset.Position(pos), toks[2])
			}
		}
	}
	if read < 10 {
		t.Fatalf("read %d files; the test looks in the wrong place", read)
	}
}
