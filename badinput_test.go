package scoll_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/scoll/scoll"
)

var sentinels = []error{scoll.ErrInvalidArgument, scoll.ErrUnsupported, scoll.ErrPeerFailed,
	scoll.ErrCanceled, scoll.ErrMismatch, scoll.ErrClosed}

func typed(err error) bool {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// badCase is a call that is wrong on some ranks. bad tells which ranks are
// at fault; they must fail with want. Every other rank must return, never
// hang: with a typed error (the peer failure or cancellation that follows)
// or, if its own part completed before the fault, nil.
type badCase struct {
	name string
	p    int
	bad  func(r int) bool
	want error
	call func(ctx context.Context, c *scoll.Comm) error
}

// mayPass lists mismatch cases in which ranks whose own part of the call
// happened to be consistent may complete it; at least one rank must report
// the mismatch and none may hang.
var mayPass = map[string]bool{
	"ranks call different collectives": true,
	"ranks pass different roots":       true,
	"ranks pass different v-counts":    true,
}

func all(int) bool              { return true }
func rank(k int) func(int) bool { return func(r int) bool { return r == k } }

func badCases() []badCase {
	f64 := func(n int) []float64 { return make([]float64, n) }
	i32 := func(n int) []int32 { return make([]int32, n) }
	inv, uns, mis := scoll.ErrInvalidArgument, scoll.ErrUnsupported, scoll.ErrMismatch
	cases := []badCase{
		{"allreduce lengths differ", 4, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Allreduce(ctx, c, f64(3), f64(4), scoll.Sum)
		}},
		{"allreduce lengths differ on one rank", 4, rank(2), inv, func(ctx context.Context, c *scoll.Comm) error {
			n := 4
			if c.Rank() == 2 {
				n = 5
			}
			return scoll.Allreduce(ctx, c, f64(4), f64(n), scoll.Sum)
		}},
		{"allgather recv too short", 3, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Allgather(ctx, c, i32(2), i32(5))
		}},
		{"bcast negative root", 4, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Bcast(ctx, c, i32(2), -1)
		}},
		{"bcast root = size", 4, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Bcast(ctx, c, i32(2), 4)
		}},
		{"reduce root out of range", 3, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Reduce(ctx, c, i32(2), i32(2), scoll.Sum, 7)
		}},
		{"gather recv wrong at root", 4, rank(0), inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Gather(ctx, c, i32(2), i32(7), 0)
		}},
		{"scatter send wrong at root", 4, rank(1), inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Scatter(ctx, c, i32(7), i32(2), 1)
		}},
		{"alltoall not a multiple of size", 3, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Alltoall(ctx, c, i32(4), i32(4))
		}},
		{"reducescatter send wrong", 4, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.ReduceScatterBlock(ctx, c, i32(7), i32(2), scoll.Sum)
		}},
		{"gatherv counts length", 4, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Gatherv(ctx, c, i32(1), i32(4), []int{1, 1, 1}, nil, 0)
		}},
		{"gatherv negative count", 3, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Gatherv(ctx, c, i32(1), i32(4), []int{1, -1, 1}, nil, 0)
		}},
		{"allgatherv overlapping displacements", 3, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Allgatherv(ctx, c, i32(2), i32(6), []int{2, 2, 2}, []int{0, 1, 4})
		}},
		{"allgatherv negative displacement", 3, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Allgatherv(ctx, c, i32(2), i32(6), []int{2, 2, 2}, []int{0, -2, 4})
		}},
		{"scatterv send too short", 3, rank(0), inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Scatterv(ctx, c, i32(3), i32(2), []int{2, 2, 2}, nil, 0)
		}},
		{"alltoallv recv too short", 2, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Alltoallv(ctx, c, i32(4), []int{2, 2}, nil, i32(3), []int{2, 2}, nil)
		}},
		{"alltoallv in place", 2, all, uns, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Alltoallv(ctx, c, nil, []int{2, 2}, nil, i32(4), []int{2, 2}, nil)
		}},
		{"reducescatterv counts do not sum", 3, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.ReduceScatter(ctx, c, i32(5), i32(2), []int{2, 2, 2}, scoll.Sum)
		}},
		{"bitwise op on floats", 2, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Allreduce(ctx, c, f64(2), f64(2), scoll.Band)
		}},
		{"logical op on floats", 2, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Reduce(ctx, c, f64(2), f64(2), scoll.Land, 0)
		}},
		{"zero op", 2, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Allreduce(ctx, c, f64(2), f64(2), scoll.Op{})
		}},
		{"user op of another type", 2, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			op := scoll.UserOp(func(inout, in []int32) {}, true)
			return scoll.Allreduce(ctx, c, f64(2), f64(2), op)
		}},
		{"unknown algorithm", 3, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Allreduce(ctx, c, f64(2), f64(2), scoll.Sum, scoll.WithAlgorithm("no-such"))
		}},
		{"non-commutative op on commutative-only algorithm", 4, all, uns, func(ctx context.Context, c *scoll.Comm) error {
			op := scoll.UserOp(func(inout, in []float64) {}, false)
			return scoll.Allreduce(ctx, c, f64(8), f64(8), op, scoll.WithAlgorithm(commutativeOnly()))
		}},
		{"power-of-two algorithm on 3 ranks", 3, all, uns, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Allgather(ctx, c, i32(2), i32(6), scoll.WithAlgorithm(powerOfTwoOnly()))
		}},
		{"negative segment size", 2, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Allreduce(ctx, c, f64(2), f64(2), scoll.Sum, scoll.WithSegmentSize(-8))
		}},
		{"radix 1", 2, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Bcast(ctx, c, f64(2), 0, scoll.WithRadix(1))
		}},
		{"radix vector product not the size", 6, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Reduce(ctx, c, f64(4), f64(4), scoll.Sum, 0, scoll.WithAlgorithm("radix-k"), scoll.WithRadixVector(2, 2))
		}},
		{"radix vector entry 1", 4, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Reduce(ctx, c, f64(4), f64(4), scoll.Sum, 0, scoll.WithAlgorithm("radix-k"), scoll.WithRadixVector(1, 4))
		}},
		{"radix vector with radix", 4, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Reduce(ctx, c, f64(4), f64(4), scoll.Sum, 0, scoll.WithRadix(2), scoll.WithRadixVector(2, 2))
		}},
		{"cancelled context", 3, all, scoll.ErrCanceled, func(ctx context.Context, c *scoll.Comm) error {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			err := scoll.Allreduce(cctx, c, f64(2), f64(2), scoll.Sum)
			if !errors.Is(err, context.Canceled) {
				return fmt.Errorf("%v does not match context.Canceled", err)
			}
			return err
		}},
		{"deadline while a rank is absent", 3, rank(0), scoll.ErrCanceled, func(ctx context.Context, c *scoll.Comm) error {
			if c.Rank() != 0 {
				return absent(ctx) // never joins; released when rank 0 fails
			}
			dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			err := scoll.Allreduce(dctx, c, f64(2), f64(2), scoll.Sum)
			if !errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("%v does not match context.DeadlineExceeded", err)
			}
			return err
		}},
		{"ranks call different collectives", 4, func(r int) bool { return false }, mis, func(ctx context.Context, c *scoll.Comm) error {
			if c.Rank()%2 == 0 {
				return scoll.Allreduce(ctx, c, f64(2), f64(2), scoll.Sum)
			}
			return scoll.Bcast(ctx, c, f64(2), 0)
		}},
		{"ranks pass different roots", 3, func(r int) bool { return false }, mis, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Bcast(ctx, c, f64(2), c.Rank()%2)
		}},
		{"ranks pass different v-counts", 3, func(r int) bool { return false }, mis, func(ctx context.Context, c *scoll.Comm) error {
			counts := []int{1, 1, 1}
			if c.Rank() == 1 {
				counts = []int{1, 1, 2}
				return scoll.Allgatherv(ctx, c, i32(1), i32(4), counts, nil)
			}
			return scoll.Allgatherv(ctx, c, i32(1), i32(3), counts, nil)
		}},
		{"one rank leaves early", 3, rank(1), scoll.ErrInvalidArgument, func(ctx context.Context, c *scoll.Comm) error {
			if c.Rank() == 1 {
				return fmt.Errorf("%w: rank gives up", scoll.ErrInvalidArgument)
			}
			return scoll.Allreduce(ctx, c, f64(2), f64(2), scoll.Sum)
		}},
		{"send to invalid rank", 2, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return c.Send(ctx, 5, 0, []byte("x"))
		}},
		{"receive with negative tag", 2, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			_, err := c.Recv(ctx, 0, -1, make([]byte, 1))
			return err
		}},
		{"receive buffer too short", 2, rank(1), inv, func(ctx context.Context, c *scoll.Comm) error {
			if c.Rank() == 0 {
				if err := c.Send(ctx, 1, 3, []byte("hello")); err != nil {
					return err
				}
				return absent(ctx)
			}
			_, err := c.Recv(ctx, 0, 3, make([]byte, 2))
			return err
		}},
		{"persistent started twice", 2, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			h, err := scoll.AllreduceInit(ctx, c, f64(2), f64(2), scoll.Sum)
			if err != nil {
				return fmt.Errorf("init: %w", err)
			}
			if err := h.Start(ctx); err != nil {
				return fmt.Errorf("start: %w", err)
			}
			err = h.Start(ctx)
			if werr := h.Wait(ctx); werr != nil {
				return fmt.Errorf("wait: %w", werr)
			}
			return err
		}},
		{"wait without start", 2, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			h, err := scoll.BarrierInit(ctx, c)
			if err != nil {
				return fmt.Errorf("init: %w", err)
			}
			return h.Wait(ctx)
		}},
		{"nil communicator", 1, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Allreduce(ctx, nil, f64(1), f64(1), scoll.Sum)
		}},
		{"nil request", 1, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			var r *scoll.Request
			return r.Wait(ctx)
		}},
	}
	return append(cases, commBadCases()...)
}

// absent waits until Run cancels the rank.
func absent(ctx context.Context) error {
	<-ctx.Done()
	return fmt.Errorf("%w: %w", scoll.ErrCanceled, context.Cause(ctx))
}

// commutativeOnly returns an allreduce algorithm that needs a commutative op.
func commutativeOnly() string {
	for _, a := range scoll.Algorithms("allreduce") {
		if a.Commutative {
			return a.Name
		}
	}
	return "ring"
}

// powerOfTwoOnly returns an allgather algorithm that needs 2^k ranks.
func powerOfTwoOnly() string {
	for _, a := range scoll.Algorithms("allgather") {
		if a.PowerOfTwo {
			return a.Name
		}
	}
	return "recursive-doubling"
}

func TestBadInput(t *testing.T) {
	cases := badCases()
	if len(cases) < 30 {
		t.Fatalf("only %d bad-input cases", len(cases))
	}
	for _, bc := range cases {
		t.Run(bc.name, func(t *testing.T) {
			t.Parallel()
			checkBadCase(t, bc)
		})
	}
}

// checkBadCase runs bc and checks the ranks' errors.
func checkBadCase(t *testing.T, bc badCase, opts ...scoll.Option) {
	t.Helper()
	errs := make([]error, bc.p)
	done := make(chan error, 1)
	go func() {
		done <- scoll.Run(context.Background(), bc.p, func(ctx context.Context, c *scoll.Comm) error {
			err := bc.call(ctx, c)
			errs[c.Rank()] = err
			return err
		}, opts...)
	}()
	var runErr error
	select {
	case runErr = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("hang: Run did not return")
	}
	if runErr == nil || !typed(runErr) {
		t.Fatalf("Run returned %v, want a typed error", runErr)
	}
	checkBadErrs(t, bc, errs)
}

// checkBadErrs checks the ranks' errors of bad case bc.
func checkBadErrs(t *testing.T, bc badCase, errs []error) {
	t.Helper()
	sawWant := false
	for r, err := range errs {
		// A rank that is not at fault may finish its own part before
		// the faulty rank fails (it then returns nil); one that
		// depends on the faulty rank gets a typed error.
		if err == nil && (mayPass[bc.name] || !bc.bad(r)) {
			continue
		}
		if err == nil || !typed(err) {
			t.Errorf("rank %d returned %v, want a typed error", r, err)
			continue
		}
		if errors.Is(err, bc.want) {
			sawWant = true
		}
		if bc.bad(r) && !errors.Is(err, bc.want) {
			t.Errorf("rank %d returned %v, want %v", r, err, bc.want)
		}
	}
	if !sawWant {
		t.Errorf("no rank returned %v: %v", bc.want, errs)
	}
}

func TestUseAfterRun(t *testing.T) {
	var kept *scoll.Comm
	if err := scoll.Run(context.Background(), 2, func(ctx context.Context, c *scoll.Comm) error {
		if c.Rank() == 0 {
			kept = c
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := scoll.Allreduce(ctx, kept, []int32{1}, []int32{0}, scoll.Sum); !errors.Is(err, scoll.ErrClosed) {
		t.Fatalf("allreduce after Run: %v", err)
	}
	if err := kept.Send(ctx, 1, 0, nil); !errors.Is(err, scoll.ErrClosed) {
		t.Fatalf("send after Run: %v", err)
	}
	if err := kept.Barrier(ctx); !errors.Is(err, scoll.ErrClosed) {
		t.Fatalf("barrier after Run: %v", err)
	}
}

func TestPanicIsReported(t *testing.T) {
	err := scoll.Run(context.Background(), 3, func(ctx context.Context, c *scoll.Comm) error {
		if c.Rank() == 1 {
			panic("boom")
		}
		return scoll.Allreduce(ctx, c, []int32{1}, []int32{0}, scoll.Sum)
	})
	if !errors.Is(err, scoll.ErrPeerFailed) {
		t.Fatalf("Run after a panic: %v", err)
	}
}

func TestRunArguments(t *testing.T) {
	ctx := context.Background()
	if err := scoll.Run(ctx, 0, func(context.Context, *scoll.Comm) error { return nil }); !errors.Is(err, scoll.ErrInvalidArgument) {
		t.Errorf("Run(0): %v", err)
	}
	if err := scoll.Run(ctx, 2, nil); !errors.Is(err, scoll.ErrInvalidArgument) {
		t.Errorf("Run(nil): %v", err)
	}
}
