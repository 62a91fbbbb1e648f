package main

import (
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// svgText is a text element of an SVG: its attributes, its characters
// (tspans included) and whether it sits in a rotate(90) group.
type svgText struct {
	attrs   map[string]string
	text    string
	rotated bool
}

// parseSVG returns the root element's attributes and the text elements of
// an SVG document.
func parseSVG(t *testing.T, doc string) (root map[string]string, texts []svgText) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(doc))
	var cur *svgText
	var groups []bool // per open <g>: rotated
	rotated := func() bool {
		for _, r := range groups {
			if r {
				return true
			}
		}
		return false
	}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			attrs := map[string]string{}
			for _, a := range e.Attr {
				attrs[a.Name.Local] = a.Value
			}
			switch e.Name.Local {
			case "svg":
				root = attrs
			case "g":
				groups = append(groups, strings.Contains(attrs["transform"], "rotate(90)"))
			case "text":
				cur = &svgText{attrs: attrs, rotated: rotated()}
			}
		case xml.EndElement:
			switch e.Name.Local {
			case "g":
				groups = groups[:len(groups)-1]
			case "text":
				texts = append(texts, *cur)
				cur = nil
			}
		case xml.CharData:
			if cur != nil {
				cur.text += string(e)
			}
		}
	}
	if root == nil {
		t.Fatal("no <svg> element")
	}
	return root, texts
}

// num parses an SVG number attribute (a missing one is 0).
func num(t *testing.T, attrs map[string]string, name string) float64 {
	t.Helper()
	s := strings.TrimSuffix(attrs[name], "pt")
	if s == "" {
		return 0
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, attrs[name], err)
	}
	return x
}

// viewBox returns the width and height of the root's viewBox, which must
// start at 0 0 and agree with width and height.
func viewBox(t *testing.T, root map[string]string) (w, h float64) {
	t.Helper()
	f := strings.Fields(root["viewBox"])
	if len(f) != 4 || f[0] != "0" || f[1] != "0" {
		t.Fatalf("viewBox %q", root["viewBox"])
	}
	w, _ = strconv.ParseFloat(f[2], 64)
	h, _ = strconv.ParseFloat(f[3], 64)
	if num(t, root, "width") != w || num(t, root, "height") != h {
		t.Errorf("width %s height %s, viewBox %s", root["width"], root["height"], root["viewBox"])
	}
	return w, h
}

// TestScheduleSVG: the timeline has a title naming the collective,
// algorithm, ranks and size, a legend of its colours and lines, a generic
// font family, and room for all its text.
func TestScheduleSVG(t *testing.T) {
	out, _, err := run(t, "schedule", "--op", "allreduce", "--algorithm", "rabenseifner", "--np", "12", "--size", "48", "--elem", "4", "--format", "svg")
	if err != nil {
		t.Fatal(err)
	}
	root, texts := parseSVG(t, out)
	if root["font-family"] != "sans-serif" {
		t.Errorf("font-family %q, want the generic sans-serif", root["font-family"])
	}
	w, h := viewBox(t, root)
	title := "allreduce rabenseifner: 12 ranks, 48 B per rank (4-byte elements)"
	if !strings.Contains(out, "<title>"+title+"</title>") {
		t.Errorf("no <title>%s</title>", title)
	}
	var all []string
	for _, x := range texts {
		all = append(all, x.text)
	}
	joined := strings.Join(all, "\n")
	for _, want := range []string{title, "sends (s)", "receives (r)", "local operations (l", "a message", "rank 11", "round 0"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no text %q in\n%s", want, joined)
		}
	}
	for _, x := range texts {
		size := 10.0
		if x.attrs["font-size"] != "" {
			size = num(t, x.attrs, "font-size")
		}
		tw := 0.62 * size * float64(len([]rune(x.text)))
		left := num(t, x.attrs, "x")
		switch x.attrs["text-anchor"] {
		case "middle":
			left -= tw / 2
		case "end":
			left -= tw
		}
		y := num(t, x.attrs, "y")
		if left < 0 || left+tw > w || y-size < 0 || y+0.3*size > h {
			t.Errorf("text %q at x %s y %s (size %g) outside the %gx%g image", x.text, x.attrs["x"], x.attrs["y"], size, w, h)
		}
	}
}

// The font families of gonum's SVG output with a generic fallback.
var svgStyleFamily = regexp.MustCompile(`font-family:([^;"]+)`)

// TestPlotSVG: the plots' SVG names fonts that fall back to a generic
// family, and their text lies inside the image with a margin.
func TestPlotSVG(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"sim", "--topology", "torus:4x4", "--op", "allgather", "--algorithm", "ring,bruck", "--sizes", "8,1K,64K", "--progress", "never", "--plot"},
		{"model", "--op", "allreduce", "--np", "8..64", "--sizes", "8", "--plot"},
	} {
		file := filepath.Join(dir, args[0]+".svg")
		if _, _, err := run(t, append(args, file)...); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		fams := svgStyleFamily.FindAllStringSubmatch(string(b), -1)
		if len(fams) == 0 {
			t.Fatalf("%s: no font-family", args[0])
		}
		for _, f := range fams {
			if !strings.HasSuffix(f[1], ",serif") && !strings.HasSuffix(f[1], ",sans-serif") && !strings.HasSuffix(f[1], ",monospace") {
				t.Fatalf("%s: font-family %q has no generic fallback", args[0], f[1])
			}
		}
		root, texts := parseSVG(t, string(b))
		w, h := viewBox(t, root)
		const margin = 8 // points, of the 4 mm (11.3 pt) around the plots
		for _, x := range texts {
			m := regexp.MustCompile(`font-size:([0-9.]+)px`).FindStringSubmatch(x.attrs["style"])
			if m == nil {
				t.Fatalf("%s: text %q without a font size", args[0], x.text)
			}
			size, _ := strconv.ParseFloat(m[1], 64)
			tw := 0.5 * size * float64(len([]rune(x.text)))
			// gonum writes text with y negated (transform scale(1, -1))
			// under a group that flips the page: x, -y are coordinates
			// from the bottom left, or, rotated by 90°, -y from the left
			// and x from the bottom.
			along, base := num(t, x.attrs, "x"), -num(t, x.attrs, "y")
			lenAlong, lenAcross := w, h
			lo, hi := base-0.3*size, base+size // descenders below, ascenders above
			if x.rotated {
				base = num(t, x.attrs, "y")
				lenAlong, lenAcross = h, w
				lo, hi = base-size, base+0.3*size // the glyphs' tops point left
			}
			if along < margin || along+tw > lenAlong-margin || lo < margin || hi > lenAcross-margin {
				t.Errorf("%s: text %q (x %s y %s, rotated %v) not inside the %gx%g image with a margin", args[0], x.text, x.attrs["x"], x.attrs["y"], x.rotated, w, h)
			}
		}
	}
}
