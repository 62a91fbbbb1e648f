package plan

import (
	"fmt"
	"time"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/arrival"
	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/internal/names"
	"github.com/scoll/scoll/schedule"
)

// Options are the options of one collective call, as the public call
// options set them. The zero Options is the default: the algorithm chosen
// by cost, each algorithm's own segment size and radix, and the
// communicator's grid and placement.
type Options struct {
	// Simple says that the call gave no option but perhaps an algorithm's
	// name (parseOptions sets it from IsSimple): its plan then depends on
	// the call's arguments and Alg alone, which lets a Cache find it by a
	// small key (Cache.Last).
	Simple bool
	// Alg is the registry name of the algorithm ("": choose by cost).
	Alg string
	// Inner names the algorithm the node-aware algorithms (hier) run among
	// the node leaders ("": the default rule's choice).
	Inner string
	// Exclude names algorithms the default choice must not take (the
	// shared-memory paths exchange and meet among them).
	Exclude []string
	// Knobs are the values of the algorithms' knobs the call sets (0:
	// unset; algorithms.Knobs: the radix, the segment size in bytes, ...).
	Knobs algorithms.KnobValues
	// UnknownKnob is a knob name the call gave that no knob has ("":
	// none); Check reports it.
	UnknownKnob string
	// RadixVector is radix-k's radix vector (nil: its default); its
	// product must be the number of ranks, and it excludes Radix.
	RadixVector []int
	// Segments is the number of segments of segmented algorithms, when
	// SegmentsSet (it must then be at least 1, and the segment knob unset).
	Segments    int
	SegmentsSet bool
	// Arrivals are the ranks' arrival times at the call, for the
	// arrival-aware algorithms (clairvoyant): one per rank, none negative,
	// any origin (nil: balanced, or predicted).
	Arrivals []time.Duration
	// RoundTime is the time of one round of the arrival-aware algorithms
	// (receive and combine one segment), when RoundTimeSet (it must then be
	// positive); otherwise the round time comes from the machine model.
	RoundTime    time.Duration
	RoundTimeSet bool
	// CallSite names the call site whose arrivals are measured and
	// predicted ("": none); ShareEvery is how many of its calls pass
	// between two sharings of the measurements (0: 1), and NewPredictor
	// makes its predictor at its first call (nil: SMA over 5 calls).
	CallSite     string
	ShareEvery   int
	NewPredictor func() arrival.Predictor
	// LogP is the model the fibonacci trees are built for (nil: the
	// communicator's default, algorithms.DefaultLogP).
	LogP *algorithms.LogP
	// Grid is the call's own process grid (nil: the communicator's).
	Grid []int
	// Place is the call's own placement (nil: the communicator's).
	Place *algorithms.Placement
	// SigKind is the kind of the call's signature (Hash.Sig; 0: the
	// collective's): the library's own calls on behalf of another (a
	// constructor's agreement: SigConstructor) say so to ranks that
	// called something else.
	SigKind uint8
	// Chosen, when not nil, receives the registry name of the algorithm
	// the call runs once it is prepared.
	Chosen *string
}

// IsSimple reports whether o gives at most an algorithm's name (Alg).
func (o *Options) IsSimple() bool {
	return o.Inner == "" && o.Exclude == nil && o.Knobs == (algorithms.KnobValues{}) && o.UnknownKnob == "" &&
		o.RadixVector == nil && o.Segments == 0 && !o.SegmentsSet && o.Arrivals == nil && o.RoundTime == 0 &&
		!o.RoundTimeSet && o.CallSite == "" && o.ShareEvery == 0 && o.NewPredictor == nil && o.LogP == nil &&
		o.Grid == nil && o.Place == nil && o.SigKind == 0 && o.Chosen == nil
}

// Check checks the options of a call of coll on size ranks, all but the
// algorithm's name (which New checks against the registry): an excluded
// name no collective has, or the chosen algorithm excluded, a knob set
// below its least value (a negative segment size, a radix below 2) fails
// with errs.InvalidArgument, and so do a radix vector with an entry below
// 2, a product other than size or set together with the radix, and a grid
// or placement that does not fit size ranks. Only the call's own
// grid and placement are checked; a communicator's were checked when it
// was made.
func (o *Options) Check(coll fmt.Stringer, size int) error {
	if err := o.checkExclude(); err != nil {
		return err
	}
	if o.UnknownKnob != "" {
		var valid []string
		for _, k := range algorithms.Knobs() {
			valid = append(valid, k.Name)
		}
		return fmt.Errorf("%w: WithKnob: %w", errs.InvalidArgument, names.Unknown("knob", o.UnknownKnob, "", valid))
	}
	for _, k := range algorithms.Knobs() {
		if err := k.Check(o.Knobs[k.Index()]); err != nil {
			return Invalid("%v", err)
		}
	}
	if o.Inner != "" {
		if c, ok := coll.(schedule.Collective); ok {
			if _, known := algorithms.Lookup(c, o.Inner); !known {
				return fmt.Errorf("%w: WithInner: %w", errs.InvalidArgument, names.Unknown("algorithm", o.Inner, c.String()+"'s node leaders", AlgorithmNames(c)))
			}
		}
	}
	if o.RadixVector != nil {
		if r := o.Knobs[algorithms.RadixKnob.Index()]; r != 0 {
			return Invalid("radix %d together with radix vector %v (give one)", r, o.RadixVector)
		}
		if err := algorithms.CheckRadixVector(o.RadixVector, size); err != nil {
			return err
		}
	}
	if err := o.checkArrivals(size); err != nil {
		return err
	}
	if o.LogP != nil {
		if err := algorithms.CheckLogP(*o.LogP); err != nil {
			return err
		}
	}
	if o.Grid != nil {
		if err := algorithms.CheckGrid(o.Grid, size); err != nil {
			return err
		}
	}
	if o.Place != nil {
		if err := algorithms.CheckPlacement(o.Place, size); err != nil {
			return err
		}
	}
	return nil
}

// checkArrivals checks the options of the arrival-aware algorithms.
func (o *Options) checkArrivals(size int) error {
	if o.SegmentsSet {
		if o.Segments < 1 {
			return Invalid("%d segments (want ≥ 1)", o.Segments)
		}
		if b := o.Knobs[algorithms.SegmentKnob.Index()]; b != 0 {
			return Invalid("a segment count (%d) together with a segment size (%d B): give one", o.Segments, b)
		}
	}
	if o.ShareEvery < 0 {
		return Invalid("arrivals shared every %d calls (want ≥ 1)", o.ShareEvery)
	}
	if o.RoundTimeSet && o.RoundTime <= 0 {
		return Invalid("round time %v (want > 0)", o.RoundTime)
	}
	if o.Arrivals != nil {
		if len(o.Arrivals) != size {
			return Invalid("%d arrival times for %d ranks", len(o.Arrivals), size)
		}
		for r, a := range o.Arrivals {
			if a < 0 {
				return Invalid("negative arrival time %v of rank %d", a, r)
			}
		}
	}
	return nil
}

// CheckOnly checks the options of a call that runs one algorithm, named
// only, whatever the options say (the chain collectives): Alg must be
// empty or only, and the rest is checked as Check does.
func (o *Options) CheckOnly(coll fmt.Stringer, size int, only string) error {
	if o.Alg != "" && o.Alg != only {
		return fmt.Errorf("%w: %w", errs.InvalidArgument, names.Unknown("algorithm", o.Alg, coll.String(), []string{only}))
	}
	return o.Check(coll, size)
}

// Invalid returns an error wrapping errs.InvalidArgument: "scoll: invalid
// argument: " and the message. It does not name the call: the public API
// adds the caller's rank and the call's name (errs.At).
func Invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errs.InvalidArgument, fmt.Sprintf(format, args...))
}

// unsupported is Invalid for errs.Unsupported.
func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errs.Unsupported, fmt.Sprintf(format, args...))
}

// NeedsMachineModel reports whether a call with options o takes anything
// from the communicator's machine model: the clairvoyant reduce does for
// its default segment count, and for the round time that turns arrival
// times into rounds when none is given; the fibonacci trees do for their
// LogP parameters when the call gives none.
func (o *Options) NeedsMachineModel() bool {
	switch o.Alg {
	case algorithms.Clairvoyant:
		return !o.SegmentsSet || o.Arrivals != nil && !o.RoundTimeSet
	case algorithms.Fibonacci:
		return o.LogP == nil
	}
	return false
}
