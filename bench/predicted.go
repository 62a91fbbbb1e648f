package bench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/scoll/scoll"
)

// PredictedConfig describes the experiment of Marendic et al.'s Table 5 in
// shape: repeated reductions after phases of uneven work, run with the
// binomial tree, the clairvoyant reduce fed with the arrivals a call site
// predicts (SMA), and the clairvoyant reduce told the true arrivals.
type PredictedConfig struct {
	// Ranks, Bytes (per rank, float32 elements), Iterations (reductions
	// per run) and Reps (runs per variant, alternating).
	Ranks, Bytes, Iterations, Reps int
	// Segments is the clairvoyant reduce's segment count (the paper's run:
	// 1); ShareEvery how many calls pass between two sharings of the
	// measured arrivals (WithShareEvery), whose allgather the runtime
	// includes.
	Segments, ShareEvery int
	// Work is the largest work phase; Noise the standard deviation of its
	// noise, relative to Work.
	Work  time.Duration
	Noise float64
	// Seed makes the trace.
	Seed uint64
}

// PredictedTrace returns the work phase of every rank at every iteration
// (trace[t][r]): ranks in four clusters by r mod 4 (the period-4 pattern
// of their Fig. 5), each cluster a slow wave over the iterations with its
// own phase and level, plus Gaussian noise; never negative.
func PredictedTrace(cfg PredictedConfig) [][]time.Duration {
	rng := rand.New(rand.NewPCG(cfg.Seed, 5))
	out := make([][]time.Duration, cfg.Iterations)
	for t := range out {
		out[t] = make([]time.Duration, cfg.Ranks)
		for r := range out[t] {
			c := float64(r % 4)
			wave := 0.55 + 0.1*c + 0.3*math.Sin(2*math.Pi*float64(t)/25+c*math.Pi/2)
			x := wave + cfg.Noise*rng.NormFloat64()
			out[t][r] = time.Duration(max(x, 0) / 1.25 * float64(cfg.Work))
		}
	}
	return out
}

// PredictedResult holds, per variant, the accumulated runtime of the
// reductions of each run: the sum over iterations of max(exit) −
// min(arrival) on the common clock (in process: one clock).
type PredictedResult struct {
	Variants []string
	Runs     map[string][]time.Duration
}

// Median returns the median accumulated runtime of variant v (0 without
// runs).
func (r *PredictedResult) Median(v string) time.Duration {
	x := make([]float64, len(r.Runs[v]))
	for i, d := range r.Runs[v] {
		x[i] = float64(d)
	}
	if len(x) == 0 {
		return 0
	}
	return time.Duration(Median(x))
}

// RunPredicted runs the experiment on in-process ranks.
func RunPredicted(ctx context.Context, cfg PredictedConfig) (*PredictedResult, error) {
	if cfg.Ranks < 2 || cfg.Bytes < 4 || cfg.Iterations < 1 || cfg.Reps < 1 || cfg.Segments < 1 || cfg.ShareEvery < 1 || cfg.Work < 0 || cfg.Noise < 0 {
		return nil, fmt.Errorf("bench: predicted arrivals: bad configuration %+v", cfg)
	}
	trace := PredictedTrace(cfg)
	variants := []string{"binomial", "clairvoyant (SMA)", "clairvoyant (true)"}
	res := &PredictedResult{Variants: variants, Runs: map[string][]time.Duration{}}
	for rep := range cfg.Reps {
		order := slices.Clone(variants)
		if rep%2 == 1 {
			slices.Reverse(order)
		}
		for _, v := range order {
			d, err := predictedRun(ctx, cfg, trace, v, rep)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", v, err)
			}
			res.Runs[v] = append(res.Runs[v], d)
		}
	}
	return res, nil
}

// predictedRun runs one variant's iterations and returns the accumulated
// runtime.
func predictedRun(ctx context.Context, cfg PredictedConfig, trace [][]time.Duration, variant string, rep int) (time.Duration, error) {
	var total time.Duration
	n := cfg.Bytes / 4
	err := scoll.Run(ctx, cfg.Ranks, func(ctx context.Context, c *scoll.Comm) error {
		send, recv := make([]float32, n), make([]float32, n)
		for i := range send {
			send[i] = float32(c.Rank())
		}
		times := make([]int64, 2*cfg.Iterations) // arrival, exit per iteration
		start := time.Now()
		site := fmt.Sprintf("table5-%d", rep)
		for t := range cfg.Iterations {
			if err := c.Barrier(ctx); err != nil {
				return err
			}
			time.Sleep(trace[t][c.Rank()]) // the work phase: blocking, not spinning
			opts := []scoll.CallOption{scoll.WithAlgorithm("binomial")}
			switch variant {
			case "clairvoyant (SMA)":
				opts = []scoll.CallOption{scoll.WithAlgorithm("clairvoyant"), scoll.WithSegments(cfg.Segments), scoll.WithCallSite(site),
					scoll.WithShareEvery(cfg.ShareEvery)}
			case "clairvoyant (true)":
				opts = []scoll.CallOption{scoll.WithAlgorithm("clairvoyant"), scoll.WithSegments(cfg.Segments), scoll.WithArrivals(trace[t])}
			}
			times[2*t] = int64(time.Since(start))
			if err := scoll.Reduce(ctx, c, send, recv, scoll.Sum, 0, opts...); err != nil {
				return err
			}
			times[2*t+1] = int64(time.Since(start))
		}
		all := make([]int64, len(times)*c.Size())
		if err := scoll.Gather(ctx, c, times, all, 0); err != nil {
			return err
		}
		if c.Rank() != 0 {
			return nil
		}
		for t := range cfg.Iterations {
			first, last := int64(math.MaxInt64), int64(0)
			for r := range c.Size() {
				first = min(first, all[r*len(times)+2*t])
				last = max(last, all[r*len(times)+2*t+1])
			}
			total += time.Duration(last - first)
		}
		return nil
	})
	return total, err
}
