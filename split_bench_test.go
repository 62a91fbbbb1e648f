package scoll_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/scoll/scoll"
)

// BenchmarkSplit times one Split of every rank of an in-process world into
// one communicator with random keys, per algorithm and representation.
func BenchmarkSplit(b *testing.B) {
	for _, p := range []int{1024, 4096, 16384} {
		for _, alg := range []string{"allgather", "merge", "cheng"} {
			for _, gs := range []int{1, 16} {
				b.Run(fmt.Sprintf("P=%d/%s/P'=%d", p, alg, gs), func(b *testing.B) {
					for range b.N {
						err := scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
							sub, err := c.Split(ctx, 0, (c.Rank()*7919)%p, scoll.WithSplitAlgorithm(alg), scoll.WithDistributedGroup(gs))
							if sub != nil {
								sub.Close()
							}
							return err
						})
						if err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkManyCommunicators: every rank of a large world joins several
// communicators of 8 ranks and runs a collective on each; reports the heap
// bytes per membership and the time per round of splits.
func BenchmarkManyCommunicators(b *testing.B) {
	for _, p := range []int{4096, 65536} {
		b.Run(fmt.Sprintf("P=%d", p), func(b *testing.B) {
			const comms, size = 8, 8
			var before, after runtime.MemStats
			for range b.N {
				err := scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
					if err := c.Barrier(ctx); err != nil {
						return err
					}
					if c.Rank() == 0 {
						runtime.GC()
						runtime.ReadMemStats(&before)
					}
					if err := c.Barrier(ctx); err != nil {
						return err
					}
					var subs []*scoll.Comm
					for k := range comms {
						sub, err := c.Split(ctx, (c.Rank()+k)/size, c.Rank())
						if err != nil {
							return err
						}
						if err := scoll.Allreduce(ctx, sub, nil, []int32{1}, scoll.Sum, scoll.WithAlgorithm("recursive-doubling")); err != nil {
							return err
						}
						subs = append(subs, sub)
					}
					if err := c.Barrier(ctx); err != nil {
						return err
					}
					if c.Rank() == 0 {
						runtime.GC()
						runtime.ReadMemStats(&after)
					}
					if err := c.Barrier(ctx); err != nil {
						return err
					}
					for _, s := range subs {
						s.Close()
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(after.HeapAlloc-min(after.HeapAlloc, before.HeapAlloc))/float64(p*comms), "B/membership")
		})
	}
}
