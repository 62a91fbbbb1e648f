package main

import (
	"strings"
	"testing"
)

// scoll model marks the rows whose cost and critical times differ by more
// than 2× and says why once, under the table: at 8 ranks and 8 bytes the
// registered cost of bucket3 is 3× its critical path (two elements leave
// most of its three buckets empty); CSV carries no marks.
func TestModelCostNote(t *testing.T) {
	out, _, err := run(t, "model", "--op", "allreduce", "--np", "8", "--sizes", "8", "--progress", "never")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	rows := map[string]string{}
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "allreduce" {
			rows[f[1]] = l
		}
	}
	if !strings.Contains(rows["bucket3"], "µs†") || strings.Contains(rows["recursive-doubling"], "†") {
		t.Errorf("marks:\nbucket3: %s\nrecursive-doubling: %s", rows["bucket3"], rows["recursive-doubling"])
	}
	if n := strings.Count(out, "† cost > 2× critical"); n != 1 || !strings.HasPrefix(lines[len(lines)-1], "† ") ||
		!strings.Contains(out, "round-synchronous") || !strings.Contains(out, "critical path") {
		t.Errorf("want one footnote under the table, got %d:\n%s", n, out)
	}
	out, _, err = run(t, "model", "--op", "allreduce", "--np", "8", "--sizes", "8", "--format", "csv", "--progress", "never")
	if err != nil || strings.ContainsAny(out, "†‡") {
		t.Errorf("csv: %v\n%s", err, out)
	}
	// Where the columns agree, no note.
	out, _, err = run(t, "model", "--op", "allreduce", "--np", "8", "--sizes", "4M", "--progress", "never")
	if err != nil || strings.ContainsAny(out, "†‡") {
		t.Errorf("4 MiB: %v\n%s", err, out)
	}
}
