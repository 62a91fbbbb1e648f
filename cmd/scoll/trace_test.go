package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/transport/record"
)

// recordRing writes the trace of a ring allreduce of n bytes on 8 ranks.
func recordRing(t *testing.T, n int) string {
	t.Helper()
	rec := record.New()
	err := scoll.Run(context.Background(), 8, func(ctx context.Context, c *scoll.Comm) error {
		return scoll.Allreduce(ctx, c, make([]uint8, n), make([]uint8, n), scoll.Sum, scoll.WithAlgorithm("ring"))
	}, scoll.WithRecorder(rec))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := rec.Trace()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "ring.trace")
	if err := tr.WriteFile(file); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestSimTrace: scoll sim --trace of a recorded ring allreduce gives the
// time scoll sim gives the registry's ring allreduce.
func TestSimTrace(t *testing.T) {
	file := recordRing(t, 4096)
	for _, m := range []string{"stage", "flow"} {
		net := []string{"sim", "--topology", "torus:2x2x2", "--model", m, "--format", "csv"}
		out, _, err := run(t, append(net, "--trace", file)...)
		if err != nil {
			t.Fatal(err)
		}
		got, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil || len(got) != 2 {
			t.Fatalf("%v:\n%s", err, out)
		}
		out, _, err = run(t, append(net, "--op", "allreduce", "--algorithm", "ring", "--sizes", "4096")...)
		if err != nil {
			t.Fatal(err)
		}
		want, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil || len(want) != 2 {
			t.Fatalf("%v:\n%s", err, out)
		}
		if got[1][2] != "trace" || got[1][3] != "ring.trace" || got[1][1] != "8" || got[1][4] != "57344" {
			t.Errorf("%s model: row %v (want op trace, algorithm ring.trace, 8 ranks, 2·7·8·512 bytes)", m, got[1])
		}
		if got[1][6] != want[1][6] {
			t.Errorf("%s model: the trace takes %s s, the registry's ring %s s", m, got[1][6], want[1][6])
		}
	}
	out, _, err := run(t, "sim", "--topology", "torus:2x2x2", "--trace", file, "--stages")
	if err != nil || !strings.Contains(out, "max_congestion") || strings.Count(out, "\n") < 16 {
		t.Fatalf("stage table: %v\n%s", err, out)
	}
}

// TestModelTrace evaluates a recorded trace and a hand-written one whose
// sends must be eager (no critical path).
func TestModelTrace(t *testing.T) {
	file := recordRing(t, 64)
	out, _, err := run(t, "model", "--trace", file, "--format", "json", "--round-sync")
	if err != nil {
		t.Fatal(err)
	}
	var rows []traceModelRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("%v:\n%s", err, out)
	}
	r := rows[0]
	if r.NP != 8 || r.Messages != 112 || r.Rounds != 14 || r.CountedS == nil || *r.CountedS <= 0 || r.CriticalS == nil || *r.CriticalS <= 0 ||
		r.LogGPS == nil || *r.LogGPS <= 0 || r.LogGPSyncS == nil || *r.LogGPSyncS <= 0 || r.EnergyJ <= 0 || r.MemoryB <= 0 {
		t.Errorf("row %s", out)
	}
	// The same names and meanings as scoll model's: a ring's critical path
	// is its round-synchronous time but for the (s−1)·G per message the
	// critical path charges where the round-synchronous figure charges s·G
	// (infiniband's G is 0.73 ns/B), and the trace's is the registry ring's.
	if want := *r.LogGPSyncS - 14*0.73e-9; math.Abs(*r.LogGPS-want) > 1e-15 {
		t.Errorf("ring trace: loggp_s %g, loggp_sync_s %g: want %g", *r.LogGPS, *r.LogGPSyncS, want)
	}
	out, _, err = run(t, "model", "--op", "allreduce", "--np", "8", "--sizes", "64", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var reg []modelRow
	if err := json.Unmarshal([]byte(out), &reg); err != nil {
		t.Fatal(err)
	}
	for _, m := range reg {
		if m.Algorithm == "ring" && (m.LogGPS != *r.LogGPS || m.CriticalS != *r.CriticalS) {
			t.Errorf("ring: scoll model loggp_s %g critical_s %g, --trace %g %g", m.LogGPS, m.CriticalS, *r.LogGPS, *r.CriticalS)
		}
	}
	out, _, err = run(t, "model", "--trace", file, "--format", "csv")
	if err != nil || !strings.HasPrefix(out, "trace,np,messages,bytes,rounds,critical_s,loggp_s,energy_j,memory_bytes\n") {
		t.Errorf("csv without --round-sync: %v\n%s", err, out)
	}
	eager := filepath.Join(t.TempDir(), "eager.trace")
	text := "scoll-trace 1\nranks 2\nrank 0\ns1:8\nr1:8\nrank 1\ns0:8\nr0:8\nend\n"
	if err := os.WriteFile(eager, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, "model", "--trace", eager)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(out, "\n"); len(lines) < 2 || strings.Count(lines[1], " - ") != 2 {
		t.Errorf("no critical path wanted for eager sends:\n%s", out)
	}
	for _, m := range []string{"stage", "flow"} {
		if _, _, err := run(t, "sim", "--topology", "crossbar:2", "--model", m, "--trace", eager); err != nil {
			t.Errorf("%s model of eager sends: %v", m, err)
		}
	}
}

// TestTraceFlagErrors: flags that pick what runs are refused with --trace,
// and so are bad files.
func TestTraceFlagErrors(t *testing.T) {
	file := recordRing(t, 8)
	bad := filepath.Join(t.TempDir(), "bad.trace")
	if err := os.WriteFile(bad, []byte("scoll-trace 1\nranks 2\nrank 0\ns1:8\nrank 1\nr0:9\nend\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"sim", "--trace", file, "--op", "bcast"},
		{"sim", "--trace", file, "--algorithm", "ring"},
		{"sim", "--trace", file, "--sizes", "8"},
		{"sim", "--trace", file, "--np", "4"},
		{"sim", "--trace", file, "--topology", "torus:2x2"},
		{"sim", "--trace", bad},
		{"sim", "--trace", filepath.Join(t.TempDir(), "missing")},
		{"model", "--trace", file, "--np", "8"},
		{"model", "--trace", file, "--op", "bcast"},
		{"model", "--trace", bad},
		{"model", "--trace", file, "--format", "xml"},
	} {
		if _, _, err := run(t, args...); err == nil {
			t.Errorf("%v: no error", args)
		} else {
			t.Logf("%v: %v", args, err)
		}
	}
}
