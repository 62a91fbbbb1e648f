// Command nodeallreduce splits its ranks by node and sums a vector in two
// levels — a reduce inside each node, an allreduce among the nodes'
// leaders, a broadcast inside each node — and compares the result and the
// time with the flat allreduce over all ranks.
//
// One machine can pretend to be several nodes: scoll run --ranks-per-node
// K gives rank r the host name node<r/K> (SCOLL_HOSTNAME, which
// SplitByNode reads before the real host name).
//
//	go build -o nodeallreduce ./examples/nodeallreduce
//	scoll run --np 8 --ranks-per-node 4 -- ./nodeallreduce -n 1000000
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/scoll/scoll"
)

func main() {
	n := flag.Int("n", 1<<20, "elements per vector (0 or more)")
	reps := flag.Int("reps", 5, "timed repetitions of each allreduce (1 or more)")
	flag.Parse()
	if *n < 0 || *reps < 1 || flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "nodeallreduce: -n %d -reps %d: want 0 or more elements, 1 or more repetitions and no arguments\n", *n, *reps)
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*n, *reps); err != nil {
		fmt.Fprintln(os.Stderr, "nodeallreduce:", err)
		os.Exit(1)
	}
}

func run(n, reps int) error {
	ctx := context.Background()
	c, err := scoll.Init(ctx)
	if err != nil {
		return err
	}
	defer c.Close()

	// The ranks of this node, in the world's order, and the leaders' (rank
	// 0 of each node) communicator. (A test of chains in comm_bytes_test.go
	// has the same shape of make, check, defer Close: a program shows its
	// steps rather than share a helper with a test.)
	node, err := c.SplitByNode(ctx)
	if err != nil {
		return err
	}
	defer node.Close()
	color := scoll.Undefined
	if node.Rank() == 0 {
		color = 0
	}
	leaders, err := c.Split(ctx, color, c.Rank())
	if err != nil {
		return err
	}
	if leaders != nil {
		defer leaders.Close()
	}
	nodes := []int64{0}
	if leaders != nil {
		nodes[0] = int64(leaders.Size())
	}
	if err := scoll.Bcast(ctx, node, nodes, 0); err != nil {
		return err
	}

	send := make([]float64, n)
	for i := range send {
		send[i] = float64(c.Rank()%7 + i%5)
	}
	flat := make([]float64, n)
	twoLevel := make([]float64, n)
	var tFlat, tTwo []time.Duration
	for range reps {
		if err := c.Barrier(ctx); err != nil {
			return err
		}
		t := time.Now()
		if err := scoll.Allreduce(ctx, c, send, flat, scoll.Sum); err != nil {
			return err
		}
		tFlat = append(tFlat, time.Since(t))

		if err := c.Barrier(ctx); err != nil {
			return err
		}
		t = time.Now()
		if err := hierarchical(ctx, node, leaders, send, twoLevel); err != nil {
			return err
		}
		tTwo = append(tTwo, time.Since(t))
	}
	for i := range flat {
		if flat[i] != twoLevel[i] {
			return fmt.Errorf("rank %d: element %d: two-level %v, flat %v", c.Rank(), i, twoLevel[i], flat[i])
		}
	}
	// The slowest rank's median time of each.
	med := func(ts []time.Duration) []int64 {
		slices.Sort(ts)
		return []int64{int64(ts[len(ts)/2])}
	}
	f, h := med(tFlat), med(tTwo)
	if err := scoll.Allreduce(ctx, c, nil, f, scoll.Max); err != nil {
		return err
	}
	if err := scoll.Allreduce(ctx, c, nil, h, scoll.Max); err != nil {
		return err
	}
	if c.Rank() == 0 {
		fmt.Printf("%d ranks on %d nodes: two-level allreduce of %d float64 equals the flat one; median %v two-level, %v flat (%.2fx)\n",
			c.Size(), nodes[0], n, time.Duration(h[0]), time.Duration(f[0]), float64(f[0])/float64(h[0]))
	}
	return nil
}

// hierarchical sums send over every rank into recv: a reduce to each
// node's rank 0, an allreduce among those leaders, a broadcast inside
// each node.
func hierarchical(ctx context.Context, node, leaders *scoll.Comm, send, recv []float64) error {
	if err := scoll.Reduce(ctx, node, send, recv, scoll.Sum, 0); err != nil {
		return err
	}
	if leaders != nil {
		if err := scoll.Allreduce(ctx, leaders, nil, recv, scoll.Sum); err != nil {
			return err
		}
	}
	return scoll.Bcast(ctx, node, recv, 0)
}
