package tcp_test

import (
	"context"
	"fmt"
	"testing"

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
