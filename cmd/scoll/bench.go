package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/bench"
	"github.com/spf13/cobra"
)

func newBenchCmd() *cobra.Command {
	var (
		cfg       bench.Config
		sizes     string
		segment   string
		grid      string
		maxMemory string
		format    string
		progress  string
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
warm-up calls, a barrier, and back-to-back timed calls. avg is the mean over
ranks of each rank's average latency per call, min and max the extremes over
ranks, in µs. GB/s is bytes / avg, where bytes is the message size per rank as
in the OSU micro-benchmarks: the buffer for bcast, reduce, allreduce, scan and
exscan; each rank's contribution for allgather and gather; each rank's block
for scatter; the block sent to each peer for alltoall; each rank's whole send
buffer for reducescatter. Reductions use sum.

Algorithms that cannot run the configuration (for example power-of-two-only
ones at another rank count) are skipped with a note on stderr.

With --world the ranks are processes instead: each process is one rank of
the job scoll.Init finds (started by scoll run, mpirun or srun), all of them
run the same command, and rank 0 prints the results.`,
		Example: `  scoll bench
  scoll bench --np 4 --op allgather --sizes 8,1K,64KiB,1M --format csv
  scoll bench --op alltoall --algorithm pairwise,bruck --sizes 8:64K:x8 --time 1s
  scoll run --np 4 -- scoll bench --world --op allgather --sizes 1M,16M
  scoll bench --np 16 --imbalance single:rank=P-1:delay=0..3x/6 --sizes 128K --plot imb.svg`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if imb.spec != "" {
				return runImbalance(cmd, &imb, &cfg, sizes, format, progress, world)
			}
			if cfg.NP < 1 {
				return fmt.Errorf("--np %d: want at least 1", cfg.NP)
			}
			stdout, stderr, leave, err := joinWorld(cmd, world, &cfg.World)
			if err != nil {
				return err
			}
			defer leave()
			if cfg.Sizes, err = bench.ParseSizes(sizes); err != nil {
				return err
			}
			if cfg.Grid, err = parseGrid(grid); err != nil {
				return err
			}
			if segment != "" {
				if cfg.Segment, err = bench.ParseSize(segment); err != nil {
					return fmt.Errorf("--segment: %w", err)
				}
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
			if cmd.Flags().Changed("iters") && cfg.Iters < 1 {
				return fmt.Errorf("--iters %d: want at least 1", cfg.Iters)
			}
			if cmd.Flags().Changed("time") && cfg.Budget <= 0 {
				return fmt.Errorf("--time %v: want a positive duration", cfg.Budget)
			}
			if format, err = checkFormat(format); err != nil {
				return err
			}
			show, err := showProgress(progress, stderr)
			if err != nil {
				return err
			}
			if show {
				cfg.Progress = progressPrinter(stderr)
			}
			start := time.Now()
			rep, err := bench.Run(cmd.Context(), cfg)
			if show {
				fmt.Fprint(stderr, "\r\x1b[K") // clear the progress line
			}
			if rep != nil {
				for _, s := range rep.Skipped {
					fmt.Fprintf(stderr, "scoll bench: %s\n", s)
				}
			}
			if err != nil {
				return err
			}
			if err := bench.Write(stdout, format, rep.Results); err != nil {
				return err
			}
			if show {
				fmt.Fprintf(stderr, "scoll bench: %d results in %.1fs (time budget %v per configuration)\n",
					len(rep.Results), time.Since(start).Seconds(), rep.Budget)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.NP, "np", bench.DefaultNP, "number of ranks (goroutines)")
	f.StringVar(&cfg.Op, "op", "allreduce", "collective: "+strings.Join(bench.Ops(), ", "))
	f.StringSliceVar(&cfg.Algorithms, "algorithm", nil, "algorithms to run, comma-separated, \""+bench.Auto+"\" for scoll's own choice (default every algorithm registered for --op)")
	f.StringVar(&sizes, "sizes", bench.DefaultSizes, "message sizes in bytes per rank: a list like 8,1K,64KiB,16M and ranges start:end[:xF|:+N]")
	f.StringVar(&cfg.Type, "type", "float32", "element type: "+strings.Join(bench.Types(), ", "))
	f.IntVar(&cfg.Iters, "iters", 0, "timed calls per configuration (default 1000 up to 8 KiB, 100 above; always bounded by --time)")
	f.IntVar(&cfg.Warmup, "warmup", 0, "untimed warm-up calls (default 100 up to 8 KiB, 10 above; bounded by a tenth of --time)")
	f.DurationVar(&cfg.Budget, "time", 0, fmt.Sprintf("time budget for the timed calls of one configuration (default %v, less when there are many configurations so the run takes about %v, at least %v)", bench.DefaultBudget, bench.DefaultTotal, bench.MinBudget))
	f.DurationVar(&cfg.MaxCall, "max-call", bench.DefaultMaxCall, "skip an algorithm's larger sizes once one call takes longer than this on average (0: no limit)")
	f.IntVar(&cfg.Root, "root", 0, "root rank of bcast, reduce, gather and scatter")
	addFormatFlag(f, &format)
	f.StringVar(&grid, "grid", "", "process grid of topology-aware algorithms (rd-optimal, bucket, bucket3, bucket6), like 4x4x4 (default: as equal as possible in 3 dimensions)")
	f.StringVar(&segment, "segment", "", "segment size in bytes of pipelined algorithms, like 64K (default the algorithm's own)")
	f.StringVar(&cfg.On, "on", "world", "the communicator measured: world, dup (a duplicate: the same ranks through a derived communicator) or split (the world split with reversed ranks)")
	f.StringVar(&maxMemory, "max-memory", bench.FormatSize(bench.DefaultMaxMemory), "skip sizes whose buffers over all ranks exceed this (0: no limit)")
	addProgressFlag(f, &progress)
	imb.add(f)
	f.BoolVar(&world, "world", false, "run as one rank of a job of processes (scoll run, mpirun, srun) instead of --np goroutines")
	return cmd
}

// progressPrinter returns a bench.Config.Progress that redraws one status
// line on w; the caller clears it.
func progressPrinter(w io.Writer) func(bench.Progress) {
	return func(p bench.Progress) {
		if p.Done >= p.Total {
			return
		}
		fmt.Fprintf(w, "\r\x1b[K[%d/%d] %s %s B", p.Done+1, p.Total, p.Algorithm, bench.FormatSize(p.Bytes))
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
