package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSimEmbedding: the ring allgather's graph (r → r+1) on a mesh placed by
// the ring mapping and on a hypercube by the gray mapping has dilation 1,
// and stretches in XYZ order; the stage congestion is the stage model's.
func TestSimEmbedding(t *testing.T) {
	for _, c := range []struct {
		topo, mapping string
		dilation      int
	}{
		{"mesh:4x4", "ring", 1},
		{"hypercube:4", "gray", 1},
		{"mesh:4x4", "xyz", 6},
		{"mesh:5x5", "ring", 2},
	} {
		out, _, err := run(t, "sim", "--topology", c.topo, "--mapping", c.mapping, "--op", "allgather", "--algorithm", "ring,bruck",
			"--sizes", "64", "--embedding", "--format", "json")
		if err != nil {
			t.Fatal(err)
		}
		var rows []embedRow
		if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 2 {
			t.Fatalf("%s %s: %v, %d rows:\n%s", c.topo, c.mapping, err, len(rows), out)
		}
		for _, r := range rows {
			if r.Load != 1 || max(1, r.StageCongestion) != r.ModelCongestion || r.Mapping != c.mapping {
				t.Errorf("%s %s %s: %+v", c.topo, c.mapping, r.Algorithm, r)
			}
		}
		if r := rows[0]; r.Algorithm != "ring" || r.Dilation != c.dilation || r.Edges != 16 && r.Edges != 25 {
			t.Errorf("%s %s: ring row %+v, want dilation %d", c.topo, c.mapping, r, c.dilation)
		}
	}
	out, _, err := run(t, "sim", "--topology", "mesh:7x7", "--np", "31", "--mapping", "htree", "--op", "bcast", "--algorithm", "binary",
		"--sizes", "8", "--embedding")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "mean_dilation") || !strings.Contains(out, "htree") {
		t.Errorf("no embedding table:\n%s", out)
	}
	if _, _, err := run(t, "sim", "--trace", "x.trace", "--embedding"); err == nil || !strings.Contains(err.Error(), "--embedding") {
		t.Errorf("--trace with --embedding: %v", err)
	}
}
