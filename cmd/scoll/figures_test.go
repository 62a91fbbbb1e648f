package main

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// figCSV reads every CSV that scoll figures wrote into dir, keyed by
// figure, op, algorithm, topology and bytes.
func figCSV(t *testing.T, dir string) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.csv"))
	if err != nil || len(files) != len(sackFigures) {
		t.Fatalf("%d CSV files (%v), want %d", len(files), err, len(sackFigures))
	}
	rows := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
		if err != nil || len(recs) < 2 || recs[0][0] != "figure" || recs[0][12] != "method" {
			t.Fatalf("%s: %v\n%s", f, err, b)
		}
		for _, r := range recs[1:] {
			rows[strings.Join([]string{r[0], r[1], r[2], r[4], r[6]}, " ")] = r
		}
	}
	return rows
}

func TestFiguresCommand(t *testing.T) {
	dir := t.TempDir()
	args := []string{"figures", "--out", dir, "--tori", "4x4x4", "--shapes", "4x4x4,4x4x8", "--sizes", "8,1K", "--node-sizes", "1K", "--progress", "never"}
	_, out, err := run(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range sackFigures {
		st, err := os.Stat(filepath.Join(dir, f.file+".svg"))
		if err != nil || st.Size() < 1000 {
			t.Errorf("%s.svg: %v", f.file, err)
		}
		if !strings.Contains(out, f.file+".svg") {
			t.Errorf("stderr does not name %s.svg:\n%s", f.file, out)
		}
	}
	rows := figCSV(t, dir)
	// Every series at every size of each panel: the vs-size figures have
	// 2 sizes on one torus, the vs-nodes ones one size on two tori.
	if want := 2 * 2 * (len(singlePort) + len(multiPort) + len(redscatSack)); len(rows) != want {
		t.Errorf("%d rows, want %d", len(rows), want)
	}
	// The closed forms of a 4×4×4 torus (P = 64), in Sack's α and δ: the
	// ring (63 stages of one link each) and the bucket (3 phases of 3
	// rounds, 63 blocks, no congestion).
	const alpha, delta = 6.29e-6, 1 / 375e6
	for _, tc := range []struct {
		key    string
		stages float64
	}{
		{"fig3.3-allgather-single-port-vs-size allgather ring torus:4x4x4 1024", 63},
		{"fig3.3-allgather-single-port-vs-size allgather bucket torus:4x4x4 1024", 9},
		{"fig3.5-allgather-multi-port-vs-size allgather bucket torus:4x4x4 1024", 9},
		{"fig3.4-allgather-single-port-vs-nodes allgather bucket torus:4x4x4 1024", 9},
	} {
		r, ok := rows[tc.key]
		if !ok {
			t.Errorf("no row %q", tc.key)
			continue
		}
		want := 1024 * 63 / (tc.stages*alpha + 63*1024*delta) / 1e6
		if got, _ := strconv.ParseFloat(r[10], 64); math.Abs(got-want) > 1e-3 || r[12] != "stage" {
			t.Errorf("%s: %v MB/s (%s), want %.3f (stage)", tc.key, got, r[12], want)
		}
	}
	if r := rows["fig3.5-allgather-multi-port-vs-size allgather bucket6 torus:4x4x4 8"]; r == nil || r[3] != "all" {
		t.Errorf("bucket6 row %v, want ports all", r)
	}

	// Above --ring-sim-max the ring is its closed form, which must equal
	// what the simulator gave.
	dir2 := t.TempDir()
	args[2] = dir2
	if _, _, err := run(t, append(args, "--ring-sim-max", "0")...); err != nil {
		t.Fatal(err)
	}
	rows2 := figCSV(t, dir2)
	n := 0
	for k, r := range rows {
		r2 := rows2[k]
		if r[2] != "ring" {
			continue
		}
		n++
		a, _ := strconv.ParseFloat(r[7], 64)
		b, _ := strconv.ParseFloat(r2[7], 64)
		if r2[12] != "closed form" || math.Abs(a-b) > 1e-12*a {
			t.Errorf("%s: simulated %v s, closed form %v s (%s)", k, a, b, r2[12])
		}
	}
	if n != 4 {
		t.Errorf("%d ring rows, want 4", n)
	}
}

func TestFiguresBadFlags(t *testing.T) {
	base := func() []string {
		return []string{"figures", "--out", t.TempDir(), "--tori", "2x2x2", "--shapes", "2x2x2", "--sizes", "8", "--node-sizes", "8", "--progress", "never"}
	}
	if _, _, err := run(t, base()...); err != nil {
		t.Fatalf("the base configuration fails: %v", err)
	}
	for _, args := range [][]string{
		{"--tori", "blob"},
		{"--shapes", "4x0"},
		{"--sizes", "x"},
		{"--node-sizes", ""},
		{"--alpha", "-1s"},
		{"--link-bw", "fast"},
		{"--port-efficiency", "6:2"},
		{"--format", "gif"},
	} {
		if _, _, err := run(t, append(base(), args...)...); err == nil {
			t.Errorf("figures %v: no error", args)
		}
	}
}

// TestFigureCommandsWriteHere: without --out, the figure commands write
// into the current directory (not docs/figures) and name on stderr every
// file they wrote; with --out, into that directory.
func TestFigureCommandsWriteHere(t *testing.T) {
	small := map[string][]string{
		"figures":  {"figures", "--tori", "2x2x2", "--shapes", "2x2x2", "--sizes", "8", "--node-sizes", "8", "--progress", "never"},
		"marendic": {"marendic", "--np", "8", "--radix-vector", "2,4"},
	}
	want := map[string][]string{"marendic": {"marendic-fig10.csv", "marendic-fig10.svg", "marendic-fig6.csv", "marendic-fig6.svg"}}
	for _, f := range sackFigures {
		want["figures"] = append(want["figures"], f.file+".svg", f.file+".csv")
	}
	for name, args := range small {
		t.Run(name, func(t *testing.T) {
			here := t.TempDir()
			t.Chdir(here)
			_, stderr, err := run(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat("docs"); err == nil {
				t.Error("made ./docs")
			}
			for _, f := range want[name] {
				if _, err := os.Stat(f); err != nil {
					t.Errorf("%s: %v", f, err)
				}
				if !strings.Contains(stderr, "wrote ./"+f+"\n") {
					t.Errorf("stderr does not say wrote ./%s:\n%s", f, stderr)
				}
			}
			_, stderr, err = run(t, append(args, "--out", "figs")...)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range want[name] {
				if _, err := os.Stat(filepath.Join("figs", f)); err != nil {
					t.Errorf("--out figs: %v", err)
				}
				if !strings.Contains(stderr, "wrote ./"+filepath.Join("figs", f)+"\n") {
					t.Errorf("--out figs: stderr does not say wrote ./figs/%s:\n%s", f, stderr)
				}
			}
		})
	}
}

func TestShownPath(t *testing.T) {
	for _, tc := range []struct{ dir, name, want string }{
		{".", "a.svg", "./a.svg"},
		{"", "a.svg", "./a.svg"},
		{"figs", "a.svg", "./figs/a.svg"},
		{"./figs/", "a.svg", "./figs/a.svg"},
		{"../figs", "a.svg", "../figs/a.svg"},
		{"/tmp/figs", "a.svg", "/tmp/figs/a.svg"},
	} {
		if got := shownPath(tc.dir, tc.name); got != tc.want {
			t.Errorf("shownPath(%q, %q) = %q, want %q", tc.dir, tc.name, got, tc.want)
		}
	}
}
