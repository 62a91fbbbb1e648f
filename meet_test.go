package scoll_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/matrix"
)

// meetSizes are rank counts above GOMAXPROCS, where small allreduce, reduce,
// bcast and barrier calls with the default algorithm run as shared-memory
// meetings.
func meetSizes() []int {
	c := runtime.GOMAXPROCS(0)
	return []int{c + 1, 2*c + 3, max(64, c+1)}
}

func TestMeetAllreduce(t *testing.T) {
	for _, p := range meetSizes() {
		for _, n := range []int{0, 1, 3, 1000} {
			for _, inPlace := range []bool{false, true} {
				for _, oc := range matrix.OpCases[int32]() {
					if err := matrix.RunCase("allreduce", "", p, n, 0, inPlace, oc); err != nil {
						t.Fatalf("int32 P=%d n=%d inplace=%v op=%s: %v", p, n, inPlace, oc.Name, err)
					}
				}
				for _, oc := range matrix.OpCases[float64]() {
					if err := matrix.RunCase("allreduce", "", p, n, 0, inPlace, oc); err != nil {
						t.Fatalf("float64 P=%d n=%d inplace=%v op=%s: %v", p, n, inPlace, oc.Name, err)
					}
				}
			}
		}
		if err := matrix.RunCase("barrier", "", p, 0, 0, false, matrix.OpCase[int32]{}); err != nil {
			t.Fatalf("barrier P=%d: %v", p, err)
		}
		for _, root := range []int{0, p / 2, p - 1} {
			for _, n := range []int{0, 1, 3, 1000} {
				if err := matrix.RunCase("bcast", "", p, n, root, false, matrix.OpCase[float64]{}); err != nil {
					t.Fatalf("bcast P=%d n=%d root=%d: %v", p, n, root, err)
				}
				for _, inPlace := range []bool{false, true} {
					for _, oc := range matrix.OpCases[int32]() {
						if err := matrix.RunCase("reduce", "", p, n, root, inPlace, oc); err != nil {
							t.Fatalf("reduce P=%d n=%d root=%d inplace=%v op=%s: %v", p, n, root, inPlace, oc.Name, err)
						}
					}
				}
			}
		}
	}
}

// TestMeetOrdering checks that meetings keep the program order of calls:
// non-blocking meetings outstanding together, then many blocking ones.
func TestMeetOrdering(t *testing.T) {
	p := meetSizes()[1]
	err := scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
		var reqs []*scoll.Request
		outs := make([][]int64, 5)
		for i := range outs {
			outs[i] = make([]int64, 2)
			r, err := scoll.IAllreduce(ctx, c, []int64{int64(i), int64(c.Rank())}, outs[i], scoll.Sum)
			if err != nil {
				return err
			}
			reqs = append(reqs, r)
		}
		for i, r := range reqs {
			if err := r.Wait(ctx); err != nil {
				return err
			}
			if outs[i][0] != int64(i*p) || outs[i][1] != int64(p*(p-1)/2) {
				return fmt.Errorf("request %d: %v", i, outs[i])
			}
		}
		for i := range 200 {
			out := make([]int32, 1)
			if err := scoll.Allreduce(ctx, c, []int32{int32(i)}, out, scoll.Max); err != nil {
				return err
			}
			if out[0] != int32(i) {
				return fmt.Errorf("call %d: %d", i, out[0])
			}
		}
		return c.Barrier(ctx)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestMeetFailures(t *testing.T) {
	p := meetSizes()[0]
	run := func(fn func(ctx context.Context, c *scoll.Comm) error) (error, []error) {
		return runRanksWith(t, p, fn)
	}
	// Different counts: a mismatch.
	err, errs := run(func(ctx context.Context, c *scoll.Comm) error {
		n := 2 + c.Rank()%2
		return scoll.Allreduce(ctx, c, make([]int32, n), make([]int32, n), scoll.Sum)
	})
	if !errors.Is(err, scoll.ErrMismatch) {
		t.Errorf("mismatch: Run returned %v (%v)", err, errs)
	}
	// A rank that never comes: the others fail instead of waiting forever.
	err, errs = run(func(ctx context.Context, c *scoll.Comm) error {
		if c.Rank() == 1 {
			return fmt.Errorf("%w: gone", scoll.ErrInvalidArgument)
		}
		return scoll.Allreduce(ctx, c, make([]int32, 1), make([]int32, 1), scoll.Sum)
	})
	for r, e := range errs {
		if e == nil || !typed(e) {
			t.Errorf("absent rank: rank %d returned %v", r, e)
		}
	}
	// A rank's own deadline.
	err, errs = run(func(ctx context.Context, c *scoll.Comm) error {
		if c.Rank() != 0 {
			return absent(ctx)
		}
		dctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		err := scoll.Allreduce(dctx, c, make([]int32, 1), make([]int32, 1), scoll.Sum)
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, scoll.ErrCanceled) {
			return fmt.Errorf("deadline: %v", err)
		}
		return err
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline: Run returned %v (%v)", err, errs)
	}
}
