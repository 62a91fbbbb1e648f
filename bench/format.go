package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The one writer of every harness's rows. A row type's Layout names its
// columns (with their units) and how a row fills them; Write and Writer
// put rows out in each of Formats():
//
//	table  aligned columns for reading (the default)
//	csv    a header of the column names, then a line per row
//	json   JSON lines: one object per row (the row's JSON fields, whose
//	       keys are the CSV's column names)
//	osu    the OSU micro-benchmarks' layout, a block per algorithm: only
//	       for rows that are a collective's latency per message size
//	       (Result); the others fail with a FormatError

// Formats returns the output formats Write and NewWriter accept.
func Formats() []string { return []string{"table", "csv", "json", "osu"} }

// FormatError is the error of a format rows cannot be written in: one
// that is not in Formats, or the OSU layout for rows that have none. It
// wraps ErrConfig.
type FormatError struct {
	// Format is the format asked for; Rows names the rows (Layout.Rows).
	Format, Rows string
	// Reason says why.
	Reason string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("bench: format %q for %s: %s", e.Format, e.Rows, e.Reason)
}

// Unwrap makes a FormatError an ErrConfig.
func (e *FormatError) Unwrap() error { return ErrConfig }

// A Row is a harness's row type: the Layout of its zero value is the one
// of every row.
type Row[R any] interface {
	Layout() *Layout[R]
}

// Layout is how rows of type R are written.
type Layout[R any] struct {
	// Rows names the rows in errors ("split results").
	Rows string
	// Columns are the rows' columns, in order. A column with a Name is a
	// CSV column (and a JSON key of the row); one with a Head a table
	// column: a column may be in either or both.
	Columns []Column[R]
	// Comment, when set, gives the table's first line (after "# ") from
	// its first row.
	Comment func(R) string
	// Group, when set, separates the table's rows by a blank line where it
	// changes; it also starts a new OSU block.
	Group func(R) string
	// Stream writes each table row at once, in columns as wide as their
	// headings and Width; otherwise a Writer holds the table's rows until
	// Close and fits the columns to them.
	Stream bool
	// OSU is the rows' OSU layout, nil when they have none.
	OSU *OSU[R]
}

// Column is one column of a Layout.
type Column[R any] struct {
	// Name is the CSV column's name, also the row's JSON key ("" for a
	// column of the table only). It ends in its unit's suffix (_s, _ms,
	// _us, bytes, gb_per_s: docs/json.md).
	Name string
	// Unit is the unit of the values: "s", "ms", "us", "B", "GB/s", or ""
	// for names, counts and ratios.
	Unit string
	// Text is a row's CSV field (plain numbers, no unit).
	Text func(R) string
	// Head is the table column's heading ("" for a column of the CSV
	// only); Cell a row's table cell (nil: Text).
	Head string
	Cell func(R) string
	// Left aligns the table column left (names); numbers align right.
	Left bool
	// Width is the table column's least width (a streamed table's room
	// for the rows to come).
	Width int
	// Optional leaves the column out of a held table when every row's
	// cell is empty.
	Optional bool
}

// OSU is the OSU micro-benchmarks' layout of rows (osu_util's output of
// osu_allreduce and the other collective latency tests without -f): per
// group a title line and the column headings, then a line per row, the
// size left-aligned in 10 columns, the average latency in µs
// right-aligned in 18 with two decimals.
type OSU[R any] struct {
	// Title is a block's title (after "# "), from its first row.
	Title func(R) string
	// Bytes and AvgUs are a row's size and average latency.
	Bytes func(R) int
	AvgUs func(R) float64
}

// The OSU layout's widths and precision.
const (
	osuSizeWidth  = 10
	osuFieldWidth = 18
	osuPrecision  = 2
)

// Write writes rows in one of Formats(); a table is fitted to every row,
// and shows its headings even without rows.
func Write[R Row[R]](w io.Writer, format string, rows []R) error {
	var zero R
	return write(w, format, zero.Layout(), rows)
}

// write is Write with the layout given.
func write[R any](w io.Writer, format string, l *Layout[R], rows []R) error {
	s, err := newWriter(w, format, l)
	if err != nil {
		return err
	}
	if s.format == "table" {
		s.hold, s.heading = true, true
	}
	for _, r := range rows {
		if err := s.Write(r); err != nil {
			return err
		}
	}
	return s.Close()
}

// A Writer writes rows one at a time, as a harness measures them (its
// OnRow), so that what was measured is out before the run ends or is
// interrupted: CSV, JSON lines and OSU rows at once, a table's as its
// Layout says (Layout.Stream), else at Close. Nothing is written before
// the first row, so a run that measured nothing leaves its output empty.
type Writer[R any] struct {
	out     io.Writer
	format  string
	l       *Layout[R]
	hold    bool // table rows wait for Close
	heading bool // a table without rows still has its headings
	held    []R
	cols    []int // the table's columns
	width   []int // their widths
	csv     *csv.Writer
	rows    int
	group   string
}

// NewWriter returns a Writer of rows of type R to w in one of Formats().
func NewWriter[R Row[R]](w io.Writer, format string) (*Writer[R], error) {
	var zero R
	return newWriter(w, format, zero.Layout())
}

// newWriter is NewWriter with the layout given.
func newWriter[R any](w io.Writer, format string, l *Layout[R]) (*Writer[R], error) {
	f := strings.ToLower(format)
	if f == "" {
		f = "table"
	}
	switch {
	case !slices.Contains(Formats(), f):
		return nil, &FormatError{Format: format, Rows: l.Rows, Reason: "unknown format (have " + strings.Join(Formats(), ", ") + ")"}
	case f == "osu" && l.OSU == nil:
		return nil, &FormatError{Format: format, Rows: l.Rows,
			Reason: "the OSU layout is a collective's latency per message size, which these rows are not (write table, csv or json)"}
	}
	s := &Writer[R]{out: w, format: f, l: l, hold: f == "table" && !l.Stream}
	if f == "table" && l.Stream {
		s.fit(nil)
	}
	return s, nil
}

// Rows returns the number of rows written (or held for the table).
func (s *Writer[R]) Rows() int { return s.rows }

// Write writes one row.
func (s *Writer[R]) Write(r R) error {
	s.rows++
	if s.hold {
		s.held = append(s.held, r)
		return nil
	}
	var b strings.Builder
	newGroup := s.l.Group != nil && (s.rows == 1 || s.l.Group(r) != s.group)
	if s.l.Group != nil {
		s.group = s.l.Group(r)
	}
	switch s.format {
	case "table":
		s.tableRow(&b, r, s.rows == 1, newGroup)
	case "csv":
		if s.csv == nil {
			s.csv = csv.NewWriter(s.out)
			s.csv.Write(s.csvHeader())
		}
		s.csv.Write(s.csvFields(r))
		s.csv.Flush()
		return s.csv.Error()
	case "json":
		j, err := json.Marshal(r)
		if err != nil {
			return err
		}
		b.Write(j)
		b.WriteByte('\n')
	case "osu":
		o := s.l.OSU
		if newGroup && s.rows > 1 {
			b.WriteByte('\n')
		}
		if newGroup || s.rows == 1 {
			fmt.Fprintf(&b, "# %s\n%-*s%*s\n", o.Title(r), osuSizeWidth, "# Size", osuFieldWidth, "Avg Latency(us)")
		}
		fmt.Fprintf(&b, "%-*d%*.*f\n", osuSizeWidth, o.Bytes(r), osuFieldWidth, osuPrecision, o.AvgUs(r))
	}
	_, err := io.WriteString(s.out, b.String())
	return err
}

// Close ends the output: a held table is written, fitted to its rows;
// every other format is complete after each row, so Close only reports a
// write error left behind.
func (s *Writer[R]) Close() error {
	if s.csv != nil {
		s.csv.Flush()
		return s.csv.Error()
	}
	if !s.hold || len(s.held) == 0 && !s.heading {
		return nil
	}
	s.fit(s.held)
	var b strings.Builder
	if len(s.held) == 0 {
		b.WriteString(s.line(s.headCells()))
	}
	for i, r := range s.held {
		newGroup := s.l.Group != nil && i > 0 && s.l.Group(r) != s.l.Group(s.held[i-1])
		s.tableRow(&b, r, i == 0, newGroup)
	}
	_, err := io.WriteString(s.out, b.String())
	return err
}

// csvHeader returns the CSV's column names.
func (s *Writer[R]) csvHeader() []string {
	var h []string
	for _, c := range s.l.Columns {
		if c.Name != "" {
			h = append(h, c.Name)
		}
	}
	return h
}

// csvFields returns a row's CSV fields.
func (s *Writer[R]) csvFields(r R) []string {
	var f []string
	for _, c := range s.l.Columns {
		if c.Name != "" {
			f = append(f, c.Text(r))
		}
	}
	return f
}

// cell returns column c's table cell of r.
func cell[R any](c *Column[R], r R) string {
	if c.Cell != nil {
		return c.Cell(r)
	}
	return c.Text(r)
}

// fit chooses the table's columns and their widths: the headings, the
// columns' Width and the cells of rows.
func (s *Writer[R]) fit(rows []R) {
	s.cols, s.width = s.cols[:0], s.width[:0]
	for i := range s.l.Columns {
		c := &s.l.Columns[i]
		if c.Head == "" {
			continue
		}
		w := max(utf8.RuneCountInString(c.Head), c.Width)
		shown := !c.Optional || s.l.Stream
		for _, r := range rows {
			n := utf8.RuneCountInString(cell(c, r))
			w, shown = max(w, n), shown || n > 0
		}
		if shown {
			s.cols, s.width = append(s.cols, i), append(s.width, w)
		}
	}
}

// headCells returns the table's headings.
func (s *Writer[R]) headCells() []string {
	h := make([]string, len(s.cols))
	for k, i := range s.cols {
		h[k] = s.l.Columns[i].Head
	}
	return h
}

// tableRow writes r's table line to b, after the comment and headings
// when it is the first row, after a blank line when it starts a group.
func (s *Writer[R]) tableRow(b *strings.Builder, r R, first, newGroup bool) {
	if first {
		if s.l.Comment != nil {
			b.WriteString("# " + s.l.Comment(r) + "\n")
		}
		b.WriteString(s.line(s.headCells()))
	} else if newGroup {
		b.WriteByte('\n')
	}
	cells := make([]string, len(s.cols))
	for k, i := range s.cols {
		cells[k] = cell(&s.l.Columns[i], r)
	}
	b.WriteString(s.line(cells))
}

// line aligns cells in the table's columns, two spaces apart, without
// trailing spaces.
func (s *Writer[R]) line(cells []string) string {
	var b strings.Builder
	for k, c := range cells {
		if k > 0 {
			b.WriteString("  ")
		}
		pad := strings.Repeat(" ", max(0, s.width[k]-utf8.RuneCountInString(c)))
		if s.l.Columns[s.cols[k]].Left {
			b.WriteString(c + pad)
		} else {
			b.WriteString(pad + c)
		}
	}
	return strings.TrimRight(b.String(), " ") + "\n"
}

// Number formats for columns: fixed decimals, and 6 significant digits.
func fixed(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }
func sig6(x float64) string            { return strconv.FormatFloat(x, 'g', 6, 64) }
