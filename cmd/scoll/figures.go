package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/scoll/scoll/bench"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/sim"
	"github.com/scoll/scoll/topology"
	"github.com/scoll/scoll/workload"
	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// figSeries is one line of a figure: an algorithm under a node model.
type figSeries struct {
	alg   string
	ports sim.Ports // MultiPort runs with the busy-port derating
}

// figure is one of Sack's performance figures, predicted by the stage
// model: MB/s against the per-rank size (one panel per torus) or against
// the number of nodes (one panel per size).
type figure struct {
	file, title string
	coll        schedule.Collective
	series      []figSeries
	bySize      bool
}

var (
	singlePort = []figSeries{{"ring", sim.SinglePort}, {"recursive-doubling", sim.SinglePort}, {"rd-halving", sim.SinglePort},
		{"rd-optimal", sim.SinglePort}, {"bucket", sim.SinglePort}}
	multiPort   = []figSeries{{"bucket", sim.MultiPort}, {"bucket3", sim.MultiPort}, {"bucket6", sim.MultiPort}}
	redscatSack = []figSeries{{"recursive-halving", sim.SinglePort}, {"rh-doubling", sim.SinglePort}, {"rh-optimal", sim.SinglePort},
		{"bucket", sim.SinglePort}, {"bucket3", sim.MultiPort}, {"bucket6", sim.MultiPort}}
)

// sackFigures are the figures of Sack's thesis, sec. 3.5, that the stage
// model predicts.
var sackFigures = []figure{
	{"fig3.3-allgather-single-port-vs-size", "Fig. 3.3: single-port allgather", schedule.Allgather, singlePort, true},
	{"fig3.4-allgather-single-port-vs-nodes", "Fig. 3.4: single-port allgather", schedule.Allgather, singlePort, false},
	{"fig3.5-allgather-multi-port-vs-size", "Fig. 3.5: multi-port allgather", schedule.Allgather, multiPort, true},
	{"fig3.6-allgather-multi-port-vs-nodes", "Fig. 3.6: multi-port allgather", schedule.Allgather, multiPort, false},
	{"fig3.10-reducescatter-vs-size", "Fig. 3.10: reduce-scatter", schedule.ReduceScatterBlock, redscatSack, true},
	{"fig3.11-reducescatter-vs-nodes", "Fig. 3.11: reduce-scatter", schedule.ReduceScatterBlock, redscatSack, false},
}

// figKey names one simulation; figures share them.
type figKey struct {
	coll  schedule.Collective
	alg   string
	ports sim.Ports
	torus string
	bytes int
}

// figRow is a simulated (or, for large rings, computed) point.
type figRow struct {
	simRow
	Ports  string
	Method string // "stage" or "closed form"
}

func newFiguresCmd() *cobra.Command {
	var (
		out, tori, shapes, sizes, largeSizes, nodeSizes, progress, format string
		largeNodes, ringSimMax                                            int
		network                                                           networkFlags
	)
	cmd := &cobra.Command{
		Use:   "figures",
		Short: "Predict the performance figures of Sack's thesis with the stage model (SVG and CSV)",
		Long: `figures writes the allgather and reduce-scatter figures of Sack's thesis (2011,
sec. 3.5: Figs. 3.3–3.6, 3.10 and 3.11) as predicted by the stage model, one
SVG (or PNG) and one CSV per figure, into --out (the current directory
unless given), and names each file it wrote on stderr:

  fig3.3, fig3.4   single-port allgather: ring, recursive-doubling, rd-halving,
                   rd-optimal, bucket
  fig3.5, fig3.6   multi-port allgather: bucket, bucket3, bucket6 (all ports)
  fig3.10, fig3.11 reduce-scatter: recursive-halving, rh-doubling, rh-optimal,
                   bucket (single-port), bucket3, bucket6 (all ports)

The "vs size" figures plot MB/s against the per-rank size n on each torus of
--tori; the "vs nodes" figures plot MB/s against the number of nodes on the
tori of --shapes (Sack's partitions, ranks in XYZ order, the process grid
the torus itself) for each size of --node-sizes. MB/s is n(P−1)/t, as Sack
reports. Single-port algorithms run under the single-port node model;
"all ports" ones under the multi-port model with --port-efficiency.

Tori of more than --large-nodes nodes use --large-sizes instead of --sizes
(32,768-rank bucket schedules take seconds per size). The ring has P−1
stages of P messages, too many to simulate beyond --ring-sim-max ranks; on
a torus in XYZ order every ring message crosses links no other message of
its stage uses, so the stage model charges it exactly (P−1)(α + nδ). The
command uses that closed form above --ring-sim-max, checks it against every
ring it does simulate, and marks the rows "closed form" in the CSV.`,
		Example: `  scoll figures --out figs --tori 4x4x4 --shapes 4x4x4,4x4x8 --sizes 8,1K --node-sizes 1K
  (the full set, as in docs/figures: scoll figures --out docs/figures, some minutes;
  go test ./cmd/scoll -run TestCommittedFigures checks them)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sizeTori, err := parseTori("--tori", tori)
			if err != nil {
				return err
			}
			nodeTori, err := parseTori("--shapes", shapes)
			if err != nil {
				return err
			}
			var sz, large, nsz []int
			for _, f := range []struct {
				name, val string
				dst       *[]int
			}{{"sizes", sizes, &sz}, {"large-sizes", largeSizes, &large}, {"node-sizes", nodeSizes, &nsz}} {
				if *f.dst, err = parseSizes(f.name, f.val); err != nil {
					return err
				}
			}
			net, err := network.config()
			if err != nil {
				return err
			}
			if err := checkName("format", "format", format, []string{"svg", "png"}); err != nil {
				return err
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			fr := &figRunner{ext: "." + format, net: net, ringSimMax: ringSimMax, rows: map[figKey]figRow{}}
			sizesOn := func(t topology.Topology) []int {
				if t.Nodes() > largeNodes {
					return large
				}
				return sz
			}
			// The simulations every figure needs, each once, smallest first.
			var jobs []figKey
			seen := map[figKey]bool{}
			need := func(k figKey) {
				if !seen[k] {
					seen[k] = true
					jobs = append(jobs, k)
				}
			}
			for _, f := range sackFigures {
				for _, s := range f.series {
					if f.bySize {
						for _, t := range sizeTori {
							for _, n := range sizesOn(t) {
								need(figKey{f.coll, s.alg, s.ports, t.String(), n})
							}
						}
					} else {
						for _, t := range nodeTori {
							for _, n := range nsz {
								need(figKey{f.coll, s.alg, s.ports, t.String(), n})
							}
						}
					}
				}
			}
			stderr := cmd.ErrOrStderr()
			st, err := newStatus(stderr, progress)
			if err != nil {
				return err
			}
			start := time.Now()
			for i, k := range jobs {
				st.Progress("%s [%d/%d] %s %s %s on %s", progressBar(i, len(jobs), 20), i+1, len(jobs), k.coll, k.alg, fmtBytes(float64(k.bytes)), k.torus)
				if err := fr.run(k); err != nil {
					return err
				}
			}
			st.Done("scoll figures: %d simulations in %.1fs\n", len(jobs), time.Since(start).Seconds())
			for _, f := range sackFigures {
				if err := fr.write(out, f, sizeTori, nodeTori, sizesOn, nsz); err != nil {
					return err
				}
				fmt.Fprintf(stderr, "wrote %s\nwrote %s\n", shownPath(out, f.file+fr.ext), shownPath(out, f.file+".csv"))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", ".", "directory for the SVG and CSV files (made if missing)")
	f.StringVar(&tori, "tori", "8x8x8,32x32x32", "tori of the vs-size figures")
	f.StringVar(&shapes, "shapes", "8x8x8,8x8x16,8x8x32,8x16x32,8x32x32,16x32x32,32x32x32", "tori of the vs-nodes figures (Sack's partitions)")
	f.StringVar(&sizes, "sizes", "8:128K", "per-rank sizes of the vs-size figures, as in scoll bench")
	f.StringVar(&largeSizes, "large-sizes", "8:128K:x8", "per-rank sizes of the vs-size figures on tori of more than --large-nodes nodes")
	f.IntVar(&largeNodes, "large-nodes", 4096, "tori with more nodes use --large-sizes")
	f.StringVar(&nodeSizes, "node-sizes", "64,4K,128K", "per-rank sizes of the vs-nodes figures, one panel each")
	network.add(f, "6:0.93", "multi-port derating K:E, as in scoll sim")
	f.IntVar(&ringSimMax, "ring-sim-max", 4096, "simulate the ring up to this many ranks; above, use its exact closed form (P−1)(α + nδ)")
	f.StringVar(&format, "format", "svg", "figure format: svg or png")
	addProgressFlag(f, &progress)
	return cmd
}

// parseTori parses a comma-separated list of torus shapes like 8x8x16.
func parseTori(flag, s string) ([]topology.Topology, error) {
	var out []topology.Topology
	for item := range strings.SplitSeq(s, ",") {
		t, err := topology.Parse("torus:" + strings.TrimSpace(item))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", flag, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// figRunner simulates and remembers the points of the figures.
type figRunner struct {
	ext        string     // of the figure files
	net        sim.Config // α, δ and the busy-port derating of multi-port nodes
	ringSimMax int
	rows       map[figKey]figRow
}

func (fr *figRunner) run(k figKey) error {
	topo, err := topology.Parse(k.torus)
	if err != nil {
		return err
	}
	P := topo.Nodes()
	row := figRow{simRow: simRow{Topology: topo.String(), Ranks: P, Op: k.coll.String(), Algorithm: k.alg, Bytes: k.bytes, Model: "stage"},
		Ports: k.ports.String(), Method: "stage"}
	ring := k.coll == schedule.Allgather && k.alg == "ring"
	closed := float64(P-1)*fr.net.Alpha + float64(P-1)*float64(k.bytes)*fr.net.Delta
	if ring && P > fr.ringSimMax {
		row.Method = "closed form"
		row.Time, row.AlphaCount, row.DeltaBytes, row.MaxCongestion = closed, float64(P-1), float64(P-1)*float64(k.bytes), 1
	} else {
		cfg := fr.net
		cfg.Topology, cfg.Ports = topo, k.ports
		if k.ports != sim.MultiPort {
			cfg.BusyPorts, cfg.BusyEfficiency = 0, 0
		}
		gen, err := workload.Workload{Coll: k.coll, Algorithm: k.alg, Size: P, Bytes: k.bytes, Grid: workload.GridFor(topo, P)}.Generator()
		if err != nil {
			return err
		}
		res, err := sim.StageModel(cfg, P, 1, gen)
		if err != nil {
			return fmt.Errorf("%s %s at %d B on %s: %w", k.coll, k.alg, k.bytes, topo, err)
		}
		row.Time, row.AlphaCount, row.DeltaBytes, row.MaxCongestion = res.Time, res.AlphaCount, res.DeltaBytes, res.MaxCongestion
		if ring && math.Abs(res.Time-closed) > 1e-9*closed {
			return fmt.Errorf("ring at %d B on %s: the stage model gives %g s, the closed form (P−1)(α + nδ) %g s", k.bytes, topo, res.Time, closed)
		}
	}
	if row.Time > 0 {
		row.MBps = float64(k.bytes) * float64(P-1) / row.Time / 1e6
	}
	fr.rows[k] = row
	return nil
}

// write draws figure f and writes its numbers.
func (fr *figRunner) write(dir string, f figure, sizeTori, nodeTori []topology.Topology, sizesOn func(topology.Topology) []int, nodeSizes []int) error {
	type panel struct {
		title string
		rows  []figRow
	}
	var panels []panel
	label := func(s figSeries, r figRow) figRow {
		if s.ports == sim.MultiPort {
			r.Algorithm += " (all ports)"
		}
		return r
	}
	if f.bySize {
		for _, t := range sizeTori {
			p := panel{title: fmt.Sprintf("%s, %s torus (%d nodes)", f.title, strings.TrimPrefix(t.String(), "torus:"), t.Nodes())}
			for _, s := range f.series {
				for _, n := range sizesOn(t) {
					p.rows = append(p.rows, label(s, fr.rows[figKey{f.coll, s.alg, s.ports, t.String(), n}]))
				}
			}
			panels = append(panels, p)
		}
	} else {
		for _, n := range nodeSizes {
			p := panel{title: fmt.Sprintf("%s, n = %s bytes per rank", f.title, bench.FormatSize(n))}
			for _, s := range f.series {
				for _, t := range nodeTori {
					p.rows = append(p.rows, label(s, fr.rows[figKey{f.coll, s.alg, s.ports, t.String(), n}]))
				}
			}
			panels = append(panels, p)
		}
	}
	var tiles [][]*plot.Plot
	var all []figRow
	for _, p := range panels {
		rows := make([]simRow, len(p.rows))
		for i, r := range p.rows {
			rows[i] = r.simRow
		}
		ax := byRanks
		if f.bySize {
			ax = bySize
		}
		pl, err := mbpsPlot(p.title, rows, ax)
		if err != nil {
			return err
		}
		pl.Y.Label.Text = "MB/s, n(P−1)/t"
		tiles = append(tiles, []*plot.Plot{pl})
		all = append(all, p.rows...)
	}
	base := filepath.Join(dir, f.file)
	if err := savePlots(base+fr.ext, tiles, 8*vg.Inch, vg.Length(len(tiles))*4.5*vg.Inch); err != nil {
		return err
	}
	return createFile(base+".csv", func(w io.Writer) error { return writeFigRows(w, f.file, all) })
}

// writeFigRows writes the rows of figure fig as CSV: the figure, the node
// model and how each point was obtained, with scoll sim's columns.
func writeFigRows(w io.Writer, fig string, rows []figRow) error {
	return writeRows(w, "csv", rows, rowFormat[figRow]{
		columns: []string{"figure", "op", "algorithm", "ports", "topology", "ranks", "bytes", "time_s", "alpha_count", "delta_bytes", "mbps", "max_congestion", "method"},
		csv: func(r figRow) []string {
			f := []string{fig, r.Op, strings.TrimSuffix(r.Algorithm, " (all ports)"), r.Ports, r.Topology, strconv.Itoa(r.Ranks), strconv.Itoa(r.Bytes)}
			return append(append(f, r.csvResult()...), r.Method)
		},
	})
}
