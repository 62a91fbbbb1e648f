package main

import (
	"bytes"
	"encoding/csv"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/scoll/scoll/bench"
	"github.com/scoll/scoll/sim"
	"github.com/scoll/scoll/topology"
	"github.com/spf13/pflag"
)

var updateFigures = flag.Bool("update", false, "TestCommittedFigures: rewrite docs/figures with the figures the commands make now")

// figuresDir holds the committed figures.
var figuresDir = filepath.Join("..", "..", "docs", "figures")

// committedFigure is a file of docs/figures and how to make it again into
// dir: the command line (with {dir} for dir), and whether the file is the
// command's standard output.
type committedFigure struct {
	file   string
	args   []string
	stdout bool
	slow   bool // seconds: left out by -short
}

// committedFigures lists every file of docs/figures but the Sack figures
// (TestCommittedSackFigures), with the commands of the docs that show
// them; the figures of measurements are drawn again from the measurements
// kept as CSV (--from).
func committedFigures() []committedFigure {
	figs := []committedFigure{
		{"marendic-fig10.csv", []string{"marendic", "--out", "{dir}"}, false, false},
		{"marendic-fig10.svg", nil, false, false},
		{"marendic-fig6.csv", nil, false, false},
		{"marendic-fig6.svg", nil, false, false},
		{"bcast-bounds-p64.csv", []string{"model", "--op", "bcast", "--np", "64", "--sizes", "8:64M:x8", "--params", "infiniband",
			"--format", "csv", "--plot-bounds", "{dir}/bcast-bounds-p64.svg"}, true, true},
		{"bcast-bounds-p64.svg", nil, false, true},
	}
	for _, sw := range []string{"cut-through", "store-and-forward"} {
		simArgs := []string{"sim", "--topology", "torus:16", "--op", "allgather", "--algorithm", "ring,recursive-doubling,neighbor-exchange",
			"--sizes", "16,64,256,1K,4K,16K,64K", "--switching", sw, "--progress", "never", "--format", "csv"}
		figs = append(figs,
			committedFigure{"switching-" + sw + "-stage.csv", append(slices.Clone(simArgs), "--plot", "{dir}/switching-"+sw+".svg"), true, false},
			committedFigure{"switching-" + sw + ".svg", nil, false, false},
			committedFigure{"switching-" + sw + "-flow.csv", append(slices.Clone(simArgs), "--model", "flow"), true, false})
	}
	for _, n := range []string{"3", "4", "5"} {
		for _, kind := range []string{"", "peak-"} {
			figs = append(figs, committedFigure{"moody-" + kind + "fig" + n + ".svg",
				[]string{"split", "--figure", "moody" + n, "--from", filepath.Join("..", "..", "docs", "moody-"+kind+"fig"+n+".csv"),
					"--plot", "{dir}/moody-" + kind + "fig" + n + ".svg"}, false, false})
		}
	}
	docs := filepath.Join("..", "..", "docs")
	figs = append(figs,
		committedFigure{"split-fig2.svg", []string{"split", "--from", filepath.Join(docs, "split-scaling.csv"), "--plot", "{dir}/split-fig2.svg"}, false, false},
		committedFigure{"split-table21.svg", []string{"split-phases", "--from", filepath.Join(docs, "split-table21.csv"), "--plot", "{dir}/split-table21.svg"}, false, false},
		committedFigure{"imbalance-p128.svg", []string{"bench", "--np", "128", "--imbalance", "single:rank=P-1:delay=0..3x/6",
			"--from", filepath.Join(docs, "imbalance-p128.csv"), "--plot", "{dir}/imbalance-p128.svg"}, false, false})
	return figs
}

// compareFigure compares the file name made into dir with its committed
// copy, or with -update copies it over the committed one.
func compareFigure(t *testing.T, dir, name string) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	committed := filepath.Join(figuresDir, name)
	if *updateFigures {
		if err := os.WriteFile(committed, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/figures/%s is not what the command makes now (%d bytes, committed %d); "+
			"refresh with go test ./cmd/scoll -run TestCommittedFigures -update", name, len(got), len(want))
	}
}

// TestCommittedFigures makes every committed figure again (but the Sack
// figures) and compares it with docs/figures; with -update it rewrites
// them. -short leaves out the slow ones. Every file of docs/figures is
// covered here or by TestCommittedSackFigures.
func TestCommittedFigures(t *testing.T) {
	dir := t.TempDir()
	covered := map[string]bool{}
	for _, f := range sackFigures {
		covered[f.file+".svg"], covered[f.file+".csv"] = true, true
	}
	for _, f := range committedFigures() { // in order: a command makes the files after it
		covered[f.file] = true
		if f.slow && testing.Short() && !*updateFigures {
			continue
		}
		if f.args != nil {
			args := make([]string, len(f.args))
			for i, a := range f.args {
				args[i] = strings.ReplaceAll(a, "{dir}", dir)
			}
			out, _, err := run(t, args...)
			if err != nil {
				t.Fatalf("%s: %v", f.file, err)
			}
			if f.stdout {
				if err := os.WriteFile(filepath.Join(dir, f.file), []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		compareFigure(t, dir, f.file)
	}
	all, err := os.ReadDir(figuresDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range all {
		if !covered[e.Name()] {
			t.Errorf("docs/figures/%s: no test makes it again (add it to committedFigures)", e.Name())
		}
	}
}

// TestCommittedSackFigures checks the figures of scoll figures in
// docs/figures, whose full set takes many minutes to simulate: it
// simulates again the points of their smallest torus and compares them
// with the committed CSVs, then draws every SVG again from the CSVs. With
// -update it redraws the SVGs (scoll figures --out docs/figures makes the
// CSVs).
func TestCommittedSackFigures(t *testing.T) {
	if testing.Short() && !*updateFigures {
		t.Skip("seconds; -short")
	}
	cmd := newFiguresCmd()
	def := func(name string) string { return cmd.Flags().Lookup(name).DefValue }
	sizeTori, err := parseTori("--tori", def("tori"))
	if err != nil {
		t.Fatal(err)
	}
	nodeTori, err := parseTori("--shapes", def("shapes"))
	if err != nil {
		t.Fatal(err)
	}
	sizes := func(name string) []int {
		s, err := bench.ParseSizes(def(name))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	small, large, nodeSizes := sizes("sizes"), sizes("large-sizes"), sizes("node-sizes")
	largeNodes, _ := strconv.Atoi(def("large-nodes"))
	sizesOn := func(tp topology.Topology) []int {
		if tp.Nodes() > largeNodes {
			return large
		}
		return small
	}
	var network networkFlags
	network.add(pflag.NewFlagSet("figures", pflag.ContinueOnError), def("port-efficiency"), "")
	net, err := network.config()
	if err != nil {
		t.Fatal(err)
	}
	ringSimMax, _ := strconv.Atoi(def("ring-sim-max"))
	committed := &figRunner{ext: ".svg", net: net, ringSimMax: ringSimMax, rows: map[figKey]figRow{}}
	fresh := &figRunner{ext: ".svg", net: net, ringSimMax: ringSimMax, rows: map[figKey]figRow{}}
	smallest := sizeTori[0].String()
	checked := 0
	for _, f := range sackFigures {
		b, err := os.ReadFile(filepath.Join(figuresDir, f.file+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil || len(recs) < 2 {
			t.Fatalf("%s.csv: %v", f.file, err)
		}
		for _, r := range recs[1:] {
			ports := sim.SinglePort
			if r[3] == sim.MultiPort.String() {
				ports = sim.MultiPort
			}
			P, _ := strconv.Atoi(r[5])
			n, _ := strconv.Atoi(r[6])
			tm, _ := strconv.ParseFloat(r[7], 64)
			k := figKey{f.coll, r[2], ports, r[4], n}
			row := figRow{simRow: simRow{Topology: r[4], Ranks: P, Op: r[1], Algorithm: r[2], Bytes: n, Time: tm}, Ports: r[3], Method: r[12]}
			if tm > 0 {
				row.MBps = float64(n) * float64(P-1) / tm / 1e6
			}
			committed.rows[k] = row
			if k.torus != smallest || k.bytes != small[0] && k.bytes != small[len(small)-1] {
				continue
			}
			if _, done := fresh.rows[k]; !done {
				if err := fresh.run(k); err != nil {
					t.Fatal(err)
				}
			}
			if got := fresh.rows[k].Time; math.Abs(got-tm) > 1e-9*tm {
				t.Errorf("%s: %s %s %s at %d B: %g s now, %g s in the CSV (scoll figures --out docs/figures makes it again)", f.file, r[1], r[2], r[4], n, got, tm)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatalf("no CSV row on %s", smallest)
	}
	dir := t.TempDir()
	for _, f := range sackFigures {
		if err := committed.write(dir, f, sizeTori, nodeTori, sizesOn, nodeSizes); err != nil {
			t.Fatal(err)
		}
		compareFigure(t, dir, f.file+".svg")
	}
}
