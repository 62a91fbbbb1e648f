package schedule_test

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/scoll/scoll/schedule"
)

// TestSVGMessagesBetweenColumns: no message line of the timeline crosses
// a round's box or reaches the round labels above the grid, and
// no line spans more than half the grid: a ring's wrap-around message
// goes out at the bottom and in at the top instead of crossing the column.
func TestSVGMessagesBetweenColumns(t *testing.T) {
	for _, tc := range []struct {
		coll schedule.Collective
		alg  string
		size int
	}{
		{schedule.Allgather, "ring", 6},
		{schedule.Allgather, "bruck", 7},
		{schedule.Bcast, "binomial", 8},
		{schedule.Allreduce, "rabenseifner", 6},
	} {
		var buf bytes.Buffer
		if err := schedule.WriteSVG(&buf, tc.size, gen(t, tc.coll, tc.alg, tc.size, 2*tc.size)); err != nil {
			t.Fatal(err)
		}
		type seg struct{ x1, y1, x2, y2 float64 }
		var (
			lines     []seg
			columns   [][2]float64 // x extent of each column of boxes
			rows      [][2]float64 // y extent of each row of boxes
			labelY    float64      // the round labels' baseline
			boxW      float64
			boxH      float64
			inText    bool
			textAttrs map[string]string
		)
		attrs := func(e xml.StartElement) map[string]string {
			m := map[string]string{}
			for _, a := range e.Attr {
				m[a.Name.Local] = a.Value
			}
			return m
		}
		f := func(m map[string]string, k string) float64 {
			v, err := strconv.ParseFloat(m[k], 64)
			if err != nil {
				t.Fatalf("%s=%q: %v", k, m[k], err)
			}
			return v
		}
		eachToken(t, &buf, func(tok xml.Token) {
			switch e := tok.(type) {
			case xml.StartElement:
				m := attrs(e)
				switch {
				case e.Name.Local == "line" && m["class"] == "msg":
					lines = append(lines, seg{f(m, "x1"), f(m, "y1"), f(m, "x2"), f(m, "y2")})
				case e.Name.Local == "rect" && m["width"] != "100%":
					boxW, boxH = f(m, "width"), f(m, "height")
				case e.Name.Local == "text":
					inText, textAttrs = true, m
				}
			case xml.EndElement:
				inText = false
			case xml.CharData:
				if inText && strings.HasPrefix(string(e), "rank ") {
					// The label's baseline is 4 below its row's middle.
					cy := f(textAttrs, "y") - 4
					rows = append(rows, [2]float64{cy - boxH/2, cy + boxH/2})
				}
				if inText && strings.HasPrefix(string(e), "round ") {
					cx := f(textAttrs, "x")
					columns = append(columns, [2]float64{cx - boxW/2, cx + boxW/2})
					labelY = f(textAttrs, "y")
				}
			}
		})
		if len(lines) == 0 || len(columns) == 0 {
			t.Fatalf("%s %s: %d message lines, %d columns", tc.coll, tc.alg, len(lines), len(columns))
		}
		// The grid's rows are 26 apart; half the grid is size/2 rows.
		const rowH = 26
		for _, l := range lines {
			// Points along the line, none inside a box.
		points:
			for i := range 101 {
				x := l.x1 + (l.x2-l.x1)*float64(i)/100
				y := l.y1 + (l.y2-l.y1)*float64(i)/100
				for k, c := range columns {
					for _, r := range rows {
						if x > c[0] && x < c[1] && y > r[0] && y < r[1] {
							t.Errorf("%s %s: line %v crosses the box of round %d at (%g, %g)", tc.coll, tc.alg, l, k, x, y)
							break points
						}
					}
				}
			}
			if min(l.y1, l.y2) <= labelY {
				t.Errorf("%s %s: line %v reaches the round labels (baseline %g)", tc.coll, tc.alg, l, labelY)
			}
			if math.Abs(l.y2-l.y1) > float64(tc.size/2+1)*rowH {
				t.Errorf("%s %s: line %v spans more than half the grid", tc.coll, tc.alg, l)
			}
		}
	}
}

// eachToken calls fn with every token of the XML document in r, and fails
// t when r is not XML.
func eachToken(t *testing.T, r io.Reader, fn func(xml.Token)) {
	t.Helper()
	d := xml.NewDecoder(r)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("not XML: %v", err)
		}
		fn(tok)
	}
}
