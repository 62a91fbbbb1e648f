package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestClairvoyantJSON(t *testing.T) {
	out, _, err := run(t, "clairvoyant", "--np", "4", "--segments", "4", "--arrivals", "0,0,0,10", "--d", "2", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		P, Segments, Rounds int
		Verified            bool
		Ranks               [][]struct {
			Round      int
			Send, Recv []int
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	// Fig. 8: the last rank arrives after the 3-rank reduction's 5 rounds.
	if got.P != 4 || got.Segments != 4 || got.Rounds != 9 || !got.Verified || len(got.Ranks) != 4 {
		t.Fatalf("%+v", got)
	}
	for _, st := range got.Ranks[3] {
		if st.Round < 5 || (st.Send == nil && st.Recv == nil) {
			t.Fatalf("rank 3: %+v", st)
		}
	}
	if !strings.Contains(out, `"send":null`) {
		t.Fatalf("no null send in %s", out)
	}
}

func TestClairvoyantTextSVGSweep(t *testing.T) {
	out, _, err := run(t, "clairvoyant", "--np", "8", "--segments", "3", "--root", "5")
	if err != nil || !strings.Contains(out, "R = 5 rounds") || !strings.Contains(out, "exactly once") {
		t.Fatalf("%v:\n%s", err, out)
	}
	out, _, err = run(t, "clairvoyant", "--np", "5", "--arrivals", "0,1,2,3,4", "--format", "svg")
	if err != nil || !strings.HasPrefix(out, "<svg") || strings.Count(out, "<line") == 0 {
		t.Fatalf("%v:\n%s", err, out)
	}
	out, _, err = run(t, "clairvoyant", "--sweep", "20:22:+1")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[2], "21\t5\t6\t8\t12*") || strings.Contains(lines[1], "*") {
		t.Fatalf("sweep:\n%s", out)
	}
}

func TestClairvoyantBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--np", "0"}, {"--segments", "0"}, {"--root", "4"}, {"--d", "0"},
		{"--arrivals", "0,0,1"}, {"--arrivals", "0,0,x,1"}, {"--arrivals", "0,-1,0,0"},
		{"--format", "xml"}, {"--sweep", "5..2"},
	} {
		if _, _, err := run(t, append([]string{"clairvoyant"}, args...)...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestMarendicFigures(t *testing.T) {
	dir := t.TempDir()
	out, _, err := run(t, "marendic", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Butterfly        least ratio 0.99") || !strings.Contains(out, "at most Clairvoyant's in [") {
		t.Fatalf("no Butterfly range:\n%s", out)
	}
	for _, f := range []string{"marendic-fig10.csv", "marendic-fig10.svg", "marendic-fig6.csv", "marendic-fig6.svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, _, err := run(t, "marendic", "--out", dir, "--radix-vector", "4,4,4"); err == nil {
		t.Error("a radix vector of product 64 for 128 processes: no error")
	}
}
