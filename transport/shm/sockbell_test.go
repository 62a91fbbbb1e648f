//go:build linux

package shm

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scoll/scoll/transport"
)

var bells atomic.Int64

// uniqueBell returns a doorbell socket prefix no other group of this test
// process uses.
func uniqueBell() string {
	return fmt.Sprintf("@scoll-test-bell-%d-%d", os.Getpid(), bells.Add(1))
}

// TestSocketBellSleeps: with Config.BellSocket, the progress goroutine of
// an endpoint whose waiter parked sleeps on its socket (the bell counts a
// socket sleeper, no futex sleeper), and a message sent then wakes it and
// completes the receive.
func TestSocketBellSleeps(t *testing.T) {
	eps, err := NewLocalGroup(2, Config{BellSocket: uniqueBell(), Poll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, e := range eps {
			e.Close()
		}
	}()
	key := transport.Key{Comm: 1, Seq: 1}
	w := transport.NewWaiter(0)
	w.SetPoller(eps[1])
	buf := make([]byte, 8)
	recv := &transport.Msg{Peer: 0, Key: key, Buf: buf, W: w}
	if err := transport.Post(eps[1], recv, false); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Wait(context.Background()) }()
	word := u32(eps[1].bell(1).mem, 4)
	for deadline := time.Now().Add(10 * time.Second); word.Load() != sockSleeper; {
		if time.Now().After(deadline) {
			t.Fatalf("the progress goroutine did not sleep on its socket: sleepers word %#x", word.Load())
		}
		time.Sleep(time.Millisecond)
	}
	sw := transport.NewWaiter(0)
	send := &transport.Msg{Peer: 1, Key: key, Buf: []byte("12345678"), W: sw, Eager: true}
	if err := transport.Post(eps[0], send, true); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil || recv.Err != nil || string(buf) != "12345678" {
			t.Fatalf("receive: %v, %v, %q", err, recv.Err, buf)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the ring did not wake the socket sleeper (its poll interval is an hour)")
	}
}
