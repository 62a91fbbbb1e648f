//go:build linux

package shm_test

import (
	"context"
	"fmt"

	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/shm"
)

// Two endpoints on one segment (in one process here; Init gives each
// process of a host its own): rank 0 sends a message of a collective call
// to rank 1.
func ExampleNewLocalGroup() {
	eps, err := shm.NewLocalGroup(2, shm.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer eps[0].Close()
	defer eps[1].Close()
	key := transport.Key{Comm: 1, Seq: 1}
	buf := make([]byte, 5)
	w := transport.NewWaiter(eps[1].SpinHint())
	w.SetPoller(eps[1])
	recv := &transport.Msg{Peer: 0, Key: key, Buf: buf, W: w}
	send := &transport.Msg{Peer: 1, Key: key, Buf: []byte("hello"), W: transport.NewWaiter(0)}
	if err := transport.Post(eps[1], recv, false); err != nil {
		fmt.Println(err)
		return
	}
	if err := transport.Post(eps[0], send, true); err != nil {
		fmt.Println(err)
		return
	}
	if err := w.Wait(context.Background()); err != nil || recv.Err != nil {
		fmt.Println(err, recv.Err)
		return
	}
	send.W.WaitAll()
	fmt.Println(string(buf[:recv.N]), send.Err)
	// Output: hello <nil>
}
