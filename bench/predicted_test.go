package bench

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestPredictedTrace(t *testing.T) {
	cfg := PredictedConfig{Iterations: 50, Work: 10 * time.Millisecond, Noise: 0, Common: Common{NP: 8, Seed: 3}}
	tr := PredictedTrace(cfg)
	if len(tr) != 50 || len(tr[0]) != 8 {
		t.Fatalf("shape %dx%d", len(tr), len(tr[0]))
	}
	for it, row := range tr {
		for r, d := range row {
			if d < 0 || d > cfg.Work {
				t.Fatalf("iteration %d rank %d: %v outside [0, %v]", it, r, d, cfg.Work)
			}
			// Without noise, ranks of one cluster (r mod 4) work alike.
			if d != row[r%4] {
				t.Fatalf("iteration %d: rank %d %v, rank %d %v", it, r, d, r%4, row[r%4])
			}
		}
	}
	if tr[0][0] == tr[12][0] {
		t.Fatal("no wave over the iterations")
	}
}

// TestRunPredicted runs a tiny experiment: every variant reports its runs,
// and each run lasts at least the largest imbalance of the trace summed
// over its iterations, less the barrier's skew.
func TestRunPredicted(t *testing.T) {
	var steps int
	cfg := PredictedConfig{Iterations: 6, Segments: 2, ShareEvery: 2, Work: 2 * time.Millisecond, Noise: 0.05,
		Common: Common{NP: 4, Sizes: []int{4096}, Reps: 2, Seed: 1, Progress: func(Progress) { steps++ }}}
	res, err := RunPredicted(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var spread time.Duration
	for _, row := range PredictedTrace(cfg) {
		lo, hi := row[0], row[0]
		for _, d := range row {
			lo, hi = min(lo, d), max(hi, d)
		}
		spread += hi - lo
	}
	if len(res.Rows) != len(PredictedVariants) || steps != cfg.Reps*len(PredictedVariants)+1 {
		t.Fatalf("%d rows, %d progress steps", len(res.Rows), steps)
	}
	for i, r := range res.Rows {
		if r.Variant != PredictedVariants[i] || r.Bytes != 4096 || len(r.RunsS) != cfg.Reps || r.MedianS != Median(r.RunsS) {
			t.Fatalf("row %+v", r)
		}
		if r.MedianS < spread.Seconds()*0.9 {
			t.Fatalf("%s: %v s accumulated, below the trace's imbalance %v", r.Variant, r.MedianS, spread)
		}
		if want := r.MedianS / res.Rows[0].MedianS; r.Relative != want {
			t.Errorf("%s: relative %v, want %v", r.Variant, r.Relative, want)
		}
	}
	for _, bad := range []PredictedConfig{
		{Iterations: 1, Segments: 1, ShareEvery: 1, Common: Common{NP: 1}},
		{Iterations: 0, Segments: 1, ShareEvery: 1},
		{Iterations: 1, Segments: 1, ShareEvery: 1, Common: Common{Sizes: []int{2}}},
		{Iterations: 1, Segments: 1, ShareEvery: 1, Common: Common{MaxMemory: 1}},
	} {
		if _, err := RunPredicted(context.Background(), bad); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: err %v, want ErrConfig", bad, err)
		}
	}
}
