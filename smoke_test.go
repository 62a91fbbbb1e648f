package scoll_test

import (
	"context"
	"testing"

	"github.com/scoll/scoll"
)

func TestSmoke(t *testing.T) {
	for _, p := range []int{1, 2, 3, 5, 8} {
		err := scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
			send := []float64{float64(c.Rank()), 1}
			recv := make([]float64, 2)
			if err := scoll.Allreduce(ctx, c, send, recv, scoll.Sum, scoll.WithAlgorithm("recursive-doubling")); err != nil {
				return err
			}
			want := float64(p*(p-1)) / 2
			if recv[0] != want || recv[1] != float64(p) {
				t.Errorf("rank %d: %v", c.Rank(), recv)
			}
			g := make([]int32, 2*p)
			if err := scoll.Allgather(ctx, c, []int32{int32(c.Rank()), 7}, g); err != nil {
				return err
			}
			for i := 0; i < p; i++ {
				if g[2*i] != int32(i) || g[2*i+1] != 7 {
					t.Errorf("rank %d: allgather %v", c.Rank(), g)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("P=%d: %v", p, err)
		}
	}
}
