// Package bench is scoll's benchmark harnesses. Run measures OSU-style
// latency and bandwidth of collectives on in-process ranks (scoll.Run),
// with results verified against a naive reference before they are timed;
// RunSplit, RunSortPhases, RunImbalance and RunPredicted measure
// communicator splits, the phases of cheng's parallel sort, reductions
// under imposed arrival patterns and reductions with predicted arrivals.
// They share one configuration (Common), one shape of results (Results,
// Progress, Skip), one statistics module (Median, Quantile, ...) and one
// writer of every harness's rows as a table, CSV, JSON lines or the OSU
// layout (Layout, Write, Writer).
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
	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/human"
	"io"
	"log/slog"
	"math/bits"
	"slices"
	"strconv"
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
//
// Of Common, Run takes NP (0: DefaultNP), World, Algorithms (nil: every
// algorithm registered for Op; the name Auto lets scoll choose), Sizes
// (nil: DefaultSizes; see the package doc), Reps, Warmup, Budget,
// MaxMemory, Progress (before each configuration) and OnSkip:
//
//   - Reps is the number of timed calls; 0 adapts to the size (1000 up to
//     LargeMessage bytes, 100 above), always bounded by Budget.
//   - Warmup is the number of untimed calls before timing; negative means
//     none, 0 adapts to the size: 100 up to LargeMessage bytes, 10 above,
//     bounded by Budget/10, and none when the checked call alone took
//     Budget/10.
//   - Budget is the time budget for the timed calls of one configuration
//     (warm-up gets a tenth of it); 0 means DefaultBudget, reduced so that
//     the run's configurations take about DefaultTotal, but not below
//     MinBudget.
//   - MaxMemory skips, before allocating anything, the configurations
//     whose estimated memory over all ranks exceeds it: their buffers,
//     the ranks themselves (RankBytes each in process), and their
//     schedules and scratch space, extrapolated from a few ranks' (see
//     Footprint).
//   - With World every rank gets the whole Report.
type Config struct {
	Common
	// Op is the collective, one of Ops() ("" means allreduce).
	Op string
	// Type is the element type, one of Types() ("" means float32).
	Type string
	// Root is the root of rooted collectives.
	Root int
	// Knobs are the algorithms' knobs the calls set (scoll.WithKnob: the
	// segment size in bytes, the radix, ...; 0: each algorithm's default).
	Knobs algorithms.KnobValues
	// Grid is the process grid of topology-aware algorithms (scoll.WithGrid);
	// nil means their default.
	Grid []int
	// MaxCall stops an algorithm's sizes early: once a call at some size
	// took longer than MaxCall on average, the larger sizes of that
	// algorithm are skipped. 0 means DefaultMaxCall, negative no limit.
	MaxCall time.Duration
	// On picks the communicator measured: "" or "world" (the ranks'
	// world), "dup" (a duplicate of it: the same ranks through a derived
	// communicator's rank translation) or "split" (one Split of the world
	// with reversed keys: rank r is world rank NP−1−r).
	On string
	// OnRow, if set, is given each result as soon as it is measured.
	OnRow func(Result)
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

// Name returns the algorithm as tables show it: the registry name, or for
// Auto "auto (chosen)".
func (r Result) Name() string {
	if r.Algorithm == Auto && r.Chosen != "" {
		return r.Algorithm + " (" + r.Chosen + ")"
	}
	return r.Algorithm
}

// Report is the outcome of Run: the results in the order run (by
// algorithm, then by size) and the configurations skipped.
type Report struct {
	Results[Result]
	// Budget is the time budget per configuration that was used.
	Budget time.Duration
}

// Layout implements Row: a Result's columns are its JSON fields (CSV:
// op, algorithm, type, np, bytes, count, warmup, iters, avg_us, min_us,
// max_us, gb_per_s, chosen); the table has the algorithm as Name gives it,
// bytes, iters, avg, min and max in µs and GB/s, a comment line naming
// the op, type and rank count, and a blank line between algorithms; the
// OSU layout has a block per algorithm.
func (Result) Layout() *Layout[Result] { return resultRows }

var resultRows = resultLayout(nil)

// Heading is what a streamed table of results knows before the first
// one: the common fields of its results, and for the table's column
// widths the algorithms and sizes the run will measure (a longer name or
// larger number later only shifts its row).
type Heading struct {
	Op, Type string
	NP       int
	// Algorithms are the names of the rows to come (Auto included).
	Algorithms []string
	// MaxBytes is the largest size to come.
	MaxBytes int
}

// NewStream returns a Writer of results to w in one of Formats() whose
// table is written row by row, in columns that fit the rows h announces:
// the algorithm names (Auto with the longest name scoll could choose),
// the largest size, and room for up to a million calls, 1 s per call and
// 999 GB/s.
func NewStream(w io.Writer, format string, h Heading) (*Writer[Result], error) {
	return newWriter(w, format, resultLayout(&h))
}

// resultLayout returns the layout of results, streamed with widths for
// the rows h announces when h is not nil.
func resultLayout(h *Heading) *Layout[Result] {
	us := func(f func(Result) float64) (csv, table func(Result) string) {
		return func(r Result) string { return fixed(f(r), 3) }, func(r Result) string { return human.Time(f(r) * 1e-6) }
	}
	avg, avgCell := us(func(r Result) float64 { return r.AvgUs })
	lo, loCell := us(func(r Result) float64 { return r.MinUs })
	hi, hiCell := us(func(r Result) float64 { return r.MaxUs })
	l := &Layout[Result]{
		Rows: "collective results",
		Columns: []Column[Result]{
			{Name: "op", Text: func(r Result) string { return r.Op }},
			{Head: "algorithm", Cell: Result.Name, Left: true},
			{Name: "algorithm", Text: func(r Result) string { return r.Algorithm }},
			{Name: "type", Text: func(r Result) string { return r.Type }},
			{Name: "np", Text: func(r Result) string { return strconv.Itoa(r.NP) }},
			{Name: "bytes", Unit: "B", Text: func(r Result) string { return strconv.Itoa(r.Bytes) }, Head: "bytes",
				Cell: func(r Result) string { return human.Bytes(float64(r.Bytes)) }},
			{Name: "count", Text: func(r Result) string { return strconv.Itoa(r.Count) }},
			{Name: "warmup", Text: func(r Result) string { return strconv.Itoa(r.Warmup) }},
			{Name: "iters", Text: func(r Result) string { return strconv.Itoa(r.Iters) }, Head: "iters"},
			{Name: "avg_us", Unit: "us", Text: avg, Head: "avg", Cell: avgCell},
			{Name: "min_us", Unit: "us", Text: lo, Head: "min", Cell: loCell},
			{Name: "max_us", Unit: "us", Text: hi, Head: "max", Cell: hiCell},
			{Name: "gb_per_s", Unit: "GB/s", Text: func(r Result) string { return fixed(r.GBps, 4) }, Head: "rate",
				Cell: func(r Result) string { return human.Rate(r.GBps * 1e3) }},
			{Name: "chosen", Text: func(r Result) string { return r.Chosen }},
		},
		Comment: tableComment,
		Group:   func(r Result) string { return r.Algorithm },
		OSU: &OSU[Result]{Title: osuTitle, Bytes: func(r Result) int { return r.Bytes },
			AvgUs: func(r Result) float64 { return r.AvgUs }},
	}
	if h == nil {
		return l
	}
	l.Stream = true
	name := 0
	for _, a := range h.Algorithms {
		n := len(a)
		if a == Auto {
			for _, in := range scoll.Algorithms(h.Op) {
				n = max(n, len(Auto)+len(in.Name)+3)
			}
		}
		name = max(name, n)
	}
	widths := map[string]int{"algorithm": name, "bytes": len("1.465 KiB"), "iters": len("1000000"),
		"avg": len("999.9 ms"), "min": len("999.9 ms"), "max": len("999.9 ms"), "rate": len("999.99 MB/s")}
	for i := range l.Columns {
		l.Columns[i].Width = widths[l.Columns[i].Head]
	}
	return l
}

// tableComment is the table's first line.
func tableComment(r Result) string {
	sum := ""
	if reduces(r.Op) {
		sum = " (sum)"
	}
	return fmt.Sprintf("scoll bench: %s%s%s, np=%d; latency per call (avg, min, max over ranks); rate = bytes/avg", r.Op, sum, typeOfRow(r), r.NP)
}

// typeOfRow is ", type" of a row's titles, nothing for barrier.
func typeOfRow(r Result) string {
	if r.Op == "barrier" {
		return ""
	}
	return ", " + r.Type
}

// osuNames are the collectives' names in the OSU tests' titles.
var osuNames = map[string]string{
	"allreduce": "Allreduce", "bcast": "Broadcast", "reduce": "Reduce", "allgather": "Allgather",
	"alltoall": "All-to-All Personalized Exchange", "reducescatter": "Reduce_scatter", "gather": "Gather",
	"scatter": "Scatter", "scan": "Scan", "exscan": "Exscan", "barrier": "Barrier",
}

// osuTitle is the title of an algorithm's OSU block: the test's title
// naming scoll and the algorithm.
func osuTitle(r Result) string {
	name := osuNames[r.Op]
	if name == "" {
		name = r.Op
	}
	alg := r.Algorithm
	if alg == Auto {
		alg = Auto + " (scoll's default choice)"
	}
	return fmt.Sprintf("scoll %s Latency Test, algorithm %s%s, np=%d", name, alg, typeOfRow(r), r.NP)
}

func reduces(op string) bool {
	switch op {
	case "allreduce", "reduce", "reducescatter", "scan", "exscan":
		return true
	}
	return false
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
	sizes, _ := ParseSizes(DefaultSizes)
	if c.Op == "barrier" {
		c.Sizes = []int{0}
	}
	err := c.Common.normalize(defaults{harness: "bench.Run", np: DefaultNP, sizes: sizes,
		takes: takesNP | takesWorld | takesAlgorithms | takesSizes | takesReps | takesWarmup | takesBudget | takesMaxMemory})
	if err != nil {
		return nil, err
	}
	if c.Type == "" {
		c.Type = "float32"
	}
	c.elemSize = elemSize(c.Type)
	if c.elemSize == 0 {
		return nil, fmt.Errorf("%w: unknown type %q (have %s)", ErrConfig, cfg.Type, strings.Join(Types(), ", "))
	}
	for _, k := range algorithms.Knobs() {
		if err := k.Check(c.Knobs[k.Index()]); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
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
	for _, s := range skipped {
		skip(&c.Common, &rep.Results, s)
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
			c.step(done, total, "%s %s B", alg, FormatSize(size))
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
				skip(&c.Common, &rep.Results, Skip{Algorithm: alg, Bytes: size, Reason: why, Memory: mem})
				continue
			}
			res, err := measure(ctx, c, alg, sh)
			if errors.Is(err, scoll.ErrUnsupported) && !errors.Is(err, ErrVerify) && ctx.Err() == nil {
				skip(&c.Common, &rep.Results, Skip{Algorithm: alg, Bytes: size, Reason: err.Error()})
				continue
			}
			if err != nil {
				return rep, fmt.Errorf("%s/%s np=%d %s %d bytes: %w", c.Op, alg, c.NP, c.Type, sh.bytes, err)
			}
			add(&rep.Results, c.OnRow, res)
			if d := time.Duration(res.AvgUs * 1e3); c.MaxCall > 0 && d > c.MaxCall {
				slow = fmt.Sprintf("a call at %d bytes took %v, more than the limit of %v", res.Bytes, d.Round(time.Millisecond), c.MaxCall)
			}
		}
	}
	c.ended(total)
	return rep, nil
}

// iterations returns the default warm-up and timed call counts for a size.
func iterations(size int) (warmup, iters int) {
	if size > LargeMessage {
		return 10, 100
	}
	// A call of a microsecond needs many for a stable mean: 1,000 took
	// about a millisecond and read 2-4x the steady state between
	// processes. The time budget bounds the slow ones.
	return smallWarmup, smallIters
}

// The default warm-up and timed calls of sizes up to LargeMessage.
const (
	smallWarmup = 2000
	smallIters  = 100000
)

// measure runs one configuration.
func measure(ctx context.Context, c *config, alg string, sh shape) (Result, error) {
	var opts []scoll.CallOption
	if alg != Auto {
		opts = append(opts, scoll.WithAlgorithm(alg))
	}
	for _, k := range algorithms.Knobs() {
		if v := c.Knobs[k.Index()]; v != 0 {
			opts = append(opts, scoll.WithKnob(k.Name, v))
		}
	}
	if c.Grid != nil {
		opts = append(opts, scoll.WithGrid(c.Grid...))
	}
	warm, iters := iterations(sh.bytes)
	if c.Warmup != 0 {
		warm = max(0, c.Warmup)
	}
	if c.Reps != 0 {
		iters = c.Reps
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
	err := c.run(ctx, body, runOpts...)
	if err == nil && c.World != nil {
		// One rank per process: share the per-rank times.
		me := c.World.Rank()
		err = scoll.Allgather(ctx, c.World, []float64{perRank[me]}, perRank)
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
