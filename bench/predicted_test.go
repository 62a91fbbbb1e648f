package bench

import (
	"context"
	"testing"
	"time"
)

func TestPredictedTrace(t *testing.T) {
	cfg := PredictedConfig{Ranks: 8, Iterations: 50, Work: 10 * time.Millisecond, Noise: 0, Seed: 3}
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
	cfg := PredictedConfig{Ranks: 4, Bytes: 4096, Iterations: 6, Reps: 2, Segments: 2, ShareEvery: 2, Work: 2 * time.Millisecond, Noise: 0.05, Seed: 1}
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
	for _, v := range res.Variants {
		if len(res.Runs[v]) != cfg.Reps {
			t.Fatalf("%s: %d runs", v, len(res.Runs[v]))
		}
		if m := res.Median(v); m < spread*9/10 {
			t.Fatalf("%s: %v accumulated, below the trace's imbalance %v", v, m, spread)
		}
	}
	if _, err := RunPredicted(context.Background(), PredictedConfig{Ranks: 1}); err == nil {
		t.Fatal("a bad configuration ran")
	}
}
