package scoll_test

import (
	"context"
	"fmt"

	"github.com/scoll/scoll"
)

func ExampleDoubleScan() {
	// Five ranks scan their rank numbers both ways at once: from the left
	// the sums 0+…+r, from the right r+…+4.
	got := make([]string, 5)
	err := scoll.Run(context.Background(), 5, func(ctx context.Context, c *scoll.Comm) error {
		send := []int32{int32(c.Rank())}
		left, right := make([]int32, 1), make([]int32, 1)
		if err := scoll.DoubleScan(ctx, c, send, left, right, scoll.Sum); err != nil {
			return err
		}
		got[c.Rank()] = fmt.Sprintf("rank %d: from the left %2d, from the right %2d", c.Rank(), left[0], right[0])
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	for _, s := range got {
		fmt.Println(s)
	}
	// Output:
	// rank 0: from the left  0, from the right 10
	// rank 1: from the left  1, from the right 10
	// rank 2: from the left  3, from the right  9
	// rank 3: from the left  6, from the right  7
	// rank 4: from the left 10, from the right  4
}

func ExampleDoubleExscan() {
	// On a communicator kept as a chain (here the ranks in reverse order),
	// an exclusive double scan with a non-commutative operator: the
	// concatenation of decimal digits, d1 ⊕ d2 = 10·d1 + d2, so that each
	// rank sees the digits of the ranks to its left and to its right in
	// order. The ends keep what they had (-1).
	concat := scoll.UserOp[int64](func(inout, in []int64) {
		for i := range inout {
			p := int64(10)
			for p <= inout[i] {
				p *= 10
			}
			inout[i] = in[i]*p + inout[i] // in holds the lower ranks
		}
	}, false)
	got := make([]string, 4)
	err := scoll.Run(context.Background(), 4, func(ctx context.Context, c *scoll.Comm) error {
		chain, err := c.SplitBytes(ctx, []byte("all"), []byte{byte(4 - c.Rank())}, scoll.WithChainGroup())
		if err != nil {
			return err
		}
		defer chain.Close()
		send := []int64{int64(chain.Rank() + 1)}
		left, right := []int64{-1}, []int64{-1}
		if err := scoll.DoubleExscan(ctx, chain, send, left, right, concat); err != nil {
			return err
		}
		got[chain.Rank()] = fmt.Sprintf("chain rank %d (world %d): left %d, right %d", chain.Rank(), c.Rank(), left[0], right[0])
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	for _, s := range got {
		fmt.Println(s)
	}
	// Output:
	// chain rank 0 (world 3): left -1, right 234
	// chain rank 1 (world 2): left 1, right 34
	// chain rank 2 (world 1): left 12, right 4
	// chain rank 3 (world 0): left 123, right -1
}
