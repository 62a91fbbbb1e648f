package main

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/scoll/scoll/bench"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The commands' plots (gonum.org/v1/plot) share their axes, their lines
// and their files through these helpers.

// logXPlot returns a plot with a logarithmic x axis marked by ticks, the
// title and axis labels given, and the legend at the top left.
func logXPlot(title, xlabel, ylabel string, ticks plot.Ticker) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, ticks
	p.Legend.Top, p.Legend.Left = true, true
	return p
}

// lineSet collects named lines of points, in the order their names first
// come.
type lineSet struct {
	names []string
	xy    map[string]plotter.XYs
}

// add appends the point (x, y) to the line called name.
func (l *lineSet) add(name string, x, y float64) {
	if l.xy == nil {
		l.xy = map[string]plotter.XYs{}
	}
	if _, ok := l.xy[name]; !ok {
		l.names = append(l.names, name)
	}
	l.xy[name] = append(l.xy[name], plotter.XY{X: x, Y: y})
}

// draw adds the lines to p, with their points.
func (l *lineSet) draw(p *plot.Plot) error {
	var lines []any
	for _, n := range l.names {
		lines = append(lines, n, l.xy[n])
	}
	return drawLines(p, lines...)
}

// drawLines adds lines (name, points, name, points, ...) to p with their
// points; no lines leave p as it is.
func drawLines(p *plot.Plot, lines ...any) error {
	if len(lines) == 0 {
		return nil
	}
	return plotutil.AddLinePoints(p, lines...)
}

// plotMargin is the blank border around a figure: room for the
// descenders of the axis labels and for a renderer whose font runs a little
// wider than the one the layout measured.
const plotMargin = 4 * vg.Millimeter

// savePlots draws plots stacked in one column into file, an SVG or PNG
// image (by its extension), on a white background with plotMargin on
// every side. An SVG names its fonts with fallbacks (svgFontFamilies).
func savePlots(file string, tiles [][]*plot.Plot, w, h vg.Length) error {
	var canvas vg.CanvasWriterTo
	svg := false
	switch strings.ToLower(filepath.Ext(file)) {
	case ".svg":
		canvas, svg = vgsvg.New(w, h), true
	case ".png":
		canvas = vgimg.PngCanvas{Canvas: vgimg.New(w, h)}
	default:
		return fmt.Errorf("--plot %q: want a .svg or .png file", file)
	}
	dc := draw.New(canvas)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	cs := plot.Align(tiles, draw.Tiles{Rows: len(tiles), Cols: 1, PadY: vg.Millimeter * 4,
		PadTop: plotMargin, PadBottom: plotMargin, PadLeft: plotMargin, PadRight: plotMargin}, dc)
	for i := range tiles {
		tiles[i][0].Draw(cs[i][0])
	}
	return createFile(file, func(w io.Writer) error {
		if !svg {
			_, err := canvas.WriteTo(w)
			return err
		}
		var buf bytes.Buffer
		if _, err := canvas.WriteTo(&buf); err != nil {
			return err
		}
		_, err := w.Write(svgFontFamilies(buf.Bytes()))
		return err
	})
}

// svgFamily matches a font family that gonum's SVG canvas names alone
// (style="font-family:Liberation Serif;...").
var svgFamily = regexp.MustCompile(`font-family:(Liberation (Serif|Sans|Mono));`)

// svgFallbacks gives each Liberation font (gonum/plot's, which the layout
// measures) the fonts with its metrics that browsers, Inkscape and rsvg
// find on every system, then the generic family: Times New Roman and Times
// for Serif, Arial and Helvetica for Sans, Courier New and Courier for
// Mono. The SVG stays small (no embedded font) and its text keeps the
// widths the layout gave it.
var svgFallbacks = map[string]string{
	"Serif": `'Times New Roman',Times,'Nimbus Roman',serif`,
	"Sans":  `Arial,Helvetica,'Nimbus Sans',sans-serif`,
	"Mono":  `'Courier New',Courier,'Nimbus Mono PS',monospace`,
}

// svgFontFamilies rewrites the font families of an SVG written by gonum's
// canvas to lists ending in a generic family (svgFallbacks).
func svgFontFamilies(svg []byte) []byte {
	return svgFamily.ReplaceAllFunc(svg, func(m []byte) []byte {
		sub := svgFamily.FindSubmatch(m)
		return []byte(fmt.Sprintf("font-family:'%s',%s;", sub[1], svgFallbacks[string(sub[2])]))
	})
}

// pow2Ticks marks the powers of two of a logarithmic axis (labelled 8, 1K,
// 64K, ..., or 8, 1024, 65536, ... when plain), thinned to at most a dozen
// labels.
type pow2Ticks struct{ plain bool }

// Ticks implements plot.Ticker.
func (pt pow2Ticks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	lo, hi = max(lo, 1), max(hi, 1)
	step := 1
	for (int(log2(hi))-int(log2(lo)))/step > 12 {
		step++
	}
	for e := int(log2(lo)); float64(int64(1)<<e) <= hi*1.0001 && e < 62; e += step {
		v := float64(int64(1) << e)
		if v >= lo*0.9999 {
			label := bench.FormatSize(int(v))
			if pt.plain {
				label = strconv.FormatInt(int64(v), 10)
			}
			ts = append(ts, plot.Tick{Value: v, Label: label})
		}
	}
	return ts
}

func log2(x float64) float64 { return math.Log2(x) }

// plainTicks are gonum's default ticks labelled without trailing zeros.
type plainTicks struct{}

// Ticks implements plot.Ticker.
func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', -1, 64)
		}
	}
	return ts
}
