//go:build linux

package shm_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

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

// TestPeerKilled kills the process of a peer while this rank waits for a
// second message from it: the receive must fail with errs.PeerFailed, soon,
// and the first message must have arrived.
func TestPeerKilled(t *testing.T) {
	size := shm.SegmentSize(2, 4096)
	seg, err := shm.CreateSegment("kill", size)
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(os.Args[0], "-test.run", "^TestChildRank$")
	child.Env = append(os.Environ(), childEnv+"=1")
	child.ExtraFiles = []*os.File{os.NewFile(uintptr(seg.FD()), "segment")}
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
func TestAbortCall(t *testing.T) {
	eps, err := shm.NewLocalGroup(3, shm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, e := range eps {
			e.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
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
	// Rank 2 learns too, relayed or direct: its later send of the call fails.
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := eps[2].Isend(&transport.Msg{Peer: 1, Key: call, Buf: []byte("x"), W: transport.NewWaiter(0)})
		if errors.Is(err, errs.Mismatch) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("send of the aborted call on rank 2: %v", err)
		}
		time.Sleep(time.Millisecond)
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
	if rr.W.Wait(ctx) != nil || s.W.Wait(ctx) != nil || rr.Err != nil || s.Err != nil || string(buf) != "ok" {
		t.Fatalf("a later call: %v %v %q", rr.Err, s.Err, buf)
	}
}
