package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/bench"
	"github.com/scoll/scoll/transport/record"
	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

func newSplitCmd() *cobra.Command {
	var (
		cfg       bench.SplitConfig
		algs      string
		groups    string
		ngroups   string
		format    string
		maxMemory string
		progress  string
		world     bool
		recordTo  string
		npList    []int
		plotTo    string
		from      string
		figure    string
	)
	cmd := &cobra.Command{
		Use:   "split",
		Short: "Benchmark communicator split algorithms (Sack's scalable split, Moody's generalized split)",
		Long: `split measures Comm.Split: for every split algorithm (or those named by
--algorithm) and every group representation (--group), --reps timed splits on
--np in-process ranks, each rank passing a color and a key from the patterns
--colors and --keys.

Moody, Ahn and de Supinski's generalized split (Comm.SplitBytes):
  --bytes        SplitBytes with byte colors and keys: 8-byte integer
                 encodings (the keys always are: Moody's integer keys)
  --color-len L  string colors of L bytes (the color's number in base 36,
                 padded with '0'), e.g. 5 or 80 as in the paper; implies --bytes
  --groups G     the number of distinct colors, Moody's way: N (one per rank,
                 "many groups"), small (` + strconv.Itoa(bench.SmallGroups) + ` colors, "few groups": the
                 paper gives no number, only "small and independent of the
                 number of processes") or a number K. It is another name for
                 --colors: --groups N is --colors unique, --groups small is
                 --colors ` + strconv.Itoa(bench.SmallGroups) + `, --groups K is --colors K (color = rank mod K);
                 give one of the two
  --no-reorder   WithoutReorder: the parent's order, keys ignored
  --no-split     WithoutSplit: one communicator of every rank, colors ignored
  --chain        WithChainGroup: the result kept as a chain (O(1) per rank)
Algorithms that refuse a configuration (the integer-only ones refuse byte
colors: ErrUnsupported) are rows saying "skipped", as are configurations the
memory guard skips.

Columns (the table's heading; CSV and JSON name, docs/json.md): np; algorithm;
variant (--figure: the configuration); group (the representation:
table, distributed:P', chain or auto); colors and keys (the patterns);
items (int, or str5/str80 for byte strings: bytes_items, color_len); does
(split+reorder, split, reorder, none, or +chain: reorder, split, chain);
median, min and max (median_ms, min_ms, max_ms: the median, fastest and
slowest repetition, each repetition's time the slowest rank's); group/rank
and group max (group_bytes_mean, group_bytes_max: the memory of the new
communicators' membership per rank, mean and largest: a replicated table
holds every member's address, a distributed table about n/P' + P', a chain
32 bytes); alloc/rank (alloc_bytes_per_rank: the heap bytes the split
allocated per rank, runtime.MemStats.TotalAlloc around each split, median
over the repetitions, less the same window around no split, over np;
garbage included, so an upper bound of the transient memory, not a peak);
peak/rank (peak_bytes_per_rank ± peak_resolution_per_rank, with --peak);
messages and bytes (all ranks, one split); checksum (of the result:
members, order and ranks, equal across algorithms, representations, and
Split and SplitBytes for the same partition and order);
phases (slowest rank), the slowest rank's time per phase. CSV and JSON also give sorters,
reps, skipped (why a configuration did not run) and est_bytes_per_rank,
the memory guard's formula per rank (an estimate, not a measurement).

--peak adds the peak live memory per rank ("peak/rank", value ± resolution):
one untimed split before the timed ones, during which the garbage collector
runs whenever the heap grows by --peak-gc percent (2) and a sampler reads,
every millisecond, the heap the last collection found live plus the goroutine
stacks; the largest reading less the one before the split, over np, is the
split's state at its peak (the new group included). The resolution is
--peak-gc percent of the live memory before the split, over np.

Configurations whose memory estimate over all ranks exceeds --max-memory are
skipped (the allgather baselines hold n entries per rank: n² in all, and
n·(color+key+16) bytes per rank with byte items).

With --world the ranks are processes (scoll run, mpirun or srun start them);
rank 0 prints.

--np takes a list (1024,4096,16384); --plot FILE then draws, against n, the
shape of Sack's Figures 2.1–2.3: the time of the conventional (allgather) and
merging splits with the time of their gather phase (communication), and the
speedup of cheng, with replicated and with distributed tables, over merge.

--figure moody3|moody4|moody5 measures the configurations of Moody et al.'s
Figures 3, 4 and 5 at every --np (results kept as chains), and --plot draws
their shape: time per split against n on log-log axes, one line per
algorithm (and color length), one panel per group count, and a panel of the
heap bytes allocated per rank.
  moody3  reorder without split, integer keys: allgather, allgather-chain,
          gather-scatter, cheng-128/512/2048/8192, bitonic, radix
  moody4  split without reorder, string colors of 5 and 80 bytes, (a) many
          groups (N) and (b) few groups (small): bitonic, hash, hash64 and the
          allgather baselines (allgather refuses string colors: skipped rows)
  moody5  split with reorder, integer keys, string colors of 5 and 80 bytes,
          many and few groups: bitonic, hash, hash64
--algorithm replaces a figure's lines; the figure sets the colors and the
generalized-split flags itself.

With --record FILE, split instead runs one split (the first algorithm and
group given, with the colors, keys and generalized-split flags given) with
every message recorded, and writes the trace to FILE for scoll sim --trace
and scoll model --trace.`,
		Example: `  scoll split --np 1024
  scoll split --np 16384 --algorithm cheng --group distributed:16 --reps 3
  scoll split --np 1024 --colors 8 --keys reverse --format csv
  scoll split --np 128,256,512 --group table,distributed:16 --plot fig2.svg
  scoll split --np 1024 --color-len 80 --groups small --no-reorder --chain --algorithm bitonic,hash,hash64
  scoll split --figure moody4 --np 16,64,256,1024 --plot moody4.svg --format csv
  scoll run --np 8 -- scoll split --world --algorithm all
  scoll split --np 512 --algorithm cheng --group distributed:64 --record split.trace
  scoll split --np 1024 --algorithm hash --color-len 5 --groups small --no-reorder --chain --record hash.trace
  scoll sim --trace split.trace --topology torus:8x8x8`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Every name is checked before anything is printed.
			if _, err := checkProgress(progress); err != nil {
				return err
			}
			if algs != "" && algs != "all" {
				for _, a := range strings.Split(algs, ",") {
					if err := checkName("algorithm", "split algorithm", a, append([]string{"all"}, splitNames()...)); err != nil {
						return err
					}
				}
			}
			if _, err := checkFormat(format); err != nil {
				return err
			}
			if err := checkName("keys", "key pattern", cfg.Keys, bench.SplitKeys()); err != nil {
				return err
			}
			if figure != "" {
				if err := checkName("figure", "figure", figure, bench.SplitFigureNames()); err != nil {
					return err
				}
			}
			fl := cmd.Flags()
			if fl.Changed("groups") {
				if fl.Changed("colors") {
					return fmt.Errorf("--groups and --colors: give one (--groups N is --colors unique, --groups small is --colors %d)", bench.SmallGroups)
				}
				cfg.Colors = ngroups
			}
			var fig bench.SplitFigure
			if figure != "" {
				var err error
				if fig, err = bench.LookupSplitFigure(figure); err != nil {
					return err
				}
				for _, name := range []string{"colors", "groups", "bytes", "color-len", "no-reorder", "no-split", "chain", "record"} {
					if fl.Changed(name) {
						return fmt.Errorf("--figure %s sets the colors and the generalized-split flags itself: drop --%s", figure, name)
					}
				}
			}
			stdout, stderr, leave, err := joinWorld(cmd, world, &cfg.World)
			if err != nil {
				return err
			}
			defer leave()
			if world {
				npList = []int{cfg.World.Size()}
			}
			if algs != "" && algs != "all" {
				cfg.Algorithms = strings.Split(algs, ",")
			}
			if groups != "" {
				cfg.Groups = strings.Split(groups, ",")
				for _, g := range cfg.Groups {
					kind, _, _ := strings.Cut(g, ":")
					if err := checkName("group", "group representation", kind, []string{"table", "distributed", "auto"}); err != nil {
						return err
					}
				}
			}
			if cfg.MaxMemory, err = parseMaxMemory(maxMemory); err != nil {
				return err
			}
			if recordTo != "" {
				cfg.NP = npList[0]
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
				fmt.Fprintf(stdout, "recorded %d ranks, %d rounds at most, %d messages, %s into %s\n", tr.Size, tr.Rounds(), tr.Messages(), fmtBytes(float64(tr.Bytes())), recordTo)
				return nil
			}
			st, err := newStatus(stderr, progress)
			if err != nil {
				return err
			}
			clear := st.Clear
			if st.Shown() {
				cfg.Progress = progressPrinter(st)
			}
			// Rows stream as they are measured (CSV, JSON lines); the
			// table is written at the end.
			out, err := bench.NewWriter[bench.SplitResult](stdout, format)
			if err != nil {
				return err
			}
			var writeErr error
			write := func(r bench.SplitResult) {
				clear()
				if err := out.Write(r); err != nil && writeErr == nil {
					writeErr = err
				}
			}
			cfg.OnRow = write
			var results []bench.SplitResult
			if from != "" {
				// Plot (or print) saved measurements instead.
				f, ferr := os.Open(from)
				if ferr != nil {
					return ferr
				}
				results, err = bench.ReadSplitCSV(f)
				f.Close()
				if figure != "" {
					keep := results[:0]
					for _, r := range results {
						if slices.ContainsFunc(fig.Variants, func(v bench.SplitVariant) bool { return v.Name() == r.Variant }) {
							keep = append(keep, r)
						}
					}
					results = keep
				}
				for _, r := range results {
					write(r)
				}
			} else if figure != "" {
				fmt.Fprintln(stderr, fig.Title)
				var rep *bench.Results[bench.SplitResult]
				rep, err = bench.RunSplitFigure(cmd.Context(), fig, cfg, npList)
				if rep != nil {
					results = rep.Rows
				}
			} else {
				for _, n := range npList {
					cfg.NP = n
					var rep *bench.Results[bench.SplitResult]
					rep, err = bench.RunSplit(cmd.Context(), cfg)
					if rep != nil {
						results = append(results, rep.Rows...)
					}
					if err != nil {
						break
					}
				}
			}
			clear()
			if cerr := out.Close(); writeErr == nil {
				writeErr = cerr
			}
			if err == nil {
				err = writeErr
			}
			if plotTo != "" && err == nil {
				measured := bench.MeasuredSplits(results)
				if figure != "" {
					err = plotMoody(plotTo, fig, measured)
				} else {
					err = plotSplit(plotTo, measured)
				}
			}
			return err
		},
	}
	f := cmd.Flags()
	addNPListFlag(f, &npList, "1024", "numbers of in-process ranks")
	f.BoolVar(&world, "world", false, "run on the processes of the job (scoll run, mpirun, srun) instead of in-process ranks")
	f.StringVar(&algs, "algorithm", "all", "split algorithms, comma-separated, or all ("+strings.Join(splitNames(), ", ")+")")
	f.StringVar(&cfg.Colors, "colors", "1", "colors: 1 (one communicator), K (rank mod K), unique (N) or small ("+strconv.Itoa(bench.SmallGroups)+")")
	f.StringVar(&ngroups, "groups", "", "number of distinct colors, Moody's way: N (one per rank), small ("+strconv.Itoa(bench.SmallGroups)+") or K; another name for --colors")
	f.StringVar(&cfg.Keys, "keys", "random", "keys: "+strings.Join(bench.SplitKeys(), ", "))
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of the random keys")
	f.IntVar(&cfg.Sorters, "sorters", 0, "cheng: number of sorting ranks (0: its default; cheng-M set their own)")
	f.StringVar(&groups, "group", "auto", "group representations, comma-separated: table, distributed:P', auto")
	f.BoolVar(&cfg.Bytes, "bytes", false, "SplitBytes with byte colors and keys (8-byte integer encodings) instead of Split")
	f.IntVar(&cfg.ColorLen, "color-len", 0, "string colors of this many bytes (e.g. 5 or 80); implies --bytes")
	f.BoolVar(&cfg.NoReorder, "no-reorder", false, "WithoutReorder: keep the parent's order (keys ignored)")
	f.BoolVar(&cfg.NoSplit, "no-split", false, "WithoutSplit: one communicator of every rank (colors ignored)")
	f.BoolVar(&cfg.Chain, "chain", false, "WithChainGroup: keep the result as a chain")
	f.StringVar(&figure, "figure", "", "measure the configurations of a figure of Moody et al.: "+strings.Join(bench.SplitFigureNames(), ", "))
	f.IntVar(&cfg.Reps, "reps", 5, "timed splits per configuration")
	f.BoolVar(&cfg.Peak, "peak", false, "measure each configuration's peak live memory per rank in one extra, untimed split")
	f.IntVar(&cfg.PeakGCPercent, "peak-gc", bench.PeakGCPercent, "with --peak: collect garbage every this percent of heap growth (the resolution; lower is finer and slower)")
	addFormatFlag(f, &format)
	f.StringVar(&maxMemory, "max-memory", "8GiB", "skip configurations estimated to need more memory over all ranks (0: no limit)")
	addProgressFlag(f, &progress)
	f.StringVar(&from, "from", "", "read the results from this CSV (written with --format csv) instead of measuring: to plot or print saved runs")
	f.StringVar(&plotTo, "plot", "", "draw the shape of Sack's Figures 2.1–2.3 (or of the --figure) against np into this .svg or .png file")
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

// plotSplit draws, against the number of ranks, the shape of Sack's
// Figures 2.1–2.3: the conventional and merging splits' times with their
// gather phases, and cheng's speedups over merge.
func plotSplit(file string, rows []bench.SplitResult) error {
	at := map[string]map[int]bench.SplitResult{} // algorithm/group → np → row
	for _, r := range rows {
		k := r.Algorithm + "/" + r.Group
		if at[k] == nil {
			at[k] = map[int]bench.SplitResult{}
		}
		at[k][r.NP] = r
	}
	var nps []int
	for _, r := range rows {
		if !slices.Contains(nps, r.NP) {
			nps = append(nps, r.NP)
		}
	}
	slices.Sort(nps)
	phase := func(r bench.SplitResult, name string) float64 {
		for _, p := range r.Phases {
			if p.Name == name {
				return p.Ms / 1e3
			}
		}
		return 0
	}
	line := func(k string, y func(bench.SplitResult) float64) plotter.XYs {
		var xy plotter.XYs
		for _, n := range nps {
			if r, ok := at[k][n]; ok {
				xy = append(xy, plotter.XY{X: float64(n), Y: y(r)})
			}
		}
		return xy
	}
	fig21 := logXPlot("Fig. 2.1 shape: allgather and merge splits, total and gather time", "ranks n", "seconds", pow2Ticks{plain: true})
	var lines []any
	for _, alg := range []string{"allgather", "merge"} {
		k := alg + "/table"
		if at[k] == nil {
			k = alg + "/auto"
		}
		if at[k] == nil {
			continue
		}
		lines = append(lines, alg+" total", line(k, func(r bench.SplitResult) float64 { return r.MedianMs / 1e3 }),
			alg+" gather", line(k, func(r bench.SplitResult) float64 { return phase(r, "gather") }))
	}
	if err := drawLines(fig21, lines...); err != nil {
		return err
	}
	speed := logXPlot("Figs. 2.2–2.3 shape: speedup of cheng over merge (tables)", "ranks n", "speedup over merge/table", pow2Ticks{plain: true})
	lines = nil
	base := at["merge/table"]
	var keys []string
	for k := range at {
		if strings.HasPrefix(k, "cheng/") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		var xy plotter.XYs
		for _, n := range nps {
			r, ok := at[k][n]
			b, okb := base[n]
			if ok && okb && r.MedianMs > 0 {
				xy = append(xy, plotter.XY{X: float64(n), Y: b.MedianMs / r.MedianMs})
			}
		}
		if len(xy) > 0 {
			lines = append(lines, k, xy)
		}
	}
	if err := drawLines(speed, lines...); err != nil {
		return err
	}
	return savePlots(file, [][]*plot.Plot{{fig21}, {speed}}, 9*vg.Inch, 9*vg.Inch)
}
