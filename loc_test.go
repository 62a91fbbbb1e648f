package scoll_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/schedule"
)

// locVal is rank r's element i: values with many ties across ranks.
func locVal(r, i int) scoll.Loc[float64] {
	return scoll.Loc[float64]{V: float64((r*5 + i*3) % 4), I: int32(r)}
}

// locRef folds ranks lo..hi-1's element i with MinLoc (min) or MaxLoc.
func locRef(lo, hi, i int, min bool) scoll.Loc[float64] {
	acc := locVal(lo, i)
	for r := lo + 1; r < hi; r++ {
		v := locVal(r, i)
		if v.V < acc.V == min && v.V != acc.V {
			acc = v
		}
	}
	return acc
}

// TestMinMaxLoc: MinLoc and MaxLoc over Loc elements give the extreme
// value and, between equal values, the lower index, through every
// registered allreduce algorithm, the default reduce and scan, and the
// non-blocking and persistent forms; on plain numbers, and other
// operators on Loc elements, they fail with ErrInvalidArgument.
func TestMinMaxLoc(t *testing.T) {
	const P, n = 5, 7
	err := scoll.Run(context.Background(), P, func(ctx context.Context, c *scoll.Comm) error {
		r := c.Rank()
		send := make([]scoll.Loc[float64], n)
		for i := range send {
			send[i] = locVal(r, i)
		}
		check := func(what string, got []scoll.Loc[float64], lo, hi int, min bool) error {
			for i, v := range got {
				if want := locRef(lo, hi, i, min); v != want {
					return fmt.Errorf("%s: element %d = %+v, want %+v", what, i, v, want)
				}
			}
			return nil
		}
		for _, in := range algorithms.List(schedule.Allreduce) {
			if in.Name == algorithms.Clairvoyant {
				continue // its own tests; arrival times make no difference to the result
			}
			for _, op := range []scoll.Op{scoll.MinLoc, scoll.MaxLoc} {
				got := make([]scoll.Loc[float64], n)
				if err := scoll.Allreduce(ctx, c, send, got, op, scoll.WithAlgorithm(in.Name)); err != nil {
					return fmt.Errorf("allreduce/%s %s: %w", in.Name, op, err)
				}
				if err := check("allreduce/"+in.Name+" "+op.String(), got, 0, P, op == scoll.MinLoc); err != nil {
					return err
				}
			}
		}
		got := make([]scoll.Loc[float64], n)
		if err := scoll.Reduce(ctx, c, send, got, scoll.MaxLoc, 2); err != nil {
			return err
		}
		if r == 2 {
			if err := check("reduce", got, 0, P, false); err != nil {
				return err
			}
		}
		if err := scoll.Scan(ctx, c, send, got, scoll.MinLoc); err != nil {
			return err
		}
		if err := check("scan", got, 0, r+1, true); err != nil {
			return err
		}
		req, err := scoll.IAllreduce(ctx, c, send, got, scoll.MinLoc)
		if err != nil {
			return err
		}
		if err := req.Wait(ctx); err != nil {
			return err
		}
		if err := check("iallreduce", got, 0, P, true); err != nil {
			return err
		}
		ints := []scoll.Loc[int32]{{V: int32(r % 2), I: int32(r)}}
		pers, err := scoll.AllreduceInit(ctx, c, ints, make([]scoll.Loc[int32], 1), scoll.MaxLoc)
		if err != nil {
			return err
		}
		if err := pers.Start(ctx); err != nil {
			return err
		}
		if err := pers.Wait(ctx); err != nil {
			return err
		}
		if err := scoll.Allreduce(ctx, c, []float64{1}, make([]float64, 1), scoll.MinLoc); !errors.Is(err, scoll.ErrInvalidArgument) {
			return fmt.Errorf("MinLoc on float64: %v", err)
		}
		if err := scoll.Allreduce(ctx, c, send, got, scoll.Sum); !errors.Is(err, scoll.ErrInvalidArgument) {
			return fmt.Errorf("Sum on Loc: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func ExampleMinLoc() {
	// Which rank holds the smallest value, and what is it?
	scoll.Run(context.Background(), 4, func(ctx context.Context, c *scoll.Comm) error {
		mine := []scoll.Loc[float64]{{V: float64((c.Rank() + 2) % 4), I: int32(c.Rank())}}
		least := make([]scoll.Loc[float64], 1)
		if err := scoll.Allreduce(ctx, c, mine, least, scoll.MinLoc); err != nil {
			return err
		}
		if c.Rank() == 0 {
			fmt.Printf("least %v on rank %d\n", least[0].V, least[0].I)
		}
		return nil
	})
	// Output: least 0 on rank 2
}
