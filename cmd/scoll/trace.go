package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/scoll/scoll/model"
	"github.com/scoll/scoll/sim"
	"github.com/scoll/scoll/transport/record"
	"github.com/spf13/cobra"
)

// Recorded traces (--trace) in scoll sim and scoll model: the schedules a
// recording transport wrote (package transport/record; scoll.WithRecorder)
// instead of a registry algorithm's.

const simTraceHelp = `--trace FILE simulates a recorded run instead of registry algorithms: the
rounds of messages every rank posted (scoll.WithRecorder, record.Trace.WriteFile;
the format: go doc github.com/scoll/scoll/transport/record Read). The trace
sets --np; its row has op "trace", bytes the bytes all ranks sent and mbps
those bytes over the time.`

// openTrace reads the trace of --trace and refuses the flags that choose
// what to run, which the trace replaces.
func openTrace(cmd *cobra.Command, file string, replaced ...string) (*record.Trace, error) {
	for _, f := range replaced {
		if cmd.Flags().Changed(f) {
			return nil, fmt.Errorf("--%s: not with --trace (the trace says what runs)", f)
		}
	}
	tr, err := record.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--trace: %w", err)
	}
	return tr, nil
}

// simTrace simulates a trace and writes its row: op "trace", the file's
// name as the algorithm, the bytes all ranks sent, and mbps those bytes
// over the time.
func simTrace(w io.Writer, tr *record.Trace, file string, cfg sim.Config, modelName string, format string, stages bool) error {
	gen := tr.Generator()
	var res sim.Result
	var err error
	if modelName == "stage" {
		res, err = sim.StageModel(cfg, tr.Size, 1, gen)
	} else {
		res, err = sim.FlowModel(sim.FlowConfig{Config: cfg}, tr.Size, 1, gen)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	row := simRow{Topology: cfg.Topology.String(), Ranks: tr.Size, Op: "trace", Algorithm: filepath.Base(file), Bytes: int(tr.Bytes()),
		Model: modelName, Time: res.Time, AlphaCount: res.AlphaCount, DeltaBytes: res.DeltaBytes, MaxCongestion: res.MaxCongestion, Stages: res.Stages}
	if res.Time > 0 {
		row.MBps = float64(tr.Bytes()) / res.Time / 1e6
	}
	return writeSimRows(w, format, []simRow{row}, stages)
}

// traceModelRow is the evaluation of a trace by scoll model.
type traceModelRow struct {
	Trace    string  `json:"trace"`
	NP       int     `json:"np"`
	Messages int64   `json:"messages"`
	Bytes    int64   `json:"bytes"`
	Rounds   int     `json:"rounds"`
	CountedS float64 `json:"counted_s"`
	LogGPS   float64 `json:"loggp_s"`
	// The critical-path times are 0 when the trace cannot run with
	// rendezvous matching (see model.EvaluateGenerator).
	CriticalS      float64 `json:"critical_s"`
	CriticalLogGPS float64 `json:"critical_loggp_s"`
	EnergyJ        float64 `json:"energy_j"`
	MemoryB        float64 `json:"memory_bytes"`
}

// modelTrace evaluates the trace in file under the parameters params.
func modelTrace(cmd *cobra.Command, file, params, format string) error {
	tr, err := openTrace(cmd, file, "op", "np", "sizes", "plot")
	if err != nil {
		return err
	}
	par, err := model.OpenParams(params)
	if err != nil {
		return err
	}
	r, err := model.EvaluateGenerator(filepath.Base(file), tr.Size, 1, tr.Generator(), par)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	row := traceModelRow{Trace: r.Algorithm, NP: tr.Size, Messages: tr.Messages(), Bytes: tr.Bytes(), Rounds: tr.Rounds(),
		CountedS: r.Counted, LogGPS: r.LogGP, CriticalS: r.Critical, CriticalLogGPS: r.CriticalLogGP, EnergyJ: r.Energy, MemoryB: r.Memory}
	return writeRows(cmd.OutOrStdout(), format, []traceModelRow{row}, traceModelFormat)
}

// traceModelFormat is how scoll model --trace writes its row; the table
// shows "-" for critical-path times the trace could not give.
var traceModelFormat = rowFormat[traceModelRow]{
	columns: []string{"trace", "np", "messages", "bytes", "rounds", "counted_s", "loggp_s", "critical_s", "critical_loggp_s", "energy_j", "memory_bytes"},
	csv: func(r traceModelRow) []string {
		return []string{r.Trace, strconv.Itoa(r.NP), strconv.FormatInt(r.Messages, 10), strconv.FormatInt(r.Bytes, 10), strconv.Itoa(r.Rounds),
			g8(r.CountedS), g8(r.LogGPS), g8(r.CriticalS), g8(r.CriticalLogGPS), g8(r.EnergyJ), g8(r.MemoryB)}
	},
	cells: func(r traceModelRow) string {
		crit := func(x float64) string {
			if x == 0 && r.Messages > 0 {
				return "-"
			}
			return fmt.Sprintf("%.4g", x)
		}
		return fmt.Sprintf("%s\t%d\t%d\t%d\t%d\t%.4g\t%.4g\t%s\t%s\t%.4g\t%.0f\t", r.Trace, r.NP, r.Messages, r.Bytes, r.Rounds,
			r.CountedS, r.LogGPS, crit(r.CriticalS), crit(r.CriticalLogGPS), r.EnergyJ, r.MemoryB)
	},
}
