package scoll_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/tuning"
)

// algorithmOf returns the algorithm an allreduce of n int32 on c runs with
// opts (a persistent call reports it).
func algorithmOf(ctx context.Context, c *scoll.Comm, n int, opts ...scoll.CallOption) (string, error) {
	p, err := scoll.AllreduceInit(ctx, c, make([]int32, n), make([]int32, n), scoll.Sum, opts...)
	if err != nil {
		return "", err
	}
	return p.Algorithm(), nil
}

// TestEnvAlgorithm: SCOLL_ALGORITHM_ALLREDUCE replaces the default choice
// (the cost model's and the small calls' shared-memory meeting), leaves
// other collectives and calls that name an algorithm alone, and makes way
// for the cost model where its algorithm cannot run the call.
func TestEnvAlgorithm(t *testing.T) {
	t.Setenv("SCOLL_ALGORITHM_ALLREDUCE", "ring")
	for _, P := range []int{4, 6} {
		err := scoll.Run(context.Background(), P, func(ctx context.Context, c *scoll.Comm) error {
			for _, n := range []int{1, 1000, 100000} {
				if got, err := algorithmOf(ctx, c, n); err != nil || got != "ring" {
					return fmt.Errorf("n=%d: %q %v, want ring", n, got, err)
				}
			}
			if got, err := algorithmOf(ctx, c, 1000, scoll.WithAlgorithm("recursive-doubling")); err != nil || got != "recursive-doubling" {
				return fmt.Errorf("named: %q %v", got, err)
			}
			sum := make([]int32, 3)
			if err := scoll.Allreduce(ctx, c, []int32{1, 2, 3}, sum, scoll.Sum); err != nil || sum[2] != int32(3*P) {
				return fmt.Errorf("allreduce under the override: %v %v", sum, err)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("P=%d: %v", P, err)
		}
	}
	// bucket needs a commutative operator: with a non-commutative one the
	// cost model chooses, and the result keeps rank order.
	t.Setenv("SCOLL_ALGORITHM_ALLREDUCE", "bucket")
	first := scoll.UserOp(func(inout, in []int32) { copy(inout, in) }, false)
	err := scoll.Run(context.Background(), 3, func(ctx context.Context, c *scoll.Comm) error {
		got := make([]int32, 2)
		if err := scoll.Allreduce(ctx, c, []int32{int32(c.Rank() + 5), 1}, got, first); err != nil {
			return err
		}
		if got[0] != 5 {
			return fmt.Errorf("non-commutative allreduce: %v, want rank 0's 5 first", got)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("an override that cannot run the call: %v", err)
	}
}

// TestEnvBad: an unknown collective, algorithm, size or radix, or a
// missing tuning file fails Run with ErrInvalidArgument naming the
// variable, before any rank runs.
func TestEnvBad(t *testing.T) {
	for _, kv := range [][2]string{
		{"SCOLL_ALGORITHM_ALLSUM", "ring"},
		{"SCOLL_ALGORITHM_ALLREDUCE", "rign"},
		{"SCOLL_SEGMENT_BCAST", "-4"},
		{"SCOLL_SEGMENT_BCAST", "lots"},
		{"SCOLL_RADIX_REDUCE", "1"},
		{"SCOLL_TUNING", "/nonexistent/rules.json"},
	} {
		t.Run(kv[0]+"="+kv[1], func(t *testing.T) {
			t.Setenv(kv[0], kv[1])
			ran := false
			err := scoll.Run(context.Background(), 2, func(context.Context, *scoll.Comm) error { ran = true; return nil })
			if !errors.Is(err, scoll.ErrInvalidArgument) || !strings.Contains(err.Error(), kv[0]) || ran {
				t.Errorf("Run: %v (ran %v), want an invalid-argument error naming %s", err, ran, kv[0])
			}
		})
	}
}

// TestEnvSegment: SCOLL_SEGMENT_BCAST cuts a pipelined bcast into segments
// of that size (the recording shows the root's messages), unless the call
// gives its own.
func TestEnvSegment(t *testing.T) {
	t.Setenv("SCOLL_SEGMENT_BCAST", "100")
	sends := func(opts ...scoll.CallOption) int {
		tr := recordRun(t, 3, func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Bcast(ctx, c, make([]byte, 1000), 0, append(opts, scoll.WithAlgorithm("pipeline"))...)
		})
		n := 0
		for _, rd := range tr.Ranks[0] {
			for _, o := range rd {
				if !o.Recv {
					n++
				}
			}
		}
		return n
	}
	if got := sends(); got != 10 {
		t.Errorf("the root sent %d segments, want 10 of 100 bytes", got)
	}
	if got := sends(scoll.WithSegmentSize(500)); got != 2 {
		t.Errorf("with the call's segment size the root sent %d, want 2", got)
	}
}

// TestTuningRules: WithTuning's rules choose by message size and rank
// count; the environment's algorithm wins over them and a named one over
// both.
func TestTuningRules(t *testing.T) {
	f := &tuning.File{Version: tuning.Version}
	f.Add(schedule.Allreduce, 4, 0, "recursive-doubling")
	f.Add(schedule.Allreduce, 4, 4000, "rabenseifner")
	if err := f.Check(); err != nil {
		t.Fatal(err)
	}
	want := map[int]string{10: "recursive-doubling", 999: "recursive-doubling", 1000: "rabenseifner", 50000: "rabenseifner"}
	err := scoll.Run(context.Background(), 4, func(ctx context.Context, c *scoll.Comm) error {
		for n, alg := range want {
			if got, err := algorithmOf(ctx, c, n); err != nil || got != alg {
				return fmt.Errorf("%d int32: %q %v, want %q", n, got, err, alg)
			}
		}
		if got, _ := algorithmOf(ctx, c, 10, scoll.WithAlgorithm("ring")); got != "ring" {
			return fmt.Errorf("named ring, ran %q", got)
		}
		return nil
	}, scoll.WithTuning(f))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("SCOLL_ALGORITHM_ALLREDUCE", "ring")
	err = scoll.Run(context.Background(), 4, func(ctx context.Context, c *scoll.Comm) error {
		if got, _ := algorithmOf(ctx, c, 50000); got != "ring" {
			return fmt.Errorf("under SCOLL_ALGORITHM_ALLREDUCE ran %q", got)
		}
		return nil
	}, scoll.WithTuning(f))
	if err != nil {
		t.Fatal(err)
	}
	bad := &tuning.File{Version: 7}
	if err := scoll.Run(context.Background(), 2, func(context.Context, *scoll.Comm) error { return nil }, scoll.WithTuning(bad)); !errors.Is(err, scoll.ErrInvalidArgument) {
		t.Errorf("a bad tuning file: %v", err)
	}
}

// TestLogChoice: each newly planned call logs, at debug level, the
// algorithm and what chose it.
func TestLogChoice(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	t.Setenv("SCOLL_ALGORITHM_BCAST", "binomial")
	err := scoll.Run(context.Background(), 2, func(ctx context.Context, c *scoll.Comm) error {
		if err := scoll.Allreduce(ctx, c, make([]float64, 1<<16), make([]float64, 1<<16), scoll.Sum); err != nil {
			return err
		}
		return scoll.Bcast(ctx, c, make([]byte, 10), 0)
	}, scoll.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"collective=allreduce", "by=\"cost model\"", "collective=bcast algorithm=binomial by=SCOLL_ALGORITHM_BCAST"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}
