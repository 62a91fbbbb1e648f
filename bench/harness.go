package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/scoll/scoll"
)

// What every harness shares: its configuration (Common, embedded in each
// harness's own), what it returns (Results: rows and skips), how it tells
// its progress (Progress), and how its rows are written (Layout and
// Writer, format.go). A harness keeps only what it measures:
//
//	Run            collectives' latency per algorithm and size (Config, Result)
//	RunSplit       communicator splits (SplitConfig, SplitResult)
//	RunSortPhases  the phases of cheng's parallel sort (SortPhasesConfig, SortPhasesRow)
//	RunImbalance   reductions under arrival patterns (ImbalanceConfig, ImbalancePoint)
//	RunPredicted   reductions with predicted arrivals (PredictedConfig, PredictedRow)

// Common is the configuration every harness shares; each harness's
// configuration embeds it. A harness's documentation lists the fields it
// takes and their defaults; setting another one is an error wrapping
// ErrConfig, so that no field is silently ignored.
type Common struct {
	// NP is the number of in-process ranks (0: the harness's default).
	NP int
	// World, when set, runs the harness as this process's rank of a job
	// of processes (the communicator of scoll.Init) instead of on NP
	// goroutines: every rank of World calls it with the same
	// configuration, and NP is World.Size().
	World *scoll.Comm
	// Algorithms are the registry names to run (nil: the harness's
	// default).
	Algorithms []string
	// Sizes are message sizes in bytes per rank (nil: the harness's
	// default).
	Sizes []int
	// Reps is the number of measurements of one configuration: timed
	// calls, splits, sorts or runs (0: the harness's default).
	Reps int
	// Warmup is the number of untimed calls before the measurements (0:
	// the harness's default, negative: none).
	Warmup int
	// Budget bounds the time of one configuration's measurements (0: the
	// harness's default).
	Budget time.Duration
	// Seed seeds what the harness draws at random.
	Seed uint64
	// MaxMemory skips, before allocating anything, the configurations
	// whose estimated memory over all ranks exceeds it (0:
	// DefaultMaxMemory, negative: no limit).
	MaxMemory int64
	// Progress, if set, is told of each step before it runs, and once
	// more when the run ends (Done == Total).
	Progress func(Progress)
	// OnSkip, if set, is given each configuration skipped as soon as it
	// is (the Results hold them too). Each harness's configuration also
	// has OnRow, which is given each row as soon as it is measured: a
	// caller streams them (to a Writer) instead of waiting for the end.
	OnSkip func(Skip)
}

// Progress tells which step a harness is about to run.
type Progress struct {
	// Done is the number of steps finished (or skipped); Total is their
	// number. Done == Total says the run ended.
	Done, Total int
	// Step describes the step about to run: "ring 8K B", "cheng/auto,
	// repetition 2 of 5" ("" at the end).
	Step string
}

// Results are what a harness returns: its rows in the order measured, and
// the configurations it skipped, with why.
type Results[R any] struct {
	Rows    []R
	Skipped []Skip
}

// Skip is a configuration a harness did not measure, and why.
type Skip struct {
	// Algorithm is the algorithm skipped.
	Algorithm string `json:"algorithm"`
	// Bytes is the size skipped, or -1 when the algorithm was skipped at
	// every size.
	Bytes  int    `json:"bytes"`
	Reason string `json:"reason"`
	// Memory is, for a configuration skipped for Common.MaxMemory, the
	// estimate that exceeded it (nil for other reasons).
	Memory *Footprint
}

// String describes the skip in one line.
func (s Skip) String() string {
	if s.Bytes < 0 {
		return fmt.Sprintf("skipped %s: %s", s.Algorithm, s.Reason)
	}
	return fmt.Sprintf("skipped %s at %d bytes: %s", s.Algorithm, s.Bytes, s.Reason)
}

// The fields of Common, as a harness names those it takes.
const (
	takesNP uint = 1 << iota
	takesWorld
	takesAlgorithms
	takesSizes
	takesReps
	takesWarmup
	takesBudget
	takesSeed
	takesMaxMemory
)

// defaults are a harness's use of Common: its name, the fields it takes,
// and the values of those left zero (a zero NP or Reps default leaves
// the field zero: an error for NP, the harness's own rule for Reps).
type defaults struct {
	harness  string
	takes    uint
	np, reps int
	sizes    []int
}

// normalize checks c against the harness's use d and fills in its
// defaults: NP from World or d.np (at least 1), Sizes from d.sizes (none
// negative, at least one), Reps from d.reps (not negative), Budget not
// negative, MaxMemory 0 as DefaultMaxMemory.
func (c *Common) normalize(d defaults) error {
	for _, f := range []struct {
		bit  uint
		name string
		set  bool
	}{
		{takesNP, "NP", c.NP != 0}, {takesWorld, "World", c.World != nil}, {takesAlgorithms, "Algorithms", c.Algorithms != nil},
		{takesSizes, "Sizes", c.Sizes != nil}, {takesReps, "Reps", c.Reps != 0}, {takesWarmup, "Warmup", c.Warmup != 0},
		{takesBudget, "Budget", c.Budget != 0}, {takesSeed, "Seed", c.Seed != 0}, {takesMaxMemory, "MaxMemory", c.MaxMemory != 0},
	} {
		if f.set && d.takes&f.bit == 0 {
			return fmt.Errorf("%w: %s takes no %s", ErrConfig, d.harness, f.name)
		}
	}
	if c.World != nil {
		c.NP = c.World.Size()
	}
	if c.NP == 0 {
		c.NP = d.np
	}
	if d.takes&takesNP != 0 && c.NP < 1 {
		return fmt.Errorf("%w: np %d < 1", ErrConfig, c.NP)
	}
	if c.Sizes == nil {
		c.Sizes = d.sizes
	}
	for _, s := range c.Sizes {
		if s < 0 {
			return fmt.Errorf("%w: negative size %d", ErrConfig, s)
		}
	}
	if d.takes&takesSizes != 0 && len(c.Sizes) == 0 {
		return fmt.Errorf("%w: no sizes", ErrConfig)
	}
	if c.Reps == 0 {
		c.Reps = d.reps
	}
	if c.Reps < 0 {
		return fmt.Errorf("%w: %d repetitions", ErrConfig, c.Reps)
	}
	if c.Budget < 0 {
		return fmt.Errorf("%w: time budget %v < 0", ErrConfig, c.Budget)
	}
	if d.takes&takesMaxMemory != 0 && c.MaxMemory == 0 {
		c.MaxMemory = DefaultMaxMemory
	}
	return nil
}

// run runs body on the harness's ranks: this process's rank of World,
// or NP in-process ranks (scoll.Run with opts), whose memory goes back to
// the system after a large world (releaseWorld).
func (c *Common) run(ctx context.Context, body func(context.Context, *scoll.Comm) error, opts ...scoll.Option) error {
	if c.World != nil {
		return body(ctx, c.World)
	}
	defer releaseWorld(c.NP)
	return scoll.Run(ctx, c.NP, body, opts...)
}

// step tells Progress that step done of total is about to run.
func (c *Common) step(done, total int, format string, a ...any) {
	if c.Progress != nil {
		c.Progress(Progress{Done: done, Total: total, Step: fmt.Sprintf(format, a...)})
	}
}

// ended tells Progress that the run ended.
func (c *Common) ended(total int) {
	if c.Progress != nil {
		c.Progress(Progress{Done: total, Total: total})
	}
}

// skip adds s to res and streams it (OnSkip).
func skip[R any](c *Common, res *Results[R], s Skip) {
	res.Skipped = append(res.Skipped, s)
	if c.OnSkip != nil {
		c.OnSkip(s)
	}
}

// add adds row r to res and streams it (onRow, the harness's OnRow).
func add[R any](res *Results[R], onRow func(R), r R) {
	res.Rows = append(res.Rows, r)
	if onRow != nil {
		onRow(r)
	}
}
