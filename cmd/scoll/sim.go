package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/bench"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/sim"
	"github.com/scoll/scoll/topology"
	"github.com/scoll/scoll/transport/record"
	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// simRow is one simulated configuration.
type simRow struct {
	Topology      string          `json:"topology"`
	Ranks         int             `json:"ranks"`
	Op            string          `json:"op"`
	Algorithm     string          `json:"algorithm"`
	Bytes         int             `json:"bytes"`
	Model         string          `json:"model"`
	Time          float64         `json:"time_s"`
	AlphaCount    float64         `json:"alpha_count"`
	DeltaBytes    float64         `json:"delta_bytes"`
	MBps          float64         `json:"mbps"`
	MaxCongestion float64         `json:"max_congestion"`
	Stages        []sim.StageStat `json:"stages,omitempty"`
}

func newSimCmd() *cobra.Command {
	var (
		topoSpec, mapSpec, op, algs, sizes, model, alpha, linkBW, ports, format, plotFile, hopLat, progress, gridSpec, portEff string
		np                                                                                                                     int
		stages                                                                                                                 bool
	)
	var traceFile string
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Simulate collective algorithms on a network topology (stage or flow model)",
		Long: `sim charges time to every message of an algorithm's schedule on a network.

Models:
  stage  Sack's congestion model: stage s is round s of every rank; a message of
         m bytes costs c·m·δ, c being the largest load on any link of its route in
         that stage; a stage costs α per message of the busiest node plus the
         slowest node's congestion-weighted bytes (single-port: its sends or
         receives in sequence; multi-port: its slowest message).
  flow   discrete events: each message is a flow started α after its round
         begins; flows share links max-min fairly; a rank starts its next round
         when the current one completes.

Topologies: ` + topologyHelp + `

Columns: time_s is the simulated time, alpha_count and delta_bytes the α and δ
terms of the stage model (time = α·alpha_count + δ·delta_bytes), mbps is
n(P−1)/time in MB/s for per-rank size n (the allgather rate of Sack's figures),
max_congestion the largest link load of any stage.

` + simTraceHelp,
		Example: `  scoll sim --topology torus:8x8x8 --op allgather --algorithm ring,recursive-doubling --sizes 64,4K,32K
  scoll sim --topology clos:R=32,T=16,mu=0.25 --op allgather --algorithm all --model flow
  scoll sim --topology torus:8x8x8 --op allgather --algorithm recursive-doubling --sizes 1K --stages
  scoll sim --topology torus:16x16x16 --trace split.trace --model flow`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			topo, err := topology.Parse(topoSpec)
			if err != nil {
				return err
			}
			coll, ok := schedule.ParseCollective(strings.ToLower(op))
			if !ok {
				return fmt.Errorf("--op %q: unknown collective", op)
			}
			var tr *record.Trace
			if traceFile != "" {
				if tr, err = openTrace(cmd, traceFile, "op", "algorithm", "sizes", "grid", "plot"); err != nil {
					return err
				}
				if np != 0 && np != tr.Size {
					return fmt.Errorf("--np %d: the trace has %d ranks", np, tr.Size)
				}
				if tr.Size > topo.Nodes() {
					return fmt.Errorf("--trace: %d ranks on %s, which has %d nodes", tr.Size, topo, topo.Nodes())
				}
				np = tr.Size
			}
			if np == 0 {
				np = topo.Nodes()
			}
			if np < 1 {
				return fmt.Errorf("--np %d: want at least 1", np)
			}
			var mapping topology.Mapping
			if mapSpec != "" && mapSpec != "xyz" {
				if mapping, err = topology.ParseMapping(mapSpec, topo, np); err != nil {
					return err
				}
			}
			if np > topo.Nodes() {
				return fmt.Errorf("--np %d: %s has only %d nodes", np, topo, topo.Nodes())
			}
			sz, err := bench.ParseSizes(sizes)
			if err != nil {
				return err
			}
			a, bw, err := parseNetwork(alpha, linkBW)
			if err != nil {
				return err
			}
			h, err := parseSeconds(hopLat)
			if err != nil {
				return fmt.Errorf("--hop-latency: %w", err)
			}
			cfg := sim.Config{Topology: topo, Mapping: mapping, Alpha: a, Delta: 1 / bw, Stages: stages}
			if cfg.BusyPorts, cfg.BusyEfficiency, err = parsePortEfficiency(portEff); err != nil {
				return err
			}
			switch ports {
			case "1":
				cfg.Ports = sim.SinglePort
			case "all":
				cfg.Ports = sim.MultiPort
			default:
				return fmt.Errorf("--ports %q: want 1 or all", ports)
			}
			if model != "stage" && model != "flow" {
				return fmt.Errorf("--model %q: want stage or flow", model)
			}
			format = strings.ToLower(format)
			if format != "table" && format != "csv" && format != "json" {
				return fmt.Errorf("--format %q: want table, csv or json", format)
			}
			if tr != nil {
				return simTrace(cmd.OutOrStdout(), tr, traceFile, cfg, model, h, format, stages)
			}
			names, err := pickAlgorithms(coll, algs)
			if err != nil {
				return err
			}
			grid, err := parseGrid(gridSpec)
			if err != nil {
				return err
			}
			if grid == nil && mapping == nil {
				grid = sim.GridFor(topo, np)
			}
			place := sim.PlacementFor(topo, mapping, np)
			stderr := cmd.ErrOrStderr()
			show := progress == "always" || (progress == "auto" && isTerminal(stderr))
			var rows []simRow
			total, done := len(names)*len(sz), 0
			start := time.Now()
			for _, name := range names {
				for _, n := range sz {
					if show {
						fmt.Fprintf(stderr, "\r\x1b[K%s [%d/%d] %s %s B", progressBar(done, total, 20), done+1, total, name, bench.FormatSize(n))
					}
					done++
					gen, err := sim.Workload{Coll: coll, Algorithm: name, Size: np, Bytes: n, Grid: grid, Placement: place}.Generator()
					if err != nil {
						if algs == "all" {
							fmt.Fprintf(stderr, "\r\x1b[Kscoll sim: skipping %s: %v\n", name, err)
							break
						}
						return err
					}
					var res sim.Result
					if model == "stage" {
						res, err = sim.StageModel(cfg, np, 1, gen)
					} else {
						res, err = sim.FlowModel(sim.FlowConfig{Config: cfg, HopLatency: h}, np, 1, gen)
					}
					if err != nil {
						return fmt.Errorf("%s at %d B: %w", name, n, err)
					}
					row := simRow{Topology: topo.String(), Ranks: np, Op: coll.String(), Algorithm: name, Bytes: n, Model: model,
						Time: res.Time, AlphaCount: res.AlphaCount, DeltaBytes: res.DeltaBytes, MaxCongestion: res.MaxCongestion, Stages: res.Stages}
					if res.Time > 0 {
						row.MBps = float64(n) * float64(np-1) / res.Time / 1e6
					}
					rows = append(rows, row)
				}
			}
			if show {
				fmt.Fprintf(stderr, "\r\x1b[Kscoll sim: %d configurations in %.1fs\n", total, time.Since(start).Seconds())
			}
			if err := writeSimRows(cmd.OutOrStdout(), format, rows, stages); err != nil {
				return err
			}
			if plotFile != "" {
				return plotSim(plotFile, rows)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&topoSpec, "topology", "torus:8x8x8", "network: "+topologyHelp)
	f.StringVar(&mapSpec, "mapping", "xyz", "rank to node map: xyz, morton, random[:seed] (an irregular partition) or list:n0,n1,...")
	f.IntVar(&np, "np", 0, "ranks (default: one per node)")
	f.StringVar(&op, "op", "allgather", "collective")
	f.StringVar(&algs, "algorithm", "all", "algorithms, comma-separated, or all")
	f.StringVar(&sizes, "sizes", "64,4K,32K", "per-rank sizes in bytes: a list and ranges as in scoll bench")
	f.StringVar(&model, "model", "stage", "network model: stage or flow")
	f.StringVar(&alpha, "alpha", "6.29us", "message start-up time α")
	f.StringVar(&linkBW, "link-bw", "375MB/s", "link bandwidth 1/δ (MB = 10^6 bytes; MiB = 2^20)")
	f.StringVar(&hopLat, "hop-latency", "0", "flow model: latency per link crossed")
	f.StringVar(&ports, "ports", "1", "node model: 1 (single-port) or all (multi-port)")
	f.StringVar(&format, "format", "table", "output: table, csv or json")
	f.StringVar(&plotFile, "plot", "", "also plot MB/s against size per algorithm into this .svg or .png file")
	f.BoolVar(&stages, "stages", false, "print the per-stage breakdown (stage model)")
	f.StringVar(&portEff, "port-efficiency", "", "multi-port stage model: K:E derates nodes with K or more messages in a stage to E of the link bandwidth (Sack's Blue Gene/P: 6:0.93)")
	f.StringVar(&gridSpec, "grid", "auto", "process grid of topology-aware algorithms (rd-optimal, bucket3, ...): AxBxC, or auto (the torus or mesh itself when the ranks fill it in XYZ order)")
	f.StringVar(&progress, "progress", "auto", "progress bar on stderr: auto (when a terminal), always or never")
	f.StringVar(&traceFile, "trace", "", "simulate the recorded trace in this file instead of registry algorithms")
	return cmd
}

const topologyHelp = `torus:8x8x8, mesh:4x4x8, clos:R=32,T=16,mu=0.25, crossbar:512, hypercube:9, dragonfly:g=9,a=4,p=2`

func progressBar(done, total, width int) string {
	k := 0
	if total > 0 {
		k = done * width / total
	}
	return "[" + strings.Repeat("=", k) + strings.Repeat(" ", width-k) + "]"
}

// parsePortEfficiency parses --port-efficiency K:E (nodes with K or more
// messages in a stage move at E of the link bandwidth); "" turns it off.
func parsePortEfficiency(s string) (int, float64, error) {
	if s == "" {
		return 0, 0, nil
	}
	k, e, ok := strings.Cut(s, ":")
	n, err1 := strconv.Atoi(k)
	eff, err2 := strconv.ParseFloat(e, 64)
	if !ok || err1 != nil || err2 != nil || n < 1 || !(eff > 0 && eff <= 1) {
		return 0, 0, fmt.Errorf("--port-efficiency %q: want K:E, like 6:0.93", s)
	}
	return n, eff, nil
}

// pickAlgorithms resolves --algorithm.
func pickAlgorithms(coll schedule.Collective, list string) ([]string, error) {
	if list == "all" || list == "" {
		var names []string
		for _, in := range algorithms.List(coll) {
			names = append(names, in.Name)
		}
		return names, nil
	}
	var names []string
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if _, ok := algorithms.Lookup(coll, n); !ok {
			return nil, fmt.Errorf("--algorithm %q: %s has %s", n, coll, algorithmNames(coll))
		}
		names = append(names, n)
	}
	return names, nil
}

// parseSeconds parses a duration such as 6.29us, 1.5µs or 2ns; a bare number
// is seconds.
func parseSeconds(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%q: want a non-negative time", s)
		}
		return v, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q: want a time like 6.29us, 2ns or 0.001 (seconds)", s)
	}
	return d.Seconds(), nil
}

// parseBandwidth parses a bandwidth in bytes per second: a number with B/s,
// KB/s, MB/s, GB/s (powers of 1000) or KiB/s, MiB/s, GiB/s (powers of 1024).
func parseBandwidth(s string) (float64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.' || t[i] == 'e' || t[i] == 'E') {
		i++
	}
	v, err := strconv.ParseFloat(t[:i], 64)
	if err != nil || v <= 0 || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q: want a positive bandwidth like 375MB/s", s)
	}
	mul := map[string]float64{"b/s": 1, "kb/s": 1e3, "mb/s": 1e6, "gb/s": 1e9, "kib/s": 1 << 10, "mib/s": 1 << 20, "gib/s": 1 << 30, "": 1}
	m, ok := mul[strings.ToLower(strings.TrimSpace(t[i:]))]
	if !ok {
		return 0, fmt.Errorf("%q: unknown unit %q (B/s, KB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s)", s, t[i:])
	}
	return v * m, nil
}

// parseNetwork parses the --alpha and --link-bw flags.
func parseNetwork(alpha, linkBW string) (a, bw float64, err error) {
	if a, err = parseSeconds(alpha); err != nil {
		return 0, 0, fmt.Errorf("--alpha: %w", err)
	}
	if bw, err = parseBandwidth(linkBW); err != nil {
		return 0, 0, fmt.Errorf("--link-bw: %w", err)
	}
	return a, bw, nil
}

func writeSimRows(w io.Writer, format string, rows []simRow, stages bool) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write([]string{"topology", "ranks", "op", "algorithm", "bytes", "model", "time_s", "alpha_count", "delta_bytes", "mbps", "max_congestion"})
		for _, r := range rows {
			cw.Write([]string{r.Topology, strconv.Itoa(r.Ranks), r.Op, r.Algorithm, strconv.Itoa(r.Bytes), r.Model,
				strconv.FormatFloat(r.Time, 'g', 10, 64), strconv.FormatFloat(r.AlphaCount, 'g', 10, 64),
				strconv.FormatFloat(r.DeltaBytes, 'g', 10, 64), strconv.FormatFloat(r.MBps, 'f', 3, 64),
				strconv.FormatFloat(r.MaxCongestion, 'g', 6, 64)})
		}
		cw.Flush()
		return cw.Error()
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "topology\tranks\top\talgorithm\tbytes\ttime_s\talpha_count\tdelta_bytes\tmbps\tmax_congestion\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%.6g\t%g\t%.6g\t%.2f\t%.4g\t\n", r.Topology, r.Ranks, r.Op, r.Algorithm, r.Bytes, r.Time, r.AlphaCount, r.DeltaBytes, r.MBps, r.MaxCongestion)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !stages {
		return nil
	}
	for _, r := range rows {
		fmt.Fprintf(w, "\n%s %s %d B on %s:\n", r.Op, r.Algorithm, r.Bytes, r.Topology)
		if err := sim.WriteStageTable(w, r.Stages); err != nil {
			return err
		}
	}
	return nil
}

// plotSim draws MB/s against per-rank size, one line per algorithm, like the
// figures of Sack's thesis.
func plotSim(file string, rows []simRow) error {
	ext := strings.ToLower(filepath.Ext(file))
	if ext != ".svg" && ext != ".png" {
		return fmt.Errorf("--plot %q: want a .svg or .png file", file)
	}
	title := ""
	if len(rows) > 0 {
		title = fmt.Sprintf("%s on %s, %d ranks (%s model)", rows[0].Op, rows[0].Topology, rows[0].Ranks, rows[0].Model)
	}
	p, err := mbpsPlot(title, rows, bySize)
	if err != nil {
		return err
	}
	return savePlots(file, [][]*plot.Plot{{p}}, 8*vg.Inch, 5*vg.Inch)
}

// mbpsAxis is the x axis of an MB/s plot: what it shows of a row, its
// label and its ticks.
type mbpsAxis struct {
	label string
	x     func(simRow) float64
	ticks plot.Ticker
}

var (
	bySize  = mbpsAxis{"bytes per rank", func(r simRow) float64 { return float64(r.Bytes) }, pow2Ticks{}}
	byRanks = mbpsAxis{"nodes", func(r simRow) float64 { return float64(r.Ranks) }, pow2Ticks{plain: true}}
)

// mbpsPlot draws MB/s against ax on a logarithmic axis, one line per
// algorithm in the order the rows first name them (rows with x ≤ 0 are
// left out).
func mbpsPlot(title string, rows []simRow, ax mbpsAxis) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = ax.label
	p.Y.Label.Text = "MB/s"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = ax.ticks
	p.Legend.Top = true
	var lines []any
	byAlg := map[string]plotter.XYs{}
	var order []string
	for _, r := range rows {
		if ax.x(r) <= 0 {
			continue
		}
		if _, ok := byAlg[r.Algorithm]; !ok {
			order = append(order, r.Algorithm)
		}
		byAlg[r.Algorithm] = append(byAlg[r.Algorithm], plotter.XY{X: ax.x(r), Y: r.MBps})
	}
	for _, a := range order {
		lines = append(lines, a, byAlg[a])
	}
	if len(lines) > 0 {
		if err := plotutil.AddLinePoints(p, lines...); err != nil {
			return nil, err
		}
	}
	// From zero, with room above the lines for the legend (top left,
	// where rate-against-size curves are low).
	p.Y.Min, p.Y.Max = 0, p.Y.Max*(1+0.06*float64(len(order)))
	p.Legend.Left = true
	p.Y.Tick.Marker = plainTicks{}
	return p, nil
}

// plainTicks are gonum's default ticks labelled without trailing zeros.
type plainTicks struct{}

// Ticks implements plot.Ticker.
func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', -1, 64)
		}
	}
	return ts
}
