package bench

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

var sample = []Result{
	{Op: "allreduce", Algorithm: "ring", Type: "float32", NP: 4, Bytes: 8, Count: 2, Warmup: 100, Iters: 1000, AvgUs: 12.5, MinUs: 12, MaxUs: 13.25, GBps: 0.00064},
	{Op: "allreduce", Algorithm: "ring", Type: "float32", NP: 4, Bytes: 16 << 20, Count: 4 << 20, Warmup: 1, Iters: 3, AvgUs: 81234.5, MinUs: 80000, MaxUs: 90000.126, GBps: 0.2066},
	{Op: "allreduce", Algorithm: "recursive-doubling", Type: "float32", NP: 4, Bytes: 8, Count: 2, Warmup: 100, Iters: 1000, AvgUs: 9, MinUs: 8.5, MaxUs: 9.5, GBps: 0.00089},
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, "table", sample); err != nil {
		t.Fatal(err)
	}
	want := `# scoll bench: allreduce (sum), float32, np=4; latency per call in µs (avg, min, max over ranks); GB/s = bytes/avg
algorithm              bytes  iters   avg(us)   min(us)   max(us)   GB/s
ring                       8   1000     12.50     12.00     13.25  0.001
ring                16777216      3  81234.50  80000.00  90000.13  0.207

recursive-doubling         8   1000      9.00      8.50      9.50  0.001
`
	if got := b.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

func TestWriteTableEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, nil); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); !strings.HasPrefix(got, "algorithm") || strings.Count(got, "\n") != 1 {
		t.Errorf("empty table = %q, want only the column header", got)
	}
}

func TestWriteCSV(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, "CSV", sample); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(sample)+1 {
		t.Fatalf("%d records, want header + %d", len(recs), len(sample))
	}
	if got := strings.Join(recs[0], ","); got != "op,algorithm,type,np,bytes,count,warmup,iters,avg_us,min_us,max_us,gb_per_s,chosen" {
		t.Errorf("header %s", got)
	}
	if got := strings.Join(recs[2], ","); got != "allreduce,ring,float32,4,16777216,4194304,1,3,81234.500,80000.000,90000.126,0.2066," {
		t.Errorf("row %s", got)
	}
}

// The json format is JSON lines: one object per line.
func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, "json", sample); err != nil {
		t.Fatal(err)
	}
	var back []Result
	for line := range strings.Lines(b.String()) {
		var r Result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		back = append(back, r)
	}
	if !reflect.DeepEqual(back, sample) {
		t.Errorf("round trip:\n%+v\nwant\n%+v", back, sample)
	}
	if !strings.Contains(b.String(), `"avg_us":12.5`) || strings.Contains(b.String(), `"chosen"`) {
		t.Errorf("field names: %s", b.String())
	}
	b.Reset()
	if err := WriteJSON(&b, nil); err != nil || strings.TrimSpace(b.String()) != "[]" {
		t.Errorf("no results: %q, %v", b.String(), err)
	}
}

func TestWriteUnknownFormat(t *testing.T) {
	if err := Write(&bytes.Buffer{}, "xml", sample); !errors.Is(err, ErrConfig) {
		t.Errorf("Write(xml) = %v, want ErrConfig", err)
	}
}

func TestWriteOSU(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, "osu", sample); err != nil {
		t.Fatal(err)
	}
	want := `# scoll Allreduce Latency Test, algorithm ring, float32, np=4
# Size       Avg Latency(us)
8                      12.50
16777216            81234.50

# scoll Allreduce Latency Test, algorithm recursive-doubling, float32, np=4
# Size       Avg Latency(us)
8                       9.00
`
	if got := b.String(); got != want {
		t.Errorf("osu:\n%s\nwant:\n%s", got, want)
	}
}

// A Stream writes nothing before its first row, so a run that measured
// nothing leaves no table; its table's columns fit the heading's
// algorithms, auto with the longest name it could choose.
func TestStream(t *testing.T) {
	h := Heading{Op: "allreduce", Type: "float32", NP: 4, Algorithms: []string{"ring", Auto}, MaxBytes: 16 << 20}
	for _, f := range Formats() {
		var b bytes.Buffer
		s, err := NewStream(&b, f, h)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil || b.Len() != 0 || s.Rows() != 0 {
			t.Errorf("%s: empty stream wrote %q (%v)", f, b.String(), err)
		}
	}
	var b bytes.Buffer
	s, _ := NewStream(&b, "table", h)
	rows := []Result{sample[0], {Op: "allreduce", Algorithm: Auto, Chosen: "recursive-doubling", Type: "float32", NP: 4, Bytes: 16 << 20, Iters: 3, AvgUs: 1}}
	for _, r := range rows {
		if err := s.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "# scoll bench: allreduce (sum), float32, np=4;") || lines[3] != "" {
		t.Fatalf("table:\n%s", b.String())
	}
	// Every row's columns end where the headings' do.
	for _, l := range []string{lines[2], lines[4]} {
		if len(l) != len(lines[1]) {
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
