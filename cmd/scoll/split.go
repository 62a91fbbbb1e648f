package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/bench"
	"github.com/scoll/scoll/transport/record"
	"github.com/spf13/cobra"
)

func newSplitCmd() *cobra.Command {
	var (
		cfg       bench.SplitConfig
		algs      string
		groups    string
		format    string
		maxMemory string
		progress  string
		world     bool
		recordTo  string
	)
	cmd := &cobra.Command{
		Use:   "split",
		Short: "Benchmark communicator split algorithms (Sack's scalable split)",
		Long: `split measures Comm.Split: for every split algorithm (or those named by
--algorithm) and every group representation (--group), --reps timed splits on
--np in-process ranks, each rank passing a color and a key from the patterns
--colors and --keys.

Columns: the median, fastest and slowest repetition (each repetition's time is
the slowest rank's), the memory of the new communicators' membership per rank
(mean and largest: a replicated table holds every member's address, a
distributed table about n/P' + P'), the messages and bytes all ranks sent in
one split, the slowest rank's time per phase of the algorithm, and a checksum
of the result (members, order and ranks), equal across algorithms and
representations for the same colors and keys.

Configurations whose memory estimate over all ranks exceeds --max-memory are
skipped with a note (the conventional algorithm holds n entries per rank: n²
in all).

With --world the ranks are processes (scoll run, mpirun or srun start them);
rank 0 prints.

With --record FILE, split instead runs one split (the first algorithm and
group given) with every message recorded, and writes the trace to FILE for
scoll sim --trace and scoll model --trace.`,
		Example: `  scoll split --np 4096
  scoll split --np 65536 --algorithm cheng --group distributed:16 --reps 3
  scoll split --np 1024 --colors 8 --keys reverse --format csv
  scoll run --np 8 -- scoll split --world --algorithm all
  scoll split --np 4096 --algorithm cheng --group distributed:64 --record split.trace
  scoll sim --trace split.trace --topology torus:16x16x16`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			if world {
				if cmd.Flags().Changed("np") {
					return fmt.Errorf("--np and --world: the job's size is the number of processes")
				}
				c, err := scoll.Init(cmd.Context())
				if err != nil {
					return err
				}
				defer c.Close()
				cfg.World = c
				if c.Rank() != 0 {
					stdout, stderr = io.Discard, io.Discard
				}
			}
			if algs != "" && algs != "all" {
				cfg.Algorithms = strings.Split(algs, ",")
			}
			if groups != "" {
				cfg.Groups = strings.Split(groups, ",")
			}
			if maxMemory == "0" || maxMemory == "none" {
				cfg.MaxMemory = -1
			} else {
				m, err := bench.ParseSize(maxMemory)
				if err != nil {
					return fmt.Errorf("--max-memory: %w", err)
				}
				cfg.MaxMemory = int64(m)
			}
			if recordTo != "" {
				if world {
					return fmt.Errorf("--record and --world: recording runs in-process ranks")
				}
				rec := record.New()
				if err := bench.RecordSplit(cmd.Context(), cfg, rec); err != nil {
					return err
				}
				tr, err := rec.Trace()
				if err != nil {
					return err
				}
				if err := tr.WriteFile(recordTo); err != nil {
					return err
				}
				fmt.Fprintf(stdout, "recorded %d ranks, %d rounds at most, %d messages, %s into %s\n", tr.Size, tr.Rounds(), tr.Messages(), bench.FormatSize(int(tr.Bytes())), recordTo)
				return nil
			}
			show := progress == "on" || progress == "auto" && isTerminal(os.Stderr)
			if show {
				cfg.Progress = func(p bench.SplitProgress) {
					fmt.Fprintf(stderr, "\r%s/%s: repetition %d of %d: %v   ", p.Algorithm, p.Group, p.Rep, p.Reps, p.Time.Round(1e5))
					if p.Rep == p.Reps {
						fmt.Fprintln(stderr)
					}
				}
			}
			// Rows stream as they are measured (CSV with its header first);
			// the table and JSON are written at the end.
			header := true
			if format == "csv" {
				cfg.Row = func(r bench.SplitResult) {
					bench.WriteSplitCSV(stdout, []bench.SplitResult{r}, header)
					header = false
				}
			}
			rep, err := bench.RunSplit(cmd.Context(), cfg)
			if rep != nil {
				for _, s := range rep.Skipped {
					fmt.Fprintln(stderr, s)
				}
				if format != "csv" {
					if werr := bench.WriteSplit(stdout, format, rep.Results); err == nil {
						err = werr
					}
				}
			}
			return err
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.NP, "np", 1024, "number of in-process ranks")
	f.BoolVar(&world, "world", false, "run on the processes of the job (scoll run, mpirun, srun) instead of in-process ranks")
	f.StringVar(&algs, "algorithm", "all", "split algorithms, comma-separated, or all ("+strings.Join(splitNames(), ", ")+")")
	f.StringVar(&cfg.Colors, "colors", "1", "colors: 1 (one communicator), K (rank mod K) or unique")
	f.StringVar(&cfg.Keys, "keys", "random", "keys: "+strings.Join(bench.SplitKeys(), ", "))
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of the random keys")
	f.IntVar(&cfg.Sorters, "sorters", 0, "cheng: number of sorting ranks (0: its default)")
	f.StringVar(&groups, "group", "auto", "group representations, comma-separated: table, distributed:P', auto")
	f.IntVar(&cfg.Reps, "reps", 5, "timed splits per configuration")
	f.StringVar(&format, "format", "table", "output format: table, csv or json")
	f.StringVar(&maxMemory, "max-memory", "8GiB", "skip configurations estimated to need more memory over all ranks (0: no limit)")
	f.StringVar(&progress, "progress", "auto", "report repetitions on stderr: auto (when a terminal), on, off")
	f.StringVar(&recordTo, "record", "", "record one split's messages into this trace file (for scoll sim --trace) instead of measuring")
	return cmd
}

// splitNames lists the registered split algorithms.
func splitNames() []string {
	var out []string
	for _, a := range scoll.SplitAlgorithms() {
		out = append(out, a.Name)
	}
	return out
}
