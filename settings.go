package scoll

import (
	"github.com/scoll/scoll/internal/comm"
	"github.com/scoll/scoll/internal/plan"
	"github.com/scoll/scoll/tuning"
)

// Environment variables read by Run, Init and NewComm, as MPI libraries
// read their MCA parameters and NCCL its NCCL_ALGO: they change what a
// program's calls do without recompiling it.
//
//	SCOLL_ALGORITHM_<COLLECTIVE>=name  the algorithm of the calls that name
//	                                   none (SCOLL_ALGORITHM_ALLREDUCE=ring)
//	SCOLL_<KNOB>_<COLLECTIVE>=value    their value of a knob (Knobs):
//	                                   SCOLL_SEGMENT_BCAST=64K,
//	                                   SCOLL_RADIX_REDUCE=8
//	SCOLL_TUNING=rules.json            a tuning file (package tuning) for the
//	                                   default choice
//	SCOLL_VERBOSE=1                    log each algorithm choice to stderr
//
// <COLLECTIVE> is a collective's name in capitals: BCAST, REDUCE,
// ALLREDUCE, GATHER, GATHERV, SCATTER, SCATTERV, ALLGATHER, ALLGATHERV,
// ALLTOALL, ALLTOALLV, REDUCESCATTER, REDUCESCATTERV, SCAN, EXSCAN,
// BARRIER; <KNOB> is a knob's name in capitals, hyphens as underscores. A
// call's own WithAlgorithm, WithKnob (WithSegmentSize, WithRadix) or
// WithSegments always wins; the environment's algorithm wins over the tuning
// file's, which wins over the cost model. An algorithm that cannot run a
// call (a power-of-two algorithm on another size) leaves that call to the
// tuning file or the cost model. An unknown collective or algorithm, a bad
// number or an unreadable tuning file makes Run and Init fail with
// ErrInvalidArgument naming the variable (and every call on NewComm's
// communicator, which returns no error).
const (
	EnvAlgorithmPrefix = plan.EnvAlgorithm
	EnvSegmentPrefix   = "SCOLL_SEGMENT_" // the segment knob's (algorithms.SegmentKnob.Env())
	EnvRadixPrefix     = "SCOLL_RADIX_"   // the radix knob's
	EnvTuning          = plan.EnvTuning
	EnvVerbose         = comm.EnvVerbose
)

// WithTuning makes the default choice of algorithm follow the rules of f
// (package tuning; scoll bench --tune-out writes them) where one applies,
// instead of SCOLL_TUNING's file. nil keeps SCOLL_TUNING's.
func WithTuning(f *tuning.File) Option { return func(c *runConfig) { c.tuning = f } }
