package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
)

// rowFormat is how a command writes its rows as CSV and as a table (the
// JSON is the rows themselves).
type rowFormat[R any] struct {
	// columns names the CSV's columns.
	columns []string
	// csv returns a row's CSV fields.
	csv func(R) []string
	// headings names the table's columns (the CSV's when nil); cells
	// returns a row's cells, each followed by a tab.
	headings []string
	cells    func(R) string
}

// writeRows writes rows in format (case-insensitive):
//
//	json   the rows, an indented array of their JSON fields
//	csv    a header of the column names, then a line per row
//	table  headings and cells right-aligned, two spaces apart
func writeRows[R any](w io.Writer, format string, rows []R, rf rowFormat[R]) error {
	switch strings.ToLower(format) {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write(rf.columns)
		for _, r := range rows {
			cw.Write(rf.csv(r))
		}
		cw.Flush()
		return cw.Error()
	case "table":
		headings := rf.headings
		if headings == nil {
			headings = rf.columns
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, strings.Join(headings, "\t")+"\t")
		for _, r := range rows {
			fmt.Fprintln(tw, rf.cells(r))
		}
		return tw.Flush()
	}
	return fmt.Errorf("--format %q: want table, csv or json", format)
}

// createFile creates (or truncates) the file called name, writes it with
// write and closes it, returning the first error.
func createFile(name string, write func(io.Writer) error) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Tables are for people: their cells carry units and a fixed number of
// digits (these helpers). CSV and JSON are for scripts: plain numbers in
// the unit their column or key names (time_s, memory_bytes, mbps), as
// docs/json.md lists.

// siPrefixes are the prefixes fmtSI picks from, smallest first.
var siPrefixes = []struct {
	name  string
	scale float64
}{{"n", 1e-9}, {"µ", 1e-6}, {"m", 1e-3}, {"", 1}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}}

// fmtSI formats x in unit with the SI prefix (n to G, none above maxScale)
// that puts its mantissa in [1, 1000), to 4 significant digits: "12.34 µs",
// "3.456 ms", "1.234 s". Zero is "0 " + unit.
func fmtSI(x float64, unit string, maxScale float64) string {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'f', -1, 64) + " " + unit
	}
	p := siPrefixes[0]
	for _, q := range siPrefixes[1:] {
		if q.scale > maxScale || math.Abs(x) < q.scale*0.99995 {
			break
		}
		p = q
	}
	return fixed4(x/p.scale) + " " + p.name + unit
}

// fixed4 formats m to 4 significant digits for |m| in [1, 1000), and with
// no decimals from 1000 on: 1.234, 12.34, 123.4, 1234.
func fixed4(m float64) string {
	a := math.Abs(m)
	switch {
	case a < 9.9995:
		return strconv.FormatFloat(m, 'f', 3, 64)
	case a < 99.995:
		return strconv.FormatFloat(m, 'f', 2, 64)
	case a < 999.95:
		return strconv.FormatFloat(m, 'f', 1, 64)
	}
	return strconv.FormatFloat(m, 'f', 0, 64)
}

// fmtTime formats seconds for a table: ns, µs, ms or s ("12.34 µs").
func fmtTime(s float64) string { return fmtSI(s, "s", 1) }

// fmtEnergy formats joules for a table: nJ, µJ, mJ, J or kJ.
func fmtEnergy(j float64) string { return fmtSI(j, "J", 1e3) }

// fmtRate formats a rate in MB/s (10⁶ bytes per second) for a table, with
// two decimals: "512.00 MB/s", or "1.25 GB/s" from 1000 MB/s on.
func fmtRate(mbps float64) string {
	if math.Abs(mbps) >= 999.995 {
		return strconv.FormatFloat(mbps/1000, 'f', 2, 64) + " GB/s"
	}
	return strconv.FormatFloat(mbps, 'f', 2, 64) + " MB/s"
}

// fmtBytes formats a size in bytes for a table, in binary units: "512 B",
// "64 KiB", or 4 significant digits when not a whole multiple ("1.465 KiB").
func fmtBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for i+1 < len(units) && math.Abs(b) >= 1024 {
		b /= 1024
		i++
	}
	if b == math.Trunc(b) {
		return strconv.FormatFloat(b, 'f', 0, 64) + " " + units[i]
	}
	if i == 0 {
		return strconv.FormatFloat(b, 'f', 1, 64) + " B"
	}
	return fixed4(b) + " " + units[i]
}

// fmtCount formats a count that may be fractional (message start-ups,
// congestion): whole numbers as they are, others with two decimals.
func fmtCount(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// withBounds returns base with a bcast's distance to its bounds appended:
// the round-optimal pipelined bound and the notes' reference, from row r's
// time t(r) and bounds b(r) (round-optimal, notes), and t as a multiple of
// each (scoll model's and scoll sim's bcast rows).
func withBounds[R any](base rowFormat[R], t func(R) float64, b func(R) (roundOpt, notes float64)) rowFormat[R] {
	return rowFormat[R]{
		columns: append(append([]string(nil), base.columns...), "round_opt_s", "ratio_round_opt", "notes_bound_s", "ratio_notes"),
		csv: func(r R) []string {
			ro, nb := b(r)
			return append(base.csv(r), g8(ro), g8(ratio(t(r), ro)), g8(nb), g8(ratio(t(r), nb)))
		},
		headings: append(append([]string(nil), base.headings...), "round_opt", "ratio_round_opt", "notes_bound", "ratio_notes"),
		cells: func(r R) string {
			ro, nb := b(r)
			return base.cells(r) + fmt.Sprintf("%s\t%.3f\t%s\t%.3f\t", fmtTime(ro), ratio(t(r), ro), fmtTime(nb), ratio(t(r), nb))
		},
	}
}
