package main

import (
	"bytes"
	"encoding/csv"
	"github.com/scoll/scoll/internal/algtable"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scoll/scoll"
)

// run executes the scoll command with args and returns its stdout and stderr.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd := newRootCmd()
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), errb.String(), err
}

// TestAlgorithmsTableDoc keeps docs/algorithms.md's table in step with the
// registry.
func TestAlgorithmsTableDoc(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "algorithms.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := section(string(doc))
	if !ok {
		t.Fatalf("docs/algorithms.md has no %s ... %s section", beginMarker, endMarker)
	}
	want := algtable.Markdown(algtable.All())
	if strings.TrimSpace(got) == strings.TrimSpace(want) {
		return
	}
	g, w := strings.Split(strings.TrimSpace(got), "\n"), strings.Split(strings.TrimSpace(want), "\n")
	i := 0
	for i < len(g) && i < len(w) && g[i] == w[i] {
		i++
	}
	line := func(l []string) string {
		if i < len(l) {
			return l[i]
		}
		return "(end of table)"
	}
	t.Errorf("docs/algorithms.md's table is out of date (%d rows, registry %d); regenerate it with\n"+
		"\tgo run ./cmd/scoll algorithms --format markdown --update docs/algorithms.md\n"+
		"first difference, table line %d:\ndoc:      %s\nregistry: %s", len(g), len(w), i+1, line(g), line(w))
}

func TestReplaceSection(t *testing.T) {
	doc := "# x\n\n" + beginMarker + "\nold\n" + endMarker + "\nrest\n"
	got, ok := replaceSection(doc, "| t |\n")
	if want := "# x\n\n" + beginMarker + "\n| t |\n" + endMarker + "\nrest\n"; !ok || got != want {
		t.Errorf("replaceSection = %q, %v; want %q", got, ok, want)
	}
	if s, ok := section(got); !ok || s != "\n| t |\n" {
		t.Errorf("section = %q, %v", s, ok)
	}
	for _, bad := range []string{"none", beginMarker, endMarker + beginMarker} {
		if _, ok := replaceSection(bad, "t"); ok {
			t.Errorf("replaceSection(%q) accepted", bad)
		}
	}
}

func TestAlgorithmsUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	os.WriteFile(path, []byte("intro\n"+beginMarker+"\nstale\n"+endMarker+"\n"), 0o644)
	if _, _, err := run(t, "algorithms", "--format", "markdown", "--update", path); err != nil {
		t.Fatal(err)
	}
	doc, _ := os.ReadFile(path)
	got, _ := section(string(doc))
	if strings.TrimSpace(got) != strings.TrimSpace(algtable.Markdown(algtable.All())) || !strings.HasPrefix(string(doc), "intro\n") {
		t.Errorf("updated file:\n%s", doc)
	}
	os.WriteFile(path, []byte("no markers\n"), 0o644)
	if _, _, err := run(t, "algorithms", "--format", "markdown", "--update", path); err == nil {
		t.Error("--update of a file without markers succeeded")
	}
}

func TestAlgorithmsCommand(t *testing.T) {
	out, _, err := run(t, "algorithms")
	if err != nil {
		t.Fatal(err)
	}
	table, rest, _ := strings.Cut(out, "\n\n")
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != len(algtable.All())+1 || !strings.HasPrefix(lines[0], "COLLECTIVE") {
		t.Errorf("%d lines for %d algorithms:\n%s", len(lines), len(algtable.All()), out)
	}
	// The transport paths' conditions, then every transport's paths.
	for _, want := range []string{"allreduce/exchange (transport exchange): native", "allreduce/meet (transport meeting)",
		"Transport paths", "inproc     lanes", "tcp        eager"} {
		if !strings.Contains(rest, want) {
			t.Errorf("algorithms lacks %q after the table:\n%s", want, rest)
		}
	}
	out, _, err = run(t, "algorithms", "allreduce")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range scoll.Algorithms("allreduce") {
		if !strings.Contains(out, a.Name) {
			t.Errorf("allreduce table lacks %s:\n%s", a.Name, out)
		}
	}
	if strings.Contains(out, "\nbarrier") {
		t.Errorf("allreduce table lists other collectives:\n%s", out)
	}
	out, _, err = run(t, "algorithms", "--format", "markdown")
	if err != nil || !strings.HasPrefix(out, "| collective | algorithm |") {
		t.Errorf("markdown: %v\n%s", err, out)
	}
	if _, _, err := run(t, "algorithms", "allreduction"); err == nil {
		t.Error("unknown collective accepted")
	}
	if _, _, err := run(t, "algorithms", "--format", "xml"); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestBenchCommand(t *testing.T) {
	out, stderr, err := run(t, "bench", "--np", "2", "--sizes", "8,1K", "--iters", "3", "--format", "csv", "--progress", "never")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	n := len(scoll.Algorithms("allreduce"))
	if len(recs) < 2 || len(recs)-1+strings.Count(stderr, "skipped") != 2*n {
		t.Errorf("%d rows for %d algorithms × 2 sizes:\n%s\n%s", len(recs)-1, n, out, stderr)
	}
	for _, r := range recs[1:] {
		if r[0] != "allreduce" || r[3] != "2" || (r[4] != "8" && r[4] != "1024") || r[7] != "3" {
			t.Errorf("row %v", r)
		}
	}

	out, stderr, err = run(t, "bench", "--np", "3", "--op", "scatter", "--root", "2", "--sizes", "64", "--algorithm", "auto", "--iters", "2", "--progress", "always")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(out, "# scoll bench: scatter, float32, np=3") || !strings.Contains(out, "auto") || !strings.Contains(stderr, "[1/1] auto 64 B") {
		t.Errorf("stdout:\n%s\nstderr:\n%q", out, stderr)
	}

	for _, args := range [][]string{
		{"--sizes", "8:4"},
		{"--op", "nope"},
		{"--algorithm", "nope"},
		{"--format", "xml"},
		{"--np", "0", "--sizes", "8"},
		{"--iters", "0"},
		{"--time", "0s"},
		{"--segment", "1Q"},
		{"--op", "bcast", "--root", "9"},
		{"--progress", "sometimes"},
		{"extra-arg"},
	} {
		// --sizes and --iters keep a wrongly accepted configuration short.
		args = append([]string{"bench", "--sizes", "8", "--iters", "1"}, args...)
		if _, _, err := run(t, args...); err == nil {
			t.Errorf("bench %v succeeded", args)
		}
	}
}
