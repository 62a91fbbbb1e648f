package workload

import (
	"fmt"
	"strings"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/sim"
	"github.com/scoll/scoll/topology"
)

// Workload is one collective call to simulate: every rank runs the named
// algorithm on Bytes bytes (the per-rank size in the registry's sense: the
// buffer of bcast, reduce and allreduce, each rank's block of gathers and
// scatters, the block per pair of alltoall), as elements of Elem bytes.
type Workload struct {
	Coll      schedule.Collective
	Algorithm string
	Size      int // ranks
	Bytes     int
	// Elem is the element size in bytes (0: 1). Bytes must be a multiple
	// of it. Pipelined algorithms cut their default segments (64 KiB) in
	// elements of this size, as the library does for a call with this
	// element type; the simulators and the GOAL export must be given
	// ElemSize() to turn the schedule's element counts into bytes.
	Elem int
	Root int
	// Knobs are the values of the algorithms' knobs (algorithms.Knobs:
	// the radix, the segment size in bytes, ...; 0: each algorithm's
	// default), as a call's options or the environment set them.
	Knobs algorithms.KnobValues
	// Grid is the process grid of topology-aware algorithms (nil: their
	// default); see GridFor.
	Grid []int
	// Placement tells the path algorithms where the ranks sit on the
	// machine (nil: the grid, rank r on node r); see PlacementFor.
	Placement *algorithms.Placement
	// Arrivals are the ranks' arrival times in seconds, for the
	// arrival-aware algorithms (clairvoyant; nil: balanced). Segments is
	// their segment count (0: the default under Machine) and RoundTime
	// their round time in seconds (0: α + B(β + γ) under Machine).
	Arrivals  []float64
	Segments  int
	RoundTime float64
	// Machine is the α-β-γ model of those defaults and of the optimal
	// bcast's packet count (zero: algorithms.InProcess).
	Machine algorithms.Machine
}

// PlacementFor returns the placement of ranks ranks mapped by m (nil: rank r
// on node r) onto a torus, mesh or hypercube, or nil for other topologies.
func PlacementFor(t topology.Topology, m topology.Mapping, ranks int) *algorithms.Placement {
	g, ok := t.(topology.Grid)
	if !ok {
		return nil
	}
	nodes := make([]int, ranks)
	for r := range nodes {
		nodes[r] = r
		if m != nil {
			nodes[r] = m.Node(r)
		}
	}
	return &algorithms.Placement{Machine: g.Dims(), Nodes: nodes}
}

// GridFor returns the process grid that matches a topology for ranks ranks
// placed in XYZ order: the torus, mesh or hypercube dimensions when the
// ranks fill every node, else nil (the algorithms' default grid).
func GridFor(t topology.Topology, ranks int) []int {
	g, ok := t.(topology.Grid)
	if !ok || ranks != t.Nodes() {
		return nil
	}
	return g.Dims()
}

// ElemSize returns the element size in bytes of w's schedules: Elem, or 1.
func (w Workload) ElemSize() int { return max(w.Elem, 1) }

// Generator returns the schedule generator of w, or an error if the
// algorithm does not exist or cannot run w. Its schedules count elements
// of ElemSize() bytes.
func (w Workload) Generator() (schedule.Generator, error) {
	in, ok := algorithms.Lookup(w.Coll, w.Algorithm)
	if !ok {
		var names []string
		for _, a := range algorithms.List(w.Coll) {
			names = append(names, a.Name)
		}
		return nil, fmt.Errorf("%w: %s has no algorithm %q (have %s)", sim.ErrConfig, w.Coll, w.Algorithm, strings.Join(names, ", "))
	}
	if w.Coll.Vector() {
		return nil, fmt.Errorf("%w: %s needs per-rank counts; simulate its regular form", sim.ErrConfig, w.Coll)
	}
	if w.Bytes < 0 {
		return nil, fmt.Errorf("%w: negative size %d", sim.ErrConfig, w.Bytes)
	}
	if w.Elem < 0 {
		return nil, fmt.Errorf("%w: element size %d", sim.ErrConfig, w.Elem)
	}
	p, err := w.params()
	if err != nil {
		return nil, err
	}
	if err := in.Check(&p); err != nil {
		return nil, err
	}
	if in.Name == algorithms.Clairvoyant {
		arrivalAware(&p, w)
	}
	gen := in.Generator(p)
	if w.Coll != schedule.Barrier {
		return gen, nil
	}
	// A barrier's messages are empty; the executor sends them.
	return func(b *schedule.Builder) {
		b.KeepEmpty()
		gen(b)
	}, nil
}

// params returns the parameters of w's call, whatever the algorithm.
func (w Workload) params() (algorithms.Params, error) {
	es := w.ElemSize()
	if w.Bytes%es != 0 {
		return algorithms.Params{}, fmt.Errorf("%w: size %d B is not a multiple of the element size %d B", sim.ErrConfig, w.Bytes, es)
	}
	p := algorithms.Params{Spec: schedule.Spec{Coll: w.Coll, Size: w.Size, Root: w.Root, Count: w.Bytes / es},
		Commutative: true, ElemSize: es, Grid: w.Grid, Placement: w.Placement, Machine: w.Machine}
	w.Knobs.Apply(&p)
	if err := p.Spec.Check(); err != nil {
		return p, fmt.Errorf("%w: %w", sim.ErrConfig, err)
	}
	return p, nil
}

// Default returns the registry entry the library's default choice takes
// for w's call on a transport, communicator and call form offering caps,
// under the cost model w.Machine (zero: algorithms.InProcess): the same
// function (algorithms.Select) the planner of a real call evaluates, so a
// simulation of "the default" simulates what a real run with these
// capabilities runs. It fails when no entry fits.
func Default(w Workload, caps algorithms.Caps) (*algorithms.Info, error) {
	p, err := w.params()
	if err != nil {
		return nil, err
	}
	m := w.Machine
	if m == (algorithms.Machine{}) {
		m = algorithms.InProcess
	}
	in := algorithms.Select(&p, m, caps)
	if in == nil {
		return nil, fmt.Errorf("%w: no %s algorithm fits %d ranks", sim.ErrConfig, w.Coll, w.Size)
	}
	return in, nil
}

// GoldenParams returns the small call whose results golden files pin for
// algorithm in: the first of P = 5, 4, 6, 8 it takes, 3 elements per
// block (none for barrier), the last rank as root, uneven counts for the
// vector collectives (1, 2, 3, 1, ... per rank; alltoallv's matrix
// (i+2j) mod 4 + i mod 2), a commutative operator on 4-byte elements.
func GoldenParams(in *algorithms.Info) (algorithms.Params, bool) {
	for _, p := range []int{5, 4, 6, 8} {
		spec := schedule.Spec{Coll: in.Coll, Size: p, Count: 3}
		if in.Coll.Rooted() {
			spec.Root = p - 1
		}
		switch {
		case in.Coll == schedule.Barrier:
			spec.Count = 0
		case in.Coll == schedule.Alltoallv:
			spec.Count = 0
			spec.Matrix = make([][]int, p)
			for i := range spec.Matrix {
				spec.Matrix[i] = make([]int, p)
				for j := range p {
					spec.Matrix[i][j] = (i+2*j)%4 + i%2
				}
			}
		case in.Coll.Vector():
			spec.Count = 0
			spec.Counts = make([]int, p)
			for i := range spec.Counts {
				spec.Counts[i] = i%3 + 1
			}
		}
		ap := algorithms.Params{Spec: spec, Commutative: true, ElemSize: 4}
		if spec.Check() == nil && in.Check(&ap) == nil {
			return ap, true
		}
	}
	return algorithms.Params{}, false
}

// arrivalAware sets the segments and arrival times of an arrival-aware
// algorithm's parameters from w.
func arrivalAware(p *algorithms.Params, w Workload) {
	m := w.Machine
	if m == (algorithms.Machine{}) {
		m = algorithms.InProcess
	}
	p.SetArrivals(m, w.Segments, w.Arrivals, w.RoundTime)
}
