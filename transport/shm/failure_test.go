//go:build linux

package shm_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/shm"
)

const childEnv = "SCOLL_SHM_TEST_CHILD"

// TestChildRank is rank 1 of TestPeerKilled, run in a child process: it
// maps the segment passed as descriptor 3, sends one message to rank 0 and
// waits to be killed.
func TestChildRank(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestPeerKilled")
	}
	seg, err := shm.AttachSegment(3, shm.SegmentSize(2, 4096))
	if err != nil {
		t.Fatal(err)
	}
	ep, err := shm.New(seg, 1, 2, shm.Config{RingBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	w := transport.NewWaiter(0)
	m := &transport.Msg{Peer: 0, Key: transport.Key{Comm: 1, Seq: 1}, Buf: []byte("hi"), W: w, Eager: true}
	if err := transport.Post(ep, m, true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Minute)
}

// segmentFile returns a file of its own on seg's memory, for a child's
// ExtraFiles: an os.File closes its descriptor when collected, which must
// not be the segment's (the number could belong to another test's by then).
func segmentFile(t *testing.T, seg *shm.Segment) *os.File {
	fd, err := unix.Dup(seg.FD())
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "segment")
	t.Cleanup(func() { f.Close() })
	return f
}

// TestPeerKilled kills the process of a peer while this rank waits for a
// second message from it: the receive must fail with errs.PeerFailed, soon,
// and the first message must have arrived.
//
// It runs in real time: the peer is a real process, whose endpoint the
// kill stops wherever it is, and a child process cannot join a
// testing/synctest bubble. Poll is 5 ms, so the failure comes within
// milliseconds; the context only bounds a hang. TestDeadProcessFound
// checks the peer checks' timing in a bubble.
func TestPeerKilled(t *testing.T) {
	size := shm.SegmentSize(2, 4096)
	seg, err := shm.CreateSegment("kill", size)
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(os.Args[0], "-test.run", "^TestChildRank$")
	child.Env = append(os.Environ(), childEnv+"=1")
	child.ExtraFiles = []*os.File{segmentFile(t, seg)}
	ep, err := shm.New(seg, 0, 2, shm.Config{RingBytes: 4096, Poll: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	buf := make([]byte, 2)
	first := &transport.Msg{Peer: 1, Key: transport.Key{Comm: 1, Seq: 1}, Buf: buf, W: transport.NewWaiter(0)}
	if err := transport.Post(ep, first, false); err != nil {
		t.Fatal(err)
	}
	if err := first.W.Wait(ctx); err != nil || first.Err != nil || string(buf) != "hi" {
		child.Process.Kill()
		t.Fatalf("first message: %v %v %q", err, first.Err, buf)
	}
	second := &transport.Msg{Peer: 1, Key: transport.Key{Comm: 1, Seq: 2}, Buf: buf, W: transport.NewWaiter(0)}
	if err := transport.Post(ep, second, false); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	child.Process.Kill()
	if err := second.W.Wait(ctx); err != nil {
		t.Fatalf("the receive from a killed peer never completed: %v", err)
	}
	if !errors.Is(second.Err, errs.PeerFailed) {
		t.Fatalf("receive from a killed peer: %v", second.Err)
	}
	t.Logf("failed %v after the kill: %v", time.Since(start), second.Err)
	// Later operations with the dead peer fail at once.
	if err := ep.Irecv(&transport.Msg{Peer: 1, W: transport.NewWaiter(0)}); !errors.Is(err, errs.PeerFailed) {
		t.Errorf("receive posted after the failure: %v", err)
	}
}

// TestAbortCall aborts a call on one rank: a receive of that call waiting
// on another rank fails with the kind of error the aborting rank reported,
// an operation of the call posted later fails at once, and other calls go
// on.
//
// It runs in a testing/synctest bubble, with waiters that do not poll: the
// endpoints' progress goroutines move the records on their timers, within
// Poll of the bubble's time.
func TestAbortCall(t *testing.T) {
	const poll = 10 * time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		eps, err := shm.NewLocalGroup(3, shm.Config{Poll: poll})
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			for _, e := range eps {
				e.Close()
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), poll)
		defer cancel()
		call := transport.Key{Comm: 7, Seq: 3}
		r := &transport.Msg{Peer: 2, Key: call, Buf: make([]byte, 4), W: transport.NewWaiter(0)}
		if err := transport.Post(eps[1], r, false); err != nil {
			t.Fatal(err)
		}
		eps[0].AbortCall(7, 3, errs.Mismatch)
		if err := r.W.Wait(ctx); err != nil || !errors.Is(r.Err, errs.Mismatch) {
			t.Fatalf("receive of the aborted call: %v, %v", err, r.Err)
		}
		// Rank 2 learns too, relayed or direct: its later send of the call
		// fails.
		time.Sleep(poll)
		synctest.Wait()
		if err := eps[2].Isend(&transport.Msg{Peer: 1, Key: call, Buf: []byte("x"), W: transport.NewWaiter(0)}); !errors.Is(err, errs.Mismatch) {
			t.Fatalf("send of the aborted call on rank 2: %v", err)
		}
		// Another call still works.
		other := transport.Key{Comm: 7, Seq: 4}
		buf := make([]byte, 2)
		rr := &transport.Msg{Peer: 2, Key: other, Buf: buf, W: transport.NewWaiter(0)}
		s := &transport.Msg{Peer: 1, Key: other, Buf: []byte("ok"), W: transport.NewWaiter(0)}
		if err := transport.Post(eps[1], rr, false); err != nil {
			t.Fatal(err)
		}
		if err := transport.Post(eps[2], s, true); err != nil {
			t.Fatal(err)
		}
		ctx, cancel = context.WithTimeout(context.Background(), 2*poll)
		defer cancel()
		if rr.W.Wait(ctx) != nil || s.W.Wait(ctx) != nil || rr.Err != nil || s.Err != nil || string(buf) != "ok" {
			t.Fatalf("a later call: %v %v %q", rr.Err, s.Err, buf)
		}
	})
}

// largeSize is the message of TestKilledMidCopy: long enough (tens of
// milliseconds through a ring, or one process_vm_readv) that the kill
// lands while it moves.
const largeSize = 64 << 20

// largeConfig is the endpoints' configuration of a TestKilledMidCopy case:
// through 4 KiB rings, or by single copy.
func largeConfig(cma bool) shm.Config {
	cfg := shm.Config{RingBytes: 4096, CMAMin: -1, Poll: 5 * time.Millisecond}
	if cma {
		cfg.CMAMin = 1
	}
	return cfg
}

// TestLargeChild is the child rank of TestKilledMidCopy: it sends or
// receives one large message of a collective call and is killed meanwhile.
func TestLargeChild(t *testing.T) {
	mode := os.Getenv(childEnv)
	if mode != "send" && mode != "recv" {
		t.Skip("run by TestKilledMidCopy")
	}
	cma := os.Getenv(childEnv+"_CMA") != ""
	seg, err := shm.AttachSegment(3, shm.SegmentSize(2, 4096))
	if err != nil {
		t.Fatal(err)
	}
	ep, err := shm.New(seg, 1, 2, largeConfig(cma))
	if err != nil {
		t.Fatal(err)
	}
	if cma {
		waitSingleCopyTo(t, ep, 0)
	}
	buf := make([]byte, largeSize)
	for i := range buf {
		buf[i] = byte(i)
	}
	w := transport.NewWaiter(ep.SpinHint())
	w.SetPoller(ep)
	m := &transport.Msg{Peer: 0, Key: transport.Key{Comm: 1, Seq: 1}, Buf: buf, W: w}
	if err := transport.Post(ep, m, mode == "send"); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("posted\n")
	w.Wait(context.Background())
	time.Sleep(time.Minute)
}

// waitSingleCopyTo waits until ep sends to peer by single copy.
func waitSingleCopyTo(t *testing.T, ep *shm.Transport, peer int) {
	deadline := time.Now().Add(10 * time.Second)
	for !ep.SingleCopy(peer) {
		if time.Now().After(deadline) {
			t.Fatal("no single copy")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestKilledMidCopy kills a peer while a large message moves between it
// and this rank, through the ring or by single copy, with the peer
// sending or receiving: this rank's operation must end within the failure
// timeout, with errs.PeerFailed, or with every byte right when the copy
// was done before the kill.
//
// It runs in real time, as TestPeerKilled does, and its waiter polls and
// parks as the executor's do (a progress goroutine asleep on its futex
// would hold a bubble's time still anyway).
func TestKilledMidCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 64 MiB messages")
	}
	for _, cma := range []bool{false, true} {
		for _, mode := range []string{"send", "recv"} {
			t.Run(fmt.Sprintf("cma=%v/peer-%s", cma, mode), func(t *testing.T) {
				seg, err := shm.CreateSegment("kill", shm.SegmentSize(2, 4096))
				if err != nil {
					t.Fatal(err)
				}
				ep, err := shm.New(seg, 0, 2, largeConfig(cma))
				if err != nil {
					t.Fatal(err)
				}
				defer ep.Close()
				child := exec.Command(os.Args[0], "-test.run", "^TestLargeChild$")
				child.Env = append(os.Environ(), childEnv+"="+mode)
				if cma {
					child.Env = append(child.Env, childEnv+"_CMA=1")
				}
				child.ExtraFiles = []*os.File{segmentFile(t, seg)}
				out, _ := child.StdoutPipe()
				if err := child.Start(); err != nil {
					t.Fatal(err)
				}
				defer child.Wait()
				defer child.Process.Kill()
				if cma {
					waitSingleCopyTo(t, ep, 1)
				}
				buf := make([]byte, largeSize)
				if mode == "recv" {
					for i := range buf {
						buf[i] = byte(i)
					}
				}
				w := transport.NewWaiter(ep.SpinHint())
				w.SetPoller(ep)
				m := &transport.Msg{Peer: 1, Key: transport.Key{Comm: 1, Seq: 1}, Buf: buf, W: w}
				if err := transport.Post(ep, m, mode == "recv"); err != nil {
					t.Fatal(err)
				}
				// Kill the child a little after it has posted.
				line := make([]byte, 7)
				if _, err := io.ReadFull(out, line); err != nil {
					t.Fatalf("child: %v", err)
				}
				time.Sleep(2 * time.Millisecond)
				child.Process.Kill()
				killed := time.Now()
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				if err := w.Wait(ctx); err != nil {
					t.Fatalf("the operation never ended: %v", err)
				}
				switch {
				case m.Err == nil && mode == "send":
					for i, b := range buf {
						if b != byte(i) {
							t.Fatalf("received without an error, but byte %d is %d", i, b)
						}
					}
					t.Logf("the copy was done before the kill")
				case m.Err == nil:
					t.Logf("the peer had received before the kill")
				case !errors.Is(m.Err, errs.PeerFailed):
					t.Fatalf("%v, want a peer failure", m.Err)
				default:
					t.Logf("failed %v after the kill: %v", time.Since(killed), m.Err)
				}
			})
		}
	}
}

// TestCorruptRecord writes garbage where rank 1's next record to rank 0
// would be: rank 0's waiting receive from rank 1 fails with
// errs.PeerFailed, and so do its later operations with rank 1.
func TestCorruptRecord(t *testing.T) {
	const rb = 4096
	size := shm.SegmentSize(2, rb)
	seg, err := shm.CreateSegment("corrupt", size)
	if err != nil {
		t.Fatal(err)
	}
	mem := seg.Bytes()
	ep, err := shm.New(seg, 0, 2, shm.Config{RingBytes: rb})
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	m := &transport.Msg{Peer: 1, Key: transport.Key{Comm: 1, Seq: 1}, Buf: make([]byte, 8), W: transport.NewWaiter(0)}
	if err := transport.Post(ep, m, false); err != nil {
		t.Fatal(err)
	}
	// The ring from rank 1 to rank 0: the segment's 2 slots, then rings by
	// (from, to); a ring starts with its tail counter, and its data
	// follows 3 cache lines.
	ring := 2*64 + (1*2+0)*shm.RingSize(rb)
	for i := range 16 {
		mem[ring+3*64+i] = 0xa5
	}
	binary.LittleEndian.PutUint64(mem[ring:], 16) // publish 16 bytes of garbage
	ep.Poll()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.W.Wait(ctx); err != nil {
		t.Fatalf("the receive never ended: %v", err)
	}
	if !errors.Is(m.Err, errs.PeerFailed) || !errors.Is(m.Err, shm.ErrCorrupt) {
		t.Fatalf("receive from a corrupted ring: %v", m.Err)
	}
	if err := ep.Isend(&transport.Msg{Peer: 1, Key: transport.Key{Comm: 1, Seq: 2}, Buf: []byte("x"), W: transport.NewWaiter(0)}); !errors.Is(err, errs.PeerFailed) {
		t.Errorf("send after the corruption: %v", err)
	}
}

// TestCloseDelivers: what a rank sent before it closed its endpoint is
// delivered, to a receive posted before (whose rank may notice the close
// before it reads the message) and to one posted after the close was
// noticed; only then do operations with it fail.
//
// Each round runs in a testing/synctest bubble, with waiters that do not
// poll: "rank 0's progress goroutine sleeps" and "rank 0 notices the
// close" are points of the bubble's time (Poll is 1 ms), not real sleeps
// that a loaded machine may overrun.
func TestCloseDelivers(t *testing.T) {
	for range 5 {
		synctest.Test(t, func(t *testing.T) {
			eps, err := shm.NewLocalGroup(2, shm.Config{Poll: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer eps[0].Close()
			first, second := transport.Key{Comm: 1, Seq: 1}, transport.Key{Comm: 1, Seq: 2}
			buf1, buf2 := make([]byte, 5), make([]byte, 10)
			r1 := &transport.Msg{Peer: 1, Key: first, Buf: buf1, W: transport.NewWaiter(0)}
			if err := transport.Post(eps[0], r1, false); err != nil {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond) // rank 0's progress goroutine sleeps
			for _, m := range []*transport.Msg{
				{Peer: 0, Key: first, Buf: []byte("first"), W: transport.NewWaiter(0), Eager: true},
				{Peer: 0, Key: second, Buf: []byte("last words"), W: transport.NewWaiter(0), Eager: true},
			} {
				if err := transport.Post(eps[1], m, true); err != nil {
					t.Fatal(err)
				}
			}
			eps[1].Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if err := r1.W.Wait(ctx); err != nil || r1.Err != nil || string(buf1) != "first" {
				t.Fatalf("receive posted before the close: %v %v %q", err, r1.Err, buf1)
			}
			time.Sleep(20 * time.Millisecond) // rank 0 notices the close
			synctest.Wait()
			r2 := &transport.Msg{Peer: 1, Key: second, Buf: buf2, W: transport.NewWaiter(0)}
			if err := transport.Post(eps[0], r2, false); err != nil {
				t.Fatalf("receive posted after the close: %v", err)
			}
			if err := r2.W.Wait(ctx); err != nil || r2.Err != nil || string(buf2) != "last words" {
				t.Fatalf("receive posted after the close: %v %v %q", err, r2.Err, buf2)
			}
			if err := eps[0].Irecv(&transport.Msg{Peer: 1, Key: second, Buf: buf2, W: transport.NewWaiter(0)}); !errors.Is(err, errs.PeerFailed) {
				t.Errorf("receive from a closed peer: %v", err)
			}
		})
	}
}
