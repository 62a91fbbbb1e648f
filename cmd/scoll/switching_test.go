package main

import (
	"encoding/csv"
	"strconv"
	"strings"
	"testing"
)

// TestSimSwitching runs docs/switching.md's experiment at 16 B per rank:
// on a ring of 16 nodes recursive doubling is the fastest allgather under
// cut-through and slower than neighbor-exchange under store-and-forward,
// in both models, while the neighbour-only algorithm keeps its time.
func TestSimSwitching(t *testing.T) {
	times := map[string]float64{} // switching/model/algorithm → time_s
	for _, sw := range []string{"cut-through", "store-and-forward"} {
		for _, model := range []string{"stage", "flow"} {
			out, _, err := run(t, "sim", "--topology", "torus:16", "--op", "allgather", "--algorithm", "recursive-doubling,neighbor-exchange",
				"--sizes", "16", "--model", model, "--switching", sw, "--format", "csv", "--progress", "never")
			if err != nil {
				t.Fatal(err)
			}
			recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil || len(recs) != 3 {
				t.Fatalf("csv: %v, %d records:\n%s", err, len(recs), out)
			}
			for _, r := range recs[1:] {
				times[sw+"/"+model+"/"+r[3]], _ = strconv.ParseFloat(r[6], 64)
			}
		}
	}
	for _, model := range []string{"stage", "flow"} {
		ct, saf := "cut-through/"+model+"/", "store-and-forward/"+model+"/"
		if !(times[ct+"recursive-doubling"] < times[ct+"neighbor-exchange"] && times[saf+"recursive-doubling"] > times[saf+"neighbor-exchange"]) ||
			times[ct+"neighbor-exchange"] != times[saf+"neighbor-exchange"] {
			t.Errorf("%s model: times %v; want recursive-doubling first under cut-through only, neighbor-exchange unchanged", model, times)
		}
	}
	for _, bad := range []string{"packet:0", "circuit"} {
		if _, _, err := run(t, "sim", "--topology", "torus:4", "--sizes", "8", "--switching", bad, "--progress", "never"); err == nil || !strings.Contains(err.Error(), "--switching") {
			t.Errorf("--switching %s: %v", bad, err)
		}
	}
}
