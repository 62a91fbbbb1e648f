// Package plan prepares the collective calls of package scoll: it checks a
// call's arguments and options, chooses its algorithm, builds its plan and
// signature, and keeps a communicator's plans for reuse. It knows nothing
// of element types or buffers: a call reaches it as lengths (Args), an
// element size and an operator's identity (Call).
//
// Errors wrap the sentinels of package internal/errs, which package scoll
// exports (ErrInvalidArgument, ErrUnsupported), with the details only:
// "scoll: invalid argument: len(send)=2 != len(recv)=3"; the public API
// adds the rank and the call's name (errs.At). Unknown names read as
// package internal/names words them.
package plan

import (
	"fmt"
	"math"
	"time"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/exec"
	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/internal/names"
	"github.com/scoll/scoll/schedule"
)

// Call is one rank's collective call as planning sees it.
type Call struct {
	// Spec is the call's spec from Args.Check (Size set).
	Spec schedule.Spec
	// Rank is the caller's rank.
	Rank int
	// ElemSize is the element size in bytes.
	ElemSize int
	// Commutative tells whether the operator is commutative (true for
	// collectives that do not reduce).
	Commutative bool
	// OpID identifies the operator (0 for collectives that do not reduce);
	// ranks must agree on it.
	OpID uint64
	// Caps are what the call's transport, communicator and form offer the
	// native paths (algorithms.Rule). Every rank of a call has the same.
	Caps algorithms.Caps
}

// Defaults are what a communicator gives the calls that do not set them.
type Defaults struct {
	// Grid is the process grid of the topology-aware algorithms (nil:
	// algorithms.DefaultGrid).
	Grid []int
	// Nodes[r] is the node (host) of rank r, for the node-aware
	// algorithms (nil: not known; every rank on its own node).
	Nodes []int
	// Place is where the ranks sit on the machine (nil: rank r on node r).
	Place *algorithms.Placement
	// Machine is the cost model of the default algorithm choice.
	Machine algorithms.Machine
	// Rounds returns the model of the arrival-aware algorithms' round time
	// (nil: Machine).
	Rounds func() algorithms.Machine
	// LogP returns the LogP model of the fibonacci trees when a call names
	// them without one (nil, or a nil result: algorithms.DefaultLogP).
	LogP func() *algorithms.LogP
	// Over replaces the default choices of the calls that make none (nil:
	// none).
	Over *Overrides
}

// Entry is a built plan: the registry entry chosen for a call, the path it
// runs on, its plan and the signature every rank's messages of the call
// carry. An Entry in a Cache is shared by every call with its Key and is
// not modified.
type Entry struct {
	// Info is the registry entry chosen.
	Info *algorithms.Info
	// Path is how the call runs: Info's native path where its Rule lets it
	// run natively under the call's Caps, else Messages.
	Path algorithms.Path
	// Plan is, on the Messages path, the plan of the schedule for this
	// rank (nil on a native path).
	Plan *exec.Plan
	// Sig is the call's signature, equal on every rank of a call.
	Sig uint64
	// By says what chose the algorithm: "call" (the call named it), "cost
	// model", "rule" (a native path's Rule), an environment variable
	// (SCOLL_ALGORITHM_<COLL>) or "tuning file".
	By string
	// Peers translates the plan's ranks into transport addresses (nil on a
	// world, whose ranks are the addresses; see exec.Call.Peers). The
	// caller fills it in before it puts the entry in a Cache.
	Peers []int32
	key   Key
	// fast is the entry's Fast key when it was made for a call without
	// options (hasFast); set before the entry is shared.
	fast    Fast
	hasFast bool
}

// New chooses the registry entry of call c with options o (checked by
// Options.Check) on a communicator with defaults d, the path it runs on
// under c.Caps, and builds its plan when that path is Messages. Choosing
// fails as Choose does; a schedule the algorithm cannot build for the call
// fails with errs.InvalidArgument.
func New(c *Call, o *Options, d *Defaults) (*Entry, error) {
	coll := c.Spec.Coll
	grid, place := o.Grid, o.Place
	if grid == nil {
		grid = d.Grid
	}
	if place == nil {
		place = d.Place
	}
	knobs := o.Knobs
	if ov := d.Over; ov != nil {
		for i, v := range ov.Knobs[coll] {
			// A segment count excludes a segment size, the radix vector a
			// radix: the call's own choice wins.
			if knobs[i] == 0 && !(o.SegmentsSet && i == algorithms.SegmentKnob.Index()) &&
				!(o.RadixVector != nil && i == algorithms.RadixKnob.Index()) {
				knobs[i] = v
			}
		}
	}
	p := algorithms.Params{Spec: c.Spec, Rank: c.Rank, Commutative: c.Commutative,
		RadixVector: o.RadixVector, ElemSize: c.ElemSize, Grid: grid, Placement: place, LogP: o.LogP,
		Machine: d.Machine, Nodes: d.Nodes, Inner: o.Inner}
	knobs.Apply(&p)
	by := "call"
	var info *algorithms.Info
	var err error
	if name, over := d.Over.overrideAlg(&p, o); name != "" {
		info, err = Choose(&p, name, d.Machine, c.Caps)
		by = over
	} else {
		info, err = choose(&p, o, d.Machine, c.Caps)
		if o.Alg == "" {
			by = "cost model"
			if info != nil && info.Path != algorithms.Messages {
				by = "rule"
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if p.LogP == nil && o.Alg == algorithms.Fibonacci && d.LogP != nil {
		p.LogP = d.LogP()
	}
	segments(&p, info, o, d)
	path := info.RunsAs(&p, c.Caps)
	// The signature every rank must agree on (in-place-ness may differ).
	h := NewHash()
	h.Add(uint64(coll), uint64(c.Spec.Count), uint64(c.Spec.Root), uint64(c.ElemSize), c.OpID, uint64(path), uint64(p.Radix), uint64(p.Segment),
		uint64(p.Segments), uint64(o.RoundTime))
	for _, v := range knobs {
		h.Add(uint64(v))
	}
	h.Str(info.Name)
	if o.Inner != "" {
		h.Str(o.Inner)
	}
	if d.Nodes != nil {
		h.Ints(d.Nodes) // ranks that disagree on nodes disagree on the call
	}
	h.Ints(o.RadixVector)
	if lp := p.LogP; lp != nil {
		h.Add(math.Float64bits(lp.L), math.Float64bits(lp.O), math.Float64bits(lp.G))
	}
	for _, a := range o.Arrivals {
		h.Add(uint64(a))
	}
	h.Ints(grid)
	if place != nil {
		h.Ints(place.Machine)
		h.Ints(place.Nodes)
	}
	if coll.Vector() && coll != schedule.Alltoallv {
		h.Ints(c.Spec.Counts)
		h.Ints(c.Spec.Displs)
	}
	kind := o.SigKind
	if kind == 0 {
		kind = CollKind(coll)
	}
	e := &Entry{Info: info, Path: path, Sig: h.Sig(kind), By: by}
	if path != algorithms.Messages {
		return e, nil
	}
	s, err := info.Schedule(&p)
	if err != nil {
		return nil, fmt.Errorf("%w: algorithm %q: %w", errs.InvalidArgument, info.Name, err)
	}
	e.Plan = exec.NewPlan(s)
	return e, nil
}

// CollKind is the signature kind of collective c (Hash.Sig).
func CollKind(c schedule.Collective) uint8 { return uint8(c) + 1 }

// SigCollective returns the collective whose call has signature sig, when
// its kind is a collective's.
func SigCollective(sig uint64) (schedule.Collective, bool) {
	k := SigKind(sig)
	if k == 0 || int(k) > int(schedule.NumCollectives) {
		return 0, false
	}
	return schedule.Collective(k - 1), true
}

// UnknownAlgorithm is the error for an algorithm name that collective coll
// has not registered: errs.InvalidArgument and names.Unknown's sentence,
// with suggestions and the valid names.
func UnknownAlgorithm(coll schedule.Collective, name string) error {
	return fmt.Errorf("%w: %w", errs.InvalidArgument, names.Unknown("algorithm", name, coll.String(), AlgorithmNames(coll)))
}

// AlgorithmNames lists the names of collective coll's registered
// algorithms, in the registry's order.
func AlgorithmNames(coll schedule.Collective) []string {
	var list []string
	for _, a := range algorithms.List(coll) {
		list = append(list, a.Name)
	}
	return list
}

// RoundTime returns the clairvoyant reduce's round time for call c with
// options o on a communicator with defaults d: o.RoundTime when set, else
// α + B(β + γ) under the round model for its segments of B bytes.
func RoundTime(c *Call, o *Options, d *Defaults) time.Duration {
	if o.RoundTimeSet {
		return o.RoundTime
	}
	p := algorithms.Params{Spec: c.Spec, Rank: c.Rank, Commutative: c.Commutative, ElemSize: c.ElemSize}
	m := d.Machine
	if d.Rounds != nil {
		m = d.Rounds()
	}
	if o.SegmentsSet {
		p.Segments = o.Segments
	}
	p.Segments = algorithms.ClairvoyantSegments(&p, m)
	return time.Duration(algorithms.ClairvoyantRound(&p, m) * float64(time.Second))
}

// segments sets the segmentation of p from the options: for clairvoyant
// the segment count (given, or its default under the round model) and the
// arrival times in units of the round time d = α + B(β + γ) (given by
// RoundTime, or from the round model, for segments of B bytes); for other
// segmented algorithms a segment count becomes a segment length.
func segments(p *algorithms.Params, info *algorithms.Info, o *Options, d *Defaults) {
	m := d.Machine
	if d.Rounds != nil && info.Name == algorithms.Clairvoyant && (o.Arrivals != nil && !o.RoundTimeSet || !o.SegmentsSet) { // NeedsMachineModel, with the chosen name
		m = d.Rounds()
	}
	if info.Name != algorithms.Clairvoyant {
		if o.SegmentsSet && p.Count > 0 {
			p.Segment = (p.Count + o.Segments - 1) / o.Segments
		}
		return
	}
	var secs []float64
	for _, a := range o.Arrivals {
		secs = append(secs, a.Seconds())
	}
	segs := 0
	if o.SegmentsSet {
		segs = o.Segments
	}
	p.SetArrivals(m, segs, secs, o.RoundTime.Seconds())
}

// Choose returns the registry entry that runs a call with parameters p on
// a transport, communicator and call form offering c: the entry named
// name, which must accept p, or for name "" the default choice
// (algorithms.Select: a native path whose Rule takes the call, else the
// message schedule the cost model m predicts fastest). The choice ignores
// p.InPlace, in which ranks may differ, so that every rank chooses alike.
// An unknown name fails with errs.InvalidArgument (listing the registered
// names); an entry that cannot run p fails with its Check's error
// (errs.Unsupported or errs.InvalidArgument); no fitting entry at all
// fails with errs.Unsupported.
func Choose(p *algorithms.Params, name string, m algorithms.Machine, c algorithms.Caps) (*algorithms.Info, error) {
	coll := p.Coll
	if name != "" {
		in, ok := algorithms.Lookup(coll, name)
		if !ok {
			return nil, UnknownAlgorithm(coll, name)
		}
		if err := in.Check(p); err != nil {
			return nil, err
		}
		return in, nil
	}
	sel := *p
	sel.InPlace = false
	info := algorithms.Select(&sel, m, c)
	if info == nil {
		return nil, unsupported("no registered algorithm fits")
	}
	return info, nil
}
