package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scoll/scoll/bench"
)

// TestSplitFigureCommand runs a figure mode end to end: a CSV row per
// size, variant and line (the refused allgather among them), a plot, and
// the flags a figure sets itself refused.
func TestSplitFigureCommand(t *testing.T) {
	dir := t.TempDir()
	svg := filepath.Join(dir, "moody4.svg")
	out, stderr, err := run(t, "split", "--figure", "moody4", "--np", "8,16", "--reps", "1", "--format", "csv", "--progress", "off", "--plot", svg)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	fig, _ := bench.LookupSplitFigure("moody4")
	if want := 2 * len(fig.Variants) * len(fig.Algorithms); len(recs) != want+1 {
		t.Fatalf("%d rows, want %d:\n%s", len(recs)-1, want, out)
	}
	head := recs[0]
	col := func(name string) int { return slices.Index(head, name) }
	for _, r := range recs[1:] {
		skipped := r[col("skipped")]
		if (r[col("algorithm")] == "allgather") != strings.HasPrefix(skipped, "refused: ") || r[col("chain")] != "true" || r[col("reorder")] != "false" {
			t.Errorf("row %v", r)
		}
	}
	if fi, err := os.Stat(svg); err != nil || fi.Size() == 0 {
		t.Fatalf("plot: %v", err)
	}

	for _, args := range [][]string{
		{"--figure", "moody9"},
		{"--figure", "moody3", "--colors", "3"},
		{"--figure", "moody4", "--no-reorder"},
		{"--groups", "small", "--colors", "3"},
		{"--color-len", "1", "--groups", "N", "--np", "40"},
	} {
		if _, _, err := run(t, append([]string{"split", "--reps", "1", "--progress", "off", "--np", "8"}, args...)...); err == nil {
			t.Errorf("split %v: no error", args)
		}
	}
}

// TestSplitBytesCommand measures and records SplitBytes from the flags.
func TestSplitBytesCommand(t *testing.T) {
	out, stderr, err := run(t, "split", "--np", "12", "--reps", "1", "--progress", "off", "--color-len", "5", "--groups", "small",
		"--no-reorder", "--chain", "--algorithm", "bitonic,hash,merge")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(out, "str5") || !strings.Contains(out, "split+chain") || !strings.Contains(out, "skipped: refused") {
		t.Fatalf("table:\n%s", out)
	}
	trace := filepath.Join(t.TempDir(), "hash.trace")
	out, stderr, err = run(t, "split", "--np", "12", "--algorithm", "hash", "--color-len", "80", "--groups", "small", "--no-reorder", "--chain", "--record", trace)
	if err != nil || !strings.Contains(out, "recorded 12 ranks") {
		t.Fatalf("record: %v\n%s%s", err, out, stderr)
	}
}
