package bench

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestReadCSV: rows written as CSV read back as written (within the
// CSV's printed precision), and bad input is refused with ErrConfig.
func TestReadCSV(t *testing.T) {
	rows := []SortPhasesRow{
		{Entries: 8 << 20, Sorters: 2, CollectS: 0.223187, SplittersS: 0.0009, ExchangeS: 0.021586, MergeS: 0.089821, TotalS: 0.322523, WallS: 0.340295},
		{Entries: 16 << 20, Sorters: 64, CollectS: 1.5, TotalS: 2.25, WallS: 3},
	}
	var buf bytes.Buffer
	if err := Write(&buf, "csv", rows); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCSV[SortPhasesRow](bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := Write(&again, "csv", got); err != nil {
		t.Fatal(err)
	}
	if again.String() != buf.String() || len(got) != 2 || got[1].Sorters != 64 || got[0].Entries != 8<<20 {
		t.Fatalf("read back:\n%s\nwritten:\n%s", again.String(), buf.String())
	}
	for _, bad := range []string{"", "x,y\n1,2\n", "entries,sorters\n8,two\n", "entries,sorters\n1.5,2\n"} {
		if _, err := ReadCSV[SortPhasesRow](strings.NewReader(bad)); !errors.Is(err, ErrConfig) {
			t.Errorf("ReadCSV(%q) = %v, want ErrConfig", bad, err)
		}
	}
}
