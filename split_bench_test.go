package scoll_test

import (
	"context"
	"fmt"
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
			var per float64
			for range b.N {
				var err error
				if per, err = bytesPerMembership(p, comms, size); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(per, "B/membership")
		})
	}
}
