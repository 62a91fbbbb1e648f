package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/scoll/scoll/model"
	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

func newMarendicCmd() *cobra.Command {
	var (
		out, params, kv string
		np              int
		lo, hi          float64
	)
	cmd := &cobra.Command{
		Use:   "marendic",
		Short: "Marendic et al.'s Figs. 10 and 6 from Table 3 (CSV and SVG)",
		Long: `marendic evaluates the Table 3 rows of Marendic et al. (reduction algorithms in
the linear α-β-γ model, balanced arrivals) and writes two figures, each as
CSV and SVG, into --out (the current directory unless given), and names
each file it wrote on stderr:

  marendic-fig10  every row's runtime relative to Clairvoyant's against the
                  problem size (multiples of 4 bytes, as the paper plots),
                  Radix-k with --radix-vector
  marendic-fig6   Clairvoyant's normalised absorption (t(P) − t(2))/t(P)
                  for N = 1, 2, 4, ..., 64 segments, and the bound of
                  Proposition 3.7 for the optimal segment count

It prints, for every row, its least ratio to Clairvoyant and the sizes where
it is at most 1. The defaults are the paper's: CURIE's α, β, γ, P = 128,
radix vector {4,4,8}.`,
		Example: `  scoll marendic
  scoll marendic --out figs
  scoll marendic --params infiniband --np 64 --radix-vector 4,4,4`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := openParams(params)
			if err != nil {
				return err
			}
			var k []int
			for _, f := range strings.Split(kv, ",") {
				x, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil {
					return fmt.Errorf("--radix-vector %q: %w", kv, err)
				}
				k = append(k, x)
			}
			if np < 2 || !(lo > 0) || !(hi > lo) {
				return fmt.Errorf("--np %d --from %g --to %g: want P ≥ 2 and 0 < from < to", np, lo, hi)
			}
			if math.IsNaN(model.MarendicRadixK(p, np, 1, k)) {
				return fmt.Errorf("--radix-vector %v: entries ≥ 2 whose product is --np %d", k, np)
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			files, err := marendicFig10(w, out, p, np, k, lo, hi)
			if err == nil {
				var more []string
				more, err = marendicFig6(w, out, p, np, lo, hi)
				files = append(files, more...)
			}
			for _, f := range files {
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", f)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", ".", "directory for the CSV and SVG files (made if missing)")
	f.StringVar(&params, "params", "curie", "machine parameters: a preset name or a JSON file")
	addNPFlag(f, &np, 128, "processes P")
	f.StringVar(&kv, "radix-vector", "4,4,8", "Radix-k's radix vector (product P)")
	f.Float64Var(&lo, "from", 1e2, "smallest problem size, in multiples of 4 bytes")
	f.Float64Var(&hi, "to", 1e7, "largest problem size, in multiples of 4 bytes")
	return cmd
}

// marendicSizes returns 97 log-spaced problem sizes in [lo, hi] (units of
// 4 bytes).
func marendicSizes(lo, hi float64) []float64 {
	const n = 96
	out := make([]float64, n+1)
	for i := range out {
		out[i] = lo * math.Pow(hi/lo, float64(i)/n)
	}
	return out
}

// marendicFig10 prints Fig. 10's summary to w and writes its files into
// dir; it returns the files' paths as shownPath gives them.
func marendicFig10(w io.Writer, dir string, p model.Params, P int, k []int, lo, hi float64) ([]string, error) {
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range model.MarendicRows(p, P, 4, k) {
			if n != "Clairvoyant" && !yield(n) {
				return
			}
		}
	})
	var lines lineSet
	rows := [][]string{append([]string{"size_x4B"}, names...)}
	for _, m := range marendicSizes(lo, hi) {
		t := model.MarendicRows(p, P, 4*m, k)
		rec := []string{g8(m)}
		for _, n := range names {
			r := t[n] / t["Clairvoyant"]
			rec = append(rec, g8(r))
			lines.add(n, m, r)
		}
		rows = append(rows, rec)
	}
	fmt.Fprintf(w, "Fig. 10 (Table 3, %s, P=%d, Radix-k %v): runtime relative to Clairvoyant for %g..%g × 4 B\n", p.Name, P, k, lo, hi)
	for _, n := range names {
		r := model.MarendicBeats(n, p, P, k, 4*lo, 4*hi)
		fmt.Fprintf(w, "  %-16s least ratio %.4f at %.4g × 4 B", n, r.MinRatio, r.MinAt/4)
		if r.Lo > 0 {
			fmt.Fprintf(w, "; at most Clairvoyant's in [%.4g, %.4g] × 4 B", r.Lo/4, r.Hi/4)
		}
		fmt.Fprintln(w)
	}
	pl := logXPlot(fmt.Sprintf("Table 3 relative to Clairvoyant (%s, P=%d)", p.Name, P), "problem size (× 4 B)", "runtime / Clairvoyant's", pow10Ticks{})
	pl.Y.Scale, pl.Y.Tick.Marker = plot.LogScale{}, ratioTicks{}
	return marendicWrite(dir, "marendic-fig10", rows, pl, &lines)
}

// marendicFig6 is marendicFig10 for Fig. 6.
func marendicFig6(w io.Writer, dir string, p model.Params, P int, lo, hi float64) ([]string, error) {
	segs := []int{1, 2, 4, 8, 16, 32, 64}
	var lines lineSet
	head := []string{"size_x4B"}
	for _, n := range segs {
		head = append(head, fmt.Sprintf("N=%d", n))
	}
	rows := [][]string{append(head, "prop3.7")}
	peak, peakAt := 0.0, 0.0
	for _, m := range marendicSizes(lo, hi) {
		rec := []string{g8(m)}
		for _, n := range segs {
			a := model.MarendicAbsorption(p, P, 4*m, n)
			rec = append(rec, g8(a))
			lines.add(fmt.Sprintf("N = %d", n), m, a)
		}
		b := model.MarendicMaxAbsorption(p, P, 4*m)
		if b > peak {
			peak, peakAt = b, m
		}
		rows = append(rows, append(rec, g8(b)))
		lines.add("Prop. 3.7 (optimal N)", m, b)
	}
	fmt.Fprintf(w, "Fig. 6 (%s, P=%d): normalised absorption (t(P)−t(2))/t(P) = (⌈lg P⌉−1)/(⌈lg P⌉+N−1) with N segments; Prop. 3.7's bound peaks at %.4f at %.4g × 4 B; the two-way optimum switches to reduce-scatter+gather at %.4g × 4 B\n",
		p.Name, P, peak, peakAt, 2*p.Alpha/p.Gamma/4)
	pl := logXPlot(fmt.Sprintf("Clairvoyant's normalised absorption (%s, P=%d)", p.Name, P), "problem size (× 4 B)", "A_N = (t(P) − t(2)) / t(P)", pow10Ticks{})
	scriptLabel(&pl.Y.Label.TextStyle)
	pl.Y.Tick.Marker = plainTicks{}
	return marendicWrite(dir, "marendic-fig6", rows, pl, &lines)
}

// marendicWrite saves a figure's CSV and SVG into dir and returns their
// paths as shownPath gives them.
func marendicWrite(dir, name string, rows [][]string, pl *plot.Plot, lines *lineSet) ([]string, error) {
	err := createFile(filepath.Join(dir, name+".csv"), func(f io.Writer) error {
		cw := csv.NewWriter(f)
		cw.WriteAll(rows)
		return cw.Error()
	})
	if err != nil {
		return nil, err
	}
	if err := lines.draw(pl); err != nil {
		return nil, err
	}
	if err := savePlots(filepath.Join(dir, name+".svg"), [][]*plot.Plot{{pl}}, 18*vg.Centimeter, 11*vg.Centimeter); err != nil {
		return nil, err
	}
	return []string{shownPath(dir, name+".csv"), shownPath(dir, name+".svg")}, nil
}
