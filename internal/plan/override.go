package plan

import (
	"fmt"
	"strings"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/internal/names"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/tuning"
)

// Overrides replace a communicator's default choices for the calls that
// do not make them: per collective an algorithm (SCOLL_ALGORITHM_<COLL>)
// and a value of every knob (SCOLL_<KNOB>_<COLL>: SCOLL_SEGMENT_BCAST,
// SCOLL_RADIX_REDUCE), and a tuning file's rules (SCOLL_TUNING). An
// algorithm or knob the call gives always wins; the environment's
// algorithm wins over the tuning file's, which wins over the cost model.
type Overrides struct {
	Alg    [schedule.NumCollectives]string
	Knobs  [schedule.NumCollectives]algorithms.KnobValues
	Tuning *tuning.File
}

// The environment variables of Overrides: the algorithm's prefix (the
// collective's name in capitals follows: SCOLL_ALGORITHM_ALLREDUCE) and the
// tuning file's path. A knob's prefix is Knob.Env (SCOLL_RADIX_).
const (
	EnvAlgorithm = "SCOLL_ALGORITHM_"
	EnvTuning    = "SCOLL_TUNING"
)

// OverridesFromEnv reads the overrides from the environment (getenv): nil
// when none is set. A variable naming an unknown collective, an algorithm
// not registered for its collective, a knob value that is not a number of
// at least the knob's least value, or a tuning file that cannot be read
// fails with errs.InvalidArgument naming the variable.
func OverridesFromEnv(environ []string, getenv func(string) string) (*Overrides, error) {
	var ov Overrides
	set := false
	prefixes := []string{EnvAlgorithm}
	for _, k := range algorithms.Knobs() {
		prefixes = append(prefixes, k.Env())
	}
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		for i, pre := range prefixes {
			suffix, ok := strings.CutPrefix(name, pre)
			if !ok {
				continue
			}
			c, ok := schedule.ParseCollective(strings.ToLower(suffix))
			if !ok {
				return nil, fmt.Errorf("%w: %s: %w", errs.InvalidArgument, name, names.Unknown("collective", strings.ToLower(suffix), "", collNames()))
			}
			var err error
			if i == 0 {
				err = ov.setAlg(c, val)
			} else {
				k := algorithms.Knobs()[i-1]
				ov.Knobs[c][k.Index()], err = k.Parse(val)
			}
			if err != nil {
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

// setAlg records the algorithm of collective c.
func (ov *Overrides) setAlg(c schedule.Collective, val string) error {
	if _, ok := algorithms.Lookup(c, val); !ok {
		return names.Unknown("algorithm", val, c.String(), AlgorithmNames(c))
	}
	ov.Alg[c] = val
	return nil
}

// collNames lists the collectives' names (lower case, as names.Unknown
// compares them).
func collNames() []string {
	var list []string
	for c := range schedule.NumCollectives {
		list = append(list, c.String())
	}
	return list
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
