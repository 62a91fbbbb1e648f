// Package tuning reads and writes tuning files: per collective, number of
// ranks and message size, the algorithm measured fastest. scoll bench
// --tune-out writes one; a program takes it with the environment variable
// SCOLL_TUNING (or the option scoll.WithTuning), and the default choice of
// algorithm then follows its rules instead of the cost model wherever a
// rule applies. An algorithm a call names (WithAlgorithm) or the
// environment names (SCOLL_ALGORITHM_<COLLECTIVE>) still wins.
//
// The format is JSON:
//
//	{
//	  "version": 1,
//	  "source": "scoll bench --op allreduce --np 8 --tune-out rules.json, 2026-11-26",
//	  "rules": [
//	    {"collective": "allreduce", "ranks": 8, "min_bytes": 0, "algorithm": "recursive-doubling"},
//	    {"collective": "allreduce", "ranks": 8, "min_bytes": 65536, "algorithm": "ring"}
//	  ]
//	}
//
// A rule applies to calls of its collective (the names of scoll bench --op
// and of the registry: allreduce, bcast, reduce, allgather, alltoall,
// reducescatter, gather, scatter, scan, exscan, barrier, and the
// v-variants) whose message size in bytes is at least min_bytes and below
// the next larger min_bytes of a rule with the same collective and ranks;
// the smallest min_bytes covers smaller messages too. The message size is
// OSU's, as scoll bench counts it: the buffer for bcast, reduce,
// allreduce, scan and exscan; each rank's contribution for allgather and
// gather; each rank's block for scatter; the block sent to each peer for
// alltoall; each rank's whole send buffer for reducescatter; 0 for
// barrier; for the v-variants the mean block. Rules for exactly the communicator's number of ranks are used
// when there are any; otherwise those of the nearest number of ranks (by
// ratio; ties to the smaller).
package tuning

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/internal/names"
	"github.com/scoll/scoll/schedule"
)

// Version is the format version this package reads and writes.
const Version = 1

// Native is the algorithm name of a rule that leaves the calls it covers
// to the MPI library scoll runs in front of (the MPI drop-in library,
// cmd/libscollmpi, forwards them to PMPI_; scoll tune --mpi writes such
// rules where the library's own collective measured faster). scoll's own
// default choice skips such rules: the cost model chooses there.
const Native = "native"

// File is a tuning file.
type File struct {
	// Version is the format's version, Version.
	Version int `json:"version"`
	// Source says how the file was made (a command line and a date).
	Source string `json:"source,omitempty"`
	// Rules are the file's rules, in any order.
	Rules []Rule `json:"rules"`
}

// Rule chooses an algorithm for one collective on a number of ranks from
// a message size on.
type Rule struct {
	Collective string `json:"collective"`
	Ranks      int    `json:"ranks"`
	MinBytes   int    `json:"min_bytes"`
	Algorithm  string `json:"algorithm"`
}

// Read reads and checks the tuning file at path.
func Read(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: tuning file: %w", errs.InvalidArgument, err)
	}
	f, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("tuning file %s: %w", path, err)
	}
	return f, nil
}

// Parse decodes and checks a tuning file: its version, and for every rule
// a known collective, at least one rank, a size not negative and an
// algorithm registered for the collective; two rules may not share a
// collective, ranks and size. Errors wrap errs.InvalidArgument.
func Parse(b []byte) (*File, error) {
	var f File
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %w", errs.InvalidArgument, err)
	}
	if err := f.Check(); err != nil {
		return nil, err
	}
	return &f, nil
}

// Check reports the first problem of f (errs.InvalidArgument), or nil.
func (f *File) Check() error {
	if f.Version != Version {
		return fmt.Errorf("%w: tuning file version %d, this build reads %d", errs.InvalidArgument, f.Version, Version)
	}
	seen := make(map[Rule]bool, len(f.Rules))
	for i, r := range f.Rules {
		c, ok := schedule.ParseCollective(r.Collective)
		switch {
		case !ok:
			var colls []string
			for c := range schedule.NumCollectives {
				colls = append(colls, c.String())
			}
			return fmt.Errorf("%w: rule %d: %w", errs.InvalidArgument, i, names.Unknown("collective", r.Collective, "", colls))
		case r.Ranks < 1:
			return fmt.Errorf("%w: rule %d: %d ranks", errs.InvalidArgument, i, r.Ranks)
		case r.MinBytes < 0:
			return fmt.Errorf("%w: rule %d: min_bytes %d", errs.InvalidArgument, i, r.MinBytes)
		}
		if _, ok := algorithms.Lookup(c, r.Algorithm); !ok && r.Algorithm != Native {
			var valid []string
			for _, in := range algorithms.List(c) {
				valid = append(valid, in.Name)
			}
			valid = append(valid, Native)
			return fmt.Errorf("%w: rule %d: %w", errs.InvalidArgument, i, names.Unknown("algorithm", r.Algorithm, c.String(), valid))
		}
		k := Rule{Collective: c.String(), Ranks: r.Ranks, MinBytes: r.MinBytes}
		if seen[k] {
			return fmt.Errorf("%w: rule %d: a second rule for %s on %d ranks from %d bytes", errs.InvalidArgument, i, c, r.Ranks, r.MinBytes)
		}
		seen[k] = true
	}
	return nil
}

// Write writes f to path as indented JSON, its rules sorted by collective,
// ranks and size.
func (f *File) Write(path string) error {
	g := *f
	g.Version = Version
	g.Rules = slices.Clone(f.Rules)
	slices.SortFunc(g.Rules, func(a, b Rule) int {
		if c := strings.Compare(a.Collective, b.Collective); c != 0 {
			return c
		}
		if a.Ranks != b.Ranks {
			return a.Ranks - b.Ranks
		}
		return a.MinBytes - b.MinBytes
	})
	b, err := json.MarshalIndent(&g, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Lookup returns the algorithm f's rules choose for collective c on ranks
// ranks with messages of bytes bytes (see the package comment), and
// whether a rule applies. The name may be Native.
func (f *File) Lookup(c schedule.Collective, ranks, bytes int) (string, bool) {
	rules := f.For(c, ranks)
	if len(rules) == 0 {
		return "", false
	}
	return Choose(rules, bytes), true
}

// For returns the rules of f that apply to collective c on ranks ranks:
// those for exactly ranks ranks, else for the nearest number of ranks (by
// ratio; ties to the smaller), sorted by MinBytes; nil when f has no rule
// for c. Choose picks among them by size.
func (f *File) For(c schedule.Collective, ranks int) []Rule {
	if f == nil {
		return nil
	}
	name := c.String()
	best, bestD := -1, math.Inf(1)
	for _, r := range f.Rules {
		if rc, ok := schedule.ParseCollective(r.Collective); !ok || rc.String() != name {
			continue
		}
		d := math.Abs(math.Log(float64(r.Ranks) / float64(max(ranks, 1))))
		if d < bestD || d == bestD && r.Ranks < best {
			best, bestD = r.Ranks, d
		}
	}
	var out []Rule
	for _, r := range f.Rules {
		if rc, _ := schedule.ParseCollective(r.Collective); rc.String() == name && r.Ranks == best {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b Rule) int { return a.MinBytes - b.MinBytes })
	return out
}

// Choose returns the algorithm of the rule, among rules (as For returns
// them: one collective and rank count, sorted by MinBytes, at least one),
// that covers bytes: the last whose MinBytes is at most bytes, or the
// first for smaller messages.
func Choose(rules []Rule, bytes int) string {
	alg := rules[0].Algorithm
	for _, r := range rules[1:] {
		if r.MinBytes > bytes {
			break
		}
		alg = r.Algorithm
	}
	return alg
}

// Add appends a rule for collective c on ranks ranks from minBytes on,
// unless the rule before it (the last added for the same collective and
// ranks) already chooses the same algorithm: measured sizes added in
// increasing order make one rule per run of sizes with one fastest
// algorithm.
func (f *File) Add(c schedule.Collective, ranks, minBytes int, algorithm string) {
	for i := len(f.Rules) - 1; i >= 0; i-- {
		r := f.Rules[i]
		if r.Collective == c.String() && r.Ranks == ranks {
			if r.Algorithm == algorithm && r.MinBytes <= minBytes {
				return
			}
			break
		}
	}
	f.Rules = append(f.Rules, Rule{Collective: c.String(), Ranks: ranks, MinBytes: minBytes, Algorithm: algorithm})
}

// MessageBytes returns the message size of a call as the rules count it
// (see the package comment): spec's counts of elemSize-byte elements.
func MessageBytes(spec *schedule.Spec, elemSize int) int {
	switch spec.Coll {
	case schedule.Barrier:
		return 0
	case schedule.ReduceScatterBlock:
		return spec.Count * spec.Size * elemSize
	case schedule.ReduceScatter, schedule.Gatherv, schedule.Scatterv, schedule.Allgatherv:
		n := 0
		for _, k := range spec.Counts {
			n += k
		}
		if spec.Coll == schedule.ReduceScatter {
			return n * elemSize
		}
		return n / max(len(spec.Counts), 1) * elemSize
	case schedule.Alltoallv:
		n, pairs := 0, 0
		for _, row := range spec.Matrix {
			for _, k := range row {
				n, pairs = n+k, pairs+1
			}
		}
		return n / max(pairs, 1) * elemSize
	}
	return spec.Count * elemSize
}
