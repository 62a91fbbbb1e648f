package bench

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/scoll/scoll/internal/golden"
)

// Every harness's rows, with every field set somewhere, for the writer's
// tests.
var (
	sample = []Result{
		{Op: "allreduce", Algorithm: "ring", Type: "float32", NP: 4, Bytes: 8, Count: 2, Warmup: 100, Iters: 1000, AvgUs: 12.5, MinUs: 12, MaxUs: 13.25, GBps: 0.00064},
		{Op: "allreduce", Algorithm: "ring", Type: "float32", NP: 4, Bytes: 16 << 20, Count: 4 << 20, Warmup: 1, Iters: 3, AvgUs: 81234.5, MinUs: 80000, MaxUs: 90000.126, GBps: 0.2066},
		{Op: "allreduce", Algorithm: "recursive-doubling", Type: "float32", NP: 4, Bytes: 8, Count: 2, Warmup: 100, Iters: 1000, AvgUs: 9, MinUs: 8.5, MaxUs: 9.5, GBps: 0.00089},
		{Op: "allreduce", Algorithm: Auto, Chosen: "exchange", Type: "float32", NP: 4, Bytes: 8, Count: 2, Warmup: 100, Iters: 1000, AvgUs: 0.66, MinUs: 0.66, MaxUs: 0.67, GBps: 0.012},
	}
	splitSample = []SplitResult{
		{NP: 1024, Algorithm: "cheng", Colors: "1", Keys: "random", Sorters: 8, Group: "distributed:16", Reps: 5, MedianMs: 12.3456, MinMs: 11.5, MaxMs: 14,
			GroupBytesMean: 312.5, GroupBytesMax: 400, Messages: 20480, Bytes: 3 << 20, Phases: []SplitPhase{{"gather", 1.25}, {"sort", 8.5}},
			Checksum: "0123456789abcdef", Reorder: true, Split: true, AllocBytesPerRank: 4096.25, EstBytesPerRank: 5000,
			PeakBytesPerRank: 2048, PeakResolutionPerRank: 64},
		{NP: 1024, Algorithm: "hash", Colors: "small", Keys: "random", Group: "auto", Reps: 5, MedianMs: 3.5, MinMs: 3, MaxMs: 4,
			GroupBytesMean: 32, GroupBytesMax: 32, Messages: 10240, Bytes: 1 << 20, Phases: []SplitPhase{{"exchange", 3.25}}, Checksum: "fedcba9876543210",
			Variant: "few/len80", ByteItems: true, ColorLen: 80, Split: true, Chain: true, AllocBytesPerRank: 900, EstBytesPerRank: 1100},
		{NP: 1024, Algorithm: "allgather", Colors: "small", Keys: "random", Group: "auto", Reps: 5, Variant: "few/len80", ByteItems: true, ColorLen: 80,
			Split: true, Chain: true, EstBytesPerRank: 50331648, Skipped: "refused: allgather takes integer colors"},
	}
	imbalanceSample = []ImbalancePoint{
		{Bytes: 128 << 10, Algorithm: "binomial", Level: "0s", N: 30, MedianUs: 250.5, CILoUs: 240, CIHiUs: 260.25, MinUs: 230, Ratio: 1.25, P: 0.0004,
			RunsZ: -0.5, RunsP: 0.617, AbsorptionN: 0, ImbalanceN: 0},
		{Bytes: 128 << 10, Algorithm: "clairvoyant", Level: "2x", LevelUs: 400, ImbalanceUs: 400, AchievedUs: 402.5, N: 30, MedianUs: 455.125,
			CILoUs: 450, CIHiUs: 470, MinUs: 440, Ratio: 1, P: 1, RunsZ: 2.5, RunsP: 0.0124, AbsorptionUs: 145.375, AbsorptionN: 0.725, ImbalanceN: 2, WindowUs: 1200},
	}
	sortPhasesSample = []SortPhasesRow{
		{Entries: 1 << 20, Sorters: 2, CollectS: 0.0125, SplittersS: 0.001, ExchangeS: 0.25, MergeS: 0.125, TotalS: 0.3885, WallS: 0.5},
		{Entries: 1 << 20, Sorters: 8, CollectS: 0.003, SplittersS: 0.002, ExchangeS: 0.0625, MergeS: 0.03125, TotalS: 0.09875, WallS: 0.25},
	}
	predictedSample = []PredictedRow{
		{Bytes: 1 << 20, Variant: "binomial", MedianS: 2.5, Relative: 1, RunsS: []float64{2.5, 2.75, 2.25}},
		{Bytes: 1 << 20, Variant: "clairvoyant (SMA)", MedianS: 2, Relative: 0.8, RunsS: []float64{2, 2.125, 1.875}},
		{Bytes: 1 << 20, Variant: "clairvoyant (true)", MedianS: 1.5, Relative: 0.6, RunsS: []float64{1.5, 1.5, 1.5}},
	}
)

// harnessCase is one harness's rows, seen through the writer's generic
// functions.
type harnessCase struct {
	name string
	// write writes the rows at once (Write); stream one at a time
	// (NewWriter); empty streams none.
	write, stream func(format string) (string, error)
	empty         func(format string) (string, error)
	// rows are the rows as JSON values; columns the CSV's names.
	rows    []any
	columns []string
	units   map[string]string // column name → unit
}

func caseOf[R Row[R]](name string, rows []R) harnessCase {
	var zero R
	l := zero.Layout()
	c := harnessCase{name: name, units: map[string]string{}}
	c.write = func(format string) (string, error) {
		var b bytes.Buffer
		err := Write(&b, format, rows)
		return b.String(), err
	}
	streamOf := func(rows []R) func(string) (string, error) {
		return func(format string) (string, error) {
			var b bytes.Buffer
			s, err := NewWriter[R](&b, format)
			if err != nil {
				return "", err
			}
			for i, r := range rows {
				if err := s.Write(r); err != nil {
					return "", err
				}
				if s.Rows() != i+1 {
					return "", errors.New("Rows() does not count the rows written")
				}
			}
			err = s.Close()
			return b.String(), err
		}
	}
	c.stream, c.empty = streamOf(rows), streamOf(nil)
	for _, r := range rows {
		c.rows = append(c.rows, r)
	}
	for _, col := range l.Columns {
		if col.Name != "" {
			c.columns = append(c.columns, col.Name)
			c.units[col.Name] = col.Unit
		}
	}
	return c
}

func harnessCases() []harnessCase {
	return []harnessCase{
		caseOf("collectives", sample),
		caseOf("split", splitSample),
		caseOf("imbalance", imbalanceSample),
		caseOf("sortphases", sortPhasesSample),
		caseOf("predicted", predictedSample),
	}
}

// TestWriteGolden writes every harness's rows in every format: the text
// (or the error of a format the rows have none of) is pinned in
// testdata/format/<harness>.txt. Streaming them one by one writes the
// same, and a stream of no rows writes nothing.
func TestWriteGolden(t *testing.T) {
	for _, c := range harnessCases() {
		var b strings.Builder
		for _, f := range Formats() {
			out, err := c.write(f)
			b.WriteString("== " + f + " ==\n")
			if err != nil {
				b.WriteString("error: " + err.Error() + "\n")
			} else {
				b.WriteString(out)
			}
			streamed, serr := c.stream(f)
			if (err == nil) != (serr == nil) || streamed != out {
				t.Errorf("%s %s: streamed (%v):\n%s\nwritten at once (%v):\n%s", c.name, f, serr, streamed, err, out)
			}
			if empty, err := c.empty(f); empty != "" || (err == nil) != (serr == nil) {
				t.Errorf("%s %s: a stream of no rows wrote %q (%v)", c.name, f, empty, err)
			}
		}
		golden.Check(t, filepath.Join("testdata", "format", c.name+".txt"), []byte(b.String()))
	}
}

// Only the collectives' results have the OSU layout; the others, and an
// unknown format, fail with a FormatError that is an ErrConfig.
func TestFormatErrors(t *testing.T) {
	for _, c := range harnessCases() {
		for _, f := range []string{"osu", "xml", "TABLE"} {
			_, err := c.write(f)
			var fe *FormatError
			wantErr := f == "xml" || f == "osu" && c.name != "collectives"
			if !wantErr {
				if err != nil {
					t.Errorf("%s %s: %v", c.name, f, err)
				}
				continue
			}
			if !errors.As(err, &fe) || !errors.Is(err, ErrConfig) || fe.Format != f || !strings.Contains(err.Error(), f) {
				t.Errorf("%s %s: err %v, want a FormatError wrapping ErrConfig", c.name, f, err)
			}
		}
	}
}

// docs/json.md's conventions: CSV columns and JSON keys have the same
// names, snake_case, and a column with a unit says it in its name.
func TestColumnsAreJSONKeys(t *testing.T) {
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	suffix := map[string]*regexp.Regexp{
		"s": regexp.MustCompile(`_s$`), "ms": regexp.MustCompile(`_ms$`), "us": regexp.MustCompile(`_us$`),
		"B": regexp.MustCompile(`(^|_)bytes($|_)`), "GB/s": regexp.MustCompile(`^gb_per_s$`),
	}
	for _, c := range harnessCases() {
		keys := map[string]bool{}
		for _, r := range c.rows {
			j, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(j, &m); err != nil {
				t.Fatal(err)
			}
			for k := range m {
				keys[k] = true
			}
		}
		if got := slices.Sorted(maps.Keys(keys)); !slices.Equal(got, slices.Sorted(slices.Values(c.columns))) {
			t.Errorf("%s: JSON keys %v, CSV columns %v", c.name, got, c.columns)
		}
		for _, name := range c.columns {
			if !snake.MatchString(name) {
				t.Errorf("%s: column %q is not snake_case", c.name, name)
			}
			u := c.units[name]
			// Named before the rule: the resolution of peak_bytes_per_rank.
			unnamed := name == "peak_resolution_per_rank"
			if re := suffix[u]; u != "" && !unnamed && (re == nil || !re.MatchString(name)) {
				t.Errorf("%s: column %q in %q does not name its unit", c.name, name, u)
			}
		}
	}
}

// The CSV is CSV: a header, then a line of as many fields per row.
func TestWriteCSVParses(t *testing.T) {
	for _, c := range harnessCases() {
		out, err := c.write("csv")
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil || len(recs) != len(c.rows)+1 || !slices.Equal(recs[0], c.columns) {
			t.Errorf("%s: %d records (%v), header %v", c.name, len(recs), err, recs[0])
		}
	}
}

// The collectives' columns stay where scripts read them by position
// (scripts/compare-mpi.sh and compare-subcomm.sh: $1 op, $2 algorithm, $5
// bytes, $9 avg_us), and the split's (compare-split.sh: $1 np, $2
// algorithm, $8 median_ms).
func TestCSVPositions(t *testing.T) {
	c := harnessCases()
	for _, want := range []struct {
		cols []string
		pos  map[int]string
	}{
		{c[0].columns, map[int]string{1: "op", 2: "algorithm", 5: "bytes", 9: "avg_us"}},
		{c[1].columns, map[int]string{1: "np", 2: "algorithm", 8: "median_ms"}},
	} {
		for p, name := range want.pos {
			if want.cols[p-1] != name {
				t.Errorf("column %d is %q, want %q (%v)", p, want.cols[p-1], name, want.cols)
			}
		}
	}
}

// A table written at once shows its headings even without rows.
func TestWriteTableEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, "table", []Result(nil)); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); !strings.HasPrefix(got, "algorithm") || strings.Count(got, "\n") != 1 {
		t.Errorf("empty table = %q, want only the column header", got)
	}
}

// A streamed table of results is written row by row, its columns fitting
// the heading's algorithms, auto with the longest name it could choose.
func TestStream(t *testing.T) {
	h := Heading{Op: "allreduce", Type: "float32", NP: 4, Algorithms: []string{"ring", Auto}, MaxBytes: 16 << 20}
	var b bytes.Buffer
	s, err := NewStream(&b, "table", h)
	if err != nil {
		t.Fatal(err)
	}
	rows := []Result{sample[0], {Op: "allreduce", Algorithm: Auto, Chosen: "recursive-doubling", Type: "float32", NP: 4, Bytes: 16 << 20, Iters: 3, AvgUs: 1}}
	for i, r := range rows {
		if err := s.Write(r); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(b.String(), "\n"); n != []int{3, 5}[i] {
			t.Fatalf("after row %d, %d lines written, want them at once:\n%s", i, n, b.String())
		}
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "# scoll bench: allreduce (sum), float32, np=4;") || lines[3] != "" {
		t.Fatalf("table:\n%s", b.String())
	}
	// Every row's columns end where the headings' do (in characters: µ
	// takes two bytes).
	for _, l := range []string{lines[2], lines[4]} {
		if utf8.RuneCountInString(l) != utf8.RuneCountInString(lines[1]) {
			t.Errorf("row %q is not aligned with %q", l, lines[1])
		}
	}
	if !strings.HasPrefix(lines[4], "auto (recursive-doubling) ") {
		t.Errorf("auto row %q", lines[4])
	}
	if _, err := NewStream(&b, "xml", h); !errors.Is(err, ErrConfig) {
		t.Errorf("xml: %v", err)
	}
}

// Sack's Table 2.1 shape: per table size a line per phase, a column per
// number of sorters, "-" where a pair was not measured.
func TestWriteSortPhases(t *testing.T) {
	rows := append(slices.Clone(sortPhasesSample), SortPhasesRow{Entries: 2 << 20, Sorters: 2, CollectS: 1, SplittersS: 2, ExchangeS: 3, MergeS: 4, TotalS: 10, WallS: 12})
	var b bytes.Buffer
	if err := WriteSortPhases(&b, rows); err != nil {
		t.Fatal(err)
	}
	want := `entries      phase     p=2    p=8
     1M    collect   0.013  0.003
     1M  splitters   0.001  0.002
     1M   exchange   0.250  0.062
     1M      merge   0.125  0.031
     1M      total   0.389  0.099
     1M       wall   0.500  0.250
     2M    collect   1.000      -
     2M  splitters   2.000      -
     2M   exchange   3.000      -
     2M      merge   4.000      -
     2M      total  10.000      -
     2M       wall  12.000      -
`
	if got := b.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}
