package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/scoll/scoll/bench"
	"github.com/scoll/scoll/internal/human"
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

// The table formatters are package human's, shared with package bench's
// tables.
var (
	fmtTime   = human.Time
	fmtEnergy = human.Energy
	fmtRate   = human.Rate
	fmtBytes  = human.Bytes
	fmtCount  = human.Count
)

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

// readCSVFile reads the rows of a saved run from the CSV file name
// (bench.ReadCSV), for the --from flags.
func readCSVFile[R any](name string) ([]R, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("--from: %w", err)
	}
	defer f.Close()
	rows, err := bench.ReadCSV[R](f)
	if err != nil {
		return nil, fmt.Errorf("--from %s: %w", name, err)
	}
	return rows, nil
}
