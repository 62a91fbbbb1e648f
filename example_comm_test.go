package scoll_test

import (
	"context"
	"fmt"

	"github.com/scoll/scoll"
)

// Each example stands alone in the documentation, so they repeat the steps of making, using and closing a communicator rather than share a helper.

func ExampleComm_Split() {
	// Six ranks in two communicators by parity, each ordered by descending
	// world rank (the key).
	scoll.Run(context.Background(), 6, func(ctx context.Context, c *scoll.Comm) error {
		sub, err := c.Split(ctx, c.Rank()%2, -c.Rank())
		if err != nil {
			return err
		}
		defer sub.Close()
		sum := []int32{int32(c.Rank())}
		if err := scoll.Allreduce(ctx, sub, nil, sum, scoll.Sum); err != nil {
			return err
		}
		if sub.Rank() == 0 {
			members, _ := sub.TranslateRanks([]int{0, 1, 2}, c)
			fmt.Printf("world rank %d leads %v, sum %d\n", c.Rank(), members, sum[0])
		}
		return nil
	})
	// Unordered output:
	// world rank 4 leads [4 2 0], sum 6
	// world rank 5 leads [5 3 1], sum 9
}

func ExampleComm_SplitGrid() {
	// A 2 × 3 process grid, row-major: the row communicators hold 3 ranks,
	// the column communicators 2.
	scoll.Run(context.Background(), 6, func(ctx context.Context, c *scoll.Comm) error {
		row, err := c.SplitGrid(ctx, []int{2, 3}, []bool{false, true})
		if err != nil {
			return err
		}
		col, err := c.SplitGrid(ctx, []int{2, 3}, []bool{true, false})
		if err != nil {
			return err
		}
		if c.Rank() == 4 { // row 1, column 1
			fmt.Println("row rank", row.Rank(), "of", row.Size(), "- column rank", col.Rank(), "of", col.Size())
		}
		row.Close()
		return col.Close()
	})
	// Output: row rank 1 of 3 - column rank 1 of 2
}

func ExampleComm_Create() {
	scoll.Run(context.Background(), 4, func(ctx context.Context, c *scoll.Comm) error {
		sub, err := c.Create(ctx, []int{3, 1})
		if err != nil || sub == nil { // ranks 0 and 2 are not in the list
			return err
		}
		defer sub.Close()
		buf := []int32{int32(c.Rank())}
		if err := scoll.Bcast(ctx, sub, buf, 0); err != nil {
			return err
		}
		if c.Rank() == 1 {
			fmt.Println("rank 1 is rank", sub.Rank(), "and got", buf[0], "from rank 0 of the new communicator")
		}
		return nil
	})
	// Output: rank 1 is rank 1 and got 3 from rank 0 of the new communicator
}

func ExampleComm_Dup() {
	// A library keeps its messages apart from the application's by working
	// on a duplicate.
	scoll.Run(context.Background(), 2, func(ctx context.Context, c *scoll.Comm) error {
		lib, err := c.Dup(ctx)
		if err != nil {
			return err
		}
		defer lib.Close()
		if c.Rank() == 0 {
			lib.Send(ctx, 1, 0, []byte("library"))
			return c.Send(ctx, 1, 0, []byte("application"))
		}
		buf := make([]byte, 16)
		n, err := c.Recv(ctx, 0, 0, buf)
		fmt.Println(string(buf[:n]), err)
		n, err = lib.Recv(ctx, 0, 0, buf)
		fmt.Println(string(buf[:n]), err)
		return err
	})
	// Output:
	// application <nil>
	// library <nil>
}

func ExampleWithDistributedGroup() {
	// Sack's distributed table: each rank of the new communicator holds
	// the addresses of about n/P' members and asks the others' owners.
	scoll.Run(context.Background(), 8, func(ctx context.Context, c *scoll.Comm) error {
		var st scoll.SplitStats
		sub, err := c.Split(ctx, 0, c.Rank(), scoll.WithSplitAlgorithm("cheng"),
			scoll.WithDistributedGroup(4), scoll.WithSplitStats(&st))
		if err != nil {
			return err
		}
		defer sub.Close()
		sum := []int32{1}
		err = scoll.Allreduce(ctx, sub, nil, sum, scoll.Sum)
		if c.Rank() == 0 {
			fmt.Println(st.Group, sum[0], err)
		}
		return err
	})
	// Output: distributed:4 8 <nil>
}

// (Shaped like ExampleComm_Create: make a communicator, run one collective
// on it, print on one rank. Godoc shows each example alone, so each spells
// its steps out.)
func ExampleComm_SplitBytes() {
	// Group ranks by a string (a rack name), keep the parent's order, and
	// keep each new communicator as a chain (O(1) membership per rank).
	racks := []string{"rack-b", "rack-a", "rack-b", "rack-a", "rack-b"}
	scoll.Run(context.Background(), len(racks), func(ctx context.Context, c *scoll.Comm) error {
		rack, err := c.SplitBytes(ctx, []byte(racks[c.Rank()]), nil, scoll.WithoutReorder(), scoll.WithChainGroup())
		if err != nil {
			return err
		}
		defer rack.Close()
		n := []int32{1}
		if err := scoll.Allreduce(ctx, rack, nil, n, scoll.Sum); err != nil {
			return err
		}
		if rack.Rank() == 0 {
			fmt.Printf("%s: %d ranks, led by world rank %d\n", racks[c.Rank()], n[0], c.Rank())
		}
		return nil
	})
	// Unordered output:
	// rack-a: 2 ranks, led by world rank 1
	// rack-b: 3 ranks, led by world rank 0
}

func ExampleComm_SplitByNode() {
	// In-process ranks share one node: SplitByNode gives each rank a
	// communicator of all of them. Under "scoll run --ranks-per-node K"
	// (or on a real cluster) each node gets its own.
	scoll.Run(context.Background(), 3, func(ctx context.Context, c *scoll.Comm) error {
		node, err := c.SplitByNode(ctx)
		if err != nil {
			return err
		}
		defer node.Close()
		if c.Rank() == 0 {
			fmt.Println("ranks on this node:", node.Size())
		}
		return nil
	})
	// Output: ranks on this node: 3
}
