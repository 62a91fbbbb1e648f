package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/bench"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/tuning"
)

// runCtx executes the scoll command with args under ctx, writing its
// stdout to out, and returns its stderr.
func runCtx(t *testing.T, ctx context.Context, out *cancelWriter, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCmd()
	var errb bytes.Buffer
	cmd.SetOut(out)
	cmd.SetErr(&errb)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	return errb.String(), err
}

// cancelWriter keeps what is written and calls cancel at the first write,
// as Ctrl-C would once the first row is out.
type cancelWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	cancel context.CancelFunc
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cancel != nil {
		w.cancel()
	}
	return w.buf.Write(p)
}

func (w *cancelWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// Rows are printed as they are measured: interrupting the run after the
// first one leaves it on stdout, complete, in every format, and the
// command fails saying so.
func TestBenchStreamsUntilInterrupted(t *testing.T) {
	for _, format := range bench.Formats() {
		t.Run(format, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out := &cancelWriter{cancel: cancel}
			stderr, err := runCtx(t, ctx, out, "bench", "--np", "2", "--algorithm", "ring,recursive-doubling", "--sizes", "8,64,1K",
				"--iters", "2", "--format", format, "--progress", "never")
			if err == nil || !strings.Contains(err.Error(), "interrupted; 1 results measured") {
				t.Fatalf("err %v\n%s", err, stderr)
			}
			got := out.String()
			var rows int
			switch format {
			case "table":
				rows = len(regexp.MustCompile(`(?m)^ring +8 B +2 `).FindAllString(got, -1))
			case "csv":
				recs, err := csv.NewReader(strings.NewReader(got)).ReadAll()
				if err != nil || len(recs) != 2 || recs[0][0] != "op" {
					t.Fatalf("csv %v (%v):\n%s", recs, err, got)
				}
				rows = len(recs) - 1
			case "json":
				var r bench.Result
				if err := json.Unmarshal([]byte(got), &r); err != nil || r.Algorithm != "ring" || r.Bytes != 8 {
					t.Fatalf("json %+v (%v):\n%s", r, err, got)
				}
				rows = strings.Count(got, "\n")
			case "osu":
				rows = len(regexp.MustCompile(`(?m)^8 +\d+\.\d\d$`).FindAllString(got, -1))
			}
			if rows != 1 {
				t.Errorf("%d rows printed, want the 1 measured:\n%s", rows, got)
			}
		})
	}
}

// A run that measures nothing fails and says why on stderr, each skip
// with its reason, and prints no table.
func TestBenchNothingMeasured(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--np", "3", "--op", "allgather", "--algorithm", "recursive-doubling", "--sizes", "8"},
			[]string{"skipped recursive-doubling: needs a power-of-two number of ranks (np=3)"}},
		// The case: allgather-reduce's scratch, not its buffers,
		// is what does not fit.
		{[]string{"--np", "64", "--algorithm", "allgather-reduce", "--sizes", "4M"},
			[]string{"skipped allgather-reduce at 4194304 bytes: estimated memory 16.5 GiB (buffers 512 MiB, 64 ranks × 64 KiB, schedules ", "scratch 16 GiB) over 64 ranks exceeds the limit of 1G",
				"1 configuration skipped for memory; raise --max-memory (0: no limit) to run it"}},
		{[]string{"--np", "100000", "--algorithm", "ring,recursive-doubling", "--sizes", "8,1K"},
			[]string{"skipped ring at 8 bytes: estimated memory at least 6.1 GiB (buffers 1.5 MiB, 100000 ranks × 64 KiB, schedules not counted)",
				"4 configurations skipped for memory"}},
	} {
		out, stderr, err := run(t, append([]string{"bench", "--iters", "1", "--progress", "never"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), "nothing measured: every configuration was skipped") {
			t.Errorf("%v: err %v", tc.args, err)
		}
		if out != "" {
			t.Errorf("%v: stdout %q", tc.args, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", tc.args, w, stderr)
			}
		}
	}
	// One configuration measured is success, with the others' reasons.
	out, stderr, err := run(t, "bench", "--np", "3", "--op", "allgather", "--algorithm", "recursive-doubling,ring", "--sizes", "8", "--iters", "1", "--progress", "never")
	if err != nil || !strings.Contains(out, "ring") || !strings.Contains(stderr, "skipped recursive-doubling") {
		t.Errorf("err %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr)
	}
}

// auto rows name the algorithm scoll ran.
func TestBenchAutoNamesChoice(t *testing.T) {
	out, stderr, err := run(t, "bench", "--np", "2", "--algorithm", "auto", "--sizes", "8,64K", "--iters", "2", "--progress", "never")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	rows := regexp.MustCompile(`(?m)^auto \(([a-z0-9-]+)\) +(\d+) `).FindAllStringSubmatch(out, -1)
	if len(rows) != 2 {
		t.Fatalf("want two auto rows naming their algorithm:\n%s", out)
	}
	for _, r := range rows {
		found := false
		for _, a := range scoll.Algorithms("allreduce") {
			found = found || a.Name == r[1]
		}
		if !found {
			t.Errorf("auto chose %q, no allreduce algorithm", r[1])
		}
	}
}

// --format osu: a block per algorithm, each a title naming scoll and the
// algorithm, OSU's column headings and a line per size: the size
// left-aligned in 10 columns, the average latency right-aligned in 18 with
// two decimals.
func TestBenchOSU(t *testing.T) {
	out, stderr, err := run(t, "bench", "--np", "2", "--algorithm", "ring,recursive-doubling", "--sizes", "8,1K", "--iters", "2", "--format", "osu", "--progress", "never")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	blocks := strings.Split(out, "\n\n")
	if len(blocks) != 2 {
		t.Fatalf("%d blocks:\n%s", len(blocks), out)
	}
	for i, alg := range []string{"ring", "recursive-doubling"} {
		lines := strings.Split(strings.TrimSuffix(blocks[i], "\n"), "\n")
		if len(lines) != 4 {
			t.Fatalf("block %d:\n%s", i, blocks[i])
		}
		if want := "# scoll Allreduce Latency Test, algorithm " + alg + ", float32, np=2"; lines[0] != want {
			t.Errorf("title %q, want %q", lines[0], want)
		}
		if lines[1] != "# Size       Avg Latency(us)" {
			t.Errorf("headings %q", lines[1])
		}
		for j, size := range []int{8, 1024} {
			var lat float64
			line := lines[2+j]
			if _, err := fmt.Sscanf(line, "%d %f", new(int), &lat); err != nil || line[:10] != fmt.Sprintf("%-10d", size) ||
				line[10:] != fmt.Sprintf("%18.2f", lat) {
				t.Errorf("line %q (%v)", line, err)
			}
		}
	}
}

// --tune-out writes the fastest algorithm per size as a tuning file that
// package tuning reads and whose lookups give the measured winners; auto
// rows are not candidates.
func TestBenchTuneOut(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rules.json")
	out, stderr, err := run(t, "bench", "--np", "2", "--algorithm", "auto,ring,recursive-doubling", "--sizes", "8,1K,4K", "--iters", "3",
		"--format", "json", "--progress", "never", "--tune-out", path)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	best := map[int]bench.Result{}
	for line := range strings.Lines(out) {
		var r bench.Result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if b, ok := best[r.Bytes]; r.Algorithm != bench.Auto && (!ok || r.AvgUs < b.AvgUs) {
			best[r.Bytes] = r
		}
	}
	f, err := tuning.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(f.Source, "scoll bench ") || !strings.Contains(f.Source, " --algorithm auto,ring,recursive-doubling ") || !strings.Contains(f.Source, " --np 2 ") {
		t.Errorf("source %q", f.Source)
	}
	for _, size := range []int{8, 1024, 4096} {
		alg, ok := f.Lookup(schedule.Allreduce, 2, size)
		if want := best[size].Algorithm; !ok || alg != want {
			t.Errorf("%d bytes: rule %q (%v), measured fastest %q", size, alg, ok, want)
		}
	}
	if !strings.Contains(stderr, "rules to "+path) {
		t.Errorf("stderr %q", stderr)
	}

	// A directory that does not exist fails before anything is measured.
	out, stderr, err = run(t, "bench", "--np", "2", "--sizes", "8", "--iters", "1", "--tune-out", filepath.Join(dir, "none", "rules.json"))
	if err == nil || !strings.Contains(err.Error(), "--tune-out") || out != "" || strings.Contains(stderr, "skipped") {
		t.Errorf("missing directory: err %v\nstdout %q\nstderr %q", err, out, stderr)
	}
	if _, _, err := run(t, "bench", "--np", "2", "--sizes", "8", "--iters", "1", "--tune-out", dir); err == nil {
		t.Error("--tune-out naming a directory accepted")
	}
	if _, _, err := run(t, "bench", "--imbalance", "single:delay=1ms", "--tune-out", path); err == nil || !strings.Contains(err.Error(), "--tune-out does not apply") {
		t.Errorf("--tune-out with --imbalance: %v", err)
	}
	// Only auto measured: nothing to choose from.
	os.Remove(path)
	if _, _, err := run(t, "bench", "--np", "2", "--algorithm", "auto", "--sizes", "8", "--iters", "1", "--tune-out", path); err == nil {
		t.Error("--tune-out with only auto rows succeeded")
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("--tune-out with only auto rows wrote a file")
	}
}
