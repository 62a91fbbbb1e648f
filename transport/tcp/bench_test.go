package tcp_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/tcp"
	"github.com/scoll/scoll/transport/transporttest"
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
			transporttest.BenchExchange(b, n, eps[0], eps[1])
		})
	}
}

// BenchmarkPingPong measures the round trip of one 8-byte message between
// two ranks over loopback TCP: rank 0 sends and waits for the reply, rank 1
// replies to each message. Point-to-point messages (eager: no ack) and
// messages of collective calls, where the receiver acknowledges each one
// (the bcast pattern: nobody sends back within the call, so a send
// completes only when its ack returns).
func BenchmarkPingPong(b *testing.B) {
	for _, coll := range []bool{false, true} {
		b.Run(fmt.Sprintf("collective=%v", coll), func(b *testing.B) {
			eps, err := tcp.NewLocalGroup(context.Background(), 2, tcp.Config{})
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				for _, e := range eps {
					e.Close()
				}
			}()
			b.ResetTimer()
			var wg sync.WaitGroup
			errc := make(chan error, 2)
			for r := range 2 {
				wg.Go(func() {
					ep := eps[r]
					w := transport.NewWaiter(0)
					buf := make([]byte, 8)
					for i := range b.N {
						// A collective's two messages are two calls (a
						// reply in the same call would be a proof, no ack).
						k := transport.Key{Comm: 1, Tag: int64(i)}
						for turn := range 2 {
							if coll {
								k = transport.Key{Comm: 1, Seq: uint64(2*i + turn + 1)}
							}
							m := transport.Msg{Peer: 1 - r, Key: k, Buf: buf, W: w, Eager: !coll}
							var err error
							if turn == r {
								err = transport.Post(ep, &m, true)
							} else {
								err = transport.Post(ep, &m, false)
							}
							if err == nil {
								err = w.Wait(context.Background())
							}
							if err == nil {
								err = m.Err
							}
							if err != nil {
								errc <- fmt.Errorf("rank %d: %w", r, err)
								return
							}
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
