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

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
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
	if _, ok := ticks.(pow10Ticks); ok {
		scriptLabel(&p.X.Tick.Label)
	}
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

// logY puts p's y axis on a logarithmic scale marked by ratioTicks when
// the lines span more than a factor of ten and all their values are
// positive (a logarithmic axis has no room for zero).
func logY(p *plot.Plot, l *lineSet) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, xy := range l.xy {
		for _, q := range xy {
			lo, hi = min(lo, q.Y), max(hi, q.Y)
		}
	}
	if lo > 0 && hi > 10*lo {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, ratioTicks{}
	}
}

// densePoints is the number of points of a line above which its points
// would touch: such lines are drawn without their points.
const densePoints = 40

// draw adds the lines to p, with their points unless a line has more
// than densePoints.
func (l *lineSet) draw(p *plot.Plot) error {
	var lines []any
	dense := false
	for _, n := range l.names {
		lines = append(lines, n, l.xy[n])
		dense = dense || len(l.xy[n]) > densePoints
	}
	if dense {
		return plotutil.AddLines(p, lines...)
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

// legendGap separates a plot from its legend; legendPad follows the
// legend, room for a renderer whose font runs wider than the measured one.
const legendGap, legendPad = 3 * vg.Millimeter, 6 * vg.Millimeter

// savePlots draws plots stacked in one column into file, an SVG or PNG
// image (by its extension), on a white background with plotMargin on
// every side. Each plot's legend stands to the right of its data area,
// where it covers no data: the image is w plus the widest legend wide, and
// a legend taller than its plot's data area is set in a smaller font. An
// SVG names its fonts with fallbacks (svgFontFamilies).
func savePlots(file string, tiles [][]*plot.Plot, w, h vg.Length) error {
	legends := make([]plot.Legend, len(tiles))
	for i, row := range tiles {
		legends[i] = row[0].Legend
		row[0].Legend = plot.NewLegend() // drawn apart, below
		defer func() { row[0].Legend = legends[i] }()
	}
	// The room a plot's data area leaves at most: its tile less the
	// margins, the title and the x axis (about 60 points).
	tileH := (h-2*plotMargin)/vg.Length(len(tiles)) - 60
	var lw vg.Length
	for i := range legends {
		l := &legends[i]
		l.Top, l.Left, l.XOffs, l.YOffs = true, true, 0, 0
		r := l.Rectangle(draw.Canvas{})
		if r.Size().X == 0 {
			continue
		}
		if tall := r.Size().Y; tall > tileH && tileH > 0 {
			l.TextStyle.Font.Size = max(l.TextStyle.Font.Size*tileH/tall, 6)
			r = l.Rectangle(draw.Canvas{})
		}
		lw = max(lw, r.Size().X+legendGap+legendPad)
	}
	w += lw
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
		PadTop: plotMargin, PadBottom: plotMargin, PadLeft: plotMargin, PadRight: plotMargin}, draw.Crop(dc, 0, -lw, 0, 0))
	for i := range tiles {
		tiles[i][0].Draw(cs[i][0])
		data := tiles[i][0].DataCanvas(cs[i][0])
		lc := dc
		lc.Min = vg.Point{X: cs[i][0].Max.X + legendGap, Y: data.Min.Y}
		lc.Max = vg.Point{X: dc.Max.X - plotMargin, Y: data.Max.Y}
		legends[i].Draw(lc)
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

// sizeLabel writes a size in bytes for a title or label: 8 B, 128 KiB,
// 4 MiB, or 1000 B when no binary unit divides it.
func sizeLabel(n int) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.Itoa(n>>u.shift) + " " + u.name
		}
	}
	return strconv.Itoa(n) + " B"
}

// pow2Ticks marks the powers of two of a logarithmic axis (labelled 8 B,
// 1 KiB, 64 KiB, ..., or 8, 1024, 65536, ... when plain), thinned to at
// most a dozen labels.
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
			label := sizeLabel(int(v))
			if pt.plain {
				label = strconv.FormatInt(int64(v), 10)
			}
			ts = append(ts, plot.Tick{Value: v, Label: label})
		}
	}
	return ts
}

func log2(x float64) float64 { return math.Log2(x) }

// ratioTicks marks a logarithmic axis of ratios at 1, 2 and 5 times the
// powers of ten, labelled plainly (0.5, 1, 2, 5, 10, 20), with
// unlabelled minor ticks between.
type ratioTicks struct{}

// Ticks implements plot.Ticker.
func (ratioTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := pow10Ticks{}.Ticks(lo, hi)
	for i := range ts {
		k := ts[i].Value / math.Pow(10, math.Floor(math.Log10(ts[i].Value)+1e-9))
		ts[i].Label = ""
		if r := math.Round(k); math.Abs(k-r) < 1e-6 && (r == 1 || r == 2 || r == 5) {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', 10, 64)
		}
	}
	return ts
}

// pow10Ticks marks the powers of ten of a logarithmic axis, labelled
// 10², 10³, ... (set by scriptText), with unlabelled minor
// ticks at 2..9 times each power.
type pow10Ticks struct{}

// Ticks implements plot.Ticker.
func (pow10Ticks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	if !(lo > 0) || !(hi >= lo) {
		return nil
	}
	for e := int(math.Floor(math.Log10(lo))); e <= int(math.Ceil(math.Log10(hi))); e++ {
		p := math.Pow(10, float64(e))
		for k := 1.0; k < 10; k++ {
			v := k * p
			if v < lo*0.9999 || v > hi*1.0001 {
				continue
			}
			t := plot.Tick{Value: v}
			if k == 1 {
				t.Label = "10^{" + strconv.Itoa(e) + "}"
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// scriptText is gonum's plain text handler with sub- and superscripts:
// A_N, A_{max}, 10^3 and 10^{-2} set N, max, 3 and -2 smaller, below or
// above the baseline. Give it to the labels that need it (scriptLabel);
// other text keeps its underscores and carets.
type scriptText struct{ text.Plain }

// scriptScale and the shifts (in units of the font size) place sub- and
// superscripts as TeX roughly does.
const (
	scriptScale = 0.7
	subShift    = -0.2
	supShift    = 0.4
)

// scriptRun is a piece of a line set at one level: -1 sub, 0 base, +1 sup.
type scriptRun struct {
	text  string
	level int
}

// scriptRuns splits a line into its runs.
func scriptRuns(line string) []scriptRun {
	var runs []scriptRun
	var base strings.Builder
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		if (c != '_' && c != '^') || i+1 == len(rs) {
			base.WriteRune(c)
			continue
		}
		level := -1
		if c == '^' {
			level = 1
		}
		var arg string
		if rs[i+1] == '{' {
			end := i + 2
			for end < len(rs) && rs[end] != '}' {
				end++
			}
			arg, i = string(rs[i+2:min(end, len(rs))]), end
		} else {
			arg, i = string(rs[i+1]), i+1
		}
		if base.Len() > 0 {
			runs = append(runs, scriptRun{base.String(), 0})
			base.Reset()
		}
		runs = append(runs, scriptRun{arg, level})
	}
	if base.Len() > 0 {
		runs = append(runs, scriptRun{base.String(), 0})
	}
	return runs
}

// runFont is fnt at a run's level.
func runFont(fnt font.Font, level int) font.Font {
	if level != 0 {
		fnt.Size *= scriptScale
	}
	return fnt
}

// width is the width of line set in fnt.
func (h scriptText) width(line string, fnt font.Font) vg.Length {
	var w vg.Length
	for _, r := range scriptRuns(line) {
		f := runFont(fnt, r.level)
		face := h.Fonts.Lookup(f, f.Size)
		w += face.Width(r.text)
	}
	return w
}

// Box implements text.Handler.
func (h scriptText) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	_, height, depth = h.Plain.Box(txt, fnt)
	return h.width(txt, fnt), height, depth
}

// Draw implements text.Handler as text.Plain does, a run at a time.
func (h scriptText) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	txt = strings.TrimRight(txt, "\n")
	if txt == "" {
		return
	}
	c.SetColor(sty.Color)
	if sty.Rotation != 0 {
		c.Push()
		c.Rotate(sty.Rotation)
	}
	sin64, cos64 := math.Sincos(sty.Rotation)
	sin, cos := vg.Length(sin64), vg.Length(cos64)
	pt.X, pt.Y = pt.Y*sin+pt.X*cos, pt.Y*cos-pt.X*sin
	lines := h.Lines(txt)
	pt.Y += sty.Height(txt)*vg.Length(sty.YAlign) - h.Extents(sty.Font).Ascent
	for i, line := range lines {
		at := pt.Add(vg.Point{X: vg.Length(sty.XAlign) * h.width(line, sty.Font), Y: vg.Length(len(lines)-i) * sty.Font.Size})
		for _, r := range scriptRuns(line) {
			f := runFont(sty.Font, r.level)
			face := h.Fonts.Lookup(f, f.Size)
			shift := vg.Length(0)
			switch r.level {
			case -1:
				shift = subShift * sty.Font.Size
			case 1:
				shift = supShift * sty.Font.Size
			}
			// SVG collapses a text's leading blanks: skip them here.
			t := strings.TrimLeft(r.text, " ")
			at.X += face.Width(r.text[:len(r.text)-len(t)])
			c.FillString(face, at.Add(vg.Point{Y: shift}), t)
			at.X += face.Width(t)
		}
	}
	if sty.Rotation != 0 {
		c.Pop()
	}
}

// scriptLabel sets the text of style sty with sub- and superscripts
// (scriptText).
func scriptLabel(sty *text.Style) {
	sty.Handler = scriptText{text.Plain{Fonts: font.DefaultCache}}
}

// plainTicks are gonum's default ticks labelled without trailing zeros.
type plainTicks struct{}

// Ticks implements plot.Ticker.
func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			// Ten significant digits drop the float noise of the tick
			// steps (0.6000000000000001).
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', 10, 64)
		}
	}
	return ts
}
