package main

import (
	"fmt"
	"github.com/scoll/scoll/algorithms"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/bench"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/tuning"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newBenchCmd() *cobra.Command {
	var (
		cfg       bench.Config
		sizes     string
		knobs     func() (algorithms.KnobValues, error)
		grid      string
		maxMemory string
		format    string
		progress  string
		tuneOut   string
		world     bool
		imb       imbalanceFlags // bench_imbalance.go
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmark a collective's algorithms on in-process ranks (OSU style)",
		Long: `bench measures the latency of a collective, for every algorithm registered for it
(or those named by --algorithm) and every message size, on --np ranks that are
goroutines of this process.

Each configuration is first run once on known inputs and its result checked
against a naive reference (a mismatch fails the command). Then, on every rank:
warm-up calls, a barrier, and back-to-back timed calls.

Columns, as the table names them, then as CSV columns and JSON keys (with
the unit): algorithm; bytes; iters (the timed calls); avg (avg_us), the mean
over ranks of each rank's average latency per call; min and max (min_us,
max_us), the extremes over ranks; rate (gb_per_s), bytes / avg. CSV and
JSON add op, type, np, count (elements), warmup and chosen. bytes is the
message size per rank as in the OSU micro-benchmarks: the buffer for bcast, reduce, allreduce, scan and
exscan; each rank's contribution for allgather and gather; each rank's block
for scatter; the block sent to each peer for alltoall; each rank's whole send
buffer for reducescatter. Reductions use sum.

Rows are printed as each configuration finishes; Ctrl-C stops the run and
keeps the rows measured. --format json writes JSON lines (an object per
row), --format osu the layout of the OSU micro-benchmarks (osu_allreduce and
the others: "# Size", "Avg Latency(us)"), a block per algorithm, to diff
against their output. With --algorithm auto, the row names the algorithm
scoll's default choice ran: "auto (ring)" (the "chosen" field of CSV and
JSON).

Configurations are skipped, with the reason on stderr, when an algorithm
cannot run them (for example power-of-two-only ones at another rank count),
or when their estimated memory exceeds --max-memory: the buffers, every
rank's schedule and scratch space (from a few ranks' schedules, built
without running them) and 64 KiB per in-process rank, counted before
anything is allocated. A run in which every configuration was skipped fails.

--tune-out writes, for every size, the fastest algorithm measured (auto rows
excluded) as a tuning file, which programs take with SCOLL_TUNING=FILE.

With --world the ranks are processes instead: each process is one rank of
the job scoll.Init finds (started by scoll run, mpirun or srun), all of them
run the same command, and rank 0 prints the results.`,
		Example: `  scoll bench
  scoll bench --np 4 --op allgather --sizes 8,1K,64KiB,1M --format csv
  scoll bench --op alltoall --algorithm pairwise,bruck --sizes 8:64K:x8 --time 1s
  scoll run --np 4 -- scoll bench --world --op allgather --sizes 1M,16M
  scoll bench --np 16 --imbalance single:rank=P-1:delay=0..3x/6 --sizes 128K --plot imb.svg
  scoll bench --np 8 --algorithm ring,recursive-doubling --format osu
  scoll bench --np 8 --sizes 8:1M:x4 --tune-out rules.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if progress, err = checkProgress(progress); err != nil {
				return err
			}
			if imb.spec != "" {
				return runImbalance(cmd, &imb, &cfg, sizes, format, progress, world)
			}
			coll, err := parseOp(cfg.Op, bench.Ops())
			if err != nil {
				return err
			}
			if err := checkName("type", "element type", cfg.Type, bench.Types()); err != nil {
				return err
			}
			if err := checkName("on", "communicator", cfg.On, []string{"world", "dup", "split"}); err != nil {
				return err
			}
			for _, a := range cfg.Algorithms {
				if err := checkAlgorithm(coll, a, bench.Auto); err != nil {
					return err
				}
			}
			if err := checkTuneOut(tuneOut); err != nil {
				return err
			}
			if cfg.Sizes, err = parseSizes("sizes", sizes); err != nil {
				return err
			}
			if cfg.Grid, err = parseGrid(grid); err != nil {
				return err
			}
			if cfg.Knobs, err = knobs(); err != nil {
				return err
			}
			if cfg.MaxMemory, err = parseMaxMemory(maxMemory); err != nil {
				return err
			}
			if cfg.MaxCall == 0 {
				cfg.MaxCall = -1
			}
			if cmd.Flags().Changed("warmup") && cfg.Warmup == 0 {
				cfg.Warmup = -1
			}
			if cmd.Flags().Changed("iters") && cfg.Reps < 1 {
				return fmt.Errorf("--iters %d: want at least 1", cfg.Reps)
			}
			if cmd.Flags().Changed("time") && cfg.Budget <= 0 {
				return fmt.Errorf("--time %v: want a positive duration", cfg.Budget)
			}
			if err := checkName("format", "format", strings.ToLower(format), bench.Formats()); err != nil {
				return err
			}
			stdout, stderr, leave, err := joinWorld(cmd, world, &cfg.World)
			if err != nil {
				return err
			}
			defer leave()
			return runBench(cmd, &cfg, benchOutput{stdout: stdout, stderr: stderr, format: format, progress: progress, tuneOut: tuneOut})
		},
	}
	f := cmd.Flags()
	addNPFlag(f, &cfg.NP, bench.DefaultNP, "number of ranks (goroutines)")
	f.StringVar(&cfg.Op, "op", defaultOp, "collective: "+strings.Join(bench.Ops(), ", "))
	f.StringSliceVar(&cfg.Algorithms, "algorithm", nil, "algorithms to run, comma-separated, \""+bench.Auto+"\" for scoll's own choice (default every algorithm registered for --op)")
	f.StringVar(&sizes, "sizes", bench.DefaultSizes, "message sizes in bytes per rank: "+sizesHelp)
	f.StringVar(&cfg.Type, "type", "float32", "element type: "+strings.Join(bench.Types(), ", "))
	f.IntVar(&cfg.Reps, "iters", 0, "timed calls per configuration (default 100,000 up to 8 KiB, 100 above; always bounded by --time)")
	f.IntVar(&cfg.Warmup, "warmup", 0, "untimed warm-up calls (default 2,000 up to 8 KiB, 10 above; bounded by a tenth of --time)")
	f.DurationVar(&cfg.Budget, "time", 0, fmt.Sprintf("time budget for the timed calls of one configuration (default %v, less when there are many configurations so the run takes about %v, at least %v)", bench.DefaultBudget, bench.DefaultTotal, bench.MinBudget))
	f.DurationVar(&cfg.MaxCall, "max-call", bench.DefaultMaxCall, "skip an algorithm's larger sizes once one call takes longer than this on average (0: no limit)")
	f.IntVar(&cfg.Root, "root", 0, "root rank of bcast, reduce, gather and scatter")
	f.StringVar(&format, "format", "table", "output format: table, csv, json (JSON lines) or osu (the OSU micro-benchmarks' layout, a block per algorithm)")
	f.StringVar(&grid, "grid", "", "process grid of topology-aware algorithms (rd-optimal, bucket, bucket3, bucket6), like 4x4x4 (default: as equal as possible in 3 dimensions)")
	knobs = knobFlags(f)
	f.StringVar(&cfg.On, "on", "world", "the communicator measured: world, dup (a duplicate: the same ranks through a derived communicator) or split (the world split with reversed ranks)")
	f.StringVar(&maxMemory, "max-memory", bench.FormatSize(bench.DefaultMaxMemory), "skip, before allocating, configurations whose estimated memory over all ranks (buffers, schedules, scratch, 64 KiB per in-process rank) exceeds this (0: no limit)")
	f.StringVar(&tuneOut, "tune-out", "", "write the fastest measured algorithm per size to this tuning file (JSON, package tuning; use it with SCOLL_TUNING)")
	addProgressFlag(f, &progress)
	imb.add(f)
	f.BoolVar(&world, "world", false, "run as one rank of a job of processes (scoll run, mpirun, srun) instead of --np goroutines")
	return cmd
}

// progressPrinter returns a bench.Common.Progress, for every harness,
// that draws st's progress line; the caller clears it.
func progressPrinter(st *status) func(bench.Progress) {
	return func(p bench.Progress) {
		if p.Done >= p.Total {
			return
		}
		st.Progress("[%d/%d] %s", p.Done+1, p.Total, p.Step)
	}
}

// joinWorld joins, with --world, this process's world communicator (Init)
// and stores it in *comm, and returns the writers the command prints to:
// the command's own on rank 0, discarding ones on the others; leave
// closes the communicator. Without --world it leaves *comm alone and
// leave does nothing. --np conflicts with --world.
func joinWorld(cmd *cobra.Command, world bool, comm **scoll.Comm) (stdout, stderr io.Writer, leave func(), err error) {
	stdout, stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
	if !world {
		return stdout, stderr, func() {}, nil
	}
	if cmd.Flags().Changed("np") {
		return nil, nil, nil, fmt.Errorf("--np and --world: the job's size is the number of processes")
	}
	c, err := scoll.Init(cmd.Context())
	if err != nil {
		return nil, nil, nil, err
	}
	if c.Rank() != 0 {
		stdout, stderr = io.Discard, io.Discard
	}
	*comm = c
	return stdout, stderr, func() { c.Close() }, nil
}

// parseMaxMemory parses --max-memory: a size, or 0 / none for no limit
// (-1).
func parseMaxMemory(s string) (int64, error) {
	if s == "0" || s == "none" {
		return -1, nil
	}
	m, err := bench.ParseSize(s)
	if err != nil {
		return 0, fmt.Errorf("--max-memory: %w", err)
	}
	return int64(m), nil
}

// benchOutput is where scoll bench writes and how.
type benchOutput struct {
	stdout, stderr io.Writer
	format         string
	progress       string
	tuneOut        string // --tune-out, "" for none
}

// runBench runs the benchmark of cfg and streams its rows to out.stdout
// as they are measured, each skip to out.stderr as it happens. An
// interrupted run (the command's context cancelled: Ctrl-C) keeps the rows
// measured and says so; a run that measured nothing fails.
func runBench(cmd *cobra.Command, cfg *bench.Config, out benchOutput) error {
	stderr := out.stderr
	st, err := newStatus(stderr, out.progress)
	if err != nil {
		return err
	}
	clear := st.Clear
	if st.Shown() {
		cfg.Progress = progressPrinter(st)
	}
	head := bench.Heading{Op: cfg.Op, Type: cfg.Type, NP: cfg.NP, Algorithms: cfg.Algorithms, MaxBytes: slices.Max(cfg.Sizes)}
	if len(head.Algorithms) == 0 {
		for _, a := range scoll.Algorithms(cfg.Op) {
			head.Algorithms = append(head.Algorithms, a.Name)
		}
	}
	stream, err := bench.NewStream(out.stdout, out.format, head)
	if err != nil {
		return err
	}
	var writeErr error
	cfg.OnRow = func(r bench.Result) {
		clear()
		if err := stream.Write(r); err != nil && writeErr == nil {
			writeErr = err
		}
	}
	memory := 0
	cfg.OnSkip = func(s bench.Skip) {
		st.Printf("scoll bench: %s\n", s)
		if s.Memory != nil {
			memory++
		}
	}
	start := time.Now()
	rep, err := bench.Run(cmd.Context(), *cfg)
	clear()
	if cerr := stream.Close(); writeErr == nil {
		writeErr = cerr
	}
	if writeErr != nil {
		return writeErr
	}
	if memory > 0 {
		fmt.Fprintf(stderr, "scoll bench: %d %s skipped for memory; raise --max-memory (0: no limit) to run %s\n",
			memory, plural(memory, "configuration", "configurations"), plural(memory, "it", "them"))
	}
	if err != nil {
		if ctx := cmd.Context(); ctx != nil && ctx.Err() != nil {
			n := 0
			if rep != nil {
				n = len(rep.Rows)
			}
			if out.tuneOut != "" {
				fmt.Fprintf(stderr, "scoll bench: --tune-out %s not written: the run did not finish\n", out.tuneOut)
			}
			return fmt.Errorf("interrupted; %d results measured (printed above): %w", n, err)
		}
		return err
	}
	if len(rep.Rows) == 0 {
		return fmt.Errorf("nothing measured: every configuration was skipped (%d, reasons above)", len(rep.Skipped))
	}
	st.Done("scoll bench: %d results in %.1fs (time budget %v per configuration)\n",
		len(rep.Rows), time.Since(start).Seconds(), rep.Budget)
	if out.tuneOut != "" && (cfg.World == nil || cfg.World.Rank() == 0) {
		f, err := tuningFile(cfg.Op, rep.Rows, benchSource(cmd))
		if err != nil {
			return err
		}
		if err := f.Write(out.tuneOut); err != nil {
			return fmt.Errorf("--tune-out: %w", err)
		}
		fmt.Fprintf(stderr, "scoll bench: wrote %d rules to %s\n", len(f.Rules), out.tuneOut)
	}
	return nil
}

// checkTuneOut fails fast, before anything is measured, when --tune-out
// names a file that cannot be created: one in a directory that does not
// exist, or a directory itself.
func checkTuneOut(path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("--tune-out %s: is a directory", path)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("--tune-out %s: directory %s: %w", path, dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("--tune-out %s: %s is not a directory", path, dir)
	}
	return nil
}

// tuningFile returns, for the collective op, a rule per size with the
// algorithm of the least average latency among results (Auto rows are not
// candidates: they are the choice being tuned), sizes in increasing order
// so that tuning.File.Add merges runs of sizes with the same winner.
func tuningFile(op string, results []bench.Result, source string) (*tuning.File, error) {
	coll, ok := schedule.ParseCollective(strings.ToLower(op))
	if !ok {
		return nil, fmt.Errorf("--tune-out: no collective %q", op)
	}
	type key struct{ np, bytes int }
	best := map[key]bench.Result{}
	var keys []key
	for _, r := range results {
		if r.Algorithm == bench.Auto {
			continue
		}
		k := key{r.NP, r.Bytes}
		b, seen := best[k]
		if !seen {
			keys = append(keys, k)
		}
		if !seen || r.AvgUs < b.AvgUs {
			best[k] = r
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("--tune-out: no algorithm but %s was measured: nothing to choose between", bench.Auto)
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.np != b.np {
			return a.np - b.np
		}
		return a.bytes - b.bytes
	})
	f := &tuning.File{Version: tuning.Version, Source: source}
	for _, k := range keys {
		f.Add(coll, k.np, k.bytes, best[k].Algorithm)
	}
	return f, f.Check()
}

// benchSource is the tuning file's Source: the command line as its flags
// were given, and the date.
func benchSource(cmd *cobra.Command) string {
	args := []string{cmd.CommandPath()}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		v := f.Value.String()
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			v = strings.Join(sv.GetSlice(), ",")
		}
		args = append(args, "--"+f.Name, v)
	})
	return strings.Join(args, " ") + ", " + time.Now().Format("2006-01-02")
}

// plural returns one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
