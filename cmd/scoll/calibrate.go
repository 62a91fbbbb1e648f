package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/bench"
	"github.com/scoll/scoll/model"
	"github.com/scoll/scoll/schedule"
	"github.com/spf13/cobra"
)

// defaultParamsFile is where scoll calibrate saves and scoll predict looks.
const defaultParamsFile = "scoll-params.json"

func newCalibrateCmd() *cobra.Command {
	var (
		output string
		budget time.Duration
	)
	cmd := &cobra.Command{
		Use:   "calibrate",
		Short: "Measure α, β and γ of the in-process transport and save them",
		Long: `calibrate measures the machine parameters of scoll's α-β-γ model on the
in-process transport: α and β from a ping-pong of collective messages between
two ranks over sizes from 8 B to 4 MiB (β is the slope over the sizes from
32 KiB, α the time of the small ones less β per byte), γ from the float32
sum kernel on 1 MiB. It prints the points and saves the parameters as JSON
(the format of scoll model --params and scoll predict --params).`,
		Example: `  scoll calibrate
  scoll calibrate --output params.json --time 500ms`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if budget <= 0 {
				return fmt.Errorf("--time %v: want a positive duration", budget)
			}
			cal, err := bench.Calibrate(cmd.Context(), budget)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "bytes\tone_way_us\tfit_us\t")
			for _, p := range cal.Points {
				fmt.Fprintf(tw, "%d\t%.3f\t%.3f\t\n", p.Bytes, p.OneWayS*1e6, (cal.Alpha+cal.Beta*float64(p.Bytes))*1e6)
			}
			tw.Flush()
			fmt.Fprintln(w, cal)
			if output == "" || output == "-" {
				return nil
			}
			par := calibratedParams(cal)
			b, err := json.MarshalIndent(par, "", "  ")
			if err != nil {
				return err
			}
			if err := os.WriteFile(output, append(b, '\n'), 0o644); err != nil {
				return err
			}
			fmt.Fprintf(w, "saved to %s\n", output)
			return nil
		},
	}
	cmd.Flags().StringVar(&output, "output", defaultParamsFile, "file to save the parameters to (- to only print them)")
	cmd.Flags().DurationVar(&budget, "time", 200*time.Millisecond, "time spent per message size")
	return cmd
}

// calibratedParams turns a calibration into model parameters: the LogGP
// latency, overhead and gap as measured (MeasureLogP), the gap per byte
// taken as β.
func calibratedParams(cal *bench.Calibration) model.Params {
	return model.Params{
		Name:   "inproc-calibrated",
		Source: fmt.Sprintf("scoll calibrate, %s, GOMAXPROCS=%d, %s", runtime.GOARCH, runtime.GOMAXPROCS(0), time.Now().UTC().Format(time.DateOnly)),
		Alpha:  cal.Alpha, Beta: cal.Beta, Gamma: cal.Gamma,
		L: cal.L, O: cal.O, G: cal.G, GPerByte: cal.Beta,
	}
}

func newPredictCmd() *cobra.Command {
	var (
		cfg                 bench.Config
		sizes, params, algs string
		budget              time.Duration
	)
	cmd := &cobra.Command{
		Use:   "predict",
		Short: "Compare each algorithm's α-β-γ prediction with its measured time",
		Long: `predict runs each algorithm of a collective for real on in-process ranks (as
scoll bench does) and prints, per algorithm and size, the time its α-β-γ cost
predicts under calibrated parameters, the measured time and their ratio:
the columns algorithm, np, bytes (per rank), predicted, measured (the mean
of the timed iterations) and ratio (measured / predicted).

Parameters come from --params: a file written by scoll calibrate (default
` + defaultParamsFile + ` when it exists), a preset name, or "calibrate" to measure
them first. The model assumes every rank has a CPU: with more ranks than
CPUs, measured times include the ranks' time sharing.`,
		Example: `  scoll calibrate && scoll predict --op allreduce --sizes 8,64K,1M
  scoll predict --op allgather --np 2 --params calibrate`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			coll, err := parseOp(cfg.Op, bench.Ops())
			if err != nil {
				return err
			}
			// Every flag is checked before the calibration and the runs.
			if cfg.NP == 0 { // --np not given
				cfg.NP = runtime.GOMAXPROCS(0)
			}
			if budget <= 0 {
				return fmt.Errorf("--time %v: want a positive duration", budget)
			}
			if cfg.Sizes, err = parseSizes("sizes", sizes); err != nil {
				return err
			}
			if algs != "" {
				cfg.Algorithms = strings.Split(algs, ",")
				for _, a := range cfg.Algorithms {
					if err := checkAlgorithm(coll, a, bench.Auto); err != nil {
						return err
					}
				}
			}
			if params != "" && params != "calibrate" && !exists(params) {
				if _, perr := model.ParamsByName(params); perr != nil {
					return fmt.Errorf("--params %q: neither a file nor a preset (%s), nor calibrate", params, strings.Join(model.Presets(), ", "))
				}
			}
			var par model.Params
			switch {
			case params == "calibrate" || (params == "" && !exists(defaultParamsFile)):
				cal, err := bench.Calibrate(cmd.Context(), budget)
				if err != nil {
					return err
				}
				par = calibratedParams(cal)
				fmt.Fprintf(cmd.ErrOrStderr(), "scoll predict: calibrated %s\n", cal)
			case params == "":
				par, err = model.OpenParams(defaultParamsFile)
			default:
				par, err = openParams(params)
			}
			if err != nil {
				return err
			}
			cfg.Budget = budget
			cfg.MaxCall = -1
			rep, err := bench.Run(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			for _, s := range rep.Skipped {
				fmt.Fprintf(cmd.ErrOrStderr(), "scoll predict: %s\n", s)
			}
			return writePredictions(cmd.OutOrStdout(), coll, rep.Rows, par)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Op, "op", defaultOp, "collective")
	addNPFlag(f, &cfg.NP, 0, "ranks (default: one per CPU)")
	f.StringVar(&algs, "algorithm", "", "algorithms, comma-separated (default: every one registered)")
	f.StringVar(&sizes, "sizes", "8,1K,64K,1M", "sizes in bytes per rank: "+sizesHelp)
	f.StringVar(&cfg.Type, "type", "float32", "element type")
	f.StringVar(&params, "params", "", "parameters: a file, a preset name, or calibrate (default: "+defaultParamsFile+" if present, else calibrate)")
	f.DurationVar(&budget, "time", 200*time.Millisecond, "time budget per measurement")
	return cmd
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// writePredictions prints predicted against measured times.
func writePredictions(w io.Writer, coll schedule.Collective, results []bench.Result, par model.Params) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "algorithm\tnp\tbytes\tpredicted\tmeasured\tratio\t")
	for _, r := range results {
		in, ok := algorithms.Lookup(coll, r.Algorithm)
		if !ok {
			continue // scoll's own choice has no single cost
		}
		es := 1
		if r.Count > 0 {
			es = max(1, r.Bytes/r.Count)
			if coll == schedule.ReduceScatterBlock {
				es = max(1, r.Bytes/(r.Count*r.NP))
			}
		}
		p := algorithms.Params{Spec: schedule.Spec{Coll: coll, Size: r.NP, Count: r.Count}, Commutative: true, ElemSize: es}
		pred := in.Cost(&p).Time(par.Alpha, par.Beta, par.Gamma) * 1e6
		ratio := "-"
		if pred > 0 {
			ratio = fmt.Sprintf("%.2f", r.AvgUs/pred)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t\n", r.Algorithm, r.NP, fmtBytes(float64(r.Bytes)), fmtTime(pred/1e6), fmtTime(r.AvgUs/1e6), ratio)
	}
	return tw.Flush()
}
