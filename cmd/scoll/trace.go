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

// traceModelRow is the evaluation of a trace by scoll model, with the
// names and meanings of scoll model's columns: critical_s and loggp_s
// along the trace's dependencies (model.CriticalPath), counted_s and
// loggp_sync_s round-synchronous (with --round-sync only).
type traceModelRow struct {
	Trace    string `json:"trace"`
	NP       int    `json:"np"`
	Messages int64  `json:"messages"`
	Bytes    int64  `json:"bytes"`
	Rounds   int    `json:"rounds"`
	// CriticalS and LogGPS are nil (null in JSON) when the trace cannot
	// run with rendezvous matching (see model.EvaluateGenerator).
	CriticalS  *float64 `json:"critical_s"`
	LogGPS     *float64 `json:"loggp_s"`
	CountedS   *float64 `json:"counted_s,omitempty"`
	LogGPSyncS *float64 `json:"loggp_sync_s,omitempty"`
	EnergyJ    float64  `json:"energy_j"`
	MemoryB    float64  `json:"memory_bytes"`
}

// modelTrace evaluates the trace in file under the parameters params;
// --round-sync adds the round-synchronous times.
func modelTrace(cmd *cobra.Command, file, params, format string) error {
	tr, err := openTrace(cmd, file, "op", "np", "sizes", "plot")
	if err != nil {
		return err
	}
	par, err := openParams(params)
	if err != nil {
		return err
	}
	roundSync, _ := cmd.Flags().GetBool("round-sync")
	r, err := model.EvaluateGenerator(filepath.Base(file), tr.Size, 1, tr.Generator(), par)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	row := traceModelRow{Trace: r.Algorithm, NP: tr.Size, Messages: tr.Messages(), Bytes: tr.Bytes(), Rounds: tr.Rounds(),
		EnergyJ: r.Energy, MemoryB: r.Memory}
	if r.Critical != 0 || r.CriticalLogGP != 0 || tr.Messages() == 0 {
		row.CriticalS, row.LogGPS = &r.Critical, &r.CriticalLogGP
	}
	if roundSync {
		row.CountedS, row.LogGPSyncS = &r.Counted, &r.LogGP
	}
	return writeRows(cmd.OutOrStdout(), format, []traceModelRow{row}, traceModelFormat(roundSync))
}

// traceModelFormat is how scoll model --trace writes its row: critical-path
// times the trace could not give are "-" in the table and empty in CSV.
func traceModelFormat(roundSync bool) rowFormat[traceModelRow] {
	columns := []string{"trace", "np", "messages", "bytes", "rounds", "critical_s", "loggp_s"}
	headings := []string{"trace", "np", "messages", "bytes", "rounds", "critical", "loggp"}
	if roundSync {
		columns = append(columns, "counted_s", "loggp_sync_s")
		headings = append(headings, "counted", "loggp_sync")
	}
	times := func(r traceModelRow) []*float64 {
		t := []*float64{r.CriticalS, r.LogGPS}
		if roundSync {
			t = append(t, r.CountedS, r.LogGPSyncS)
		}
		return t
	}
	return rowFormat[traceModelRow]{
		columns: append(columns, "energy_j", "memory_bytes"),
		csv: func(r traceModelRow) []string {
			f := []string{r.Trace, strconv.Itoa(r.NP), strconv.FormatInt(r.Messages, 10), strconv.FormatInt(r.Bytes, 10), strconv.Itoa(r.Rounds)}
			for _, x := range times(r) {
				if x == nil {
					f = append(f, "")
				} else {
					f = append(f, g8(*x))
				}
			}
			return append(f, g8(r.EnergyJ), g8(r.MemoryB))
		},
		headings: append(headings, "energy", "memory"),
		cells: func(r traceModelRow) string {
			c := fmt.Sprintf("%s\t%d\t%d\t%s\t%d\t", r.Trace, r.NP, r.Messages, fmtBytes(float64(r.Bytes)), r.Rounds)
			for _, x := range times(r) {
				if x == nil {
					c += "-\t"
				} else {
					c += fmtTime(*x) + "\t"
				}
			}
			return c + fmtEnergy(r.EnergyJ) + "\t" + fmtBytes(r.MemoryB) + "\t"
		},
	}
}
