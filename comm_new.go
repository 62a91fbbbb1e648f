package scoll

import (
	"context"
	"time"

	"github.com/scoll/scoll/internal/comm"
	"github.com/scoll/scoll/internal/plan"
	"github.com/scoll/scoll/split"
)

// SplitOption configures Split.
type SplitOption func(*splitConfig)

type splitConfig struct {
	opts  split.Options
	stats *SplitStats
	rep   *comm.SplitReport
}

// WithSplitAlgorithm picks the split algorithm by name: "allgather" (the
// conventional one of MPICH and Open MPI), "merge" or "cheng" (Sack's); see
// SplitAlgorithms. Every rank must pick the same.
func WithSplitAlgorithm(name string) SplitOption {
	return func(c *splitConfig) { c.opts.Algorithm = name }
}

// WithSorters sets the number of sorting ranks of the cheng algorithm (at
// most the parent's size; 0 picks the default).
func WithSorters(p int) SplitOption { return func(c *splitConfig) { c.opts.Sorters = p } }

// WithDistributedGroup makes the new communicators keep their membership
// in Sack's distributed table: groups of groupSize ranks share one table,
// each rank holding about 1/groupSize of it and asking the owner for an
// address it does not hold (answers are cached). groupSize 1 asks for a
// replicated table (every rank holds every address); 0 lets the size
// decide (the default).
// A rank answers the others' lookups until it closes the communicator.
func WithDistributedGroup(groupSize int) SplitOption {
	return func(c *splitConfig) { c.opts.GroupSize = groupSize }
}

// WithSplitStats makes Split fill s with this rank's part of the split.
func WithSplitStats(s *SplitStats) SplitOption { return func(c *splitConfig) { c.stats = s } }

// SplitStats describe one rank's part of a Split.
type SplitStats struct {
	// Algorithm is the split algorithm that ran.
	Algorithm string
	// Messages and Bytes count what this rank sent in the split algorithm
	// (not in the agreement on options and context id that precedes it).
	Messages, Bytes int64
	// Phases are the algorithm's phases on this rank with their times.
	Phases []SplitPhase
	// Total is the time of the whole call on this rank.
	Total time.Duration
	// Group names the representation of the new communicator ("table",
	// "distributed:16"; "" for an undefined color) and GroupBytes is the
	// memory it holds on this rank.
	Group      string
	GroupBytes int
}

// SplitPhase is a named part of a split and its time on this rank.
type SplitPhase struct {
	Name string
	Time time.Duration
}

// SplitAlgorithmInfo describes a registered split algorithm.
type SplitAlgorithmInfo struct {
	Name, Doc, Source string
	// Phases names the phases SplitStats reports for it, in order.
	Phases []string
}

// SplitAlgorithms lists the registered split algorithms by name.
func SplitAlgorithms() []SplitAlgorithmInfo {
	var out []SplitAlgorithmInfo
	for _, in := range split.List() {
		out = append(out, SplitAlgorithmInfo{Name: in.Name, Doc: in.Doc, Source: in.Source, Phases: in.Phases})
	}
	return out
}

// Split partitions c: the ranks that pass the same color form one new
// communicator, ordered by key and, for equal keys, by rank in c. A rank
// with a negative color (Undefined) gets (nil, nil). Split is collective
// over c: every rank must call it, with the same options. The new
// communicators are full communicators (every collective and algorithm,
// point-to-point messages, Close) with their own message space: messages
// of different communicators never match.
//
// Errors reach every rank: bad options on one rank fail the call on all
// (ErrInvalidArgument), and so do options that differ between ranks
// (ErrMismatch).
func (c *Comm) Split(ctx context.Context, color, key int, opts ...SplitOption) (*Comm, error) {
	cfg := splitOptions(opts)
	d, err := c.core().Split(ctx, color, key, &cfg.opts, cfg.report(), plan.NewHash())
	return cfg.done(d, at(c, "Split", err))
}

// splitOptions applies opts.
func splitOptions(opts []SplitOption) *splitConfig {
	var cfg splitConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	return &cfg
}

// report returns where the split reports this rank's part (nil: nowhere).
func (cfg *splitConfig) report() *comm.SplitReport {
	if cfg.stats == nil {
		return nil
	}
	cfg.rep = &comm.SplitReport{}
	return cfg.rep
}

// done returns the split's result, filling the stats asked for.
func (cfg *splitConfig) done(d *comm.Comm, err error) (*Comm, error) {
	if r := cfg.rep; r != nil && r.Algorithm != "" {
		st := cfg.stats
		*st = SplitStats{Algorithm: r.Algorithm, Messages: r.Stats.Messages, Bytes: r.Stats.Bytes, GroupBytes: r.Stats.GroupBytes,
			Total: r.Total, Group: r.Group}
		for _, p := range r.Stats.Phases {
			st.Phases = append(st.Phases, SplitPhase{Name: p.Name, Time: p.Time})
		}
	}
	return wrap(d), err
}

// Dup returns a communicator with the same ranks in the same order and a
// message space of its own. It is collective over c.
func (c *Comm) Dup(ctx context.Context) (*Comm, error) {
	d, err := c.core().Dup(ctx)
	return wrap(d), at(c, "Dup", err)
}

// Create returns the communicator of the ranks of c listed in ranks: rank i
// of the result is ranks[i] of c. Every rank of c must call it with the
// same list of distinct ranks; the ranks not in the list get (nil, nil).
// Lists that are invalid on some rank fail on every rank
// (ErrInvalidArgument), and lists that differ between ranks fail with
// ErrMismatch.
func (c *Comm) Create(ctx context.Context, ranks []int) (*Comm, error) {
	d, err := c.core().Create(ctx, ranks)
	return wrap(d), at(c, "Create", err)
}

// TranslateRanks returns the ranks in other of the ranks of c listed in
// ranks (MPI_Group_translate_ranks): Undefined for those that are not
// members of other. It is local when both communicators' members are known
// here; with distributed tables it asks their owners (one lookup round for
// c's, one request to each of other's P' block owners for other); a chain
// (WithChainGroup) is walked: a request per hop for c's ranks, n − 1 in
// sequence for other's, remembered afterwards.
func (c *Comm) TranslateRanks(ranks []int, other *Comm) ([]int, error) {
	r, err := c.core().TranslateRanks(ranks, other.core())
	return r, at(c, "TranslateRanks", err)
}

// SplitGrid splits c, seen as a row-major process grid of the sizes dims
// (the last dimension varying fastest, as MPI's Cartesian topologies
// number ranks), into the sub-grids that keep the dimensions marked in
// keep (MPI_Cart_sub): with dims {R, C}, keep {false, true} gives each
// rank its row's communicator, {true, false} its column's. The ranks of a
// sub-grid are numbered row-major in the kept dimensions, and the
// topology-aware algorithms know its grid (WithGrid is its default). It is
// collective over c.
func (c *Comm) SplitGrid(ctx context.Context, dims []int, keep []bool) (*Comm, error) {
	d, err := c.core().SplitGrid(ctx, dims, keep)
	return wrap(d), at(c, "SplitGrid", err)
}
