package bench

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Formats returns the output formats Write accepts.
func Formats() []string { return []string{"table", "csv", "json"} }

// Write writes results in format "table", "csv" or "json".
func Write(w io.Writer, format string, results []Result) error {
	switch strings.ToLower(format) {
	case "table", "":
		return WriteTable(w, results)
	case "csv":
		return WriteCSV(w, results)
	case "json":
		return WriteJSON(w, results)
	}
	return fmt.Errorf("%w: unknown format %q (have %s)", ErrConfig, format, strings.Join(Formats(), ", "))
}

var columns = []string{"op", "algorithm", "type", "np", "bytes", "count", "warmup", "iters", "avg_us", "min_us", "max_us", "gb_per_s"}

func fields(r Result) []string {
	f := func(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
	return []string{
		r.Op, r.Algorithm, r.Type, strconv.Itoa(r.NP), strconv.Itoa(r.Bytes), strconv.Itoa(r.Count),
		strconv.Itoa(r.Warmup), strconv.Itoa(r.Iters), f(r.AvgUs, 3), f(r.MinUs, 3), f(r.MaxUs, 3), f(r.GBps, 4),
	}
}

// WriteCSV writes a header line with the Result JSON field names, then one
// line per result.
func WriteCSV(w io.Writer, results []Result) error {
	return writeCSV(w, columns, results, fields)
}

// writeCSV writes the header line (none if nil), then fields(r) for every
// result r.
func writeCSV[R any](w io.Writer, header []string, results []R, fields func(R) []string) error {
	cw := csv.NewWriter(w)
	if header != nil {
		if err := cw.Write(header); err != nil {
			return err
		}
	}
	for _, r := range results {
		if err := cw.Write(fields(r)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes the results as an indented JSON array of objects.
func WriteJSON(w io.Writer, results []Result) error {
	if results == nil {
		results = []Result{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(results)
}

// WriteTable writes aligned columns for reading, in the style of the OSU
// micro-benchmarks: a comment line naming the op, type and rank count of the
// first result, then one row per result with numbers right-aligned and a blank
// line between algorithms.
func WriteTable(w io.Writer, results []Result) error {
	if len(results) > 0 {
		r := results[0]
		sum := ""
		if reduces(r.Op) {
			sum = " (sum)"
		}
		typ := ", " + r.Type
		if r.Op == "barrier" {
			typ = ""
		}
		if _, err := fmt.Fprintf(w, "# scoll bench: %s%s%s, np=%d; latency per call in µs (avg, min, max over ranks); GB/s = bytes/avg\n", r.Op, sum, typ, r.NP); err != nil {
			return err
		}
	}
	// Right alignment suits the numbers; names are padded to stay on the left.
	width := len("algorithm")
	for _, r := range results {
		width = max(width, len(r.Algorithm))
	}
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\tbytes\titers\tavg(us)\tmin(us)\tmax(us)\tGB/s\t\n", width, "algorithm")
	for i, r := range results {
		if i > 0 && r.Algorithm != results[i-1].Algorithm {
			fmt.Fprint(tw, "\t\t\t\t\t\t\t\n")
		}
		fmt.Fprintf(tw, "%-*s\t%d\t%d\t%.2f\t%.2f\t%.2f\t%.3f\t\n", width, r.Algorithm, r.Bytes, r.Iters, r.AvgUs, r.MinUs, r.MaxUs, r.GBps)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Drop the padding tabwriter puts before the first column and after the
	// last.
	for line := range strings.Lines(buf.String()) {
		line = strings.TrimRight(line, " \n")
		if _, err := io.WriteString(w, strings.TrimPrefix(line, "  ")+"\n"); err != nil {
			return err
		}
	}
	return nil
}

func reduces(op string) bool {
	switch op {
	case "allreduce", "reduce", "reducescatter", "scan", "exscan":
		return true
	}
	return false
}
