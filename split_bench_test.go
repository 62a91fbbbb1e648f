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
