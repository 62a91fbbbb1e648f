package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestSortPhases measures small tables: every sorter's piece is checked
// (sorted, complete) inside, and the table prints a line per phase.
func TestSortPhases(t *testing.T) {
	rows, err := RunSortPhases(context.Background(), SortPhasesConfig{Entries: []int64{1000, 4099}, Sorters: []int{1, 2, 3, 8}, Common: Common{Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows.Rows) != 8 {
		t.Fatalf("%d rows", len(rows.Rows))
	}
	for _, r := range rows.Rows {
		if r.TotalS <= 0 && HaveThreadCPU || r.WallS <= 0 {
			t.Fatalf("%+v: no time measured", r)
		}
	}
	var buf bytes.Buffer
	if err := WriteSortPhases(&buf, rows.Rows); err != nil {
		t.Fatal(err)
	}
	if strings.Count(buf.String(), "splitters") != 2 {
		t.Fatalf("table:\n%s", buf.String())
	}
}
