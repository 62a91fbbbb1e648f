//go:build linux

package shm_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/shm"
)

// BenchmarkExchange measures a round of an exchange between two endpoints
// of one segment (in one process, each with its own mapping): each sends
// size bytes to the other and receives as many, as a collective round
// does, waiting the way the executor waits (polling, then parking).
func BenchmarkExchange(b *testing.B) {
	for _, size := range []int{8, 64 << 10, 1 << 20} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			eps, err := shm.NewLocalGroup(2, shm.Config{})
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				for _, e := range eps {
					e.Close()
				}
			}()
			b.SetBytes(int64(size))
			var wg sync.WaitGroup
			for r, ep := range eps {
				wg.Go(func() {
					out, in := make([]byte, size), make([]byte, size)
					w := transport.NewWaiter(ep.SpinHint())
					w.SetPoller(ep)
					for i := range b.N {
						key := transport.Key{Comm: 1, Seq: uint64(i + 1)}
						s := &transport.Msg{Peer: 1 - r, Key: key, Buf: out, W: w}
						rv := &transport.Msg{Peer: 1 - r, Key: key, Buf: in, W: w}
						if transport.Post(ep, s, true) != nil || transport.Post(ep, rv, false) != nil {
							b.Error("post failed")
							return
						}
						if err := w.Wait(context.Background()); err != nil || s.Err != nil || rv.Err != nil {
							b.Error(err, s.Err, rv.Err)
							return
						}
					}
				})
			}
			wg.Wait()
		})
	}
}
