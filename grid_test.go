package scoll_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/matrix"
	"github.com/scoll/scoll/internal/sweep"
)

// gridAlgorithms are the algorithms that take a process grid.
var gridAlgorithms = map[string][]string{
	"allgather":     {"rd-halving", "rd-optimal", "bucket", "bucket3", "bucket6", "rd-path", "rd-paths", "rd-hybrid"},
	"reducescatter": {"rh-doubling", "rh-optimal", "bucket", "bucket3", "bucket6", "rh-path", "rh-paths", "rh-hybrid"},
	"allreduce":     {"rd-halving", "rd-optimal", "bucket", "bucket3", "bucket6", "rd-path", "rd-paths"},
	"bcast":         {"scatter-rd-halving", "scatter-rd-optimal", "scatter-bucket", "scatter-bucket3", "scatter-bucket6", "scatter-rd-path", "scatter-rd-paths"},
	"reduce":        {"rd-halving-gather", "rd-optimal-gather", "bucket-gather", "bucket3-gather", "bucket6-gather", "rd-path-gather", "rd-paths-gather"},
}

// placementAlgorithms are the algorithms that take a placement.
var placementAlgorithms = map[string][]string{
	"allgather":     {"rd-path", "rd-paths"},
	"reducescatter": {"rh-path", "rh-paths"},
	"allreduce":     {"rd-path", "rd-paths"},
	"bcast":         {"scatter-rd-path", "scatter-rd-paths"},
	"reduce":        {"rd-path-gather", "rd-paths-gather"},
}

// TestPlacementAlgorithms runs the path algorithms for real on irregular
// partitions: ranks on random distinct nodes of a 4×4×4 torus and a 6×5
// mesh.
func TestPlacementAlgorithms(t *testing.T) {
	matrix.SkipShort(t, "skipped in -short mode")
	rng := rand.New(rand.NewPCG(7, 11))
	type pc struct {
		machine []int
		nodes   []int
	}
	var cases []pc
	for _, c := range []struct {
		machine []int
		p       int
	}{{[]int{4, 4, 4}, 5}, {[]int{4, 4, 4}, 27}, {[]int{6, 5}, 16}} {
		n := 1
		for _, k := range c.machine {
			n *= k
		}
		cases = append(cases, pc{c.machine, rng.Perm(n)[:c.p]})
	}
	for coll, algs := range placementAlgorithms {
		for _, alg := range algs {
			t.Run(coll+"/"+alg, func(t *testing.T) {
				t.Parallel()
				for _, c := range cases {
					p := len(c.nodes)
					for _, n := range []int{0, 1, 5, 7, 1031} {
						for _, inPlace := range []bool{false, true} {
							if coll == "bcast" && inPlace {
								continue
							}
							oc := matrix.OpCases[int32]()[0]
							opts := []scoll.CallOption{scoll.WithPlacement(c.machine, c.nodes)}
							if err := matrix.RunCaseWith(opts, coll, alg, p, n, p/2, inPlace, oc); err != nil {
								t.Fatalf("placement %v on %v n=%d inplace=%v: %v", c.nodes, c.machine, n, inPlace, err)
							}
						}
					}
				}
			})
		}
	}
}

// A placement that does not put every rank on its own node is an error on
// every rank, and so is a placement that differs between ranks.
func TestPlacementErrors(t *testing.T) {
	err := scoll.Run(context.Background(), 4, func(ctx context.Context, c *scoll.Comm) error {
		send, recv := make([]float32, 2), make([]float32, 8)
		err := scoll.Allgather(ctx, c, send, recv, scoll.WithAlgorithm("rd-path"), scoll.WithPlacement([]int{4, 4}, []int{0, 1, 1, 2}))
		if !errors.Is(err, scoll.ErrInvalidArgument) {
			return fmt.Errorf("rank %d: two ranks on one node: %v", c.Rank(), err)
		}
		err = scoll.Allgather(ctx, c, send, recv, scoll.WithAlgorithm("rd-paths"), scoll.WithPlacement([]int{4, 4}, []int{0, 1, 2}))
		if !errors.Is(err, scoll.ErrInvalidArgument) {
			return fmt.Errorf("rank %d: three nodes for four ranks: %v", c.Rank(), err)
		}
		nodes := []int{0, 5, 10, 15}
		if c.Rank() == 2 {
			nodes = []int{0, 5, 11, 15}
		}
		err = scoll.Allgather(ctx, c, send, recv, scoll.WithAlgorithm("rd-path"), scoll.WithPlacement([]int{4, 4}, nodes))
		if !errors.Is(err, scoll.ErrMismatch) {
			return fmt.Errorf("rank %d: placements differ: %v", c.Rank(), err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestGridAlgorithms runs Sack's allgather and reduce-scatter algorithms and
// the broadcast, reduce and allreduce built from them for real on the grids of the thesis' experiments scaled down (2×2×2, 2×2×4,
// and with -tags long 4×4×8, 4×4×4 and 8×8×8) with counts that do and do not divide into the
// buckets' sections, in place and not, with commutative and (where
// allowed) non-commutative operators.
func TestGridAlgorithms(t *testing.T) {
	matrix.SkipShort(t, "skipped in -short mode")
	for coll, algs := range gridAlgorithms {
		for _, alg := range algs {
			t.Run(coll+"/"+alg, func(t *testing.T) {
				t.Parallel()
				for _, g := range sweep.More([][]int{{2, 2, 2}, {2, 2, 4}}, []int{4, 4, 8}, []int{4, 4, 4}, []int{8, 8, 8}) {
					p := g[0] * g[1] * g[2]
					if p > 128 && coll != "allgather" && coll != "reducescatter" {
						continue // the composites reuse the verified halves
					}
					counts := []int{0, 1, 5, 6, 7, 2053}
					if p > 128 { // 512 goroutines: the essential cases
						counts = []int{1, 7, 259}
					}
					for _, n := range counts {
						for _, inPlace := range []bool{false, true} {
							for k, oc := range matrix.OpCases[int32]() {
								if k > 0 && (n > 7 || inPlace) || p > 128 && (k > 0 || inPlace) {
									continue
								}
								if coll == "bcast" && inPlace {
									continue
								}
								err := matrix.RunCaseWith([]scoll.CallOption{scoll.WithGrid(g...)}, coll, alg, p, n, p-1-n%2, inPlace, oc)
								if errors.Is(err, scoll.ErrUnsupported) && !oc.Op.Commutative() {
									continue
								}
								if err != nil {
									t.Fatalf("grid %v n=%d inplace=%v op=%s: %v", g, n, inPlace, oc.Name, err)
								}
							}
						}
					}
				}
			})
		}
	}
}

// A grid that does not hold the communicator's ranks is an error on every
// rank, and so is a grid that differs between ranks.
func TestGridErrors(t *testing.T) {
	err := scoll.Run(context.Background(), 8, func(ctx context.Context, c *scoll.Comm) error {
		send, recv := make([]float32, 2), make([]float32, 16)
		err := scoll.Allgather(ctx, c, send, recv, scoll.WithAlgorithm("bucket6"), scoll.WithGrid(2, 2))
		if !errors.Is(err, scoll.ErrInvalidArgument) {
			return fmt.Errorf("rank %d: 2×2 grid of 8 ranks: %v", c.Rank(), err)
		}
		err = scoll.Allgather(ctx, c, send, recv, scoll.WithAlgorithm("bucket"), scoll.WithGrid(0, 8))
		if !errors.Is(err, scoll.ErrInvalidArgument) {
			return fmt.Errorf("rank %d: 0×8 grid: %v", c.Rank(), err)
		}
		g := []int{2, 4}
		if c.Rank() == 3 {
			g = []int{4, 2}
		}
		err = scoll.Allgather(ctx, c, send, recv, scoll.WithAlgorithm("bucket"), scoll.WithGrid(g...))
		if !errors.Is(err, scoll.ErrMismatch) {
			return fmt.Errorf("rank %d: grids differ: %v", c.Rank(), err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
