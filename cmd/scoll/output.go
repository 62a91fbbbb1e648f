package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
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
