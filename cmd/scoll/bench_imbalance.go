package main

import (
	"fmt"
	"image/color"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/scoll/scoll/bench"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// scoll bench --imbalance: the reduce algorithms under imposed arrival
// patterns (bench.RunImbalance), after Marendic et al., sec. 6 and 7.

// imbalanceFlags are the flags of scoll bench that only --imbalance reads.
type imbalanceFlags struct {
	spec, sync, reference, wait, plot, from string
	segments, resamples                     int
	roundTime                               time.Duration
	seed                                    uint64
}

// add registers the flags.
func (im *imbalanceFlags) add(f *pflag.FlagSet) {
	f.StringVar(&im.spec, "imbalance", "", "benchmark reduce under an arrival pattern instead (Marendic et al.): "+
		"single:rank=P-1:delay=D, alternating:even=D:odd=D, uniform:max=D, normal:sd=D, gamma:k=K,theta=D, bernoulli:p=Q:delay=D or trace:FILE; "+
		"the delay-like parameter takes lists and ranges: delay=0,100us,200us or delay=0..3x/6 (x: the balanced runtime of clairvoyant, else of --reference)")
	f.StringVar(&im.sync, "sync", "barrier", "--imbalance: synchronisation before each measurement: barrier (two barriers) or window (common start times t0 + i·window)")
	f.StringVar(&im.reference, "reference", "", "--imbalance: algorithm the others' median runtimes are divided by and tested against (default clairvoyant when it runs, else the first)")
	f.StringVar(&im.wait, "wait", "auto", "--imbalance: how ranks wait for their delay: sleep (timers), spin, or auto (spin only for processes with a CPU each)")
	f.StringVar(&im.plot, "plot", "", "--imbalance: also draw the runtime relative to the reference and the normalized absorption against the imbalance, per size, to this .svg or .png file")
	f.StringVar(&im.from, "from", "", "--imbalance: read the points from this CSV (written with --format csv) instead of measuring, to print or --plot a saved run (give the run's --np)")
	f.IntVar(&im.segments, "segments", 0, "--imbalance: segments of the clairvoyant reduce (default its own)")
	f.DurationVar(&im.roundTime, "round-time", 0, "--imbalance: round time of the clairvoyant reduce (default its own estimate)")
	f.IntVar(&im.resamples, "resamples", bench.DefaultResamples, "--imbalance: relabellings of each permutation test")
	f.Uint64Var(&im.seed, "seed", 1, "--imbalance: seed of random patterns and of the resampling")
}

// runImbalance is scoll bench with --imbalance: cfg holds the flags scoll
// bench shares with it (np, algorithms, iterations, world).
func runImbalance(cmd *cobra.Command, im *imbalanceFlags, cfg *bench.Config, sizes, format, progress string, world bool) error {
	f := cmd.Flags()
	for _, name := range []string{"op", "type", "time", "max-call", "root", "grid", "segment", "on", "max-memory", "tune-out"} {
		if f.Changed(name) {
			return fmt.Errorf("--%s does not apply to --imbalance (reduce of int32 with sum to root 0)", name)
		}
	}
	ic := bench.ImbalanceConfig{
		Common:    bench.Common{NP: cfg.NP, Algorithms: cfg.Algorithms, Reps: cfg.Reps, Warmup: cfg.Warmup, Seed: im.seed},
		Reference: im.reference, Sync: im.sync, Wait: im.wait, Segments: im.segments, RoundTime: im.roundTime, Resamples: im.resamples,
	}
	if f.Changed("warmup") && ic.Warmup == 0 {
		ic.Warmup = -1
	}
	if f.Changed("iters") && ic.Reps < 1 {
		return fmt.Errorf("--iters %d: want at least 1", ic.Reps)
	}
	var err error
	if ic.Imbalance, err = bench.ParseImbalance(im.spec); err != nil {
		return err
	}
	if ic.Imbalance.Kind == "trace" {
		fh, err := os.Open(ic.Imbalance.File)
		if err != nil {
			return err
		}
		ic.Imbalance.Trace, err = bench.ReadTrace(fh)
		fh.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", ic.Imbalance.File, err)
		}
	}
	if f.Changed("sizes") {
		if ic.Sizes, err = parseSizes("sizes", sizes); err != nil {
			return err
		}
	}
	if _, err := bench.NewWriter[bench.ImbalancePoint](io.Discard, format); err != nil {
		return err // before joining a world
	}
	if im.from != "" {
		return replotImbalance(cmd, im, ic.NP, format)
	}
	stdout, stderr, leave, err := joinWorld(cmd, world, &ic.World)
	if err != nil {
		return err
	}
	defer leave()
	st, err := newStatus(stderr, progress)
	if err != nil {
		return err
	}
	if st.Shown() {
		ic.Progress = progressPrinter(st)
	}
	out, _ := bench.NewWriter[bench.ImbalancePoint](stdout, format)
	// The points stream as their levels end (CSV, JSON lines); the table
	// is written when the run ends.
	var writeErr error
	ic.OnRow = func(p bench.ImbalancePoint) {
		st.Clear()
		if err := out.Write(p); err != nil && writeErr == nil {
			writeErr = err
		}
	}
	rep, err := bench.RunImbalance(cmd.Context(), ic)
	st.Clear()
	if cerr := out.Close(); writeErr == nil {
		writeErr = cerr
	}
	if rep != nil {
		for _, s := range rep.Skipped {
			fmt.Fprintf(stderr, "scoll bench: %s\n", s)
		}
	}
	if err != nil {
		return err
	}
	if writeErr != nil {
		return writeErr
	}
	if ic.World != nil && ic.World.Rank() != 0 {
		return nil // rank 0 has the points
	}
	// The summary follows a table; after CSV or JSON lines it goes to
	// stderr, so that stdout stays one format.
	sum := stdout
	if f := strings.ToLower(format); f == "csv" || f == "json" {
		sum = stderr
	}
	fmt.Fprint(sum, rep.Summary())
	if im.plot != "" {
		return plotImbalance(im.plot, rep)
	}
	return nil
}

// replotImbalance prints (and with --plot draws) the points of a saved
// run, read from im.from, a CSV of scoll bench --imbalance --format csv.
func replotImbalance(cmd *cobra.Command, im *imbalanceFlags, np int, format string) error {
	rows, err := readCSVFile[bench.ImbalancePoint](im.from)
	if err != nil {
		return err
	}
	rep := &bench.ImbalanceReport{Results: bench.Results[bench.ImbalancePoint]{Rows: rows}, Pattern: im.spec, NP: np, Reference: im.reference}
	if rep.Reference == "" && len(rows) > 0 {
		rep.Reference = rows[0].Algorithm
		for _, r := range rows {
			if r.Algorithm == "clairvoyant" {
				rep.Reference = r.Algorithm
			}
		}
	}
	if err := bench.Write(cmd.OutOrStdout(), format, rows); err != nil {
		return err
	}
	if im.plot != "" {
		return plotImbalance(im.plot, rep)
	}
	return nil
}

// plotImbalance draws, for each size, Marendic et al.'s Fig. 12 (median
// runtime relative to the reference against the absolute imbalance, with
// the significance of the worst permutation test among the algorithms
// marked on y = 1: circle p ≤ 0.001, triangle ≤ 0.01, diamond ≤ 0.05, red
// downward triangle not significant) and Fig. 13 (normalized absorption
// A/t(π) against the absolute imbalance).
func plotImbalance(file string, rep *bench.ImbalanceReport) error {
	var sizes []int
	for _, p := range rep.Rows {
		if len(sizes) == 0 || sizes[len(sizes)-1] != p.Bytes {
			sizes = append(sizes, p.Bytes)
		}
	}
	var tiles [][]*plot.Plot
	for _, size := range sizes {
		rel, abs := plot.New(), plot.New()
		rel.Title.Text = fmt.Sprintf("reduce, %s per rank, %d ranks: median runtime relative to %s\narrivals %s",
			sizeLabel(size), rep.NP, rep.Reference, rep.Pattern)
		abs.Title.Text = fmt.Sprintf("reduce, %s per rank: normalized absorption", sizeLabel(size))
		rel.Y.Label.Text, abs.Y.Label.Text = "median runtime / "+rep.Reference+"'s", "A_N = A / t(π)"
		scriptLabel(&abs.Y.Label.TextStyle)
		for _, p := range []*plot.Plot{rel, abs} {
			p.X.Label.Text = "absolute imbalance I (µs)"
			p.X.Tick.Marker, p.Y.Tick.Marker = plainTicks{}, plainTicks{}
		}
		var ratios, absorption lineSet
		worst := map[float64]float64{} // imbalance → largest p
		for _, p := range rep.Rows {
			if p.Bytes != size {
				continue
			}
			absorption.add(p.Algorithm, p.ImbalanceUs, p.AbsorptionN)
			if p.Algorithm != rep.Reference {
				ratios.add(p.Algorithm, p.ImbalanceUs, p.Ratio)
				worst[p.ImbalanceUs] = max(worst[p.ImbalanceUs], p.P)
			}
		}
		if err := ratios.draw(rel); err != nil {
			return err
		}
		if err := absorption.draw(abs); err != nil {
			return err
		}
		if err := addSignificance(rel, worst); err != nil {
			return err
		}
		tiles = append(tiles, []*plot.Plot{rel}, []*plot.Plot{abs})
	}
	return savePlots(file, tiles, 8*vg.Inch, vg.Length(len(tiles))*3.5*vg.Inch)
}

// significance classes of a p-value, as Marendic et al.'s Fig. 12 marks them.
var significance = []struct {
	max   float64
	label string
	shape draw.GlyphDrawer
	color color.Color
}{
	{0.001, "p ≤ 0.001", draw.CircleGlyph{}, color.Black},
	{0.01, "p ≤ 0.01", draw.PyramidGlyph{}, color.Black},
	{0.05, "p ≤ 0.05", diamondGlyph{}, color.Black},
	{2, "p > 0.05", downTriangleGlyph{}, color.RGBA{R: 220, A: 255}},
}

// addSignificance marks on y = 1 each imbalance with the class of its
// largest p-value.
func addSignificance(p *plot.Plot, worst map[float64]float64) error {
	xs := slices.Sorted(maps.Keys(worst)) // in order: the same file every time
	for i, s := range significance {
		var pts plotter.XYs
		for _, x := range xs {
			if pv := worst[x]; pv <= s.max && (i == 0 || pv > significance[i-1].max) {
				pts = append(pts, plotter.XY{X: x, Y: 1})
			}
		}
		if len(pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Shape: s.shape, Color: s.color, Radius: vg.Points(3.5)}
		p.Add(sc)
		p.Legend.Add(s.label, sc)
	}
	return nil
}

// diamondGlyph is a filled rhombus; downTriangleGlyph a filled triangle
// pointing down.
type (
	diamondGlyph      struct{}
	downTriangleGlyph struct{}
)

// DrawGlyph implements draw.GlyphDrawer.
func (diamondGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius * 1.3
	c.FillPolygon(sty.Color, []vg.Point{{X: pt.X, Y: pt.Y + r}, {X: pt.X + r, Y: pt.Y}, {X: pt.X, Y: pt.Y - r}, {X: pt.X - r, Y: pt.Y}})
}

// DrawGlyph implements draw.GlyphDrawer.
func (downTriangleGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius * 1.2
	c.FillPolygon(sty.Color, []vg.Point{{X: pt.X - r, Y: pt.Y + r/2}, {X: pt.X + r, Y: pt.Y + r/2}, {X: pt.X, Y: pt.Y - r}})
}
