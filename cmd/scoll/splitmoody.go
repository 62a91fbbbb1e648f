package main

import (
	"slices"
	"strconv"

	"github.com/scoll/scoll/bench"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// moodyPanels names the panels of Moody et al.'s Figures 4 and 5.
var moodyPanels = map[string]string{
	"many": "(a) many groups: one per rank",
	"few":  "(b) few groups: " + strconv.Itoa(bench.SmallGroups),
}

// plotMoody draws the shape of one of Moody et al.'s figures from the
// measured rows of bench.RunSplitFigure: per panel (group count) the time
// per split against n on log-log axes, one line per algorithm and color
// length, then the heap bytes each split allocated per rank against n
// for the first panel's variants.
func plotMoody(file string, fig bench.SplitFigure, rows []bench.SplitResult) error {
	var panels []string
	for _, v := range fig.Variants {
		if !slices.Contains(panels, v.Panel) {
			panels = append(panels, v.Panel)
		}
	}
	var algs []string
	for _, r := range rows {
		if !slices.Contains(algs, r.Algorithm) {
			algs = append(algs, r.Algorithm)
		}
	}
	// series returns the points of algorithm alg in variant v, y(r) > 0
	// only (log axes).
	series := func(alg string, v bench.SplitVariant, y func(bench.SplitResult) float64) plotter.XYs {
		var xy plotter.XYs
		for _, r := range rows {
			if r.Algorithm == alg && r.Variant == v.Name() && y(r) > 0 {
				xy = append(xy, plotter.XY{X: float64(r.NP), Y: y(r)})
			}
		}
		slices.SortFunc(xy, func(a, b plotter.XY) int { return int(a.X - b.X) })
		return xy
	}
	newPlot := func(title, ylabel string) *plot.Plot {
		p := logXPlot(title, "ranks n", ylabel, pow2Ticks{plain: true})
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, ratioTicks{}
		return p
	}
	// add draws every algorithm of the variants vs as lines of p.
	add := func(p *plot.Plot, vs []bench.SplitVariant, y func(bench.SplitResult) float64) error {
		var lines []any
		for _, alg := range algs {
			for _, v := range vs {
				xy := series(alg, v, y)
				if len(xy) == 0 {
					continue
				}
				name := alg
				if len(vs) > 1 {
					name += " " + v.Label
				}
				lines = append(lines, name, xy)
			}
		}
		return drawLines(p, lines...)
	}
	var tiles [][]*plot.Plot
	var first []bench.SplitVariant
	for i, panel := range panels {
		var vs []bench.SplitVariant
		for _, v := range fig.Variants {
			if v.Panel == panel {
				vs = append(vs, v)
			}
		}
		if i == 0 {
			first = vs
		}
		title := fig.Title
		if panel != "" {
			title = fig.Name + " " + moodyPanels[panel]
			if i == 0 {
				title = fig.Title + "\n" + title
			}
		}
		p := newPlot(title, "seconds per split")
		if err := add(p, vs, func(r bench.SplitResult) float64 { return r.MedianMs / 1e3 }); err != nil {
			return err
		}
		tiles = append(tiles, []*plot.Plot{p})
	}
	mem := newPlot(fig.Name+": heap bytes allocated per rank by one split (measured; garbage included)", "bytes per rank")
	if len(panels) > 1 {
		mem.Title.Text = fig.Name + " " + moodyPanels[panels[0]] + ": heap bytes allocated per rank by one split"
	}
	if err := add(mem, first, func(r bench.SplitResult) float64 { return r.AllocBytesPerRank }); err != nil {
		return err
	}
	tiles = append(tiles, []*plot.Plot{mem})
	if slices.ContainsFunc(rows, func(r bench.SplitResult) bool { return r.PeakBytesPerRank > 0 }) {
		pk := newPlot(fig.Name+": peak live bytes per rank during one split (measured, --peak)", "bytes per rank")
		if err := add(pk, first, func(r bench.SplitResult) float64 { return r.PeakBytesPerRank }); err != nil {
			return err
		}
		tiles = append(tiles, []*plot.Plot{pk})
	}
	return savePlots(file, tiles, 9*vg.Inch, vg.Length(len(tiles))*4.5*vg.Inch)
}
