package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/scoll/scoll/bench"
)

// scoll bench --imbalance: a table with its summary, CSV, JSON and the plot
// on 4 ranks with one of them 2 ms late.
func TestBenchImbalance(t *testing.T) {
	dir := t.TempDir()
	svg := filepath.Join(dir, "imb.svg")
	args := []string{"bench", "--np", "4", "--imbalance", "single:rank=P-1:delay=0,2ms", "--algorithm", "binomial,clairvoyant",
		"--sizes", "4K", "--iters", "5", "--warmup", "1", "--resamples", "200", "--progress", "never"}
	out, _, err := run(t, append(args, "--plot", svg)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"median", "binomial", "clairvoyant", "delay accuracy (achieved − requested): median", "reference clairvoyant", "runs test:"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if fi, err := os.Stat(svg); err != nil || fi.Size() == 0 {
		t.Errorf("plot: %v", err)
	}
	out, stderr, err := run(t, append(args, "--format", "csv", "--reference", "binomial")...)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 5 || recs[0][0] != "bytes" || recs[1][5] != "binomial" {
		t.Fatalf("csv %v (%v):\n%s", recs, err, out)
	}
	// The last rank arrives 2 ms after its barrier: binomial's root waits
	// for it (column 7 is the median).
	if m, err := strconv.ParseFloat(recs[3][7], 64); err != nil || recs[3][5] != "binomial" || m < 2000 {
		t.Errorf("binomial under a 2 ms delay: %v", recs[3])
	}
	if !strings.Contains(stderr, "delay accuracy") {
		t.Errorf("csv: no summary on stderr: %q", stderr)
	}
	// JSON lines, a point per line; the summary on stderr.
	out, stderr, err = run(t, append(args, "--format", "json", "--sync", "window")...)
	if err != nil {
		t.Fatal(err)
	}
	var points []bench.ImbalancePoint
	for line := range strings.Lines(out) {
		var p bench.ImbalancePoint
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatalf("json line %q: %v", line, err)
		}
		points = append(points, p)
	}
	if len(points) != 4 || !strings.Contains(stderr, "sync window") || !strings.Contains(stderr, "late window starts") || strings.Contains(stderr, "no delayed ranks") {
		t.Fatalf("json: %d points, stderr:\n%s", len(points), stderr)
	}
	// In windows the early ranks may wake late too: the runtime covers the
	// achieved imbalance, not necessarily the requested one.
	if p := points[2]; p.Algorithm != "binomial" || p.MedianUs < p.AchievedUs || p.WindowUs <= 0 {
		t.Errorf("binomial under a 2 ms delay: %+v", p)
	}
	if _, _, err := run(t, append(args, "--format", "osu")...); !errors.Is(err, bench.ErrConfig) {
		t.Errorf("--imbalance --format osu: %v, want a format error", err)
	}
	trace := filepath.Join(dir, "trace.csv")
	os.WriteFile(trace, []byte("0,0,0,1ms\n0,500us,0,0\n"), 0o644)
	if _, _, err := run(t, "bench", "--np", "4", "--imbalance", "trace:"+trace, "--algorithm", "binomial", "--sizes", "1K", "--iters", "4", "--resamples", "50"); err != nil {
		t.Errorf("trace: %v", err)
	}
	for _, bad := range [][]string{
		{"bench", "--imbalance", "single:delay=x"},
		{"bench", "--imbalance", "single:delay=1ms", "--op", "allreduce"},
		{"bench", "--imbalance", "trace:" + filepath.Join(dir, "none.csv")},
		{"bench", "--np", "3", "--imbalance", "trace:" + trace},
		{"bench", "--imbalance", "single:delay=1ms", "--sync", "never"},
		{"bench", "--imbalance", "single:delay=1ms", "--plot", filepath.Join(dir, "x.pdf"), "--iters", "2", "--algorithm", "binomial", "--sizes", "64"},
	} {
		if _, _, err := run(t, bad...); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
