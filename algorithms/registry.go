// Package algorithms holds scoll's collective algorithms and their registry.
//
// Every algorithm is a schedule builder: for one rank's Params it emits that
// rank's rounds into a schedule.Builder and does no I/O. The registry is the
// single source of truth read by the public API (WithAlgorithm lookup,
// Algorithms), the default selector, the command line, the documentation
// table and the test matrix.
package algorithms

import (
	"fmt"
	"slices"
	"strings"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/schedule"
)

// Requirement is a set of conditions an algorithm needs.
type Requirement uint16

const (
	// NeedsCommutative: the algorithm combines contributions out of rank order.
	NeedsCommutative Requirement = 1 << iota
	// NeedsPowerOfTwo: the number of ranks must be a power of two.
	NeedsPowerOfTwo
	// NeedsNodes: the algorithm is made for ranks grouped on nodes
	// (Params.Nodes). It runs correctly on any layout (without Nodes every
	// rank is its own node), but the default rule considers it only when
	// Nodes puts the ranks on several nodes with more than one rank on some
	// node, and then prefers it to the algorithms without the flag.
	NeedsNodes
)

// String lists the requirements in words ("-" for none).
func (r Requirement) String() string {
	var s []string
	if r&NeedsCommutative != 0 {
		s = append(s, "commutative op")
	}
	if r&NeedsPowerOfTwo != 0 {
		s = append(s, "power-of-two ranks")
	}
	if r&NeedsNodes != 0 {
		s = append(s, "node layout")
	}
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ", ")
}

// Params is everything one rank's schedule depends on.
type Params struct {
	schedule.Spec
	// Rank is the rank whose schedule is built.
	Rank int
	// Commutative tells whether the reduction operator is commutative.
	Commutative bool
	// Radix is the fan-out or radix of tree and k-nomial algorithms; 0 means
	// the algorithm's default.
	Radix int
	// RadixVector is radix-k's radix vector k (its product is Size); nil
	// means the algorithm's default.
	RadixVector []int
	// Segments is the number of segments of segmented algorithms that take
	// a count (clairvoyant); 0 means the algorithm's default.
	Segments int
	// LogP is the LogP model the fibonacci trees are built for (nil:
	// DefaultLogP).
	LogP *LogP
	// Arrivals are the ranks' arrival times at the call in units of the
	// round time (the earliest may be nonzero), for arrival-aware
	// algorithms (clairvoyant); nil means balanced arrivals.
	Arrivals []float64
	// Segment is the segment length in elements of pipelined algorithms; 0
	// means the algorithm's default.
	Segment int
	// ElemSize is the element size in bytes (used for default segment sizes).
	ElemSize int
	// Grid is the process grid of the topology-aware algorithms (rd-optimal,
	// rh-optimal, bucket, bucket3, bucket6): the dimension sizes, ranks
	// numbered in XYZ order with dimension 0 varying fastest. Nil means
	// DefaultGrid(Size, 3); others ignore it.
	Grid []int
	// Placement puts the ranks on the nodes of a machine's torus or mesh for
	// the path algorithms (rd-path, rd-paths, rh-path, rh-paths). Nil means
	// the grid, rank r on node r.
	Placement *Placement
	// Machine is the α-β-γ model of the defaults that depend on the
	// machine (the optimal bcast's packet count); zero means InProcess.
	// Select sets it to the model it compares costs under.
	Machine Machine
	// Nodes puts the ranks on nodes (hosts) for the node-aware algorithms
	// (hier): Nodes[r] >= 0 is the node of rank r, len(Nodes) == Size. The
	// numbers only tell which ranks share a node; a node's ranks need not be
	// consecutive. Nil means every rank on a node of its own. The default
	// rule prefers the node-aware algorithms when Nodes shows several nodes
	// and more than one rank on some node.
	Nodes []int
	// Knobs are the values of the knobs the call sets (KnobValues.Apply
	// sets them, and the fields the knobs name); Knob reads one. 0: unset.
	Knobs KnobValues
	// Inner names the algorithm the node-aware algorithms (hier) run among
	// the node leaders (an algorithm of the same collective, or of
	// allgatherv for an allgather over nodes of unequal sizes); "" means
	// the default rule's choice for the leaders' call.
	Inner string
}

// machine returns p's machine model (InProcess when unset).
func (p *Params) machine() Machine {
	if p.Machine == (Machine{}) {
		return InProcess
	}
	return p.Machine
}

// Cost is an α-β-γ cost: time = Alpha·α + Beta·β + Gamma·γ + Copy·β, where α
// is the per-message latency, β the time per byte sent on the critical path
// and γ the time per byte reduced. Copy counts the bytes the algorithm copies
// locally on the critical path (packing, rotations), which the classic model
// leaves out; they are charged like bytes sent, as a memory copy is what a
// message costs on shared memory.
type Cost struct {
	Alpha, Beta, Gamma float64
	Copy               float64
}

// Time evaluates the cost for the given machine parameters.
func (c Cost) Time(alpha, beta, gamma float64) float64 {
	return c.Alpha*alpha + (c.Beta+c.Copy)*beta + c.Gamma*gamma
}

// Path is how an entry's data moves when the call runs.
type Path uint8

const (
	// Messages: the algorithm's schedule runs over the transport's
	// point-to-point messages (package exec), on every transport.
	Messages Path = iota
	// ChainPath: the chain collectives of Moody et al. run the call over
	// the communicator's chain, a rank addressing only its neighbours and
	// the partners whose addresses travel with the data (internal/chain).
	ChainPath
	// ExchangePath: the transport's exchange (transport.Exchanger) runs
	// the call natively: every rank publishes its input and computes its
	// own result from all of them.
	ExchangePath
	// MeetPath: the transport's shared-memory meeting (transport.Meeter:
	// in-process ranks) runs the call natively: the last rank to arrive
	// combines every input and writes every rank's result.
	MeetPath

	// NumPaths is the number of paths.
	NumPaths = iota
)

// String returns the path's name as scoll algorithms prints it.
func (p Path) String() string {
	switch p {
	case ChainPath:
		return "chain"
	case ExchangePath:
		return "transport exchange"
	case MeetPath:
		return "transport meeting"
	}
	return "messages"
}

// Info describes one registered entry: a way to run a call.
type Info struct {
	Coll schedule.Collective
	// Name is lowercase with hyphens, unique per collective.
	Name string
	// Doc is a one-line description.
	Doc string
	// Source names the paper or system the algorithm comes from.
	Source string
	// Requires lists the conditions the algorithm needs.
	Requires Requirement
	// Linear marks algorithms with Θ(P) rounds per rank (Θ(P²) operations in
	// all), for which symbolic verification at very large P is expensive.
	Linear bool
	// Path is how the data moves. For a native path (any but Messages)
	// Build is the stand-in message schedule of the same data movement:
	// the verifier proves it, the simulators and cost models replay it,
	// and it runs where Rule does not let the path run natively.
	Path Path
	// Rule says when a native path runs natively and when the default
	// choice takes it (nil for Messages: the default choice takes the
	// cheapest message schedule by Cost). See Takes and When.
	Rule *Rule
	// Explicit algorithms run only when named (WithAlgorithm): the default
	// rule skips them (their schedule is made for circumstances the call
	// states, such as arrival times, or the α-β model favours them where
	// they measured slower: the optimal bcast's many short rounds).
	Explicit bool
	// Build emits the schedule of p.Rank into b.
	Build func(b *schedule.Builder, p *Params)
	// Cost returns the α-β-γ cost for p (bytes from p.ElemSize): that of
	// the schedule Build emits, for native paths too, so that the cost
	// models and simulators agree with it.
	Cost func(p *Params) Cost
}

var registry [schedule.NumCollectives][]*Info

// Register adds an algorithm. It panics on a duplicate or malformed entry:
// registration happens in package initialisation, so this is a programming
// error caught by every test run.
func Register(in Info) {
	if in.Name == "" || in.Name != strings.ToLower(in.Name) || strings.ContainsAny(in.Name, " _") {
		panic(fmt.Sprintf("algorithms: bad name %q", in.Name))
	}
	if in.Build == nil || in.Doc == "" || in.Cost == nil || in.Source == "" {
		panic(fmt.Sprintf("algorithms: %s/%s lacks Build, Doc, Source or Cost", in.Coll, in.Name))
	}
	if (in.Path == Messages) != (in.Rule == nil) || in.Path >= NumPaths {
		panic(fmt.Sprintf("algorithms: %s/%s: a native path needs a Rule, messages none", in.Coll, in.Name))
	}
	if _, ok := Lookup(in.Coll, in.Name); ok {
		panic(fmt.Sprintf("algorithms: duplicate %s/%s", in.Coll, in.Name))
	}
	p := in
	registry[in.Coll] = append(registry[in.Coll], &p)
}

// register adds in once for each of the collectives colls (an algorithm
// usually serves a collective and its v-variant alike).
func register(in Info, colls ...schedule.Collective) {
	for _, c := range colls {
		in.Coll = c
		Register(in)
	}
}

// List returns the algorithms registered for a collective, sorted by name.
func List(c schedule.Collective) []*Info {
	if c >= schedule.NumCollectives {
		return nil
	}
	out := slices.Clone(registry[c])
	slices.SortFunc(out, func(a, b *Info) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Lookup returns the algorithm of collective c called name.
func Lookup(c schedule.Collective, name string) (*Info, bool) {
	if c >= schedule.NumCollectives {
		return nil, false
	}
	for _, in := range registry[c] {
		if in.Name == name {
			return in, true
		}
	}
	return nil, false
}

// Check reports why the algorithm cannot run p: a grid, placement, radix
// vector or node layout that does not fit or an unknown inner algorithm
// (errs.InvalidArgument), or an unmet requirement (errs.Unsupported).
func (in *Info) Check(p *Params) error {
	if p.Grid != nil {
		if err := CheckGrid(p.Grid, p.Size); err != nil {
			return err
		}
	}
	if p.Placement != nil {
		if err := CheckPlacement(p.Placement, p.Size); err != nil {
			return err
		}
	}
	if p.RadixVector != nil {
		if err := CheckRadixVector(p.RadixVector, p.Size); err != nil {
			return err
		}
	}
	if p.Nodes != nil {
		if err := CheckNodes(p.Nodes, p.Size); err != nil {
			return err
		}
	}
	if in.Requires&NeedsNodes != 0 {
		if err := hierCheck(p); err != nil {
			return err
		}
	}
	if in.Requires&NeedsCommutative != 0 && p.Coll.Reduces() && !p.Commutative {
		return fmt.Errorf("%w: %s algorithm %q needs a commutative operator", errs.Unsupported, in.Coll, in.Name)
	}
	if in.Requires&NeedsPowerOfTwo != 0 && !isPow2(p.Size) {
		return fmt.Errorf("%w: %s algorithm %q needs a power-of-two number of ranks, have %d", errs.Unsupported, in.Coll, in.Name, p.Size)
	}
	return nil
}

// Generator returns a schedule.Generator that builds every rank's schedule of
// algorithm in for the call described by p (p.Rank is ignored).
func (in *Info) Generator(p Params) schedule.Generator {
	return func(b *schedule.Builder) {
		q := p
		q.Rank = b.Rank()
		in.Build(b, &q)
	}
}

// Schedule builds the schedule of p.Rank.
func (in *Info) Schedule(p *Params) (*schedule.Schedule, error) {
	if err := in.Check(p); err != nil {
		return nil, err
	}
	b := schedule.NewBuilder(p.Rank, p.Size)
	b.SetBounds(p.BufLens(p.Rank))
	if p.Coll == schedule.Barrier {
		b.KeepEmpty()
	}
	in.Build(b, p)
	return b.Schedule()
}

// Select returns the entry the default choice takes for call p on a
// transport, communicator and call form offering c: the first native path
// (in Path order) whose Rule takes the call by default, else among the
// message schedules whose requirements p meets the one with the least
// α-β-γ cost under the parameters m (ties broken by name). The node-aware
// algorithms (NeedsNodes) take part only when p.Nodes puts the ranks on
// several nodes with more than one rank on some node, and then win over
// the others (the single α of the model cannot tell the cheap messages
// inside a node from the dear ones between nodes). It returns nil when
// none fits. Explicit entries never run by default.
func Select(p *Params, m Machine, c Caps) *Info { return SelectExcept(p, m, c, nil) }

// SelectExcept is Select skipping the entries for which skip reports
// true (nil skips none).
func SelectExcept(p *Params, m Machine, c Caps, skip func(name string) bool) *Info {
	if p.Machine != m {
		q := *p
		q.Machine = m
		p = &q
	}
	list := List(p.Coll)
	var native *Info
	for _, in := range list {
		if in.Path == Messages || in.Explicit || (skip != nil && skip(in.Name)) || (native != nil && native.Path <= in.Path) {
			continue
		}
		if in.Takes(p, c) == Default && in.Check(p) == nil {
			native = in
		}
	}
	if native != nil {
		return native
	}
	var best *Info
	bestT := 0.0
	multi := multiNode(p.Nodes)
	for _, in := range list {
		aware := in.Requires&NeedsNodes != 0
		if in.Path != Messages || in.Explicit || (skip != nil && skip(in.Name)) || (aware && !multi) || in.Check(p) != nil {
			continue
		}
		t := in.Cost(p).Time(m.Alpha, m.Beta, m.Gamma)
		bestAware := best != nil && best.Requires&NeedsNodes != 0
		if best == nil || aware && !bestAware || aware == bestAware && t < bestT {
			best, bestT = in, t
		}
	}
	return best
}

// Machine holds α (seconds per message), β (seconds per byte) and γ (seconds
// per byte reduced).
type Machine struct {
	Alpha, Beta, Gamma float64
}

// InProcess is the machine model the default rule uses for in-process ranks:
// a message costs about 0.3 µs, copying runs at about 8 GB/s and reducing at
// about 4 GB/s.
var InProcess = Machine{Alpha: 0.3e-6, Beta: 1.0 / 8e9, Gamma: 1.0 / 4e9}
