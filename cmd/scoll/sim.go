package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/scoll/scoll/algorithms"
	modelpkg "github.com/scoll/scoll/model"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/sim"
	"github.com/scoll/scoll/topology"
	"github.com/scoll/scoll/transport/record"
	"github.com/scoll/scoll/workload"
	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
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
	// Bcast only: the round-optimal pipelined bound and the notes'
	// reference under the network's α and δ (see scoll model).
	RoundOptS   float64 `json:"round_opt_s,omitempty"`
	NotesBoundS float64 `json:"notes_bound_s,omitempty"`
}

func newSimCmd() *cobra.Command {
	var (
		topoSpec, mapSpec, op, algs, sizes, model, ports, format, plotFile, hopLat, progress, gridSpec string
		np, elem                                                                                       int
		stages                                                                                         bool
		network                                                                                        networkFlags
	)
	var traceFile, arrivals, switching string
	var embedding bool
	var caps func() (algorithms.Caps, error)
	var knobs func() (algorithms.KnobValues, error)
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
         Valid only when every message is sent and received in the same round
         (rings, butterflies, buckets); trees and pipelines, whose ranks idle in
         rounds their schedules leave out, are charged too little (a pipelined
         bcast on 512 ranks 250× too little), and sim warns on stderr: use the
         flow model for them (docs/models.md).
  flow   discrete events: each message is a flow started α after its round
         begins; flows share links max-min fairly; a rank starts its next round
         when the current one completes.

Switching (--switching; a message of s bytes over D links, alone, costs):
  cut-through        α + βs + t_h·D (the default; t_h is --hop-latency)
  store-and-forward  (α + βs)·D: the whole message crosses one link at a time
  packet:SIZE        α + (D + ⌈s/b⌉ − 1)(t_h + βb) for packets of b = SIZE bytes
  stage model: store-and-forward counts D start-ups and (c_1 + ... + c_D)·s bytes
    per message, c_j the load of its j-th link among the stage's j-th links;
    packet switching c·k·b bytes for k = ⌈s/b⌉; the stage adds the per-hop time
    of its slowest message (t_h·D, or (D+k−1)·t_h + (D−1)·c·b·δ for packets).
  flow model: store-and-forward moves a message as one flow per link, each
    started α after the previous ends; packet switching is one flow of the
    padded packets started after α + (D+k−1)·t_h + (D−1)·b·δ (the fill).

Topologies: ` + topologyHelp + `

Columns, as the table names them (CSV columns and JSON keys add the unit):
  topology, ranks, op, algorithm, bytes (the per-rank size n)
  time (time_s)   the simulated time
  alpha_count, delta_bytes  the α and δ terms of the stage model: time =
                  α·alpha_count + δ·delta_bytes, plus the per-hop times of the
                  switching mode; the flow model has no such terms: n/a in
                  the table, empty in CSV, null in JSON
  rate (mbps)     n(P−1)/time in MB/s (the allgather rate of Sack's figures)
  max_congestion  the largest link load of any stage
  model           (CSV and JSON only) stage or flow
  bcast adds round_opt (round_opt_s), ratio_round_opt, notes_bound
  (notes_bound_s) and ratio_notes, the bounds of scoll model.

` + simTraceHelp,
		Example: `  scoll sim --topology torus:8x8x8 --op allgather --algorithm ring,recursive-doubling --sizes 64,4K,32K
  scoll sim --topology clos:R=8,T=4,mu=0.25 --op allgather --algorithm all --model flow --sizes 64,4K
  scoll sim --topology torus:8x8x8 --op allgather --algorithm recursive-doubling --sizes 1K --stages
  scoll sim --topology torus:8x8x8 --trace split.trace --model flow`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cp, err := caps()
			if err != nil {
				return err
			}
			kv, err := knobs()
			if err != nil {
				return err
			}
			coll, err := parseOp(op, nil)
			if err != nil {
				return err
			}
			topo, err := parseTopology(topoSpec)
			if err != nil {
				return err
			}
			if progress, err = checkProgress(progress); err != nil {
				return err
			}
			var tr *record.Trace
			if traceFile != "" {
				if tr, err = openTrace(cmd, traceFile, "op", "algorithm", "sizes", "grid", "plot", "embedding"); err != nil {
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
			if np == 0 { // --np not given
				np = topo.Nodes()
			}
			var mapping topology.Mapping
			if mapSpec != "" && mapSpec != "xyz" {
				kind, _, _ := strings.Cut(mapSpec, ":")
				if err := checkName("mapping", "mapping", strings.ToLower(kind), []string{"xyz", "morton", "gray", "ring", "htree", "random", "list"}); err != nil {
					return err
				}
				if mapping, err = topology.ParseMapping(mapSpec, topo, np); err != nil {
					return fmt.Errorf("--mapping: %w", err)
				}
			}
			if elem < 1 {
				return fmt.Errorf("--elem %d: want at least 1", elem)
			}
			if np > topo.Nodes() {
				return fmt.Errorf("--np %d: %s has only %d nodes", np, topo, topo.Nodes())
			}
			sz, err := parseSizes("sizes", sizes)
			if err != nil {
				return err
			}
			cfg, err := network.config()
			if err != nil {
				return err
			}
			h, err := parseSeconds(hopLat)
			if err != nil {
				return fmt.Errorf("--hop-latency: %w", err)
			}
			cfg.HopLatency = h
			if kind, _, _ := strings.Cut(strings.ToLower(switching), ":"); kind != "" {
				if err := checkName("switching", "switching mode", kind, []string{"cut-through", "wormhole", "store-and-forward", "saf", "packet"}); err != nil {
					return err
				}
			}
			if cfg.Switching, err = sim.ParseSwitching(switching); err != nil {
				return fmt.Errorf("--switching: %w", err)
			}
			cfg.Topology, cfg.Mapping, cfg.Stages = topo, mapping, stages
			if err := checkName("ports", "port model", ports, []string{"1", "all"}); err != nil {
				return err
			}
			cfg.Ports = sim.SinglePort
			if ports == "all" {
				cfg.Ports = sim.MultiPort
			}
			if err := checkName("model", "model", model, []string{"stage", "flow"}); err != nil {
				return err
			}
			if format, err = checkFormat(format); err != nil {
				return err
			}
			arrival, err := parseArrivals(arrivals, np)
			if err != nil {
				return err
			}
			if arrival != nil && model != "flow" {
				return fmt.Errorf("--arrivals needs --model flow (the stage model has no clock per rank)")
			}
			if tr != nil {
				if arrival != nil {
					return fmt.Errorf("--arrivals applies to registry algorithms, not to --trace")
				}
				return simTrace(cmd.OutOrStdout(), tr, traceFile, cfg, model, format, stages)
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
				grid = workload.GridFor(topo, np)
			}
			place := workload.PlacementFor(topo, mapping, np)
			if embedding {
				if elem != 1 {
					return fmt.Errorf("--elem applies to the simulation, not to --embedding")
				}
				return simEmbedding(cmd.OutOrStdout(), cmd.ErrOrStderr(), format, mapSpec, cfg, workload.Workload{Coll: coll, Size: np, Grid: grid,
					Placement: place, Arrivals: arrival, Machine: algorithms.Machine{Alpha: cfg.Alpha, Beta: cfg.Delta}}, names, sz, algs == "all")
			}
			stderr := cmd.ErrOrStderr()
			st, err := newStatus(stderr, progress)
			if err != nil {
				return err
			}
			var rows []simRow
			var misaligned []string // algorithms the stage model is not valid for
			total, done := len(names)*len(sz), 0
			start := time.Now()
			for _, name := range names {
				for _, n := range sz {
					st.Progress("%s [%d/%d] %s %s", progressBar(done, total, 20), done+1, total, name, fmtBytes(float64(n)))
					done++
					w := workload.Workload{Coll: coll, Algorithm: name, Size: np, Bytes: n, Elem: elem, Grid: grid, Placement: place,
						Arrivals: arrival, Machine: algorithms.Machine{Alpha: cfg.Alpha, Beta: cfg.Delta}, Knobs: kv}
					if n%elem != 0 {
						return fmt.Errorf("--sizes: %d B is not a multiple of --elem %d", n, elem)
					}
					label := name
					if name == "auto" {
						// The library's default choice under the simulated
						// network's α and δ and the capabilities of --caps:
						// what a real call with them runs (its stand-in
						// schedule is what is simulated).
						in, err := workload.Default(w, cp)
						if err != nil {
							return err
						}
						w.Algorithm, label = in.Name, "auto ("+in.Name+")"
					}
					gen, err := w.Generator()
					if err != nil {
						if algs == "all" {
							st.Printf("scoll sim: skipping %s: %v\n", name, err)
							break
						}
						return err
					}
					var res sim.Result
					if model == "stage" {
						res, err = sim.StageModel(cfg, np, w.ElemSize(), gen)
					} else {
						res, err = sim.FlowModel(sim.FlowConfig{Config: cfg, Arrival: arrival}, np, w.ElemSize(), gen)
					}
					if err != nil {
						return fmt.Errorf("%s at %d B: %w", name, n, err)
					}
					if res.Misaligned > 0 && !slices.Contains(misaligned, label) {
						misaligned = append(misaligned, label)
					}
					row := simRow{Topology: topo.String(), Ranks: np, Op: coll.String(), Algorithm: label, Bytes: n, Model: model,
						Time: res.Time, AlphaCount: res.AlphaCount, DeltaBytes: res.DeltaBytes, MaxCongestion: res.MaxCongestion, Stages: res.Stages}
					if res.Time > 0 {
						row.MBps = float64(n) * float64(np-1) / res.Time / 1e6
					}
					if coll == schedule.Bcast {
						row.RoundOptS, _ = modelpkg.BcastRoundOptimal(cfg.Alpha, cfg.Delta, np, float64(n))
						row.NotesBoundS = modelpkg.BcastLowerBound(cfg.Alpha, cfg.Delta, np, float64(n))
					}
					rows = append(rows, row)
				}
			}
			st.Done("scoll sim: %s in %.1fs\n", counted(total, "configuration"), time.Since(start).Seconds())
			if err := writeSimRows(cmd.OutOrStdout(), format, rows, stages); err != nil {
				return err
			}
			if len(misaligned) > 0 {
				st.Printf("%s\n", stageNote(misaligned))
			}
			if plotFile != "" {
				return plotSim(plotFile, rows, cfg.Switching)
			}
			return nil
		},
	}
	f := cmd.Flags()
	// What runs, and where.
	f.StringVar(&topoSpec, "topology", "torus:8x8x8", "network: "+topologyHelp)
	f.StringVar(&mapSpec, "mapping", "xyz", "rank to node map: xyz, morton, gray, ring, htree (docs/embeddings.md), random[:seed] (an irregular partition) or list:n0,n1,...")
	addNPFlag(f, &np, 0, "ranks (default: one per node)")
	f.StringVar(&op, "op", defaultOp, "collective")
	f.StringVar(&algs, "algorithm", "all", "algorithms, comma-separated, all, or auto (the library's default choice under the simulated α and δ and --caps, printed as auto (name))")
	caps = capsFlag(f)
	knobs = knobFlags(f)
	f.StringVar(&sizes, "sizes", "64,4K,32K", "per-rank sizes in bytes: "+sizesHelp)
	f.IntVar(&elem, "elem", 1, "element size in bytes: pipelined algorithms cut their default 64 KiB segments in such elements, as the library does for a call of this element type")
	f.StringVar(&gridSpec, "grid", "auto", "process grid of topology-aware algorithms (rd-optimal, bucket3, ...): AxBxC, or auto (the torus or mesh itself when the ranks fill it in XYZ order)")
	f.StringVar(&traceFile, "trace", "", "simulate the recorded trace in this file instead of registry algorithms")
	// How the messages are charged.
	f.StringVar(&model, "model", "stage", "network model: stage or flow")
	f.StringVar(&arrivals, "arrivals", "", "flow model: the ranks' arrival times, comma-separated durations (0,0,0,5ms); time then runs from the earliest")
	f.StringVar(&ports, "ports", "1", "node model: 1 (single-port) or all (multi-port)")
	f.StringVar(&hopLat, "hop-latency", "0", "latency t_h per link crossed (cut-through and packet switching)")
	f.StringVar(&switching, "switching", "cut-through", "cut-through, store-and-forward or packet:SIZE (see Switching above)")
	network.add(f, "", "multi-port stage model: K:E derates nodes with K or more messages in a stage to E of the link bandwidth (Sack's Blue Gene/P: 6:0.93)")
	// What is written.
	addFormatFlag(f, &format)
	f.BoolVar(&stages, "stages", false, "print the per-stage breakdown (stage model)")
	f.BoolVar(&embedding, "embedding", false, embeddingHelp)
	f.StringVar(&plotFile, "plot", "", "also plot MB/s against size per algorithm into this .svg or .png file")
	addProgressFlag(f, &progress)
	return cmd
}

// stageNote is the one line scoll sim writes when the stage model is not
// valid for some of the algorithms simulated: those whose schedules send
// and receive a message in different rounds (sim.Result.Misaligned).
func stageNote(names []string) string {
	return fmt.Sprintf("scoll sim: note: stage model not valid for %s (ranks idle in rounds their schedules leave out, so the times are too low); --model flow simulates them",
		strings.Join(names, ", "))
}

const topologyHelp = `torus:8x8x8, mesh:4x4x8, clos:R=32,T=16,mu=0.25, crossbar:512, hypercube:9, dragonfly:g=9,a=4,p=2`

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
		if err := checkAlgorithm(coll, n, "all", "auto"); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, nil
}

// simFormat is how scoll sim writes its rows (the table leaves out the
// model).
var simFormat = rowFormat[simRow]{
	columns: []string{"topology", "ranks", "op", "algorithm", "bytes", "model", "time_s", "alpha_count", "delta_bytes", "mbps", "max_congestion"},
	csv: func(r simRow) []string {
		return append([]string{r.Topology, strconv.Itoa(r.Ranks), r.Op, r.Algorithm, strconv.Itoa(r.Bytes), r.Model}, r.csvResult()...)
	},
	headings: []string{"topology", "ranks", "op", "algorithm", "bytes", "time", "alpha_count", "delta_bytes", "rate", "max_congestion"},
	cells: func(r simRow) string {
		alpha, delta := "n/a", "n/a"
		if r.stageTerms() {
			alpha, delta = fmtCount(r.AlphaCount), fmtBytes(r.DeltaBytes)
		}
		return fmt.Sprintf("%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t", r.Topology, r.Ranks, r.Op, r.Algorithm, fmtBytes(float64(r.Bytes)),
			fmtTime(r.Time), alpha, delta, fmtRate(r.MBps), fmtCount(r.MaxCongestion))
	},
}

// simBcastFormat is simFormat with each bcast's distance to the bounds:
// the round-optimal pipelined bound and the notes' reference, and the
// simulated time as a multiple of each.
var simBcastFormat = withBounds(simFormat, func(r simRow) float64 { return r.Time },
	func(r simRow) (float64, float64) { return r.RoundOptS, r.NotesBoundS })

// csvResult returns the CSV fields of r's result: time_s, alpha_count,
// delta_bytes (empty for the flow model), mbps and max_congestion.
func (r simRow) csvResult() []string {
	alpha, delta := "", ""
	if r.stageTerms() {
		alpha, delta = strconv.FormatFloat(r.AlphaCount, 'g', 10, 64), strconv.FormatFloat(r.DeltaBytes, 'g', 10, 64)
	}
	return []string{strconv.FormatFloat(r.Time, 'g', 10, 64), alpha, delta, strconv.FormatFloat(r.MBps, 'f', 3, 64),
		strconv.FormatFloat(r.MaxCongestion, 'g', 6, 64)}
}

// stageTerms reports whether r's model has α and δ terms (alpha_count,
// delta_bytes): the stage model's do, the flow model's do not.
func (r simRow) stageTerms() bool { return r.Model != "flow" }

// simJSON is a simRow as JSON: the stage-model terms are null for the
// flow model, which has none.
type simJSON struct {
	simRow
	AlphaCount *float64 `json:"alpha_count"`
	DeltaBytes *float64 `json:"delta_bytes"`
}

func toJSON(rows []simRow) []simJSON {
	out := make([]simJSON, len(rows))
	for i, r := range rows {
		out[i].simRow = r
		if r.stageTerms() {
			out[i].AlphaCount, out[i].DeltaBytes = &rows[i].AlphaCount, &rows[i].DeltaBytes
		}
	}
	return out
}

// writeSimRows writes the rows in format, and with stages each row's
// per-stage table after the table.
func writeSimRows(w io.Writer, format string, rows []simRow, stages bool) error {
	rf := simFormat
	if len(rows) > 0 && rows[0].Op == schedule.Bcast.String() && rows[0].RoundOptS > 0 {
		rf = simBcastFormat
	}
	if strings.EqualFold(format, "json") {
		return writeRows(w, format, toJSON(rows), rowFormat[simJSON]{})
	}
	if err := writeRows(w, format, rows, rf); err != nil {
		return err
	}
	if format != "table" || !stages {
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
// figures of Sack's thesis; the title names the network's switching.
func plotSim(file string, rows []simRow, sw sim.Switching) error {
	title := ""
	if len(rows) > 0 {
		title = fmt.Sprintf("%s on %s, %d ranks (%s model, %s)", rows[0].Op, rows[0].Topology, rows[0].Ranks, rows[0].Model, sw)
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
	bySize  = mbpsAxis{"size per rank", func(r simRow) float64 { return float64(r.Bytes) }, pow2Ticks{}}
	byRanks = mbpsAxis{"nodes", func(r simRow) float64 { return float64(r.Ranks) }, pow2Ticks{plain: true}}
)

// mbpsPlot draws MB/s against ax on a logarithmic axis, one line per
// algorithm in the order the rows first name them (rows with x ≤ 0 are
// left out).
func mbpsPlot(title string, rows []simRow, ax mbpsAxis) (*plot.Plot, error) {
	p := logXPlot(title, ax.label, "MB/s", ax.ticks)
	var ls lineSet
	for _, r := range rows {
		if ax.x(r) > 0 {
			ls.add(r.Algorithm, ax.x(r), r.MBps)
		}
	}
	if err := ls.draw(p); err != nil {
		return nil, err
	}
	p.Y.Min = 0 // the legend stands beside the plot (savePlots)
	p.Y.Tick.Marker = plainTicks{}
	return p, nil
}
