package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scoll/scoll/model"
)

func TestModelCommand(t *testing.T) {
	file := filepath.Join(t.TempDir(), "m.svg")
	out, _, err := run(t, "model", "--op", "allreduce", "--np", "8..32", "--sizes", "8,1K", "--format", "json", "--plot", file)
	if err != nil {
		t.Fatal(err)
	}
	var rows []modelRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range rows {
		seen[r.Algorithm]++
		if r.CriticalS <= 0 || r.LogGPS <= 0 || r.EnergyJ <= 0 || r.MemoryB <= 0 || r.CountedS != nil {
			t.Errorf("%+v: a zero metric", r)
		}
	}
	// 3 rank counts (8, 16, 32) × 2 sizes for each algorithm.
	if seen["recursive-doubling"] != 6 || seen["ring"] != 6 {
		t.Fatalf("rows per algorithm: %v", seen)
	}
	if st, err := os.Stat(file); err != nil || st.Size() < 1000 {
		t.Fatalf("plot: %v", err)
	}
	for _, args := range [][]string{{"--np", "x"}, {"--np", "64..8"}, {"--params", "nowhere.json"}, {"--op", "gatherv"}, {"--format", "xml"}} {
		if _, _, err := run(t, append([]string{"model", "--sizes", "8"}, args...)...); err == nil {
			t.Errorf("model %v: no error", args)
		}
	}
}

// The default LogGP column is the critical path: a pipelined bcast on 512
// ranks passes its one 64 KiB segment down a chain of 511 messages, which
// the round-synchronous figure (--round-sync) charges as one step.
func TestModelCriticalPathDefault(t *testing.T) {
	args := []string{"model", "--op", "bcast", "--np", "512", "--sizes", "64K", "--format", "csv"}
	out, _, err := run(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "counted_s") || strings.Contains(out, "loggp_sync_s") {
		t.Fatalf("round-synchronous columns without --round-sync:\n%.300s", out)
	}
	loggp, crit := csvColumn(t, out, "loggp_s")["pipeline"], csvColumn(t, out, "critical_s")["pipeline"]
	// infiniband: L + 2o + 64 KiB·G = 10 µs + 47.8 µs per hop in α-β-γ;
	// LogGP charges (s−1)·G, one G less per hop.
	hop := 0.6e-6 + 2*4.7e-6 + 65536*0.73e-9
	if math.Abs(loggp-511*(hop-0.73e-9)) > 1e-9 || math.Abs(crit-511*hop) > 1e-9 {
		t.Errorf("pipeline: loggp_s %g, critical_s %g, want 511 hops = %g (LogGP %g)", loggp, crit, 511*hop, 511*(hop-0.73e-9))
	}
	out, _, err = run(t, append(args, "--round-sync")...)
	if err != nil {
		t.Fatal(err)
	}
	sync := csvColumn(t, out, "loggp_sync_s")["pipeline"]
	if sync <= 0 || loggp/sync < 100 || csvColumn(t, out, "loggp_s")["pipeline"] != loggp {
		t.Errorf("pipeline: loggp_sync_s %g, loggp_s %g: want the round-synchronous one far below", sync, loggp)
	}
	if _, ok := csvColumn(t, out, "counted_s")["binomial"]; !ok {
		t.Error("--round-sync: no counted_s")
	}
}

func TestCalibrateAndPredict(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p.json")
	out, _, err := run(t, "calibrate", "--time", "5ms", "--output", file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "α =") {
		t.Fatalf("calibrate output:\n%s", out)
	}
	p, err := model.OpenParams(file)
	if err != nil {
		t.Fatal(err)
	}
	if p.Alpha <= 0 || p.Beta <= 0 || p.Gamma <= 0 {
		t.Fatalf("calibrated parameters not positive: %+v", p)
	}
	out, _, err = run(t, "predict", "--params", file, "--op", "allgather", "--algorithm", "ring,bruck", "--np", "2", "--sizes", "8,4K", "--time", "5ms")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(out, "\n") != 5 || !strings.Contains(out, "ratio") {
		t.Fatalf("predict output:\n%s", out)
	}
}
