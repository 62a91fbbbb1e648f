package scoll_test

import (
	"context"
	"fmt"

	"github.com/scoll/scoll"
)

func ExampleRun() {
	err := scoll.Run(context.Background(), 4, func(ctx context.Context, c *scoll.Comm) error {
		send := []float64{float64(c.Rank())}
		recv := make([]float64, 1)
		if err := scoll.Allreduce(ctx, c, send, recv, scoll.Sum); err != nil {
			return err
		}
		if c.Rank() == 0 {
			fmt.Println("sum of ranks:", recv[0])
		}
		return nil
	})
	fmt.Println("error:", err)
	// Output:
	// sum of ranks: 6
	// error: <nil>
}

func ExampleAllgather() {
	scoll.Run(context.Background(), 3, func(ctx context.Context, c *scoll.Comm) error {
		recv := make([]int32, 2*c.Size())
		err := scoll.Allgather(ctx, c, []int32{int32(c.Rank()), int32(10 * c.Rank())}, recv,
			scoll.WithAlgorithm("ring"))
		if c.Rank() == 2 {
			fmt.Println(recv, err)
		}
		return err
	})
	// Output: [0 0 1 10 2 20] <nil>
}

func ExampleUserOp() {
	// A non-commutative operator: keep the left operand, so the result is
	// rank 0's contribution. scoll combines in rank order for such operators.
	first := scoll.UserOp(func(inout, in []int64) { copy(inout, in) }, false)
	scoll.Run(context.Background(), 5, func(ctx context.Context, c *scoll.Comm) error {
		recv := make([]int64, 1)
		err := scoll.Allreduce(ctx, c, []int64{int64(100 + c.Rank())}, recv, first)
		if c.Rank() == 4 {
			fmt.Println(recv[0], err)
		}
		return err
	})
	// Output: 100 <nil>
}

func ExampleIAllreduce() {
	scoll.Run(context.Background(), 2, func(ctx context.Context, c *scoll.Comm) error {
		recv := make([]int32, 3)
		req, err := scoll.IAllreduce(ctx, c, []int32{1, 2, 3}, recv, scoll.Prod)
		if err != nil {
			return err
		}
		// ... overlap other work here ...
		if err := req.Wait(ctx); err != nil {
			return err
		}
		if c.Rank() == 0 {
			fmt.Println(recv)
		}
		return nil
	})
	// Output: [1 4 9]
}

func ExampleAllreduceInit() {
	scoll.Run(context.Background(), 3, func(ctx context.Context, c *scoll.Comm) error {
		send, recv := make([]float32, 1), make([]float32, 1)
		h, err := scoll.AllreduceInit(ctx, c, send, recv, scoll.Max)
		if err != nil {
			return err
		}
		for it := range 3 {
			send[0] = float32(c.Rank() * it)
			if err := h.Start(ctx); err != nil {
				return err
			}
			if err := h.Wait(ctx); err != nil {
				return err
			}
			if c.Rank() == 0 {
				fmt.Println(recv[0])
			}
		}
		return nil
	})
	// Output:
	// 0
	// 2
	// 4
}

func ExampleAlgorithms() {
	for _, a := range scoll.Algorithms("reducescatter") {
		if a.Name == "recursive-halving" || a.Name == "ring" {
			fmt.Println(a.Name)
		}
	}
	// Output:
	// recursive-halving
	// ring
}

// Sack's six-bucket allgather on a 2×2×2 grid: each rank's block is cut
// into six sections that travel in six rings at once (X, Y and Z first, both
// directions), and a first exchange makes them land in rank order.
func ExampleWithGrid() {
	scoll.Run(context.Background(), 8, func(ctx context.Context, c *scoll.Comm) error {
		recv := make([]int32, c.Size())
		err := scoll.Allgather(ctx, c, []int32{int32(c.Rank() * c.Rank())}, recv,
			scoll.WithAlgorithm("bucket6"), scoll.WithGrid(2, 2, 2))
		if c.Rank() == 5 {
			fmt.Println(recv, err)
		}
		return err
	})
	// Output: [0 1 4 9 16 25 36 49] <nil>
}

// Marendic et al.'s radix-k reduce on 8 ranks with radix vector {2, 4}:
// pairs exchange halves, then groups of four exchange quarters, and the
// quarters are gathered at the root. The product of the vector must be the
// communicator size.
func ExampleWithRadixVector() {
	scoll.Run(context.Background(), 8, func(ctx context.Context, c *scoll.Comm) error {
		send := []int64{int64(c.Rank()), 1, 10, 100}
		recv := make([]int64, len(send))
		err := scoll.Reduce(ctx, c, send, recv, scoll.Sum, 0,
			scoll.WithAlgorithm("radix-k"), scoll.WithRadixVector(2, 4))
		if c.Rank() == 0 {
			fmt.Println(recv, err)
		}
		return err
	})
	// Output: [28 8 80 800] <nil>
}

func ExampleWithPlacement() {
	// Six ranks on scattered nodes of a 4×4 torus (an irregular
	// partition): rd-path orders them along a snake path through all 16
	// nodes, and the result is still in rank order.
	nodes := []int{13, 2, 7, 8, 0, 11}
	scoll.Run(context.Background(), len(nodes), func(ctx context.Context, c *scoll.Comm) error {
		recv := make([]int32, c.Size())
		err := scoll.Allgather(ctx, c, []int32{int32(10 * c.Rank())}, recv,
			scoll.WithAlgorithm("rd-path"), scoll.WithPlacement([]int{4, 4}, nodes))
		if c.Rank() == 0 {
			fmt.Println(recv, err)
		}
		return err
	})
	// Output: [0 10 20 30 40 50] <nil>
}

func ExampleDefaultGrid() {
	fmt.Println(scoll.DefaultGrid(512, 3), scoll.DefaultGrid(128, 3), scoll.DefaultGrid(12, 2))
	// Output: [8 8 8] [4 4 8] [3 4]
}

// Init makes the program one rank of a job of processes: started by
// "scoll run --np 4", mpirun or srun it gets its rank of 4; run alone, as
// here, it is a job of one rank.
func ExampleInit() {
	ctx := context.Background()
	c, err := scoll.Init(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	sum := []int64{int64(c.Rank() + 1)}
	if err := scoll.Allreduce(ctx, c, nil, sum, scoll.Sum); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("rank %d of %d: sum %d\n", c.Rank(), c.Size(), sum[0])
	// Output: rank 0 of 1: sum 1
}

// WithoutAlgorithm keeps the default choice away from the shared-memory
// paths: this small in-process allreduce runs a message schedule (the
// cheapest the cost model finds) instead of an exchange or a meeting.
// Persistent.Algorithm reports what a call runs.
func ExampleWithoutAlgorithm() {
	err := scoll.Run(context.Background(), 4, func(ctx context.Context, c *scoll.Comm) error {
		send := []int64{int64(c.Rank())}
		recv := make([]int64, 1)
		p, err := scoll.AllreduceInit(ctx, c, send, recv, scoll.Sum, scoll.WithoutAlgorithm("exchange", "meet"))
		if err != nil {
			return err
		}
		if err := p.Start(ctx); err != nil {
			return err
		}
		if err := p.Wait(ctx); err != nil {
			return err
		}
		if c.Rank() == 0 {
			fmt.Println(recv[0], p.Algorithm() != "exchange" && p.Algorithm() != "meet")
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output: 6 true
}
