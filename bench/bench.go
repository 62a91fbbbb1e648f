// Package bench is scoll's benchmark harness: OSU-style latency and bandwidth
// measurements of collectives on in-process ranks (scoll.Run), with results
// verified against a naive reference before they are timed.
//
// # Method
//
// For every (algorithm, size) configuration Run starts Config.NP ranks with
// scoll.Run and, on every rank:
//
//  1. fills the inputs with small integers (exactly representable in every
//     element type), runs the collective once and compares the output to a
//     reference computed locally from the known inputs of all ranks; a
//     mismatch fails the run with an error wrapping ErrVerify;
//  2. runs warm-up calls;
//  3. enters a barrier, then times back-to-back calls.
//
// The per-rank latency is that rank's timed duration divided by the number of
// timed calls. A Result reports the mean of the per-rank latencies (Avg), and
// their minimum and maximum over ranks, in microseconds, as OSU does.
//
// The time budget is enforced collectively: the timed loop runs in chunks of
// growing length, and after each chunk the ranks agree (with an Allreduce
// outside the timed region) on the largest elapsed time, so every rank runs
// the same number of calls and stops when the budget is spent or the
// iteration count is reached.
//
// # Message size
//
// Sizes are bytes per rank, as in the OSU micro-benchmarks:
//
//   - bcast, reduce, allreduce, scan, exscan: the buffer's size;
//   - allgather, gather: each rank's contribution (the receive buffer is NP
//     times larger);
//   - scatter: the block each rank receives (root's send buffer is NP times
//     larger);
//   - alltoall: the block sent to each peer (send and receive buffers are NP
//     times larger);
//   - reducescatter: each rank's send buffer, NP blocks; each rank receives
//     one block of size/NP bytes (sizes are rounded down to whole blocks);
//   - barrier: 0 (sizes are ignored).
//
// Sizes are rounded down to whole elements; a size smaller than one element
// (one per rank for reducescatter) is skipped. Bandwidth is Bytes / Avg in GB/s
// (10⁹ bytes per second): the rate at which one rank's message moves, not the
// aggregate over ranks.
//
// Reductions use scoll.Sum.
package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/scoll/scoll"
)

// ErrVerify is wrapped by the error Run returns when a collective's result
// differs from the reference.
var ErrVerify = errors.New("bench: wrong result")

// ErrConfig is wrapped by the error Run returns for an invalid Config.
var ErrConfig = errors.New("bench: invalid configuration")

// Auto is the algorithm name that lets scoll pick the algorithm (no
// scoll.WithAlgorithm option).
const Auto = "auto"

// Defaults of Config fields left zero.
const (
	// DefaultNP is the default number of ranks.
	DefaultNP = 8
	// DefaultBudget is the longest default time budget per configuration.
	DefaultBudget = 200 * time.Millisecond
	// DefaultTotal is the time the default budget aims to keep a whole run
	// within: with many configurations the budget per configuration shrinks
	// to DefaultTotal divided by their number, down to MinBudget.
	DefaultTotal = 15 * time.Second
	// MinBudget is the smallest default budget per configuration.
	MinBudget = 20 * time.Millisecond
	// DefaultMaxCall is the default Config.MaxCall.
	DefaultMaxCall = time.Second
	// DefaultMaxMemory bounds the buffers of one configuration, over all ranks.
	DefaultMaxMemory = 1 << 30
	// LargeMessage is the size above which default iteration counts are
	// those for large messages (OSU's threshold).
	LargeMessage = 8 << 10
)

// Ops returns the collectives Run can benchmark, by their scoll.Algorithms
// names.
func Ops() []string {
	return []string{"allreduce", "bcast", "reduce", "allgather", "alltoall", "reducescatter", "gather", "scatter", "scan", "exscan", "barrier"}
}

// Types returns the element type names Config.Type accepts.
func Types() []string {
	var names []string
	for _, t := range elemTypes {
		names = append(names, t.name)
	}
	return names
}

// Config describes one benchmark run: one collective, one rank count and
// element type, every algorithm and size.
type Config struct {
	// Op is the collective, one of Ops() ("" means allreduce).
	Op string
	// NP is the number of ranks (0 means DefaultNP).
	NP int
	// Algorithms are the registry names to run; empty means every algorithm
	// registered for Op. The name Auto lets scoll choose.
	Algorithms []string
	// Sizes are message sizes in bytes (see the package doc); nil means
	// DefaultSizes.
	Sizes []int
	// Type is the element type, one of Types() ("" means float32).
	Type string
	// Iters is the number of timed calls; 0 adapts to the size (1000 up to
	// LargeMessage bytes, 100 above), always bounded by Budget.
	Iters int
	// Warmup is the number of untimed calls before timing; negative means
	// none, 0 adapts to the size: 100 up to LargeMessage bytes, 10 above,
	// bounded by Budget/10, and none when the checked call alone took
	// Budget/10.
	Warmup int
	// Budget is the time budget for the timed calls of one configuration
	// (warm-up gets a tenth of it); 0 means DefaultBudget, reduced so that
	// the run's configurations take about DefaultTotal, but not below
	// MinBudget.
	Budget time.Duration
	// Root is the root of rooted collectives.
	Root int
	// Segment is the segment size in bytes for pipelined algorithms
	// (scoll.WithSegmentSize); 0 means the algorithm's default.
	Segment int
	// Grid is the process grid of topology-aware algorithms (scoll.WithGrid);
	// nil means their default.
	Grid []int
	// MaxMemory skips, before allocating anything, the configurations
	// whose estimated memory over all ranks exceeds it: their buffers, the
	// ranks themselves (RankBytes each in process), and their schedules
	// and scratch space, extrapolated from a few ranks' (see Footprint).
	// 0 means DefaultMaxMemory, negative no limit.
	MaxMemory int64
	// MaxCall stops an algorithm's sizes early: once a call at some size
	// took longer than MaxCall on average, the larger sizes of that
	// algorithm are skipped. 0 means DefaultMaxCall, negative no limit.
	MaxCall time.Duration
	// Progress, if set, is called before each configuration runs.
	Progress func(Progress)
	// OnResult, if set, is called with each result as soon as it is
	// measured, and OnSkip with each configuration skipped, as soon as it
	// is: a caller streams them instead of waiting for the Report (which
	// holds them too).
	OnResult func(Result)
	OnSkip   func(Skip)
	// World, when set, runs the benchmark as this process's rank of a job
	// of processes (the communicator of scoll.Init) instead of on NP
	// goroutines: every rank of World must call Run with the same Config,
	// and every rank gets the whole Report. NP is then World.Size().
	World *scoll.Comm
	// On picks the communicator measured: "" or "world" (the ranks'
	// world), "dup" (a duplicate of it: the same ranks through a derived
	// communicator's rank translation) or "split" (one Split of the world
	// with reversed keys: rank r is world rank NP−1−r).
	On string
}

// Progress tells which configuration Run is about to measure.
type Progress struct {
	// Done is the number of configurations finished or skipped; Total is
	// their number.
	Done, Total int
	// Algorithm is the configuration's algorithm.
	Algorithm string
	// Bytes is the configuration's size as given in Config.Sizes.
	Bytes int
}

// Result is the measurement of one configuration. Times are in
// microseconds.
type Result struct {
	// Op is the collective.
	Op string `json:"op"`
	// Algorithm is the registry name, or Auto.
	Algorithm string `json:"algorithm"`
	// Chosen is, for Auto, the algorithm scoll's default choice ran ("" if
	// it could not be told).
	Chosen string `json:"chosen,omitempty"`
	// Type is the element type.
	Type string `json:"type"`
	// NP is the number of ranks.
	NP int `json:"np"`
	// Bytes is the message size per rank (see the package doc); Count the
	// number of elements it holds.
	Bytes int `json:"bytes"`
	Count int `json:"count"`
	// Warmup and Iters are the numbers of untimed and timed calls per rank.
	Warmup int `json:"warmup"`
	Iters  int `json:"iters"`
	// AvgUs is the mean over ranks of each rank's average latency; MinUs and
	// MaxUs are the smallest and largest per-rank averages.
	AvgUs float64 `json:"avg_us"`
	MinUs float64 `json:"min_us"`
	MaxUs float64 `json:"max_us"`
	// GBps is Bytes / AvgUs in 10⁹ bytes per second (0 for barrier).
	GBps float64 `json:"gb_per_s"`
}

// Skip is a configuration Run did not measure, and why.
type Skip struct {
	// Algorithm is the algorithm skipped.
	Algorithm string `json:"algorithm"`
	// Bytes is the size skipped, or -1 when the algorithm was skipped at
	// every size.
	Bytes  int    `json:"bytes"`
	Reason string `json:"reason"`
	// Memory is, for a configuration skipped for Config.MaxMemory, the
	// estimate that exceeded it (nil for other reasons).
	Memory *Footprint
}

// Name returns the algorithm as tables show it: the registry name, or for
// Auto "auto (chosen)".
func (r Result) Name() string {
	if r.Algorithm == Auto && r.Chosen != "" {
		return r.Algorithm + " (" + r.Chosen + ")"
	}
	return r.Algorithm
}

// String describes the skip in one line.
func (s Skip) String() string {
	if s.Bytes < 0 {
		return fmt.Sprintf("skipped %s: %s", s.Algorithm, s.Reason)
	}
	return fmt.Sprintf("skipped %s at %d bytes: %s", s.Algorithm, s.Bytes, s.Reason)
}

// Report is the outcome of Run.
type Report struct {
	// Results are in the order run: by algorithm, then by size.
	Results []Result
	Skipped []Skip
	// Budget is the time budget per configuration that was used.
	Budget time.Duration
}

// config is a validated Config with defaults filled in.
type config struct {
	Config
	elemSize int
	rooted   bool
}

func (cfg Config) normalize() (*config, error) {
	c := &config{Config: cfg}
	if c.Op == "" {
		c.Op = "allreduce"
	}
	c.Op = strings.ToLower(c.Op)
	if !slices.Contains(Ops(), c.Op) {
		return nil, fmt.Errorf("%w: unknown op %q (have %s)", ErrConfig, cfg.Op, strings.Join(Ops(), ", "))
	}
	if c.World != nil {
		c.NP = c.World.Size()
	}
	if c.NP == 0 {
		c.NP = DefaultNP
	}
	if c.NP < 1 {
		return nil, fmt.Errorf("%w: np %d < 1", ErrConfig, c.NP)
	}
	if c.Type == "" {
		c.Type = "float32"
	}
	c.elemSize = elemSize(c.Type)
	if c.elemSize == 0 {
		return nil, fmt.Errorf("%w: unknown type %q (have %s)", ErrConfig, cfg.Type, strings.Join(Types(), ", "))
	}
	if c.Sizes == nil {
		c.Sizes, _ = ParseSizes(DefaultSizes)
	}
	for _, s := range c.Sizes {
		if s < 0 {
			return nil, fmt.Errorf("%w: negative size %d", ErrConfig, s)
		}
	}
	if c.Op == "barrier" {
		c.Sizes = []int{0}
	}
	if len(c.Sizes) == 0 {
		return nil, fmt.Errorf("%w: no sizes", ErrConfig)
	}
	if c.Iters < 0 {
		return nil, fmt.Errorf("%w: iters %d < 0", ErrConfig, c.Iters)
	}
	if c.Budget < 0 {
		return nil, fmt.Errorf("%w: time budget %v < 0", ErrConfig, c.Budget)
	}
	if c.Segment < 0 {
		return nil, fmt.Errorf("%w: segment size %d < 0", ErrConfig, c.Segment)
	}
	c.rooted = c.Op == "bcast" || c.Op == "reduce" || c.Op == "gather" || c.Op == "scatter"
	if c.rooted && (c.Root < 0 || c.Root >= c.NP) {
		return nil, fmt.Errorf("%w: root %d out of range [0,%d)", ErrConfig, c.Root, c.NP)
	}
	if !c.rooted {
		c.Root = 0
	}
	if c.MaxCall == 0 {
		c.MaxCall = DefaultMaxCall
	}
	switch c.On {
	case "", "world", "dup", "split":
	default:
		return nil, fmt.Errorf("%w: on %q: want world, dup or split", ErrConfig, c.On)
	}
	if c.MaxMemory == 0 {
		c.MaxMemory = DefaultMaxMemory
	}
	return c, nil
}

// algorithms resolves c.Algorithms against the registry; it returns the
// algorithms to run and those skipped for their requirements.
func (c *config) algorithms() ([]string, []Skip, error) {
	reg := scoll.Algorithms(c.Op)
	names := c.Algorithms
	if len(names) == 0 {
		for _, a := range reg {
			names = append(names, a.Name)
		}
		if len(names) == 0 {
			return nil, nil, fmt.Errorf("%w: no algorithm registered for %s", ErrConfig, c.Op)
		}
	}
	var run []string
	var skipped []Skip
	for _, n := range names {
		if n == Auto {
			run = append(run, n)
			continue
		}
		i := slices.IndexFunc(reg, func(a scoll.AlgorithmInfo) bool { return a.Name == n })
		if i < 0 {
			var have []string
			for _, a := range reg {
				have = append(have, a.Name)
			}
			return nil, nil, fmt.Errorf("%w: no %s algorithm %q (have %s, or %s)", ErrConfig, c.Op, n, strings.Join(have, ", "), Auto)
		}
		if reg[i].PowerOfTwo && bits.OnesCount(uint(c.NP)) != 1 {
			skipped = append(skipped, Skip{Algorithm: n, Bytes: -1, Reason: fmt.Sprintf("needs a power-of-two number of ranks (np=%d)", c.NP)})
			continue
		}
		if !slices.Contains(run, n) {
			run = append(run, n)
		}
	}
	return run, skipped, nil
}

// shape is the buffer layout of one configuration.
type shape struct {
	count int   // elements per message unit (block for reducescatter)
	bytes int   // reported message size
	mem   int64 // bytes of the buffers over all ranks
}

// shape returns the layout for size bytes, or a reason to skip it.
func (c *config) shape(size int) (shape, string) {
	es, np := c.elemSize, c.NP
	n := size / es
	if size > 0 && n == 0 {
		return shape{}, fmt.Sprintf("smaller than one %s element", c.Type)
	}
	// elems is the number of elements allocated over all ranks.
	N, P := int64(n), int64(np)
	var elems int64
	switch c.Op {
	case "barrier":
		return shape{}, ""
	case "bcast":
		elems = P * N
	case "allgather":
		elems = P * (N + P*N)
	case "gather", "scatter":
		elems = 2 * P * N // a block per rank, and P blocks at the root
	case "alltoall":
		elems = 2 * P * P * N
	case "reducescatter":
		if size > 0 && n < np {
			return shape{}, fmt.Sprintf("fewer than one element per rank (np=%d)", np)
		}
		n /= np
		N = int64(n)
		elems = P * (P*N + N)
		size = n * np * es
	default:
		elems = 2 * P * N
	}
	return shape{count: n, bytes: size - size%es, mem: elems * int64(es)}, ""
}

// memCheck returns, when configuration (alg, sh) is refused for memory,
// the estimate and why; else nil and "".
func (c *config) memCheck(alg string, sh shape) (*Footprint, string) {
	if c.MaxMemory <= 0 {
		return nil, ""
	}
	if f := c.footprint(alg, sh); f.Total() > c.MaxMemory {
		return &f, fmt.Sprintf("estimated memory %s over %d ranks exceeds the limit of %s", f, c.NP, FormatSize(int(c.MaxMemory)))
	}
	return nil, ""
}

// Run measures every algorithm of cfg at every size. It fails with an error
// wrapping ErrConfig for a bad configuration, ErrVerify when a result is
// wrong, or the collective's own error; algorithms that cannot run a
// configuration (scoll.ErrUnsupported) are reported in Report.Skipped.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	c, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	algs, skipped, err := c.algorithms()
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	skip := func(s Skip) {
		rep.Skipped = append(rep.Skipped, s)
		if c.OnSkip != nil {
			c.OnSkip(s)
		}
	}
	for _, s := range skipped {
		skip(s)
	}
	total := len(algs) * len(c.Sizes)
	if c.Budget == 0 {
		c.Budget = DefaultBudget
		if total > 0 {
			c.Budget = min(DefaultBudget, max(MinBudget, DefaultTotal/time.Duration(total)))
		}
	}
	rep.Budget = c.Budget
	done := 0
	for _, alg := range algs {
		slow := "" // why the remaining sizes are skipped
		for _, size := range c.Sizes {
			if ctx.Err() != nil {
				return rep, fmt.Errorf("%s: stopped after %d of %d configurations: %w", c.Op, done, total, context.Cause(ctx))
			}
			if c.Progress != nil {
				c.Progress(Progress{Done: done, Total: total, Algorithm: alg, Bytes: size})
			}
			done++
			sh, why := c.shape(size)
			if why == "" {
				why = slow
			}
			var mem *Footprint
			if why == "" {
				mem, why = c.memCheck(alg, sh)
			}
			if why != "" {
				skip(Skip{Algorithm: alg, Bytes: size, Reason: why, Memory: mem})
				continue
			}
			res, err := measure(ctx, c, alg, sh)
			if errors.Is(err, scoll.ErrUnsupported) && !errors.Is(err, ErrVerify) && ctx.Err() == nil {
				skip(Skip{Algorithm: alg, Bytes: size, Reason: err.Error()})
				continue
			}
			if err != nil {
				return rep, fmt.Errorf("%s/%s np=%d %s %d bytes: %w", c.Op, alg, c.NP, c.Type, sh.bytes, err)
			}
			rep.Results = append(rep.Results, res)
			if c.OnResult != nil {
				c.OnResult(res)
			}
			if d := time.Duration(res.AvgUs * 1e3); c.MaxCall > 0 && d > c.MaxCall {
				slow = fmt.Sprintf("a call at %d bytes took %v, more than the limit of %v", res.Bytes, d.Round(time.Millisecond), c.MaxCall)
			}
		}
	}
	if c.Progress != nil {
		c.Progress(Progress{Done: total, Total: total})
	}
	return rep, nil
}

// iterations returns the default warm-up and timed call counts for a size.
func iterations(size int) (warmup, iters int) {
	if size > LargeMessage {
		return 10, 100
	}
	return 100, 1000
}

// measure runs one configuration.
func measure(ctx context.Context, c *config, alg string, sh shape) (Result, error) {
	var opts []scoll.CallOption
	if alg != Auto {
		opts = append(opts, scoll.WithAlgorithm(alg))
	}
	if c.Segment > 0 {
		opts = append(opts, scoll.WithSegmentSize(c.Segment))
	}
	if c.Grid != nil {
		opts = append(opts, scoll.WithGrid(c.Grid...))
	}
	warm, iters := iterations(sh.bytes)
	if c.Warmup != 0 {
		warm = max(0, c.Warmup)
	}
	if c.Iters != 0 {
		iters = c.Iters
	}
	perRank := make([]float64, c.NP) // seconds per call
	var nWarm, nIters int
	var chosen string
	var choices *choiceLog
	var runOpts []scoll.Option
	if alg == Auto {
		choices = new(choiceLog)
		runOpts = append(runOpts, scoll.WithLogger(slog.New(choices)))
	}
	body := func(ctx context.Context, comm *scoll.Comm) error {
		comm, done, err := derived(ctx, comm, c.On)
		if err != nil {
			return err
		}
		defer done()
		k, err := newCase(c, comm, sh.count, opts)
		if err != nil {
			return err
		}
		first0 := choices != nil && comm.Rank() == 0
		if first0 {
			choices.arm()
		}
		t0 := time.Now()
		err = k.call(ctx)
		first := time.Since(t0)
		if first0 {
			chosen = choices.disarm()
		}
		if err != nil {
			return err
		}
		if err := k.check(); err != nil {
			return fmt.Errorf("%w: %w", ErrVerify, err)
		}
		if alg == Auto {
			// Every rank prepares the persistent form alike (preparing
			// may agree on a model); rank 0 keeps its answer when the
			// log told nothing.
			name, err := k.algorithm(ctx)
			if err != nil {
				return err
			}
			if comm.Rank() == 0 && chosen == "" {
				chosen = name
			}
		}
		warm := warm
		if c.Warmup == 0 {
			// The checked call warmed up too; when it alone took the
			// warm-up budget, skip the rest (large messages of slow
			// algorithms).
			t, err := agreeMax(ctx, comm, first.Seconds())
			if err != nil {
				return err
			}
			if t >= (c.Budget / 10).Seconds() {
				warm = 0
			}
		}
		w, _, err := loop(ctx, comm, k.call, warm, c.Budget/10)
		if err != nil {
			return err
		}
		if err := comm.Barrier(ctx); err != nil {
			return err
		}
		n, el, err := loop(ctx, comm, k.call, iters, c.Budget)
		if err != nil {
			return err
		}
		if n > 0 {
			perRank[comm.Rank()] = el.Seconds() / float64(n)
		}
		if comm.Rank() == 0 || c.World != nil {
			nWarm, nIters = w, n // the same on every rank
		}
		return nil
	}
	var err error
	if c.World != nil {
		// One rank per process: share the per-rank times.
		err = body(ctx, c.World)
		if err == nil {
			me := c.World.Rank()
			err = scoll.Allgather(ctx, c.World, []float64{perRank[me]}, perRank)
		}
	} else {
		err = scoll.Run(ctx, c.NP, body, runOpts...)
		releaseWorld(c.NP)
	}
	if err != nil {
		return Result{}, err
	}
	r := Result{Op: c.Op, Algorithm: alg, Chosen: chosen, Type: c.Type, NP: c.NP, Bytes: sh.bytes, Count: sh.count, Warmup: nWarm, Iters: nIters}
	if c.Op == "reducescatter" {
		r.Count = sh.count * c.NP
	}
	for i := range perRank {
		perRank[i] *= 1e6 // µs
	}
	r.AvgUs, r.MinUs, r.MaxUs = Mean(perRank), slices.Min(perRank), slices.Max(perRank)
	if r.AvgUs > 0 {
		r.GBps = float64(r.Bytes) / (r.AvgUs * 1e3)
	}
	return r, nil
}

// derived returns the communicator the benchmark runs on (see Config.On)
// and what releases it.
func derived(ctx context.Context, c *scoll.Comm, on string) (*scoll.Comm, func(), error) {
	var d *scoll.Comm
	var err error
	switch on {
	case "", "world":
		return c, func() {}, nil
	case "dup":
		d, err = c.Dup(ctx)
	case "split":
		d, err = c.Split(ctx, 0, c.Size()-1-c.Rank())
	default:
		return nil, nil, fmt.Errorf("%w: --on %q: want world, dup or split", ErrConfig, on)
	}
	if err != nil {
		return nil, nil, err
	}
	return d, func() { d.Close() }, nil
}

// loop calls call back to back up to maxIters times, or until the largest
// elapsed time over ranks reaches budget, and returns the number of calls and
// this rank's time spent in them. Every rank makes the same decisions: they
// depend only on values agreed by an Allreduce between chunks, which is not
// timed.
func loop(ctx context.Context, c *scoll.Comm, call func(context.Context) error, maxIters int, budget time.Duration) (int, time.Duration, error) {
	done, chunk := 0, 1
	var elapsed time.Duration
	for done < maxIters {
		n := min(chunk, maxIters-done)
		t0 := time.Now()
		for range n {
			if err := call(ctx); err != nil {
				return done, elapsed, err
			}
		}
		elapsed += time.Since(t0)
		done += n
		if done == maxIters {
			break
		}
		agreed, err := agreeMax(ctx, c, elapsed.Seconds())
		if err != nil {
			return done, elapsed, err
		}
		left := budget.Seconds() - agreed
		if left <= 0 {
			break
		}
		// Fill the budget left at the rate measured so far, growing chunks
		// at most fourfold so that one slow early estimate costs little.
		per := agreed / float64(done)
		chunk = 4 * done
		if per > 0 && left/per < float64(chunk) {
			chunk = max(1, int(left/per))
		}
	}
	return done, elapsed, nil
}

// agreeMax returns the largest x over the ranks of c.
func agreeMax(ctx context.Context, c *scoll.Comm, x float64) (float64, error) {
	out := []float64{0}
	err := scoll.Allreduce(ctx, c, []float64{x}, out, scoll.Max)
	return out[0], err
}
