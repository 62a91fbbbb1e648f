package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/scoll/scoll"
)

// Formats returns the output formats Write and NewStream accept:
//
//	table  aligned columns for reading (the default)
//	csv    a header line of the Result JSON field names, then a line per result
//	json   JSON lines: one Result object per line
//	osu    the OSU micro-benchmarks' layout, a block per algorithm
func Formats() []string { return []string{"table", "csv", "json", "osu"} }

// Write writes results in one of Formats(), as a Stream does.
func Write(w io.Writer, format string, results []Result) error {
	if len(results) == 0 {
		if _, err := checkFormat(format); err != nil {
			return err
		}
		if strings.ToLower(format) == "table" || format == "" {
			return WriteTable(w, nil)
		}
		return nil
	}
	r := results[0]
	s, err := NewStream(w, format, Heading{Op: r.Op, Type: r.Type, NP: r.NP})
	if err != nil {
		return err
	}
	s.table = tableFor(results)
	for _, r := range results {
		if err := s.Write(r); err != nil {
			return err
		}
	}
	return s.Close()
}

// checkFormat returns format in lower case ("" is table), or an error
// wrapping ErrConfig.
func checkFormat(format string) (string, error) {
	f := strings.ToLower(format)
	if f == "" {
		f = "table"
	}
	for _, g := range Formats() {
		if f == g {
			return f, nil
		}
	}
	return "", fmt.Errorf("%w: unknown format %q (have %s)", ErrConfig, format, strings.Join(Formats(), ", "))
}

var columns = []string{"op", "algorithm", "type", "np", "bytes", "count", "warmup", "iters", "avg_us", "min_us", "max_us", "gb_per_s", "chosen"}

func fields(r Result) []string {
	f := func(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
	return []string{
		r.Op, r.Algorithm, r.Type, strconv.Itoa(r.NP), strconv.Itoa(r.Bytes), strconv.Itoa(r.Count),
		strconv.Itoa(r.Warmup), strconv.Itoa(r.Iters), f(r.AvgUs, 3), f(r.MinUs, 3), f(r.MaxUs, 3), f(r.GBps, 4), r.Chosen,
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

// WriteJSON writes the results as an indented JSON array of objects (the
// json format of Write and Stream is JSON lines instead).
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
// line between algorithms. An Auto row names the algorithm scoll chose:
// "auto (ring)".
func WriteTable(w io.Writer, results []Result) error {
	if len(results) == 0 {
		_, err := io.WriteString(w, tableFor(nil).heading())
		return err
	}
	return Write(w, "table", results)
}

// Heading is what a Stream knows before the first result: the common
// fields of its results, and for the table's column widths the
// algorithms and sizes the run will measure (a longer name or larger
// number later only shifts its row).
type Heading struct {
	Op, Type string
	NP       int
	// Algorithms are the names of the rows to come (Auto included).
	Algorithms []string
	// MaxBytes is the largest size to come.
	MaxBytes int
}

// A Stream writes results one at a time, as Run measures them
// (Config.OnResult), so that what was measured is out before the run
// ends or is interrupted. Nothing is written before the first result, so
// a run that measured nothing leaves its output empty. Close ends the
// output.
type Stream struct {
	w      io.Writer
	format string
	head   Heading
	table  *table
	csv    *csv.Writer
	rows   int
	last   string // the last row's algorithm
}

// NewStream returns a Stream writing to w in one of Formats().
func NewStream(w io.Writer, format string, h Heading) (*Stream, error) {
	f, err := checkFormat(format)
	if err != nil {
		return nil, err
	}
	s := &Stream{w: w, format: f, head: h}
	if f == "table" {
		s.table = tableFor(nil)
		s.table.fit(h)
	}
	return s, nil
}

// Rows returns the number of results written.
func (s *Stream) Rows() int { return s.rows }

// Write writes one result.
func (s *Stream) Write(r Result) error {
	first := s.rows == 0
	newAlg := !first && r.Algorithm != s.last
	s.rows++
	s.last = r.Algorithm
	var b strings.Builder
	switch s.format {
	case "table":
		if first {
			b.WriteString(tableComment(r))
			b.WriteString(s.table.heading())
		}
		if newAlg {
			b.WriteString("\n")
		}
		b.WriteString(s.table.row(r))
	case "csv":
		if s.csv == nil {
			s.csv = csv.NewWriter(s.w)
			s.csv.Write(columns)
		}
		s.csv.Write(fields(r))
		s.csv.Flush()
		return s.csv.Error()
	case "json":
		j, err := json.Marshal(r)
		if err != nil {
			return err
		}
		b.Write(j)
		b.WriteString("\n")
	case "osu":
		if newAlg {
			b.WriteString("\n")
		}
		if first || newAlg {
			b.WriteString(osuHeading(r))
		}
		fmt.Fprintf(&b, "%-*d%*.*f\n", osuSizeWidth, r.Bytes, osuFieldWidth, osuPrecision, r.AvgUs)
	}
	_, err := io.WriteString(s.w, b.String())
	return err
}

// Close ends the output (every format is complete after each row, so it
// only reports a write error left behind).
func (s *Stream) Close() error {
	if s.csv != nil {
		s.csv.Flush()
		return s.csv.Error()
	}
	return nil
}

// tableComment is the table's first line.
func tableComment(r Result) string {
	sum := ""
	if reduces(r.Op) {
		sum = " (sum)"
	}
	typ := ", " + r.Type
	if r.Op == "barrier" {
		typ = ""
	}
	return fmt.Sprintf("# scoll bench: %s%s%s, np=%d; latency per call in µs (avg, min, max over ranks); GB/s = bytes/avg\n", r.Op, sum, typ, r.NP)
}

// table is the table format's column widths: the algorithm's (its names
// left-aligned), then bytes, iters, avg, min, max and GB/s (right-aligned),
// two spaces apart.
type table struct{ w [7]int }

var tableHeadings = [7]string{"algorithm", "bytes", "iters", "avg(us)", "min(us)", "max(us)", "GB/s"}

// tableCells returns a row's cells.
func tableCells(r Result) [7]string {
	f := func(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
	return [7]string{r.Name(), strconv.Itoa(r.Bytes), strconv.Itoa(r.Iters), f(r.AvgUs, 2), f(r.MinUs, 2), f(r.MaxUs, 2), f(r.GBps, 3)}
}

// tableFor returns the widths that fit the headings and results.
func tableFor(results []Result) *table {
	t := &table{}
	for i, h := range tableHeadings {
		t.w[i] = len(h)
	}
	for _, r := range results {
		for i, c := range tableCells(r) {
			t.w[i] = max(t.w[i], len(c))
		}
	}
	return t
}

// fit widens the columns for the rows h announces: the algorithm names
// (Auto with the longest name scoll could choose), the largest size, and
// room for up to a million calls, 1 s per call and 999 GB/s.
func (t *table) fit(h Heading) {
	for _, a := range h.Algorithms {
		n := len(a)
		if a == Auto {
			for _, in := range scoll.Algorithms(h.Op) {
				n = max(n, len(Auto)+len(in.Name)+3)
			}
		}
		t.w[0] = max(t.w[0], n)
	}
	t.w[1] = max(t.w[1], len(strconv.Itoa(h.MaxBytes)))
	t.w[2] = max(t.w[2], len("1000000"))
	for i := 3; i < 6; i++ {
		t.w[i] = max(t.w[i], len("1000000.00"))
	}
	t.w[6] = max(t.w[6], len("999.999"))
}

// heading returns the line of column headings.
func (t *table) heading() string { return t.line(tableHeadings) }

// row returns a result's line.
func (t *table) row(r Result) string { return t.line(tableCells(r)) }

func (t *table) line(cells [7]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s", t.w[0], cells[0])
	for i := 1; i < len(cells); i++ {
		fmt.Fprintf(&b, "  %*s", t.w[i], cells[i])
	}
	return strings.TrimRight(b.String(), " ") + "\n"
}

// The OSU micro-benchmarks' layout (osu_util's output of osu_allreduce and
// the other collective latency tests without -f): the size left-aligned in
// 10 columns, the average latency in µs right-aligned in 18 with two
// decimals.
const (
	osuSizeWidth  = 10
	osuFieldWidth = 18
	osuPrecision  = 2
)

// osuNames are the collectives' names in the OSU tests' titles.
var osuNames = map[string]string{
	"allreduce": "Allreduce", "bcast": "Broadcast", "reduce": "Reduce", "allgather": "Allgather",
	"alltoall": "All-to-All Personalized Exchange", "reducescatter": "Reduce_scatter", "gather": "Gather",
	"scatter": "Scatter", "scan": "Scan", "exscan": "Exscan", "barrier": "Barrier",
}

// osuHeading is the two comment lines that open an algorithm's block: the
// test's title naming scoll and the algorithm, and the column headings.
func osuHeading(r Result) string {
	name := osuNames[r.Op]
	if name == "" {
		name = r.Op
	}
	alg := r.Algorithm
	if alg == Auto {
		alg = Auto + " (scoll's default choice)"
	}
	typ := ", " + r.Type
	if r.Op == "barrier" {
		typ = ""
	}
	return fmt.Sprintf("# scoll %s Latency Test, algorithm %s%s, np=%d\n%-*s%*s\n",
		name, alg, typ, r.NP, osuSizeWidth, "# Size", osuFieldWidth, "Avg Latency(us)")
}

func reduces(op string) bool {
	switch op {
	case "allreduce", "reduce", "reducescatter", "scan", "exscan":
		return true
	}
	return false
}
