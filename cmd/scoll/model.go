package main

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/bench"
	"github.com/scoll/scoll/model"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/workload"
	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// modelRow is one evaluated configuration.
type modelRow struct {
	Op        string  `json:"op"`
	Algorithm string  `json:"algorithm"`
	NP        int     `json:"np"`
	Bytes     int     `json:"bytes"`
	CostS     float64 `json:"cost_s"`
	// CriticalS and LogGPS are the α-β-γ and LogGP times along the
	// schedules' dependencies (model.CriticalPath).
	CriticalS float64 `json:"critical_s"`
	LogGPS    float64 `json:"loggp_s"`
	// CountedS and LogGPSyncS are the round-synchronous α-β-γ and LogGP
	// times (model.AlphaBetaGamma and model.LogGP of the counts), with
	// --round-sync only.
	CountedS   *float64 `json:"counted_s,omitempty"`
	LogGPSyncS *float64 `json:"loggp_sync_s,omitempty"`
	Form       string   `json:"form,omitempty"`
	FormS      float64  `json:"form_s,omitempty"`
	EnergyJ    float64  `json:"energy_j"`
	MemoryB    float64  `json:"memory_bytes"`
	ArrivalS   float64  `json:"arrival_s"`
	// Default marks the algorithm the library's default choice takes for
	// the call under the model's α, β and γ and --caps.
	Default bool `json:"default"`
	// Bcast only: the round-optimal pipelined bound and the notes'
	// reference (model.BcastRoundOptimal, model.BcastLowerBound).
	RoundOptS   float64 `json:"round_opt_s,omitempty"`
	NotesBoundS float64 `json:"notes_bound_s,omitempty"`
}

func newModelCmd() *cobra.Command {
	var ranks []int
	var op, sizes, params, format, plotFile, traceFile, arrivals, boundsPlot, progress, maxMemory string
	var roundSync bool
	var caps func() (algorithms.Caps, error)
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Runtime, energy and memory of each algorithm under analytic models",
		Long: `model evaluates every algorithm registered for a collective at each rank count
and size, by counting its schedules (scoll's model package). Columns, as the
table names them, then as CSV columns and JSON keys (with the unit: seconds
for _s, joules for _j, bytes for _bytes):

  op, algorithm, np, bytes  the configuration (bytes per rank)
  cost (cost_s)  the algorithm's registered α-β-γ closed form
  critical (critical_s)  the α-β-γ time of its schedules along their
             dependencies (the critical path: a rank's round starts when its
             previous round has ended and a message completes when both its
             ends have carried it; model.CriticalPath)
  loggp (loggp_s)  the LogGP time of its schedules along their dependencies
             (one CPU per rank paying o per send and receive, g + (s-1)G
             between messages, L per message, γ per byte reduced, copies
             free): what LogGOPSim gives for scoll schedule --format goal
             with the same parameters
  counted, loggp_sync (counted_s, loggp_sync_s; with --round-sync) the
             round-synchronous α-β-γ and LogGP times: round i of every rank taken as one step, the
             busiest rank's messages per step. They hold only for schedules
             whose ranks all communicate in every round (butterflies,
             rings); pipelines and trees, whose ranks idle in rounds the
             schedule leaves out, come out too fast (up to 250× for a
             pipelined bcast on 512 ranks)
  form, form_time (form, form_s)  the Hoefler–Moor LogGP closed form that
             models it, if any, and its time
  energy (energy_j)  e per message + E per byte + static power × P × time
             (Hoefler–Moor)
  memory (memory_bytes)  d bytes per sent-message descriptor, maximum over
             processes
  round_opt, notes_bound (round_opt_s, notes_bound_s; bcast only, with each
             algorithm's arrival as a multiple of them, ratio_round_opt and
             ratio_notes): the round-optimal pipelined bound
             min over n of (n + ⌈lg p⌉ − 1)(α + βs/n), and the notes'
             reference (√(α lg(p−1)) + √(βs))², which binomial beats at small s
  arrival (arrival_s)  the α-β-γ time along the schedules' dependencies
             (critical path) from the earliest arrival to the last rank's end, the
             ranks arriving at the --arrivals times (default: together);
             the clairvoyant reduce is scheduled for those arrivals
  default    * (true in CSV and JSON) on the algorithm the library's default
             choice takes for the call under these parameters and --caps

Where cost and critical differ by more than 2×, the table marks the cost (†
or ‡) and a line under it says why: the registered formula is
round-synchronous over every bucket or lane, empty or not (†), or an
approximation that leaves out waits of the schedule (‡).

--params names a preset (` + "PRESETS" + `) or a JSON file (as written by
scoll calibrate). --plot draws runtime, energy and memory against the rank
count for the first size, one line per algorithm (Hoefler–Moor's Fig. 5).

--trace FILE evaluates a recorded run instead (scoll.WithRecorder): its
messages, bytes and rounds, critical_s and loggp_s along its dependencies
as above ("-" in the table, empty in CSV, null in JSON when the trace needs
eager sends, which the critical path does not model), with --round-sync
the round-synchronous counted_s and loggp_sync_s, energy_j and
memory_bytes.

The table shows times, energies and sizes with their units (12.34 µs,
1.5 KiB); CSV and JSON give plain numbers in the unit of the column's name
(seconds for _s, joules for _j, bytes for _bytes; docs/json.md).`,
		Example: `  scoll model --op allreduce --np 8..2048 --sizes 8
  scoll model --op bcast --np 16,64,256 --sizes 8,64K --params infiniband --plot tradeoff.svg
  scoll model --trace split.trace --params curie`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// A bad --format is refused before the models run (at the
			// default rank counts they take a minute).
			if _, err := checkFormat(format); err != nil {
				return err
			}
			if traceFile != "" {
				return modelTrace(cmd, traceFile, params, format)
			}
			coll, err := parseOp(op, scalarCollectives())
			if err != nil {
				return err
			}
			cp, err := caps()
			if err != nil {
				return err
			}
			sz, err := parseSizes("sizes", sizes)
			if err != nil {
				return err
			}
			par, err := openParams(params)
			if err != nil {
				return err
			}
			st, err := newStatus(cmd.ErrOrStderr(), progress)
			if err != nil {
				return err
			}
			limit, err := parseMaxMemory(maxMemory)
			if err != nil {
				return err
			}
			for _, p := range ranks {
				if est := int64(p) * modelRankBytes; limit >= 0 && est > limit {
					return fmt.Errorf("--np %d: the evaluation would need about %s (%d ranks × %s), over --max-memory %s; raise it (0: no limit) or model fewer ranks",
						p, bench.HumanSize(est), p, bench.HumanSize(modelRankBytes), maxMemory)
				}
			}
			for _, p := range ranks {
				if _, err := parseArrivals(arrivals, p); err != nil {
					return err
				}
			}
			var rows []modelRow
			total, done, start := len(sz)*len(ranks), 0, time.Now()
			for _, n := range sz {
				for _, p := range ranks {
					arr, err := parseArrivals(arrivals, p)
					if err != nil {
						return err
					}
					st.Progress("%s [%d/%d] np=%d %s", progressBar(done, total, 20), done+1, total, p, fmtBytes(float64(n)))
					done++
					res, err := workload.EvaluateArrivals(coll, p, n, par, arr)
					if err != nil {
						return fmt.Errorf("np=%d, %d B: %w", p, n, err)
					}
					def := ""
					if in, err := workload.Default(workload.Workload{Coll: coll, Size: p, Bytes: n, Elem: modelElem(n),
						Machine: algorithms.Machine{Alpha: par.Alpha, Beta: par.Beta, Gamma: par.Gamma}}, cp); err == nil {
						def = in.Name
					}
					for _, r := range res {
						row := modelRow{Op: coll.String(), Algorithm: r.Algorithm, NP: p, Bytes: n,
							CostS: r.Cost, CriticalS: r.Critical, LogGPS: r.CriticalLogGP, Form: r.Form, FormS: r.FormTime,
							EnergyJ: r.Energy, MemoryB: r.Memory, ArrivalS: r.Arrival, Default: r.Algorithm == def}
						if r.Critical == 0 && r.CriticalLogGP == 0 {
							// Not evaluated (model.MaxCriticalOps): one round
							// does all the work, which the round-synchronous
							// times charge exactly.
							row.CriticalS, row.LogGPS = r.Counted, r.LogGP
							if row.ArrivalS == 0 {
								row.ArrivalS = r.Counted
							}
						}
						if roundSync {
							row.CountedS, row.LogGPSyncS = &r.Counted, &r.LogGP
						}
						if coll == schedule.Bcast {
							row.RoundOptS, _ = model.BcastRoundOptimal(par.Alpha, par.Beta, p, float64(n))
							row.NotesBoundS = model.BcastLowerBound(par.Alpha, par.Beta, p, float64(n))
						}
						rows = append(rows, row)
					}
				}
			}
			st.Done("scoll model: %s in %.1fs\n", counted(total, "configuration"), time.Since(start).Seconds())
			notes := modelNotes(rows)
			rf := modelFormat(roundSync, len(notes) > 0)
			if coll == schedule.Bcast {
				rf = modelBcastFormat(rf)
			}
			if err := writeRows(cmd.OutOrStdout(), format, rows, rf); err != nil {
				return err
			}
			if strings.EqualFold(format, "table") {
				for _, n := range notes {
					fmt.Fprintln(cmd.OutOrStdout(), n)
				}
			}
			if plotFile != "" {
				return plotModel(plotFile, rows, sz[0], par.Name)
			}
			if boundsPlot != "" {
				if coll != schedule.Bcast {
					return fmt.Errorf("--plot-bounds: bcast only")
				}
				return plotBcastBounds(boundsPlot, rows, ranks[0], par.Name)
			}
			return nil
		},
	}
	cmd.Long = strings.Replace(cmd.Long, "PRESETS", strings.Join(model.Presets(), ", "), 1)
	f := cmd.Flags()
	f.StringVar(&op, "op", defaultOp, "collective")
	caps = capsFlag(f)
	addNPListFlag(f, &ranks, "8..4096", "rank counts")
	f.StringVar(&sizes, "sizes", "8", "per-rank sizes in bytes: "+sizesHelp)
	f.StringVar(&params, "params", "infiniband", "machine parameters: a preset name or a JSON file")
	addFormatFlag(f, &format)
	f.StringVar(&plotFile, "plot", "", "plot runtime, energy and memory against ranks into this .svg or .png file")
	f.StringVar(&traceFile, "trace", "", "evaluate the recorded trace in this file instead of registry algorithms")
	f.StringVar(&boundsPlot, "plot-bounds", "", "bcast: plot each algorithm's critical path over the round-optimal bound against the size, for the first --np, into this .svg or .png file")
	f.StringVar(&arrivals, "arrivals", "", "the ranks' arrival times, comma-separated durations (0,0,0,5ms), for one --np")
	addProgressFlag(f, &progress)
	f.StringVar(&maxMemory, "max-memory", "4G", "refuse, before evaluating, rank counts whose evaluation would need more memory than this (about 20 KiB per rank; 0: no limit)")
	f.BoolVar(&roundSync, "round-sync", false, "also print the round-synchronous times counted_s and loggp_sync_s (valid only when every rank communicates in every round)")
	return cmd
}

// modelFormat is how scoll model writes its rows: with roundSync the
// round-synchronous times follow the critical-path ones; with marked the
// table's cost cells carry the marks of costNote (and a blank in its place
// where they have none, to keep the units in line).
func modelFormat(roundSync, marked bool) rowFormat[modelRow] {
	sync := func(r modelRow) []float64 {
		if !roundSync {
			return nil
		}
		return []float64{deref(r.CountedS), deref(r.LogGPSyncS)}
	}
	columns := []string{"op", "algorithm", "np", "bytes", "cost_s", "critical_s", "loggp_s"}
	headings := []string{"op", "algorithm", "np", "bytes", "cost", "critical", "loggp"}
	if roundSync {
		columns = append(columns, "counted_s", "loggp_sync_s")
		headings = append(headings, "counted", "loggp_sync")
	}
	return rowFormat[modelRow]{
		columns:  append(columns, "form", "form_s", "energy_j", "memory_bytes", "arrival_s", "default"),
		headings: append(headings, "form", "form_time", "energy", "memory", "arrival", "default"),
		csv: func(r modelRow) []string {
			f := []string{r.Op, r.Algorithm, strconv.Itoa(r.NP), strconv.Itoa(r.Bytes), g8(r.CostS), g8(r.CriticalS), g8(r.LogGPS)}
			for _, x := range sync(r) {
				f = append(f, g8(x))
			}
			return append(f, r.Form, g8(r.FormS), g8(r.EnergyJ), g8(r.MemoryB), g8(r.ArrivalS), strconv.FormatBool(r.Default))
		},
		cells: func(r modelRow) string {
			cost := fmtTime(r.CostS)
			if marked {
				cost += cmp.Or(costNote(r).mark, " ")
			}
			c := fmt.Sprintf("%s\t%s\t%d\t%s\t%s\t%s\t%s\t", r.Op, r.Algorithm, r.NP, fmtBytes(float64(r.Bytes)), cost, fmtTime(r.CriticalS), fmtTime(r.LogGPS))
			for _, x := range sync(r) {
				c += fmtTime(x) + "\t"
			}
			form := "-"
			if r.Form != "" {
				form = fmtTime(r.FormS)
			}
			def := ""
			if r.Default {
				def = "*"
			}
			return c + fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t", cmp.Or(r.Form, "-"), form, fmtEnergy(r.EnergyJ), fmtBytes(r.MemoryB), fmtTime(r.ArrivalS), def)
		},
	}
}

// A modelFootnote explains a disagreement between a row's cost and
// critical times: its mark follows the cost in the table, its text is
// printed once under the table.
type modelFootnote struct{ mark, text string }

var (
	// costAbove: the registered closed forms of the multi-lane algorithms
	// (bucket3, bucket6, rd-paths and the bcasts and reduces built on
	// them) charge the start-ups of every lane in every round, k·rounds·α
	// (algorithms.bucketCost, lanesCost), whatever the count; their
	// schedules leave out the messages of empty blocks, and a count
	// smaller than the lanes' blocks leaves most lanes empty.
	costAbove = modelFootnote{"†", "† cost > 2× critical: cost is the registered formula, round-synchronous over all k buckets or lanes (k × rounds × α); critical is the critical path through the messages sent, and at this size most buckets are empty and send none."}
	// costBelow: the registered form is an approximation that leaves out
	// waits along the schedule's chains (model package, "Evaluations
	// against the registered costs").
	costBelow = modelFootnote{"‡", "‡ critical > 2× cost: cost is the registered formula, an approximation of this schedule; critical is the critical path through its messages, every wait for data included."}
)

// costNote returns the footnote of a row whose cost and critical times
// differ by more than 2×, and none (an empty mark) otherwise.
func costNote(r modelRow) modelFootnote {
	switch {
	case r.CostS <= 0 || r.CriticalS <= 0:
	case r.CostS > 2*r.CriticalS:
		return costAbove
	case r.CriticalS > 2*r.CostS:
		return costBelow
	}
	return modelFootnote{}
}

// modelNotes returns the texts of the footnotes that rows need, each once,
// in the order of costAbove, costBelow.
func modelNotes(rows []modelRow) []string {
	var above, below bool
	for _, r := range rows {
		switch costNote(r) {
		case costAbove:
			above = true
		case costBelow:
			below = true
		}
	}
	var notes []string
	if above {
		notes = append(notes, costAbove.text)
	}
	if below {
		notes = append(notes, costBelow.text)
	}
	return notes
}

// modelElem is the element size workload.EvaluateArrivals takes for n
// bytes: 4 where they divide, else 1.
func modelElem(n int) int {
	if n%4 == 0 {
		return 4
	}
	return 1
}

// deref returns *p, or 0 when p is nil.
func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// plotBcastBounds draws each bcast algorithm's critical-path time as a
// multiple of the round-optimal bound against the size, at np ranks, with
// the notes' reference as a line of its own.
func plotBcastBounds(file string, rows []modelRow, np int, params string) error {
	var lines lineSet
	seen := map[int]bool{}
	for _, r := range rows {
		if r.NP != np || r.RoundOptS == 0 {
			continue
		}
		lines.add(r.Algorithm, float64(r.Bytes), r.ArrivalS/r.RoundOptS)
		if !seen[r.Bytes] {
			seen[r.Bytes] = true
			lines.add("notes' reference", float64(r.Bytes), r.NotesBoundS/r.RoundOptS)
		}
	}
	p := logXPlot(fmt.Sprintf("bcast on %d ranks (%s): time / round-optimal bound", np, params), "size", "critical path / bound", pow2Ticks{})
	if err := lines.draw(p); err != nil {
		return err
	}
	logY(p, &lines)
	return savePlots(file, [][]*plot.Plot{{p}}, 20*vg.Centimeter, 14*vg.Centimeter)
}

// modelBcastFormat is base (a modelFormat) with the bcast bounds and each
// row's critical-path time as a multiple of them.
func modelBcastFormat(base rowFormat[modelRow]) rowFormat[modelRow] {
	return withBounds(base, func(r modelRow) float64 { return r.ArrivalS },
		func(r modelRow) (float64, float64) { return r.RoundOptS, r.NotesBoundS })
}

// ratio returns a/b (0 when b is 0).
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// g8 formats x for the CSV of scoll model: 8 significant digits.
func g8(x float64) string { return strconv.FormatFloat(x, 'g', 8, 64) }

// plotModel draws three panels against the rank count: LogGP runtime,
// energy and memory, one line per algorithm, for per-rank size n.
func plotModel(file string, rows []modelRow, n int, params string) error {
	metrics := []struct {
		label string
		get   func(modelRow) float64
	}{
		{"runtime (µs, LogGP critical path)", func(r modelRow) float64 { return r.LogGPS * 1e6 }},
		{"energy (J)", func(r modelRow) float64 { return r.EnergyJ }},
		{"memory per process (B)", func(r modelRow) float64 { return r.MemoryB }},
	}
	var tiles [][]*plot.Plot
	for _, m := range metrics {
		// Every panel has a title: plot.Align would leave the others a
		// title's height of blank above their data.
		title := m.label
		if len(rows) > 0 {
			title = fmt.Sprintf("%s, %s per rank, %s parameters: %s", rows[0].Op, sizeLabel(n), params, strings.SplitN(m.label, " ", 2)[0])
		}
		p := logXPlot(title, "processes", m.label, pow2Ticks{plain: true})
		var ls lineSet
		for _, r := range rows {
			if r.Bytes == n {
				ls.add(r.Algorithm, float64(r.NP), m.get(r))
			}
		}
		if err := ls.draw(p); err != nil {
			return err
		}
		logY(p, &ls)
		tiles = append(tiles, []*plot.Plot{p})
	}
	return savePlots(file, tiles, 8*vg.Inch, 12*vg.Inch)
}

// modelRankBytes is what scoll model's evaluation of one call needs per
// rank, for --max-memory: the peak resident memory of scoll model --op
// bcast --sizes 8 grew from 329 MB at 16,384 ranks to 1.24 GB at 65,536
// (/usr/bin/time -f %M, 2 cores, every algorithm, two evaluated at once),
// 18.5 KB per rank; rounded up.
const modelRankBytes = 20 << 10
