package scoll_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/scoll/scoll"
)

// TestFibonacciTrees: the fibonacci bcast and reduce under several LogP
// models give the naive results for P = 1 … 20 and every root.
func TestFibonacciTrees(t *testing.T) {
	models := []scoll.CallOption{nil, scoll.WithLogP(2*time.Microsecond, 0, time.Microsecond),
		scoll.WithLogP(600*time.Nanosecond, 4700*time.Nanosecond, 200*time.Nanosecond)}
	for p := 1; p <= 20; p++ {
		for mi, m := range models {
			opts := []scoll.CallOption{m}
			for _, coll := range []string{"bcast", "reduce"} {
				root := (p * (mi + 1)) % p
				if err := runCaseWith(opts, coll, "fibonacci", p, 5, root, false, opCases[int32]()[0]); err != nil {
					t.Fatalf("%s P=%d model %d: %v", coll, p, mi, err)
				}
			}
		}
	}
	checkBadCase(t, badCase{"negative L", 3, all, scoll.ErrInvalidArgument, func(ctx context.Context, c *scoll.Comm) error {
		return scoll.Bcast(ctx, c, []int32{1}, 0, scoll.WithAlgorithm("fibonacci"), scoll.WithLogP(-time.Microsecond, 0, time.Microsecond))
	}})
}

func ExampleWithLogP() {
	// On a network with a latency much larger than the gap, the optimal
	// broadcast tree is wider than the binomial tree: the root keeps
	// sending while its first children are still waiting.
	scoll.Run(context.Background(), 8, func(ctx context.Context, c *scoll.Comm) error {
		buf := make([]float64, 4)
		if c.Rank() == 0 {
			buf = []float64{1, 2, 3, 4}
		}
		err := scoll.Bcast(ctx, c, buf, 0, scoll.WithAlgorithm("fibonacci"),
			scoll.WithLogP(5*time.Microsecond, 500*time.Nanosecond, time.Microsecond))
		if err == nil && c.Rank() == 7 {
			fmt.Println(buf)
		}
		return err
	})
	// Output: [1 2 3 4]
}
