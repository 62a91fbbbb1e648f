package scoll_test

import (
	"context"
	"slices"
	"testing"

	"github.com/scoll/scoll"
)

// WithChosen reports the algorithm a call runs: the named one, or the
// default choice's (a registered name), and leaves the name alone when
// the call fails to prepare.
func TestWithChosen(t *testing.T) {
	err := scoll.Run(context.Background(), 4, func(ctx context.Context, c *scoll.Comm) error {
		send, recv := []float64{1, 2, 3}, make([]float64, 3)
		var named, auto, bad string
		if err := scoll.Allreduce(ctx, c, send, recv, scoll.Sum, scoll.WithAlgorithm("ring"), scoll.WithChosen(&named)); err != nil {
			return err
		}
		if err := scoll.Allreduce(ctx, c, send, recv, scoll.Sum, scoll.WithChosen(&auto)); err != nil {
			return err
		}
		bad = "unchanged"
		if err := scoll.Allreduce(ctx, c, send, recv[:1], scoll.Sum, scoll.WithChosen(&bad)); err == nil {
			t.Errorf("rank %d: allreduce of 3 elements into 1 accepted", c.Rank())
		}
		var bar string
		if err := scoll.Barrier(ctx, c, scoll.WithChosen(&bar)); err != nil {
			return err
		}
		if named != "ring" || bad != "unchanged" {
			t.Errorf("rank %d: WithChosen gave %q for ring, %q for a failed call", c.Rank(), named, bad)
		}
		if !slices.ContainsFunc(scoll.Algorithms("allreduce"), func(a scoll.AlgorithmInfo) bool { return a.Name == auto }) {
			t.Errorf("rank %d: default allreduce reported as %q, not an allreduce algorithm", c.Rank(), auto)
		}
		if !slices.ContainsFunc(scoll.Algorithms("barrier"), func(a scoll.AlgorithmInfo) bool { return a.Name == bar }) {
			t.Errorf("rank %d: barrier reported as %q", c.Rank(), bar)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
