package scoll_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/matrix"
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
				if err := matrix.RunCaseWith(opts, coll, "fibonacci", p, 5, root, false, matrix.OpCases[int32]()[0]); err != nil {
					t.Fatalf("%s P=%d model %d: %v", coll, p, mi, err)
				}
			}
		}
	}
	checkBadCase(t, badCase{"negative L", 3, all, scoll.ErrInvalidArgument, func(ctx context.Context, c *scoll.Comm) error {
		return scoll.Bcast(ctx, c, []int32{1}, 0, scoll.WithAlgorithm("fibonacci"), scoll.WithLogP(-time.Microsecond, 0, time.Microsecond))
	}})
}

// TestFibonacciModelAgreed: named without WithLogP, the fibonacci trees
// take the communicator's LogP model (from the parameters file, here a
// test hook), rank 0's on every rank. Each rank's own model differs (the
// trees would not match without the agreement); rank 0's, L = 10 g, makes
// the root send to more children than the binomial tree's ⌈lg 8⌉ = 3,
// which the recording shows.
func TestFibonacciModelAgreed(t *testing.T) {
	const p, n = 8, 1000
	tr := recordRun(t, p, func(ctx context.Context, c *scoll.Comm) error {
		scoll.SetModelHookForTest(c, func(r int) (algorithms.Machine, *algorithms.LogP) {
			return algorithms.InProcess, &algorithms.LogP{L: 10 / float64(r+1), O: 0, G: 1}
		})
		buf := make([]byte, n)
		if c.Rank() == 0 {
			for i := range buf {
				buf[i] = byte(i)
			}
		}
		if err := scoll.Bcast(ctx, c, buf, 0, scoll.WithAlgorithm("fibonacci")); err != nil {
			return err
		}
		for i, v := range buf {
			if v != byte(i) {
				return fmt.Errorf("rank %d: byte %d = %d", c.Rank(), i, v)
			}
		}
		return nil
	})
	kids := 0
	for _, rd := range tr.Ranks[0] {
		for _, o := range rd {
			if !o.Recv && o.Bytes == n {
				kids++
			}
		}
	}
	parent, _, _ := algorithms.FibonacciTree(p, algorithms.LogP{L: 10, O: 0, G: 1})
	want := 0
	for _, q := range parent {
		if q == 0 {
			want++
		}
	}
	if kids != want || want <= 3 {
		t.Errorf("the root sent the item to %d children, want %d (rank 0's model, L = 10 g)", kids, want)
	}
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
