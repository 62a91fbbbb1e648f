package algorithms

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/scoll/scoll/internal/sizes"
)

// A Knob is a numeric parameter of the algorithms that a call may set: it
// is declared once (DefineKnob, next to the field of Params it sets), and
// every layer derives its part from the declaration: the library's option
// (scoll.WithKnob, and a typed option such as WithRadix), the plan cache's
// key and the calls' signature, the environment override
// SCOLL_<NAME>_<COLLECTIVE>, the tuning of scoll bench, the workloads of
// the simulators and the command line's --<name> flag.
type Knob struct {
	// Name is lowercase with hyphens: the flag --name and, in capitals
	// with underscores, the environment variable SCOLL_NAME_<COLLECTIVE>.
	Name string
	// Doc is a one-line description (the flag's help).
	Doc string
	// Bytes marks a size in bytes, written with K, M or G suffixes.
	Bytes bool
	// Min is the least value a call may set (0 always means unset: the
	// algorithms' defaults).
	Min int
	// Apply, if not nil, sets a field of p from a value v ≥ Min (Params.Knob
	// reads the value without one).
	Apply func(p *Params, v int)

	index int
}

// MaxKnobs is the number of knobs KnobValues holds.
const MaxKnobs = 8

// KnobValues holds a value for every knob, by Knob.Index (0: unset).
type KnobValues [MaxKnobs]int

var knobs []*Knob

// DefineKnob declares a knob. Like Register it panics on a malformed or
// duplicate declaration, in package initialisation.
func DefineKnob(k Knob) *Knob {
	if k.Name == "" || k.Name != strings.ToLower(k.Name) || strings.ContainsAny(k.Name, " _") || k.Doc == "" {
		panic(fmt.Sprintf("algorithms: bad knob %q", k.Name))
	}
	if LookupKnob(k.Name) != nil || len(knobs) == MaxKnobs {
		panic(fmt.Sprintf("algorithms: knob %q: duplicate, or more than MaxKnobs", k.Name))
	}
	k.index = len(knobs)
	kp := &k
	knobs = append(knobs, kp)
	return kp
}

// Knobs returns the declared knobs in declaration order.
func Knobs() []*Knob { return knobs }

// LookupKnob returns the knob called name (nil: none).
func LookupKnob(name string) *Knob {
	for _, k := range knobs {
		if k.Name == name {
			return k
		}
	}
	return nil
}

// Index is k's place in KnobValues.
func (k *Knob) Index() int { return k.index }

// Env returns the prefix of k's environment variables: SCOLL_NAME_ (the
// collective's name in capitals follows).
func (k *Knob) Env() string {
	return "SCOLL_" + strings.ToUpper(strings.ReplaceAll(k.Name, "-", "_")) + "_"
}

// Check reports a value a call may not set: non-zero and below Min.
func (k *Knob) Check(v int) error {
	if v != 0 && v < k.Min {
		return fmt.Errorf("%s %d (want ≥ %d)", k.Name, v, k.Min)
	}
	return nil
}

// Parse reads a value of k: a count, or for a size in bytes one as
// ParseBytes reads it; it must be at least Min (and not 0). Its errors
// start with the knob's name: `segment "12Q": unknown unit "Q" ...`.
func (k *Knob) Parse(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil && k.Bytes {
		if n, err = ParseBytes(s); err != nil {
			return 0, fmt.Errorf("%s %w", k.Name, err)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("%s %q: not a number", k.Name, s)
	}
	if n == 0 || k.Check(n) != nil {
		return 0, fmt.Errorf("%s %q: want at least %d", k.Name, s, max(k.Min, 1))
	}
	return n, nil
}

// ParseBytes reads a byte count in scoll's grammar of sizes (package
// internal/sizes, as --sizes reads them): a number with an optional unit
// B, K, KiB, M, MiB, G, GiB, T or TiB (binary multiples), such as 64K or
// 1.5M, that comes out a whole number of bytes.
func ParseBytes(s string) (int, error) {
	return sizes.One(s, 1<<50)
}

// Apply sets the knobs set in v on p: their values (Params.Knobs) and the
// fields they name.
func (v *KnobValues) Apply(p *Params) {
	for _, k := range knobs {
		if x := v[k.index]; x != 0 {
			p.Knobs[k.index] = x
			if k.Apply != nil {
				k.Apply(p, x)
			}
		}
	}
}

// Knob returns the value of knob k for p (0: unset, the algorithm's
// default).
func (p *Params) Knob(k *Knob) int { return p.Knobs[k.index] }

// Set sets knob name to x (ParseBytes-style strings for byte knobs go
// through Knob.Parse first).
func (v *KnobValues) Set(name string, x int) error {
	k := LookupKnob(name)
	if k == nil {
		return fmt.Errorf("no knob %q (have %s)", name, KnobNames())
	}
	if err := k.Check(x); err != nil {
		return err
	}
	v[k.index] = x
	return nil
}

// KnobNames lists the knobs' names, comma-separated.
func KnobNames() string {
	var s []string
	for _, k := range knobs {
		s = append(s, k.Name)
	}
	return strings.Join(s, ", ")
}

// The knobs of the registered algorithms.
var (
	// RadixKnob is the radix of k-nomial algorithms and the fan-out of
	// k-ary trees (Params.Radix).
	RadixKnob = DefineKnob(Knob{Name: "radix", Doc: "radix of k-nomial and fan-out of k-ary algorithms (default: each algorithm's own)",
		Min: 2, Apply: func(p *Params, v int) { p.Radix = v }})
	// SegmentKnob is the segment size in bytes of pipelined algorithms,
	// rounded down to whole elements (Params.Segment).
	SegmentKnob = DefineKnob(Knob{Name: "segment", Doc: "segment size in bytes of pipelined algorithms, like 64K (default: each algorithm's own)",
		Bytes: true, Min: 1, Apply: func(p *Params, v int) { p.Segment = max(1, v/max(p.ElemSize, 1)) }})
)
