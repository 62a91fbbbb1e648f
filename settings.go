package scoll

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/scoll/scoll/internal/plan"
	"github.com/scoll/scoll/tuning"
)

// Environment variables read by Run, Init and NewComm, as MPI libraries
// read their MCA parameters and NCCL its NCCL_ALGO: they change what a
// program's calls do without recompiling it.
//
//	SCOLL_ALGORITHM_<COLLECTIVE>=name  the algorithm of the calls that name
//	                                   none (SCOLL_ALGORITHM_ALLREDUCE=ring)
//	SCOLL_SEGMENT_<COLLECTIVE>=bytes   their segment size (64K)
//	SCOLL_RADIX_<COLLECTIVE>=k         their radix
//	SCOLL_TUNING=rules.json            a tuning file (package tuning) for the
//	                                   default choice
//	SCOLL_VERBOSE=1                    log each algorithm choice to stderr
//
// <COLLECTIVE> is a collective's name in capitals: BCAST, REDUCE,
// ALLREDUCE, GATHER, GATHERV, SCATTER, SCATTERV, ALLGATHER, ALLGATHERV,
// ALLTOALL, ALLTOALLV, REDUCESCATTER, REDUCESCATTERV, SCAN, EXSCAN,
// BARRIER. A call's own WithAlgorithm, WithSegmentSize, WithSegments or
// WithRadix always wins; the environment's algorithm wins over the tuning
// file's, which wins over the cost model. An algorithm that cannot run a
// call (a power-of-two algorithm on another size) leaves that call to the
// tuning file or the cost model. An unknown collective or algorithm, a bad
// number or an unreadable tuning file makes Run and Init fail with
// ErrInvalidArgument naming the variable (and every call on NewComm's
// communicator, which returns no error).
const (
	EnvAlgorithmPrefix = plan.EnvAlgorithm
	EnvSegmentPrefix   = plan.EnvSegment
	EnvRadixPrefix     = plan.EnvRadix
	EnvTuning          = plan.EnvTuning
	EnvVerbose         = "SCOLL_VERBOSE"
)

// WithTuning makes the default choice of algorithm follow the rules of f
// (package tuning; scoll bench --tune-out writes them) where one applies,
// instead of SCOLL_TUNING's file. nil keeps SCOLL_TUNING's.
func WithTuning(f *tuning.File) Option { return func(c *runConfig) { c.tuning = f } }

// settings are what a rank's communicators take from the environment and
// the options: the overrides of the default choices, where choices are
// logged, and the error of a bad environment (NewComm's calls return it).
type settings struct {
	over *plan.Overrides
	log  *slog.Logger
	err  error
}

// newSettings reads the environment and cfg's options.
func newSettings(cfg *runConfig) *settings {
	s := &settings{log: cfg.logger}
	if os.Getenv(EnvVerbose) != "" && os.Getenv(EnvVerbose) != "0" {
		s.log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.over, s.err = plan.OverridesFromEnv(os.Environ(), os.Getenv)
	if s.err == nil && cfg.tuning != nil {
		if err := cfg.tuning.Check(); err != nil {
			s.err = fmt.Errorf("WithTuning: %w", err)
			return s
		}
		if s.over == nil {
			s.over = &plan.Overrides{}
		}
		s.over.Tuning = cfg.tuning
	}
	return s
}

// logChoice logs, at debug level, the algorithm a newly planned call of c
// runs and what chose it.
func (c *Comm) logChoice(cl *call, by string, bytes int) {
	log := c.rs.set.log
	if !log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	name := cl.info.Name
	if cl.exch {
		name = "exchange"
	}
	if (cl.exch || cl.meet) && by == byCostModel {
		by = "shared-memory rule"
	}
	log.Debug("scoll: algorithm", "collective", cl.coll.String(), "algorithm", name, "by", by,
		"ranks", c.size, "bytes", bytes, "rank", c.rank)
}
