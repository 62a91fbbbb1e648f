package main

import (
	"encoding/csv"
	"strconv"
	"strings"
	"testing"
)

// csvColumn returns column name of a CSV output by the algorithm column.
func csvColumn(t *testing.T, out, name string) map[string]float64 {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("%v:\n%s", err, out)
	}
	col, alg := -1, -1
	for i, h := range recs[0] {
		switch h {
		case name:
			col = i
		case "algorithm":
			alg = i
		}
	}
	if col < 0 || alg < 0 {
		t.Fatalf("no %s or algorithm column in %v", name, recs[0])
	}
	m := map[string]float64{}
	for _, r := range recs[1:] {
		v, err := strconv.ParseFloat(r[col], 64)
		if err != nil {
			t.Fatal(err)
		}
		m[r[alg]] = v
	}
	return m
}

const lateRank = "0,0,0,0,0,0,0,2ms"

func TestSimArrivals(t *testing.T) {
	args := []string{"sim", "--topology", "torus:2x4", "--op", "reduce", "--algorithm", "binomial,clairvoyant", "--sizes", "16K", "--model", "flow", "--format", "csv"}
	out, _, err := run(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	together := csvColumn(t, out, "time_s")
	out, _, err = run(t, append(args, "--arrivals", lateRank)...)
	if err != nil {
		t.Fatal(err)
	}
	late := csvColumn(t, out, "time_s")
	for alg, tt := range together {
		if late[alg] < 2e-3 || late[alg] < tt {
			t.Errorf("%s: %g with a rank 2 ms late, %g together", alg, late[alg], tt)
		}
	}
	for _, bad := range [][]string{
		{"--arrivals", lateRank, "--model", "stage"},
		{"--arrivals", "0,1ms"},
		{"--arrivals", "0,0,0,0,0,0,0,-1ms"},
	} {
		a := append([]string(nil), args...)
		if _, _, err := run(t, append(a, bad...)...); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestModelArrivals(t *testing.T) {
	args := []string{"model", "--op", "reduce", "--np", "8", "--sizes", "64K", "--params", "curie", "--format", "csv"}
	out, _, err := run(t, append(args, "--arrivals", lateRank)...)
	if err != nil {
		t.Fatal(err)
	}
	at := csvColumn(t, out, "arrival_s")
	if at["binomial"] < 2e-3 || !(at["clairvoyant"] < at["binomial"]) {
		t.Fatalf("arrival_s: %v", at)
	}
	if _, _, err := run(t, append(args, "--arrivals", "0,1ms")...); err == nil {
		t.Error("a short arrival list: no error")
	}
}

// TestModelBcastBounds: scoll model prints the bcast bounds, and no
// algorithm beats the round-optimal one.
func TestModelBcastBounds(t *testing.T) {
	out, _, err := run(t, "model", "--op", "bcast", "--np", "16", "--sizes", "8,64K", "--params", "infiniband", "--format", "csv")
	if err != nil {
		t.Fatal(err)
	}
	r := csvColumn(t, out, "ratio_round_opt")
	if len(r) == 0 {
		t.Fatalf("no bounds:\n%s", out)
	}
	for alg, x := range r {
		if x < 1-1e-9 {
			t.Errorf("%s: %g of the round-optimal bound", alg, x)
		}
	}
	if !strings.Contains(out, "notes_bound_s") {
		t.Error("no notes_bound_s column")
	}
	out, _, _ = run(t, "model", "--op", "allreduce", "--np", "16", "--sizes", "8", "--format", "csv")
	if strings.Contains(out, "round_opt_s") {
		t.Error("bounds printed for allreduce")
	}
}

// TestSimBcastBounds: the flow model (which follows every message's
// dependencies) never puts a bcast below the round-optimal bound; the
// columns appear for bcast only.
func TestSimBcastBounds(t *testing.T) {
	out, _, err := run(t, "sim", "--topology", "torus:4x4", "--model", "flow", "--op", "bcast",
		"--algorithm", "binomial,two-tree,scatter-allgather,pipeline,mesh,fibonacci", "--sizes", "8,4K,256K", "--format", "csv")
	if err != nil {
		t.Fatal(err)
	}
	for alg, x := range csvColumn(t, out, "ratio_round_opt") {
		if x < 1-1e-9 {
			t.Errorf("%s: %g of the round-optimal bound", alg, x)
		}
	}
	out, _, err = run(t, "sim", "--topology", "torus:4x4", "--op", "allgather", "--algorithm", "ring", "--sizes", "8", "--format", "csv")
	if err != nil || strings.Contains(out, "round_opt_s") {
		t.Errorf("allgather: %v\n%s", err, out)
	}
}
