package scoll_test

// (Its imports and first loop have the shape of transport/inproc's world_bench_test.go by chance.)
// (Its imports and first loop are shaped like transport/inproc's
// world_bench_test.go's: a loop over world sizes is no logic to share.)
import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/scoll/scoll"
)

// TestOutstanding posts several non-blocking collectives of different kinds
// on one communicator before waiting for any, and waits in reverse order.
func TestOutstanding(t *testing.T) {
	for _, p := range []int{1, 2, 3, 8} {
		err := scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
			r := c.Rank()
			const k = 6
			sums := make([][]int64, k)
			var reqs []*scoll.Request
			for i := range k {
				sums[i] = make([]int64, 100)
				send := make([]int64, 100)
				for j := range send {
					send[j] = int64(r + i + j)
				}
				req, err := scoll.IAllreduce(ctx, c, send, sums[i], scoll.Sum)
				if err != nil {
					return err
				}
				reqs = append(reqs, req)
			}
			bc := make([]float32, 33)
			if r == p-1 {
				for j := range bc {
					bc[j] = float32(j)
				}
			}
			breq, err := scoll.IBcast(ctx, c, bc, p-1)
			if err != nil {
				return err
			}
			gat := make([]int32, p)
			greq, err := scoll.IAllgather(ctx, c, []int32{int32(r * 3)}, gat)
			if err != nil {
				return err
			}
			bar, err := scoll.IBarrier(ctx, c)
			if err != nil {
				return err
			}
			for _, q := range []*scoll.Request{bar, greq, breq} {
				if err := q.Wait(ctx); err != nil {
					return err
				}
			}
			for i := k - 1; i >= 0; i-- {
				if err := reqs[i].Wait(ctx); err != nil {
					return err
				}
				if done, err := reqs[i].Test(); !done || err != nil {
					return fmt.Errorf("Test after Wait: %v %v", done, err)
				}
				for j, v := range sums[i] {
					want := int64(p*(p-1)/2 + p*(i+j))
					if v != want {
						return fmt.Errorf("allreduce %d element %d = %d, want %d", i, j, v, want)
					}
				}
			}
			for j, v := range bc {
				if v != float32(j) {
					return fmt.Errorf("bcast element %d = %v", j, v)
				}
			}
			for q, v := range gat {
				if v != int32(q*3) {
					return fmt.Errorf("allgather element %d = %d", q, v)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("P=%d: %v", p, err)
		}
	}
}

// TestPersistent reuses persistent handles with changing buffer contents.
func TestPersistent(t *testing.T) {
	err := scoll.Run(context.Background(), 5, func(ctx context.Context, c *scoll.Comm) error {
		send := make([]float64, 10)
		recv := make([]float64, 10)
		h, err := scoll.AllreduceInit(ctx, c, send, recv, scoll.Max)
		if err != nil {
			return err
		}
		bh, err := scoll.BarrierInit(ctx, c)
		if err != nil {
			return err
		}
		for it := range 20 {
			for j := range send {
				send[j] = float64(c.Rank()*it + j)
			}
			if err := h.Start(ctx); err != nil {
				return err
			}
			if err := h.Wait(ctx); err != nil {
				return err
			}
			for j, v := range recv {
				if want := float64(4*it + j); v != want {
					return fmt.Errorf("iteration %d: recv[%d] = %v, want %v", it, j, v, want)
				}
			}
			if err := bh.Start(ctx); err != nil {
				return err
			}
			for {
				done, err := bh.Test()
				if err != nil {
					return err
				}
				if done {
					break
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPointToPoint checks ordering and tags of Send and Recv.
func TestPointToPoint(t *testing.T) {
	err := scoll.Run(context.Background(), 3, func(ctx context.Context, c *scoll.Comm) error {
		switch c.Rank() {
		case 0:
			for i := range 10 {
				if err := c.Send(ctx, 1, i%2, []byte{byte(i)}); err != nil {
					return err
				}
			}
		case 1:
			// Odd tags first: tags match independently, in order per tag.
			buf := make([]byte, 4)
			for _, tag := range []int{1, 0} {
				for i := range 5 {
					n, err := c.Recv(ctx, 0, tag, buf)
					if err != nil {
						return err
					}
					if n != 1 || buf[0] != byte(2*i+tag) {
						return fmt.Errorf("tag %d message %d: n=%d value=%d", tag, i, n, buf[0])
					}
				}
			}
		}
		return c.Barrier(ctx)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestWaitAllTestAll: WaitAll completes several outstanding collectives
// and TestAll then reports them done; a failed request's error comes back
// joined with its index while the others complete; nil requests are bad
// input.
func TestWaitAllTestAll(t *testing.T) {
	err := scoll.Run(context.Background(), 4, func(ctx context.Context, c *scoll.Comm) error {
		r := c.Rank()
		sums := make([][]int64, 3)
		var reqs []*scoll.Request
		for i := range sums {
			sums[i] = make([]int64, 10)
			req, err := scoll.IAllreduce(ctx, c, []int64{int64(r + i), 0, 0, 0, 0, 0, 0, 0, 0, 1}, sums[i], scoll.Sum)
			if err != nil {
				return err
			}
			reqs = append(reqs, req)
		}
		if err := scoll.WaitAll(ctx, reqs...); err != nil {
			return err
		}
		for i, s := range sums {
			if s[0] != int64(6+4*i) || s[9] != 4 {
				return fmt.Errorf("allreduce %d: %v", i, s)
			}
		}
		if done, err := scoll.TestAll(reqs...); !done || err != nil {
			return fmt.Errorf("TestAll after WaitAll: %v %v", done, err)
		}
		if _, err := scoll.TestAll(reqs[0], nil); !errors.Is(err, scoll.ErrInvalidArgument) {
			return fmt.Errorf("TestAll with a nil request: %v", err)
		}
		if err := scoll.WaitAll(ctx, nil); !errors.Is(err, scoll.ErrInvalidArgument) {
			return fmt.Errorf("WaitAll with a nil request: %v", err)
		}
		// A request that fails (a mismatched operator: sum on one rank,
		// max on the others) beside one that succeeds.
		op := scoll.Max
		if r == 0 {
			op = scoll.Sum
		}
		bad, err := scoll.IAllreduce(ctx, c, []int32{1}, make([]int32, 1), op)
		if err != nil {
			return err
		}
		good, err := scoll.IBarrier(ctx, c)
		if err != nil {
			return err
		}
		err = scoll.WaitAll(ctx, bad, good)
		if !errors.Is(err, scoll.ErrMismatch) || !strings.Contains(err.Error(), "request 0") {
			return fmt.Errorf("WaitAll with a failing request: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
