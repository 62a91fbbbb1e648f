package scoll_test

// Benchmarks of the collectives with scoll's default algorithm choice on
// in-process ranks. Each sub-benchmark is named np=P/SIZE; SIZE is the
// per-rank buffer in bytes of float32 elements:
//
//   - Allreduce and Bcast: the buffer;
//   - Allgather: the receive buffer (P blocks), Alltoall: the send buffer (P
//     blocks), ReduceScatterBlock: the send buffer (P blocks); each block has
//     at least one element, so at np=64 the 8B case moves 256 B per rank.
//
// b.SetBytes is given the per-rank buffer actually used, so MB/s is the rate
// at which one rank's buffer goes through the collective. ns/op is the wall
// time of one collective: every rank runs b.N calls back to back, and the
// timer runs from a barrier after setup to a barrier after the last call.
//
// For per-algorithm OSU-style tables use the scoll bench command
// (go run ./cmd/scoll bench -h).

import (
	"context"
	"fmt"
	"testing"

	"github.com/scoll/scoll"
)

var (
	collBenchRanks = []int{2, 64}
	collBenchSizes = []int{8, 16 << 20}
)

func collBenchName(np, size int) string {
	if size >= 1<<20 {
		return fmt.Sprintf("np=%d/%dMiB", np, size>>20)
	}
	return fmt.Sprintf("np=%d/%dB", np, size)
}

// collBench runs b.N calls of the collective that setup returns on every
// rank of np, after one untimed call that builds the plans; opts are Run's
// (BenchmarkExchange's forcing of exchanges). bytes is the per-rank buffer
// size for b.SetBytes.
func collBench(b *testing.B, np int, bytes int64, setup func(c *scoll.Comm) func(ctx context.Context) error, opts ...scoll.Option) {
	b.SetBytes(bytes)
	n := b.N // read once; every rank runs exactly n calls
	err := scoll.Run(context.Background(), np, func(ctx context.Context, c *scoll.Comm) error {
		call := setup(c)
		if err := call(ctx); err != nil {
			return err
		}
		// The benchmark's goroutine is blocked in scoll.Run, so rank 0 may
		// drive the timer, each edge after a barrier.
		edge := func(timer func()) error {
			err := c.Barrier(ctx)
			if c.Rank() == 0 {
				timer()
			}
			return err
		}
		if err := edge(b.ResetTimer); err != nil {
			return err
		}
		for range n {
			if err := call(ctx); err != nil {
				return err
			}
		}
		return edge(b.StopTimer)
	}, opts...)
	if err != nil {
		b.Fatal(err)
	}
}

// blockLen returns the elements per block of a per-rank buffer of size bytes
// split into np blocks of float32, at least one.
func blockLen(size, np int) int { return max(1, size/4/np) }

// benchSizes runs a sub-benchmark of the collective setup returns for every
// rank count and size: setup gets n float32 elements, the whole buffer
// (blocked false) or one of np blocks (blocked true; see blockLen).
func benchSizes(b *testing.B, blocked bool, setup func(c *scoll.Comm, n int) func(context.Context) error) {
	for _, np := range collBenchRanks {
		for _, size := range collBenchSizes {
			n, bytes := size/4, size
			if blocked {
				n = blockLen(size, np)
				bytes = 4 * n * np
			}
			b.Run(collBenchName(np, size), func(b *testing.B) {
				collBench(b, np, int64(bytes), func(c *scoll.Comm) func(context.Context) error { return setup(c, n) })
			})
		}
	}
}

func BenchmarkAllreduce(b *testing.B) {
	benchSizes(b, false, func(c *scoll.Comm, n int) func(context.Context) error {
		send, recv := make([]float32, n), make([]float32, n)
		return func(ctx context.Context) error { return scoll.Allreduce(ctx, c, send, recv, scoll.Sum) }
	})
}

func BenchmarkBcast(b *testing.B) {
	benchSizes(b, false, func(c *scoll.Comm, n int) func(context.Context) error {
		buf := make([]float32, n)
		return func(ctx context.Context) error { return scoll.Bcast(ctx, c, buf, 0) }
	})
}

func BenchmarkAllgather(b *testing.B) {
	benchSizes(b, true, func(c *scoll.Comm, k int) func(context.Context) error {
		send, recv := make([]float32, k), make([]float32, k*c.Size())
		return func(ctx context.Context) error { return scoll.Allgather(ctx, c, send, recv) }
	})
}

func BenchmarkReduceScatterBlock(b *testing.B) {
	benchSizes(b, true, func(c *scoll.Comm, k int) func(context.Context) error {
		send, recv := make([]float32, k*c.Size()), make([]float32, k)
		return func(ctx context.Context) error { return scoll.ReduceScatterBlock(ctx, c, send, recv, scoll.Sum) }
	})
}

func BenchmarkAlltoall(b *testing.B) {
	benchSizes(b, true, func(c *scoll.Comm, k int) func(context.Context) error {
		send, recv := make([]float32, k*c.Size()), make([]float32, k*c.Size())
		return func(ctx context.Context) error { return scoll.Alltoall(ctx, c, send, recv) }
	})
}
