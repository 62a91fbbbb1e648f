package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/tuning"
)

// Overrides replace a communicator's default choices for the calls that
// do not make them: per collective an algorithm (SCOLL_ALGORITHM_<COLL>), a
// segment size in bytes (SCOLL_SEGMENT_<COLL>) and a radix
// (SCOLL_RADIX_<COLL>), and a tuning file's rules (SCOLL_TUNING). An
// algorithm, segment size or radix the call gives always wins; the
// environment's algorithm wins over the tuning file's, which wins over the
// cost model.
type Overrides struct {
	Alg      [schedule.NumCollectives]string
	SegBytes [schedule.NumCollectives]int
	Radix    [schedule.NumCollectives]int
	Tuning   *tuning.File
}

// The environment variables of Overrides: a prefix and the collective's
// name in capitals (SCOLL_ALGORITHM_ALLREDUCE, SCOLL_SEGMENT_BCAST,
// SCOLL_RADIX_REDUCE), and the tuning file's path.
const (
	EnvAlgorithm = "SCOLL_ALGORITHM_"
	EnvSegment   = "SCOLL_SEGMENT_"
	EnvRadix     = "SCOLL_RADIX_"
	EnvTuning    = "SCOLL_TUNING"
)

// OverridesFromEnv reads the overrides from the environment (getenv): nil
// when none is set. A variable naming an unknown collective, an algorithm
// not registered for its collective, a size or radix that is not a
// positive number, or a tuning file that cannot be read fails with
// errs.InvalidArgument naming the variable.
func OverridesFromEnv(environ []string, getenv func(string) string) (*Overrides, error) {
	var ov Overrides
	set := false
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		for _, pre := range []string{EnvAlgorithm, EnvSegment, EnvRadix} {
			suffix, ok := strings.CutPrefix(name, pre)
			if !ok {
				continue
			}
			c, ok := schedule.ParseCollective(strings.ToLower(suffix))
			if !ok {
				return nil, fmt.Errorf("%w: %s: no collective %q (have %s)", errs.InvalidArgument, name, strings.ToLower(suffix), collNames())
			}
			if err := ov.set(c, pre, val); err != nil {
				return nil, fmt.Errorf("%w: %s=%s: %w", errs.InvalidArgument, name, val, err)
			}
			set = true
		}
	}
	if path := getenv(EnvTuning); path != "" {
		f, err := tuning.Read(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvTuning, err)
		}
		ov.Tuning, set = f, true
	}
	if !set {
		return nil, nil
	}
	return &ov, nil
}

// set records one variable's value for collective c.
func (ov *Overrides) set(c schedule.Collective, pre, val string) error {
	switch pre {
	case EnvAlgorithm:
		if _, ok := algorithms.Lookup(c, val); !ok {
			var names []string
			for _, in := range algorithms.List(c) {
				names = append(names, in.Name)
			}
			return fmt.Errorf("%s has no algorithm %q (have %s)", c, val, strings.Join(names, ", "))
		}
		ov.Alg[c] = val
	default:
		n, err := parseSize(val)
		if err != nil || n < 1 || pre == EnvRadix && n < 2 {
			return fmt.Errorf("want a positive %s", map[string]string{EnvSegment: "size in bytes (like 64K)", EnvRadix: "radix of at least 2"}[pre])
		}
		if pre == EnvSegment {
			ov.SegBytes[c] = n
		} else {
			ov.Radix[c] = n
		}
	}
	return nil
}

// parseSize reads a byte count with an optional K, M or G suffix (binary).
func parseSize(s string) (int, error) {
	mult := 1
	t := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(s)), "B"), "I")
	if t != "" {
		switch t[len(t)-1] {
		case 'K':
			mult, t = 1<<10, t[:len(t)-1]
		case 'M':
			mult, t = 1<<20, t[:len(t)-1]
		case 'G':
			mult, t = 1<<30, t[:len(t)-1]
		}
	}
	n, err := strconv.Atoi(t)
	return n * mult, err
}

// collNames lists the collectives' names as the variables take them.
func collNames() string {
	var names []string
	for c := range schedule.NumCollectives {
		names = append(names, strings.ToUpper(c.String()))
	}
	return strings.Join(names, ", ")
}

// overrideAlg returns the algorithm the overrides choose for call p with
// options o (the call names none), and what chose it: the environment's
// for p's collective, else the tuning file's, each only when it can run p
// and o does not exclude it; "" when the cost model is to choose.
func (ov *Overrides) overrideAlg(p *algorithms.Params, o *Options) (name, by string) {
	if ov == nil || o.Alg != "" {
		return "", ""
	}
	if a := ov.Alg[p.Coll]; a != "" && !o.Excludes(a) {
		// One that cannot run the call (a power-of-two algorithm on
		// another size) leaves it to the tuning file or the cost model.
		if in, _ := algorithms.Lookup(p.Coll, a); in.Check(p) == nil {
			return a, EnvAlgorithm + strings.ToUpper(p.Coll.String())
		}
	}
	a, ok := ov.Tuning.Lookup(p.Coll, p.Size, tuning.MessageBytes(&p.Spec, p.ElemSize))
	if !ok || o.Excludes(a) {
		return "", ""
	}
	if in, ok := algorithms.Lookup(p.Coll, a); !ok || in.Check(p) != nil {
		return "", ""
	}
	return a, "tuning file"
}
