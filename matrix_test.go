package scoll_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/matrix"
)

// TestMatrixTransportPaths runs every algorithm with the in-process
// transport's lanes forced on and off, at sizes where the default would
// pick the other path; the exchange algorithm also with the transport's
// exchanges forced on and off (its native path and its messages).
func TestMatrixTransportPaths(t *testing.T) {
	matrix.SkipShort(t, "skipped in -short mode")
	matrix.EachAlgorithm(t, func(t *testing.T, coll string, alg scoll.AlgorithmInfo) {
		exchanges := []bool{true}
		if alg.Name == "exchange" {
			exchanges = []bool{true, false}
		}
		for _, exch := range exchanges {
			for _, lanes := range []bool{true, false} {
				for _, p := range []int{2, 3, 8, 17} {
					if alg.PowerOfTwo && p&(p-1) != 0 {
						continue
					}
					for _, n := range []int{0, 1, 3, 1000} {
						if coll == "barrier" && n > 0 {
							continue
						}
						oc := matrix.OpCases[int32]()[0]
						if err := matrix.RunCase(coll, alg.Name, p, n, p-1, false, oc, scoll.WithLanesForTest(lanes), scoll.WithExchangesForTest(exch)); err != nil {
							t.Fatalf("exchanges=%v lanes=%v P=%d n=%d: %v", exch, lanes, p, n, err)
						}
					}
				}
			}
		}
	})
}

// TestIntUint runs a reduction and a data-movement collective on int and
// uint elements, whose size is the platform's.
func TestIntUint(t *testing.T) {
	ctx := context.Background()
	err := scoll.Run(ctx, 5, func(ctx context.Context, c *scoll.Comm) error {
		r := c.Rank()
		ints := []int{r, -r, 1 << 30}
		sum := make([]int, 3)
		if err := scoll.Allreduce(ctx, c, ints, sum, scoll.Sum); err != nil {
			return err
		}
		if sum[0] != 10 || sum[1] != -10 || sum[2] != 5<<30 {
			return fmt.Errorf("int allreduce: %v", sum)
		}
		uints := make([]uint, 5)
		if err := scoll.Allgather(ctx, c, []uint{uint(r) << 29}, uints); err != nil {
			return err
		}
		for q, v := range uints {
			if v != uint(q)<<29 {
				return fmt.Errorf("uint allgather: %v", uints)
			}
		}
		band := []uint{^uint(0)}
		if err := scoll.Allreduce(ctx, c, []uint{^uint(1 << r)}, band, scoll.Band); err != nil {
			return err
		}
		if band[0] != ^uint(31) {
			return fmt.Errorf("uint band: %x", band[0])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
