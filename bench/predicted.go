package bench

import (
	"context"
	"fmt"
	"github.com/scoll/scoll/internal/human"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/scoll/scoll"
)

// PredictedConfig describes the experiment of Marendic et al.'s Table 5 in
// shape: repeated reductions after phases of uneven work, run with the
// binomial tree, the clairvoyant reduce fed with the arrivals a call site
// predicts (SMA), and the clairvoyant reduce told the true arrivals.
//
// Of Common, RunPredicted takes NP (the ranks, at least 2; 0: DefaultNP),
// Sizes (bytes per rank, float32 elements; nil: 1 MiB), Reps (runs per
// variant, alternating; 0: 5), Seed (of the trace) and Progress (before
// each run).
type PredictedConfig struct {
	Common
	// Iterations is the number of reductions per run.
	Iterations int
	// Segments is the clairvoyant reduce's segment count (the paper's run:
	// 1); ShareEvery how many calls pass between two sharings of the
	// measured arrivals (WithShareEvery), whose allgather the runtime
	// includes.
	Segments, ShareEvery int
	// Work is the largest work phase; Noise the standard deviation of its
	// noise, relative to Work.
	Work  time.Duration
	Noise float64
	// OnRow, when set, is given each row as soon as it is measured.
	OnRow func(PredictedRow)
}

// PredictedTrace returns the work phase of every rank at every iteration
// (trace[t][r]): ranks in four clusters by r mod 4 (the period-4 pattern
// of their Fig. 5), each cluster a slow wave over the iterations with its
// own phase and level, plus Gaussian noise; never negative.
func PredictedTrace(cfg PredictedConfig) [][]time.Duration {
	rng := rand.New(rand.NewPCG(cfg.Seed, 5))
	out := make([][]time.Duration, cfg.Iterations)
	for t := range out {
		out[t] = make([]time.Duration, cfg.NP)
		for r := range out[t] {
			c := float64(r % 4)
			wave := 0.55 + 0.1*c + 0.3*math.Sin(2*math.Pi*float64(t)/25+c*math.Pi/2)
			x := wave + cfg.Noise*rng.NormFloat64()
			out[t][r] = time.Duration(max(x, 0) / 1.25 * float64(cfg.Work))
		}
	}
	return out
}

// PredictedVariants are the variants of the experiment, in the order of
// its rows.
var PredictedVariants = []string{"binomial", "clairvoyant (SMA)", "clairvoyant (true)"}

// PredictedRow is one variant at one size: the accumulated runtime of the
// reductions of each run (the sum over iterations of max(exit) −
// min(arrival) on the common clock: in process, one clock), in seconds,
// and their median.
type PredictedRow struct {
	Bytes   int    `json:"bytes"`
	Variant string `json:"variant"`
	// MedianS is the median of RunsS; Relative it over binomial's at this
	// size.
	MedianS  float64   `json:"median_s"`
	Relative float64   `json:"relative"`
	RunsS    []float64 `json:"runs_s"`
}

// Layout implements Row: a row per variant and size; runs_s is the runs'
// times, space-separated.
func (PredictedRow) Layout() *Layout[PredictedRow] { return predictedRows }

// predictedRows is the layout of predicted-arrival rows.
var predictedRows = &Layout[PredictedRow]{
	Rows: "predicted-arrival runs",
	Columns: []Column[PredictedRow]{
		{Name: "bytes", Unit: "B", Text: func(r PredictedRow) string { return strconv.Itoa(r.Bytes) }, Head: "bytes",
			Cell: func(r PredictedRow) string { return human.Bytes(float64(r.Bytes)) }},
		{Name: "variant", Text: func(r PredictedRow) string { return r.Variant }, Head: "variant", Left: true},
		{Name: "median_s", Unit: "s", Text: func(r PredictedRow) string { return sig6(r.MedianS) }, Head: "median",
			Cell: func(r PredictedRow) string { return human.Time(r.MedianS) }},
		{Name: "relative", Text: func(r PredictedRow) string { return sig6(r.Relative) }, Head: "of binomial",
			Cell: func(r PredictedRow) string { return fixed(r.Relative, 3) }},
		{Name: "runs_s", Unit: "s", Text: func(r PredictedRow) string { return joinFloats(r.RunsS, sig6) }, Head: "runs",
			Cell: func(r PredictedRow) string {
				ts := make([]string, len(r.RunsS))
				for i, x := range r.RunsS {
					ts[i] = human.Time(x)
				}
				return strings.Join(ts, ", ")
			}, Left: true},
	},
}

// joinFloats formats xs with f, space-separated.
func joinFloats(xs []float64, f func(float64) string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = f(x)
	}
	return strings.Join(s, " ")
}

// RunPredicted runs the experiment on in-process ranks: a row per size and
// variant.
func RunPredicted(ctx context.Context, cfg PredictedConfig) (*Results[PredictedRow], error) {
	err := cfg.Common.normalize(defaults{harness: "bench.RunPredicted", np: DefaultNP, reps: 5, sizes: []int{1 << 20},
		takes: takesNP | takesSizes | takesReps | takesSeed})
	if err != nil {
		return nil, err
	}
	if cfg.NP < 2 || slices.Min(cfg.Sizes) < 4 || cfg.Iterations < 1 || cfg.Segments < 1 || cfg.ShareEvery < 1 || cfg.Work < 0 || cfg.Noise < 0 {
		return nil, fmt.Errorf("%w: predicted arrivals: np %d (≥ 2), sizes %v (≥ 4), iterations %d, segments %d, share every %d (≥ 1), work %v, noise %v (≥ 0)",
			ErrConfig, cfg.NP, cfg.Sizes, cfg.Iterations, cfg.Segments, cfg.ShareEvery, cfg.Work, cfg.Noise)
	}
	trace := PredictedTrace(cfg)
	out := &Results[PredictedRow]{}
	total := len(cfg.Sizes) * cfg.Reps * len(PredictedVariants)
	for si, size := range cfg.Sizes {
		runs := map[string][]float64{}
		for rep := range cfg.Reps {
			order := slices.Clone(PredictedVariants)
			if rep%2 == 1 {
				slices.Reverse(order)
			}
			for vi, v := range order {
				cfg.step((si*cfg.Reps+rep)*len(order)+vi, total, "%s B, %s, run %d of %d", FormatSize(size), v, rep+1, cfg.Reps)
				d, err := predictedRun(ctx, cfg, size, trace, v, rep)
				if err != nil {
					return out, fmt.Errorf("%s: %w", v, err)
				}
				runs[v] = append(runs[v], d.Seconds())
			}
		}
		base := Median(runs[PredictedVariants[0]])
		for _, v := range PredictedVariants {
			m := Median(runs[v])
			add(out, cfg.OnRow, PredictedRow{Bytes: size, Variant: v, MedianS: m, Relative: m / base, RunsS: runs[v]})
		}
	}
	cfg.ended(total)
	return out, nil
}

// predictedRun runs one variant's iterations and returns the accumulated
// runtime.
func predictedRun(ctx context.Context, cfg PredictedConfig, bytes int, trace [][]time.Duration, variant string, rep int) (time.Duration, error) {
	var total time.Duration
	n := bytes / 4
	err := cfg.run(ctx, func(ctx context.Context, c *scoll.Comm) error {
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
