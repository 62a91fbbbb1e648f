package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestSimCommand(t *testing.T) {
	out, _, err := run(t, "sim", "--topology", "torus:8x8x8", "--op", "allgather", "--algorithm", "ring,recursive-doubling",
		"--sizes", "64", "--alpha", "1s", "--link-bw", "1B/s", "--format", "csv")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 3 {
		t.Fatalf("csv: %v, %d records:\n%s", err, len(recs), out)
	}
	want := map[string][2]float64{"ring": {511, 511 * 64}, "recursive-doubling": {9, 949 * 64}}
	for _, r := range recs[1:] {
		a, _ := strconv.ParseFloat(r[7], 64)
		d, _ := strconv.ParseFloat(r[8], 64)
		tm, _ := strconv.ParseFloat(r[6], 64)
		w := want[r[3]]
		if a != w[0] || d != w[1] || tm != w[0]+w[1] {
			t.Errorf("%s: time %v = %vα + %vδ, want %vα + %vδ", r[3], tm, a, d, w[0], w[1])
		}
	}
}

func TestSimStagesAndPlot(t *testing.T) {
	dir := t.TempDir()
	for _, ext := range []string{"svg", "png"} {
		file := filepath.Join(dir, "out."+ext)
		out, _, err := run(t, "sim", "--topology", "clos:R=8,T=4,mu=0.5", "--op", "allgather", "--algorithm", "all",
			"--sizes", "8,1K", "--model", "flow", "--stages", "--plot", file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "bruck") {
			t.Fatalf("no bruck row:\n%s", out)
		}
		st, err := os.Stat(file)
		if err != nil || st.Size() < 1000 {
			t.Fatalf("plot %s: %v", file, err)
		}
	}
	out, _, err := run(t, "sim", "--topology", "torus:4x4x4", "--op", "allgather", "--algorithm", "recursive-doubling", "--sizes", "1K", "--stages")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(out, "\n") < 10 || !strings.Contains(out, "max_congestion") {
		t.Fatalf("no stage table:\n%s", out)
	}
}

func TestSimBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--topology", "torus:0x4"},
		{"--topology", "blob:3"},
		{"--op", "nope"},
		{"--algorithm", "nope"},
		{"--model", "fluid"},
		{"--ports", "3"},
		{"--alpha", "-1us"},
		{"--link-bw", "fast"},
		{"--np", "1000"},
		{"--format", "xml"},
		{"--plot", "x.gif"},
		{"--mapping", "list:1,2"},
	} {
		if _, _, err := run(t, append([]string{"sim", "--sizes", "8", "--progress", "never"}, args...)...); err == nil {
			t.Errorf("sim %v: no error", args)
		}
	}
}

func TestScheduleCommand(t *testing.T) {
	for _, format := range []string{"text", "json", "goal", "svg"} {
		out, _, err := run(t, "schedule", "--op", "allreduce", "--algorithm", "rabenseifner", "--np", "6", "--size", "48", "--elem", "4", "--format", format)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		switch format {
		case "json":
			var ranks []struct {
				Rank   int
				Rounds [][]map[string]any
			}
			if err := json.Unmarshal([]byte(out), &ranks); err != nil || len(ranks) != 6 || len(ranks[0].Rounds) == 0 {
				t.Fatalf("json: %v, %d ranks:\n%.300s", err, len(ranks), out)
			}
		case "goal":
			if !strings.HasPrefix(out, "// calc N is N ns of computation: gamma = 0 s/B") || !strings.Contains(out, "\nnum_ranks 6\n") || !strings.Contains(out, "b to 0 tag 0") {
				t.Fatalf("goal:\n%.300s", out)
			}
		case "text":
			if strings.Count(out, "rank ") != 6 {
				t.Fatalf("text:\n%.300s", out)
			}
		case "svg":
			if !strings.HasPrefix(out, "<svg") {
				t.Fatalf("svg:\n%.100s", out)
			}
		}
	}
	for _, args := range [][]string{
		{"--op", "allreduce"},
		{"--op", "allreduce", "--algorithm", "nope"},
		{"--op", "allgather", "--algorithm", "recursive-doubling", "--np", "6"},
		{"--op", "allgather", "--algorithm", "ring", "--format", "pdf"},
		{"--op", "allgather", "--algorithm", "ring", "--size", "7", "--elem", "2"},
	} {
		if _, _, err := run(t, append([]string{"schedule"}, args...)...); err == nil {
			t.Errorf("schedule %v: no error", args)
		}
	}
}

// The --stages table carries Sack's columns: on an 8×8×8 torus rd-optimal's
// first stage after the exchange flips bit 8 (rank distance 256, 4 hops in
// Z, congestion 2, one block).
func TestSimStageColumns(t *testing.T) {
	out, _, err := run(t, "sim", "--topology", "torus:8x8x8", "--op", "allgather", "--algorithm", "rd-optimal", "--sizes", "1K", "--stages", "--progress", "never")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	var head, stage1 []string
	for i, l := range lines {
		if f := tableFields(l); len(f) > 0 && f[0] == "stage" && i+2 < len(lines) {
			head, stage1 = f, tableFields(lines[i+2])
		}
	}
	want := map[string]string{"stage": "1", "S": "8", "distance": "256", "hops": "4", "max_congestion": "2", "max_msg": "1024", "size×n": "1"}
	if len(head) != len(stage1) {
		t.Fatalf("no stage table:\n%s", out)
	}
	for i, h := range head {
		if w, ok := want[h]; ok {
			if stage1[i] != w {
				t.Errorf("stage 1 %s = %s, want %s", h, stage1[i], w)
			}
			delete(want, h)
		}
	}
	if len(want) > 0 {
		t.Errorf("columns %v missing:\n%s", want, out)
	}
}

// The flow model has no α and δ terms: n/a in the table, empty in CSV,
// null in JSON; the stage model prints them.
func TestSimFlowLeavesStageTermsOut(t *testing.T) {
	base := []string{"sim", "--topology", "torus:4x4", "--op", "allgather", "--algorithm", "ring", "--sizes", "64", "--progress", "never"}
	out, _, err := run(t, append(base, "--model", "flow")...)
	if err != nil {
		t.Fatal(err)
	}
	if f := tableFields(strings.Split(out, "\n")[1]); len(f) < 8 || f[6] != "n/a" || f[7] != "n/a" {
		t.Errorf("flow table: alpha_count and delta_bytes not n/a:\n%s", out)
	}
	out, _, err = run(t, append(base, "--model", "flow", "--format", "csv")...)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 2 || recs[0][7] != "alpha_count" || recs[1][7] != "" || recs[1][8] != "" || recs[1][6] == "" {
		t.Errorf("flow csv: %v\n%s", err, out)
	}
	out, _, err = run(t, append(base, "--model", "flow", "--format", "json")...)
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("flow json: %v\n%s", err, out)
	}
	for _, k := range []string{"alpha_count", "delta_bytes"} {
		if v, ok := rows[0][k]; !ok || v != nil {
			t.Errorf("flow json %s = %v (present %v), want null", k, v, ok)
		}
	}
	out, _, err = run(t, append(base, "--format", "json")...)
	if err != nil {
		t.Fatal(err)
	}
	rows = nil
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 || rows[0]["alpha_count"] != 15.0 {
		t.Errorf("stage json: %v, %v, want alpha_count 15", err, rows)
	}
}

// --elem cuts the default 64 KiB segments in elements as the library does:
// 192 KiB in 3-byte elements is 4 segments of 21,845 elements (65,535 B,
// the last of 1 element), not the 3 of 64 KiB one-byte elements give.
func TestSimElemSegments(t *testing.T) {
	for _, tc := range []struct {
		elem, sends string
	}{{"1", "3"}, {"3", "4"}} {
		out, _, err := run(t, "sim", "--topology", "crossbar:2", "--op", "bcast", "--algorithm", "pipeline", "--sizes", "192K",
			"--elem", tc.elem, "--format", "csv", "--progress", "never")
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil || len(recs) != 2 || recs[1][7] != tc.sends {
			t.Errorf("--elem %s: alpha_count want %s (one per segment):\n%s", tc.elem, tc.sends, out)
		}
	}
	if _, _, err := run(t, "sim", "--topology", "crossbar:2", "--op", "bcast", "--sizes", "7", "--elem", "2", "--progress", "never"); err == nil {
		t.Error("--sizes 7 --elem 2: no error")
	}
	out, _, err := run(t, "schedule", "--op", "bcast", "--algorithm", "pipeline", "--np", "2", "--size", "192K", "--elem", "3", "--format", "goal")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "send 65535b to 1"); n != 3 || !strings.Contains(out, "send 3b to 1") {
		t.Errorf("schedule --elem 3: %d sends of 65535 B, want 3 and one of 3 B:\n%.600s", n, out)
	}
}

// A barrier's messages are empty and real: the schedule lists them and
// both models charge α for each.
func TestBarrierMessagesInCommands(t *testing.T) {
	out, _, err := run(t, "schedule", "--op", "barrier", "--algorithm", "dissemination", "--np", "4", "--format", "goal")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "send 0b to"); n != 8 {
		t.Errorf("goal: %d empty sends, want 8:\n%s", n, out)
	}
	for _, m := range []string{"stage", "flow"} {
		out, _, err := run(t, "sim", "--topology", "crossbar:8", "--op", "barrier", "--algorithm", "dissemination", "--sizes", "0",
			"--alpha", "1s", "--model", m, "--format", "csv", "--progress", "never")
		if err != nil {
			t.Fatal(err)
		}
		if tm := csvColumn(t, out, "time_s")["dissemination"]; tm != 3 {
			t.Errorf("%s model: barrier of 8 ranks takes %g s, want 3 rounds of α = 1 s", m, tm)
		}
	}
}

// The stage model warns where it is not valid: a pipelined bcast on 512
// ranks passes its segment down a chain of 511 messages, which the stage
// model charges as 2 stages (255× below the flow model); a ring allgather,
// whose ranks all communicate in every round, gets no warning.
func TestSimStageModelWarns(t *testing.T) {
	base := []string{"sim", "--topology", "hypercube:9", "--format", "csv", "--progress", "never"}
	out, stderr, err := run(t, append(base, "--op", "bcast", "--algorithm", "pipeline", "--sizes", "64K")...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "stage model not valid for pipeline") || !strings.Contains(stderr, "--model flow") {
		t.Errorf("no warning for the pipelined bcast:\n%s", stderr)
	}
	stage := csvColumn(t, out, "time_s")["pipeline"]
	out, _, err = run(t, append(base, "--op", "bcast", "--algorithm", "pipeline", "--sizes", "64K", "--model", "flow")...)
	if err != nil {
		t.Fatal(err)
	}
	if flow := csvColumn(t, out, "time_s")["pipeline"]; flow < 100*stage {
		t.Errorf("pipeline: flow %g s, stage %g s: the flow model should follow the chain", flow, stage)
	}
	if _, stderr, err = run(t, append(base, "--op", "allgather", "--algorithm", "ring", "--sizes", "64")...); err != nil || stderr != "" {
		t.Errorf("ring allgather: %v, stderr %q", err, stderr)
	}
}
