package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/schedule"
)

// checkExclude checks the names the default choice must skip: each must
// name a registered algorithm of some collective (a typo is an error, a
// name this collective lacks is not), and the algorithm the call names
// must not be among them.
func (o *Options) checkExclude(coll fmt.Stringer) error {
	for _, name := range o.Exclude {
		if !registered(name) {
			return Invalid(coll, "WithoutAlgorithm: no algorithm is called %q", name)
		}
		if name == o.Alg {
			return Invalid(coll, "algorithm %q both chosen and excluded", name)
		}
	}
	return nil
}

// Excludes reports whether the options exclude algorithm name from the
// default choice.
func (o *Options) Excludes(name string) bool { return slices.Contains(o.Exclude, name) }

// registered reports whether some collective has an algorithm called name.
func registered(name string) bool {
	for c := range schedule.NumCollectives {
		if _, ok := algorithms.Lookup(c, name); ok {
			return true
		}
	}
	return false
}

// excludeKey renders the excluded names for a key.
func excludeKey(names []string) string {
	if len(names) == 0 {
		return ""
	}
	s := slices.Clone(names)
	slices.Sort(s)
	return strings.Join(s, ",")
}

// choose is Choose with the options' exclusions applied to the default
// choice.
func choose(p *algorithms.Params, o *Options, m algorithms.Machine) (*algorithms.Info, error) {
	if o.Alg != "" || len(o.Exclude) == 0 {
		return Choose(p, o.Alg, m)
	}
	sel := *p
	sel.InPlace = false
	info := algorithms.SelectExcept(&sel, m, o.Excludes)
	if info == nil {
		return nil, unsupported(p.Coll, "no registered algorithm fits (excluded: %s)", strings.Join(o.Exclude, ", "))
	}
	return info, nil
}
