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
			if !strings.HasPrefix(out, "num_ranks 6\n") || !strings.Contains(out, "b to 0 tag 0") {
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
		if f := strings.Fields(l); len(f) > 0 && f[0] == "stage" && i+2 < len(lines) {
			head, stage1 = f, strings.Fields(lines[i+2])
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
