package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// tuneConfig is what scoll tune --mpi measures.
type tuneConfig struct {
	ops    []string      // collectives, by scoll's names
	sizes  []int         // message sizes in bytes (package tuning's)
	reps   int           // repetitions; the median counts
	budget time.Duration // time per variant, size and repetition
	margin float64       // how much faster than native scoll must be
	out    string        // the rules file
	stdout io.Writer     // rank 0's table
}

// tuneMPI runs scoll tune --mpi: set by tune_mpi.go in builds with the
// mpi tag.
var tuneMPI func(ctx context.Context, cfg *tuneConfig) error

// tuneOps are the collectives scoll tune --mpi can measure natively.
var tuneOps = []string{"allreduce", "bcast", "allgather", "reducescatter", "alltoall"}

func newTuneCmd() *cobra.Command {
	var (
		mpiFlag bool
		ops     string
		sizes   string
		reps    int
		margin  float64
		budget  time.Duration
		out     string
	)
	cmd := &cobra.Command{
		Use:   "tune --mpi",
		Short: "Measure the MPI library's collectives against scoll's and write the drop-in's rules",
		Long: `tune --mpi runs under the MPI library's launcher, one process per rank
(scoll built with -tags mpi), and measures for each collective and message
size the MPI library's own collective against every scoll algorithm, run as
the drop-in library (cmd/libscollmpi) runs them: on the transport that
calls MPI from the calling thread only. Each variant runs back to back for
--time, --reps times, alternating; the median counts. Rank 0 writes a
tuning file (package tuning) whose rules name, per size, the fastest scoll
algorithm where it beats the MPI library's collective by --margin, else
"native" (the drop-in forwards such calls to the MPI library). The drop-in reads it with SCOLL_TUNING=FILE. Message sizes are
package tuning's: the buffer for allreduce and bcast, each rank's block for
allgather and alltoall, the whole send buffer for reducescatter (the block
each rank gets times the number of ranks).`,
		Example: `  mpirun -np 4 scoll tune --mpi --tune-out rules.json
  mpirun -np 2 scoll tune --mpi --ops allreduce,bcast --sizes 8..1M --reps 3 --tune-out rules.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !mpiFlag {
				return fmt.Errorf("scoll tune measures MPI programs' collectives: give --mpi and run it under mpirun")
			}
			cfg := tuneConfig{reps: reps, budget: budget, margin: margin, out: out, stdout: cmd.OutOrStdout()}
			for _, op := range strings.Split(ops, ",") {
				op = strings.TrimSpace(strings.ToLower(op))
				if err := checkName("ops", "collective", op, tuneOps); err != nil {
					return err
				}
				cfg.ops = append(cfg.ops, op)
			}
			var err error
			if cfg.sizes, err = parseSizes("sizes", sizes); err != nil {
				return err
			}
			if reps < 1 {
				return fmt.Errorf("--reps %d: want at least 1", reps)
			}
			if !(margin >= 0 && margin < 1) {
				return fmt.Errorf("--margin %g: want a fraction in [0, 1)", margin)
			}
			if budget <= 0 {
				return fmt.Errorf("--time %v: want a positive duration", budget)
			}
			if out == "" {
				return fmt.Errorf("--tune-out: want a file name")
			}
			if err := checkTuneOut(out); err != nil {
				return err
			}
			if tuneMPI == nil {
				return fmt.Errorf("scoll tune --mpi: this scoll was built without MPI: go build -tags mpi ./cmd/scoll")
			}
			return tuneMPI(cmd.Context(), &cfg)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&mpiFlag, "mpi", false, "measure against the MPI library scoll runs under (run under mpirun)")
	f.StringVar(&ops, "ops", strings.Join(tuneOps, ","), "collectives to measure, comma-separated")
	f.StringVar(&sizes, "sizes", "8..16M", "message sizes, like 8..16M or 8,1K,1M")
	f.IntVar(&reps, "reps", 5, "repetitions of every measurement (the median counts)")
	f.DurationVar(&budget, "time", 20*time.Millisecond, "time per variant, size and repetition")
	f.Float64Var(&margin, "margin", 0.1, "a rule names a scoll algorithm only where it beats the MPI library's collective by this fraction")
	f.StringVar(&out, "tune-out", "scoll-mpi-rules.json", "the rules file rank 0 writes (JSON, package tuning; the drop-in reads it with SCOLL_TUNING)")
	return cmd
}
