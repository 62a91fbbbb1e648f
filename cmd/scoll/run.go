package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/scoll/scoll/internal/launch"
	"github.com/spf13/cobra"
)

func newRunCmd() *cobra.Command {
	return newRunCmdExit(os.Exit)
}

// newRunCmdExit returns the run command, which ends the process with exit
// when the job fails (tests pass their own).
func newRunCmdExit(exit func(code int)) *cobra.Command {
	var (
		job  launch.Job
		tag  bool
		bind bool
	)
	cmd := &cobra.Command{
		Use:   "run --np N [flags] -- PROGRAM [ARGS...]",
		Short: "Start N local processes of a program, one per rank (a small mpirun)",
		Long: `run starts --np processes of PROGRAM on this machine, one per rank, and waits
for them. Each gets in its environment SCOLL_RANK (0..N-1), SCOLL_SIZE (N),
SCOLL_RENDEZVOUS (--rendezvous, or file: and a temporary directory removed at
the end), SCOLL_SECRET (kept when set, else 32 random bytes in hex, the same
for every rank), SCOLL_JOB (a random job id), with --ranks-per-node K
SCOLL_HOSTNAME (node<r/K>: one machine pretending to be several nodes) and,
unless set, GOMAXPROCS (the CPUs divided among the ranks, at least 1); the
Open MPI, PMI and Slurm rank variables are removed. Children get no standard
input.

On Linux, when there are at least as many CPUs as ranks, each rank is bound
to its own equal share of the CPUs (rank r to the r-th block), as mpirun binds
ranks to cores; --bind=false leaves them free, which is better when several
jobs share the machine.

Each line a rank writes to stdout or stderr is printed on run's stdout or
stderr prefixed with "[RANK] " (--tag-output=false passes output through).

When a rank exits non-zero or is killed, the others get SIGTERM, then SIGKILL
after --grace, and run exits with the failing rank's status (128+signal when
it was killed). SIGINT and SIGTERM to run stop the job the same way, as does
--timeout (exit status 124). Every rank runs in its own process group, which
is what gets signalled.`,
		Example: `  scoll run --np 4 -- ./allreduce -n 1000
  scoll run --np 8 --rendezvous tcp:127.0.0.1:7000 --timeout 5m ./allreduce
  scoll run --np 2 --tag-output=false -- go run ./examples/allreduce
  (./allreduce: go build -o allreduce ./examples/allreduce)`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("no program: give one after --, as in scoll run --np 4 -- ./prog")
			}
			if job.Grace <= 0 {
				return fmt.Errorf("--grace %v: want a positive duration", job.Grace)
			}
			if job.Timeout < 0 {
				return fmt.Errorf("--timeout %v: want 0 (none) or a positive duration", job.Timeout)
			}
			job.Program, job.Args = args[0], args[1:]
			job.Stdout, job.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			job.Untagged = !tag
			job.NoBind = !bind

			// Stop the job on SIGINT and SIGTERM, remembering which came.
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(sigs)
			got := make(chan os.Signal, 1)
			go func() {
				select {
				case s := <-sigs:
					got <- s
					cancel()
				case <-ctx.Done():
				}
			}()

			code, err := job.Run(ctx)
			if err == nil {
				return nil
			}
			var re *launch.RankError
			switch {
			case errors.As(err, &re):
				fmt.Fprintf(cmd.ErrOrStderr(), "scoll run: %v\n", re)
			case errors.Is(err, launch.ErrTimeout):
				fmt.Fprintf(cmd.ErrOrStderr(), "scoll run: timed out after %v; job killed\n", job.Timeout)
			case errors.Is(err, launch.ErrInterrupted):
				select {
				case s := <-got:
					fmt.Fprintf(cmd.ErrOrStderr(), "scoll run: %v signal received; job stopped\n", s)
					if n, ok := s.(syscall.Signal); ok {
						code = 128 + int(n)
					}
				default:
					fmt.Fprintf(cmd.ErrOrStderr(), "scoll run: interrupted; job stopped\n")
				}
			default:
				return err // nothing was started
			}
			if code == 0 {
				code = 1
			}
			exit(code)
			return nil
		},
	}
	f := cmd.Flags()
	f.SetInterspersed(false) // flags after PROGRAM are its own, even without --
	addNPFlag(f, &job.NP, 1, "number of ranks (processes) to start")
	f.IntVar(&job.RanksPerNode, "ranks-per-node", 0, "pretend to be several nodes: rank r gets SCOLL_HOSTNAME=node<r/K> (SplitByNode and node-aware features read it); 0 leaves the host name alone")
	f.StringVar(&job.Rendezvous, "rendezvous", "", "SCOLL_RENDEZVOUS for the ranks: file:DIR or tcp:HOST:PORT (default: file: and a fresh temporary directory)")
	f.DurationVar(&job.Timeout, "timeout", 0, "stop the whole job after this long (0: no limit)")
	f.DurationVar(&job.Grace, "grace", launch.DefaultGrace, "time between SIGTERM and SIGKILL when stopping the ranks")
	f.BoolVar(&bind, "bind", true, "bind each rank to its own share of the CPUs when there are at least as many CPUs as ranks (Linux)")
	f.BoolVar(&tag, "tag-output", true, `prefix each output line with "[RANK] "`)
	return cmd
}
