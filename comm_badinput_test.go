package scoll_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/scoll/scoll"
)

// commBadCases are the bad-input cases of the communicator constructors
// (run in process by TestBadInput and over TCP by TestBadInputTCP).
func commBadCases() []badCase {
	inv, mis := scoll.ErrInvalidArgument, scoll.ErrMismatch
	// Differences between ranks are found by the agreement's collective:
	// at least one rank reports them; the others may see the cancellation
	// or failure that follows when a rank returns first.
	none := func(int) bool { return false }
	split := func(ctx context.Context, c *scoll.Comm, opts ...scoll.SplitOption) error {
		sub, err := c.Split(ctx, c.Rank()%2, 0, opts...)
		if sub != nil {
			sub.Close()
		}
		return err
	}
	create := func(ctx context.Context, c *scoll.Comm, ranks []int) error {
		sub, err := c.Create(ctx, ranks)
		if sub != nil {
			sub.Close()
		}
		return err
	}
	return []badCase{
		{"split algorithms differ", 4, none, mis, func(ctx context.Context, c *scoll.Comm) error {
			return split(ctx, c, scoll.WithSplitAlgorithm([]string{"merge", "cheng"}[c.Rank()/2]))
		}},
		{"split sorters differ", 4, none, mis, func(ctx context.Context, c *scoll.Comm) error {
			return split(ctx, c, scoll.WithSplitAlgorithm("cheng"), scoll.WithSorters(2+c.Rank()%2))
		}},
		{"split group sizes differ", 3, none, mis, func(ctx context.Context, c *scoll.Comm) error {
			return split(ctx, c, scoll.WithDistributedGroup(1+c.Rank()))
		}},
		{"split unknown algorithm on one rank", 4, rank(2), inv, func(ctx context.Context, c *scoll.Comm) error {
			alg := "merge"
			if c.Rank() == 2 {
				alg = "no-such"
			}
			return split(ctx, c, scoll.WithSplitAlgorithm(alg))
		}},
		{"split more sorters than ranks", 3, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return split(ctx, c, scoll.WithSplitAlgorithm("cheng"), scoll.WithSorters(4))
		}},
		{"split negative group", 2, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return split(ctx, c, scoll.WithDistributedGroup(-2))
		}},
		{"split on one rank, dup on the others", 3, none, mis, func(ctx context.Context, c *scoll.Comm) error {
			if c.Rank() == 0 {
				return split(ctx, c)
			}
			d, err := c.Dup(ctx)
			if d != nil {
				d.Close()
			}
			return err
		}},
		{"create with a duplicate rank", 4, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return create(ctx, c, []int{0, 2, 0})
		}},
		{"create with a rank out of range", 3, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return create(ctx, c, []int{1, 3})
		}},
		{"create with a negative rank", 3, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			return create(ctx, c, []int{-1, 0})
		}},
		{"create lists differ", 4, none, mis, func(ctx context.Context, c *scoll.Comm) error {
			ranks := []int{0, 1, 2}
			if c.Rank() == 3 {
				ranks = []int{0, 2, 1}
			}
			return create(ctx, c, ranks)
		}},
		{"split grid of the wrong size", 4, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			g, err := c.SplitGrid(ctx, []int{3, 2}, []bool{true, false})
			if g != nil {
				g.Close()
			}
			return err
		}},
		{"split grid keep flags missing", 4, all, inv, func(ctx context.Context, c *scoll.Comm) error {
			g, err := c.SplitGrid(ctx, []int{2, 2}, []bool{true})
			if g != nil {
				g.Close()
			}
			return err
		}},
		{"collective after closing a derived communicator", 3, all, scoll.ErrClosed, func(ctx context.Context, c *scoll.Comm) error {
			d, err := c.Dup(ctx)
			if err != nil {
				return fmt.Errorf("dup: %w", err)
			}
			d.Close()
			if err := c.Barrier(ctx); err != nil { // the world still works
				return fmt.Errorf("barrier on the parent: %w", err)
			}
			return scoll.Allreduce(ctx, d, []int32{1}, []int32{0}, scoll.Sum)
		}},
		{"split of a closed derived communicator", 2, all, scoll.ErrClosed, func(ctx context.Context, c *scoll.Comm) error {
			d, err := c.Dup(ctx)
			if err != nil {
				return fmt.Errorf("dup: %w", err)
			}
			d.Close()
			return split(ctx, d)
		}},
		{"derived communicator after the world closes", 2, all, scoll.ErrClosed, func(ctx context.Context, c *scoll.Comm) error {
			d, err := c.Dup(ctx)
			if err != nil {
				return fmt.Errorf("dup: %w", err)
			}
			if err := c.Barrier(ctx); err != nil {
				return err
			}
			c.Close()
			return d.Send(ctx, 0, 0, nil)
		}},
		{"split with a cancelled context on one rank", 3, rank(1), scoll.ErrCanceled, func(ctx context.Context, c *scoll.Comm) error {
			if c.Rank() == 1 {
				cctx, cancel := context.WithCancel(ctx)
				cancel()
				ctx = cctx
			}
			return split(ctx, c)
		}},
		{"context cancelled in the middle of a split", 4, rank(0), scoll.ErrCanceled, func(ctx context.Context, c *scoll.Comm) error {
			if c.Rank() == 0 {
				cctx, cancel := context.WithCancel(ctx)
				defer cancel()
				scoll.SetSplitHookForTest(c, func(round int) {
					if round == 1 {
						cancel()
					}
				})
				defer scoll.SetSplitHookForTest(c, nil)
				ctx = cctx
			}
			err := split(ctx, c, scoll.WithSplitAlgorithm("cheng"), scoll.WithSorters(2))
			if c.Rank() == 0 && !errors.Is(err, context.Canceled) {
				return fmt.Errorf("%v does not match context.Canceled", err)
			}
			return err
		}},
	}
}
