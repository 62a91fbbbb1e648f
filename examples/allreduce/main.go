// Command allreduce is a complete scoll program: every rank contributes its
// rank number and a vector, and checks the sums. It runs unchanged alone,
// under "scoll run --np 4", under "mpirun -np 4" or "srun -n 4" (over TCP),
// and, built with -tags mpi, over the MPI library.
//
//	go build -o allreduce ./examples/allreduce
//	scoll run --np 4 -- ./allreduce
//	mpirun -np 4 ./allreduce
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/scoll/scoll"
)

func main() {
	n := flag.Int("n", 1<<20, "elements per vector (0 or more)")
	flag.Parse()
	if *n < 0 || flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "allreduce: -n %d: want 0 or more elements and no arguments\n", *n)
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*n); err != nil {
		fmt.Fprintln(os.Stderr, "allreduce:", err)
		os.Exit(1)
	}
}

func run(n int) error {
	ctx := context.Background()
	c, err := scoll.Init(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	p := c.Size()

	// The rank sum, in place.
	sum := []int64{int64(c.Rank())}
	if err := scoll.Allreduce(ctx, c, nil, sum, scoll.Sum); err != nil {
		return err
	}
	if want := int64(p * (p - 1) / 2); sum[0] != want {
		return fmt.Errorf("rank %d: sum of ranks %d, want %d", c.Rank(), sum[0], want)
	}

	// A long vector: element i of rank r is r+i.
	send := make([]float64, n)
	for i := range send {
		send[i] = float64(c.Rank() + i)
	}
	recv := make([]float64, n)
	if err := scoll.Allreduce(ctx, c, send, recv, scoll.Sum); err != nil {
		return err
	}
	for i, v := range recv {
		if want := float64(p*(p-1)/2 + p*i); v != want {
			return fmt.Errorf("rank %d: element %d is %v, want %v", c.Rank(), i, v, want)
		}
	}
	if err := c.Barrier(ctx); err != nil {
		return err
	}
	if c.Rank() == 0 {
		fmt.Printf("%d ranks: allreduce of %d float64 correct\n", p, n)
	}
	return nil
}
