package scoll_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/matrix"
	"github.com/scoll/scoll/transport/tcp"
)

// TestCallSitePredicts: rank P−1 is 3 ms late at every call of a site;
// after the first sharing the site predicts it late, the clairvoyant
// reduce uses the prediction and stays correct, and a steady prediction
// keeps one plan.
func TestCallSitePredicts(t *testing.T) {
	const p, calls, late = 6, 12, 3 * time.Millisecond
	err := scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
		send := make([]int32, 64)
		for i := range send {
			send[i] = int32(c.Rank() + i)
		}
		recv := make([]int32, len(send))
		plans := 0
		for k := range calls {
			if c.Rank() == p-1 {
				time.Sleep(late)
			}
			err := scoll.Reduce(ctx, c, send, recv, scoll.Sum, 0, scoll.WithAlgorithm("clairvoyant"),
				scoll.WithCallSite("loop"), scoll.WithSegments(4), scoll.WithRoundTime(200*time.Microsecond))
			if err != nil {
				return err
			}
			if c.Rank() == 0 {
				for i, v := range recv {
					if want := int32(p*i + p*(p-1)/2); v != want {
						t.Errorf("call %d: element %d = %d, want %d", k, i, v, want)
						break
					}
				}
			}
			if k == calls/2 {
				plans = scoll.PlansForTest(c)
			}
		}
		pred := scoll.PredictionForTest(c, "loop")
		if len(pred) != p {
			t.Errorf("rank %d: prediction %v", c.Rank(), pred)
			return nil
		}
		for r, a := range pred[:p-1] {
			if a >= pred[p-1] {
				t.Errorf("rank %d: rank %d predicted at %v, not before the late rank's %v", c.Rank(), r, a, pred[p-1])
			}
		}
		if pred[p-1] < late/2 {
			t.Errorf("rank %d: late rank predicted at %v", c.Rank(), pred[p-1])
		}
		// The sharing's allgather plan and a handful of clairvoyant plans
		// (the prediction moves by whole rounds only when the noise does).
		if n := scoll.PlansForTest(c); n > plans+calls/2 {
			t.Errorf("rank %d: %d plans after %d calls (%d at call %d)", c.Rank(), n, calls, plans, calls/2)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCallSitePredictor: a custom predictor's times reach the schedule
// (every rank predicts alike); sharing every 3 calls.
func TestCallSitePredictor(t *testing.T) {
	err := scoll.Run(context.Background(), 4, func(ctx context.Context, c *scoll.Comm) error {
		newP := func() scoll.Predictor {
			return &fixed{a: []time.Duration{0, time.Millisecond, 0, 2 * time.Millisecond}}
		}
		recv := make([]float64, 10)
		for range 7 {
			err := scoll.Reduce(ctx, c, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, recv, scoll.Sum, 2, scoll.WithAlgorithm("clairvoyant"),
				scoll.WithCallSite("s"), scoll.WithShareEvery(3), scoll.WithPredictor(newP))
			if err != nil {
				return err
			}
			if c.Rank() == 2 && recv[9] != 40 {
				t.Errorf("sum %v", recv)
			}
		}
		if got := scoll.PredictionForTest(c, "s"); len(got) != 4 || got[3] != 2*time.Millisecond {
			t.Errorf("prediction %v", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCallSitePersistent: a persistent reduce at a call site predicts the
// late rank and follows the prediction at each Start.
func TestCallSitePersistent(t *testing.T) {
	const p, late = 4, 2 * time.Millisecond
	err := scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
		send, recv := []int32{1, 2, 3, 4, 5, 6, 7, 8}, make([]int32, 8)
		req, err := scoll.ReduceInit(ctx, c, send, recv, scoll.Sum, 1, scoll.WithAlgorithm("clairvoyant"),
			scoll.WithCallSite("persistent"), scoll.WithSegments(2), scoll.WithRoundTime(100*time.Microsecond))
		if err != nil {
			return err
		}
		for range 6 {
			if c.Rank() == 2 {
				time.Sleep(late)
			}
			if err := req.Start(ctx); err != nil {
				return err
			}
			if err := req.Wait(ctx); err != nil {
				return err
			}
			if c.Rank() == 1 && recv[7] != 32 {
				t.Errorf("sum %v", recv)
			}
		}
		pred := scoll.PredictionForTest(c, "persistent")
		if len(pred) != p || pred[2] < late/2 || pred[0] >= pred[2] {
			t.Errorf("rank %d: prediction %v", c.Rank(), pred)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

type fixed struct {
	a    []time.Duration
	seen int
}

func (f *fixed) Observe([]time.Duration) { f.seen++ }
func (f *fixed) Predict() []time.Duration {
	if f.seen == 0 {
		return nil
	}
	return f.a
}

// TestCallSiteClockOffsetTCP: over TCP the ranks estimate their clock
// offsets at the first call (one process: near zero).
func TestCallSiteClockOffsetTCP(t *testing.T) {
	comms := matrix.TCPComms(t, 3, tcp.Config{})
	err := matrix.OnAll(comms, func(ctx context.Context, c *scoll.Comm) error {
		recv := make([]int64, 4)
		for range 3 {
			if err := scoll.Reduce(ctx, c, []int64{1, 2, 3, 4}, recv, scoll.Sum, 0, scoll.WithAlgorithm("clairvoyant"), scoll.WithCallSite("x")); err != nil {
				return err
			}
		}
		off, ok := scoll.ClockOffsetForTest(c)
		if !ok || off > 5*time.Millisecond || off < -5*time.Millisecond {
			t.Errorf("rank %d: offset %v (estimated %v)", c.Rank(), off, ok)
		}
		if c.Rank() == 0 && recv[3] != 12 {
			t.Errorf("sum %v", recv)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCallSiteBadInput(t *testing.T) {
	checkBadCase(t, badCase{"share every 0 calls", 3, all, scoll.ErrInvalidArgument, func(ctx context.Context, c *scoll.Comm) error {
		return scoll.Reduce(ctx, c, []int32{1}, make([]int32, 1), scoll.Sum, 0, scoll.WithCallSite("a"), scoll.WithShareEvery(0))
	}})
}

func ExampleWithCallSite() {
	// A loop's reduction at one call site: scoll measures when each rank
	// arrives, shares the measurements every 4 calls, and the clairvoyant
	// reduce follows the predicted arrivals from then on.
	scoll.Run(context.Background(), 4, func(ctx context.Context, c *scoll.Comm) error {
		send, recv := []int64{int64(c.Rank())}, make([]int64, 1)
		for it := range 8 {
			if c.Rank() == 3 {
				time.Sleep(200 * time.Microsecond) // rank 3 always works longer
			}
			err := scoll.Reduce(ctx, c, send, recv, scoll.Sum, 0, scoll.WithAlgorithm("clairvoyant"),
				scoll.WithCallSite("loop"), scoll.WithShareEvery(4))
			if err != nil {
				return err
			}
			if c.Rank() == 0 && it == 7 {
				fmt.Println("sum of ranks:", recv[0])
			}
		}
		return nil
	})
	// Output: sum of ranks: 6
}
