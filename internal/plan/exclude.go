package plan

import (
	"slices"
	"strings"
	"sync"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/schedule"
)

// checkExclude checks the names the default choice must skip: each must
// name a registered algorithm of some collective (a typo is an error, a
// name this collective lacks is not), and the algorithm the call names
// must not be among them.
func (o *Options) checkExclude() error {
	for _, name := range o.Exclude {
		if !registered(name) {
			return Invalid("WithoutAlgorithm: no algorithm is called %q", name)
		}
		if name == o.Alg {
			return Invalid("algorithm %q both chosen and excluded", name)
		}
	}
	return nil
}

// Excludes reports whether the options exclude algorithm name from the
// default choice.
func (o *Options) Excludes(name string) bool { return slices.Contains(o.Exclude, name) }

// registered reports whether some collective has an algorithm called name.
// The options are checked on every call, so the names are gathered once
// (the registry is complete after package initialisation).
func registered(name string) bool { return registeredNames()[name] }

var registeredNames = sync.OnceValue(func() map[string]bool {
	names := map[string]bool{}
	for c := range schedule.NumCollectives {
		for _, in := range algorithms.List(c) {
			names[in.Name] = true
		}
	}
	return names
})

// excludeKey renders the excluded names for a key, in the order given (the
// same names in another order only make another plan of the same call;
// one name costs no allocation).
func excludeKey(names []string) string { return strings.Join(names, ",") }

// choose is Choose with the options' exclusions applied to the default
// choice.
func choose(p *algorithms.Params, o *Options, m algorithms.Machine, c algorithms.Caps) (*algorithms.Info, error) {
	if o.Alg != "" || len(o.Exclude) == 0 {
		return Choose(p, o.Alg, m, c)
	}
	sel := *p
	sel.InPlace = false
	info := algorithms.SelectExcept(&sel, m, c, o.Excludes)
	if info == nil {
		return nil, unsupported("no registered algorithm fits (excluded: %s)", strings.Join(o.Exclude, ", "))
	}
	return info, nil
}
