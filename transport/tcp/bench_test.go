package tcp_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/tcp"
)

// BenchmarkExchange measures one exchange between two ranks over loopback
// TCP (both send and receive, then wait), as a step of a two-rank recursive
// doubling: 8 bytes (written inline by the caller), 64 KiB (the inline
// limit), 1 MiB (the eager limit, one chunk) and 4 MiB (announced, then sent
// in chunks once cleared). Every message belongs to a collective call, so
// the small ones take the acknowledged (sync) path.
func BenchmarkExchange(b *testing.B) {
	for _, n := range []int{8, 64 << 10, 1 << 20, 4 << 20} {
		b.Run(fmt.Sprintf("bytes=%d", n), func(b *testing.B) {
			eps, err := tcp.NewLocalGroup(context.Background(), 2, tcp.Config{})
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				for _, e := range eps {
					e.Close()
				}
			}()
			b.SetBytes(int64(2 * n))
			b.ResetTimer()
			var wg sync.WaitGroup
			errc := make(chan error, 2)
			for r := range 2 {
				// The step of inproc's BenchmarkExchange (the same loop
				// over another transport; transports' tests share only
				// package transporttest), which also checks the errors.
				wg.Go(func() {
					ep := eps[r]
					out, in := make([]byte, n), make([]byte, n)
					w := transport.NewWaiter(0)
					var s, rc transport.Msg
					for i := range b.N {
						k := transport.Key{Comm: 1, Seq: uint64(i + 1)}
						s = transport.Msg{Peer: 1 - r, Key: k, Buf: out, W: w}
						rc = transport.Msg{Peer: 1 - r, Key: k, Buf: in, W: w}
						w.Add(2)
						ep.Isend(&s)
						ep.Irecv(&rc)
						if err := w.Wait(context.Background()); err != nil {
							errc <- err
							return
						}
						if s.Err != nil || rc.Err != nil {
							errc <- fmt.Errorf("rank %d: send %v, receive %v", r, s.Err, rc.Err)
							return
						}
					}
				})
			}
			wg.Wait()
			close(errc)
			for err := range errc {
				b.Fatal(err)
			}
		})
	}
}
