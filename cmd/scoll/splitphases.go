package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/scoll/scoll/bench"
	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

func newSplitPhasesCmd() *cobra.Command {
	var (
		entries, sorters, csvOut, plotOut, from string
		cfg                                     bench.SortPhasesConfig
	)
	cmd := &cobra.Command{
		Use:   "split-phases",
		Short: "Where cheng's parallel sort spends its time (Sack's Table 2.1)",
		Long: `split-phases measures the phases of the cheng split's parallel sort as Sack's
thesis did for Table 2.1: the sort for real on p sorting ranks, the
recursive-doubling collect before it emulated (a feeder rank hands each
sorter the sorted tables of the collect's steps, 1, 2, 4, … entries, n/p in
all, which the sorter merges).

Every sorter runs on an OS thread of its own, and each phase is its thread's
CPU time, so that up to 64 sorters on a few cores still show per-sorter work
(wall-clock phases cannot shrink as n/p there). Each row is the busiest
sorter's time, the median over --reps. "total" is the busiest sorter's sum
of the four phases; "wall" the whole sort's elapsed time on this machine.`,
		Example: `  scoll split-phases --entries 1M,2M --sorters 2,4,8
  scoll split-phases --entries 1M --sorters 2,8 --plot phases.svg --csv phases.csv
  scoll split-phases --from phases.csv --plot phases.svg`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from != "" {
				// Print and plot saved rows instead of measuring.
				rows, err := readCSVFile[bench.SortPhasesRow](from)
				if err != nil {
					return err
				}
				if err := bench.WriteSortPhases(cmd.OutOrStdout(), rows); err != nil {
					return err
				}
				if plotOut != "" {
					return plotSortPhases(plotOut, rows)
				}
				return nil
			}
			ns, err := parseSizes("entries", entries)
			if err != nil {
				return err
			}
			for _, n := range ns {
				if n < 1 {
					return fmt.Errorf("--entries %q: want table sizes of at least 1", entries)
				}
				cfg.Entries = append(cfg.Entries, int64(n))
			}
			if cfg.Sorters, err = parseSizes("sorters", sorters); err != nil {
				return err
			}
			if slices.Min(cfg.Sorters) < 1 {
				return fmt.Errorf("--sorters %q: want numbers of at least 1", sorters)
			}
			stderr := cmd.ErrOrStderr()
			cfg.OnRow = func(r bench.SortPhasesRow) {
				fmt.Fprintf(stderr, "n=%s p=%d: total %.3f s (wall %.3f s)\n", bench.FormatSize(int(r.Entries)), r.Sorters, r.TotalS, r.WallS)
			}
			if !bench.HaveThreadCPU {
				fmt.Fprintln(stderr, "note: no thread CPU clock on this system; phases are wall-clock times")
			}
			res, err := bench.RunSortPhases(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			rows := res.Rows
			if err := bench.WriteSortPhases(cmd.OutOrStdout(), rows); err != nil {
				return err
			}
			if csvOut != "" {
				if err := createFile(csvOut, func(w io.Writer) error { return bench.Write(w, "csv", rows) }); err != nil {
					return err
				}
			}
			if plotOut != "" {
				return plotSortPhases(plotOut, rows)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&entries, "entries", "8M,16M,32M", "table sizes n (the communicator's size), comma-separated")
	f.StringVar(&sorters, "sorters", "2,4,8,16,32,64", "numbers of sorting ranks p, comma-separated")
	f.IntVar(&cfg.Reps, "reps", 3, "repetitions per row (medians)")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of the random keys")
	f.StringVar(&csvOut, "csv", "", "also write the rows to this CSV file")
	f.StringVar(&plotOut, "plot", "", "also draw the phases against p into this .svg or .png file")
	f.StringVar(&from, "from", "", "read the rows from this CSV (written with --csv) instead of measuring: to print or plot a saved run")
	return cmd
}

// plotSortPhases draws one panel per table size: each phase's time
// against the number of sorters.
func plotSortPhases(file string, rows []bench.SortPhasesRow) error {
	var ns []int64
	for _, r := range rows {
		if len(ns) == 0 || ns[len(ns)-1] != r.Entries {
			ns = append(ns, r.Entries)
		}
	}
	var tiles [][]*plot.Plot
	for _, n := range ns {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("cheng's parallel sort of %s entries: busiest sorter's CPU time per phase", bench.FormatSize(int(n)))
		p.X.Label.Text = "sorting ranks p"
		p.Y.Label.Text = "seconds"
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, pow2Ticks{plain: true}
		p.Legend.Top = true
		series := map[string]plotter.XYs{}
		names := bench.SortPhases[:5] // the wall time aside
		for _, r := range rows {
			if r.Entries != n {
				continue
			}
			x := float64(r.Sorters)
			for i, d := range r.Seconds()[:len(names)] {
				series[names[i]] = append(series[names[i]], plotter.XY{X: x, Y: d})
			}
		}
		var lines []any
		for _, name := range names {
			lines = append(lines, name, series[name])
		}
		if err := plotutil.AddLinePoints(p, lines...); err != nil {
			return err
		}
		tiles = append(tiles, []*plot.Plot{p})
	}
	return savePlots(file, tiles, 9*vg.Inch, vg.Length(len(tiles))*4*vg.Inch)
}
