package scoll

import (
	"strings"
	"sync"
	"time"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/plan"
	"github.com/scoll/scoll/schedule"
)

// CallOption tunes one collective call.
type CallOption func(*plan.Options)

// WithAlgorithm selects the algorithm by its registry name (see Algorithms).
// An unknown name fails with ErrInvalidArgument; an algorithm that cannot run
// the call (for example a commutative-only one with a non-commutative
// operator) fails with ErrUnsupported. Every rank must choose the same one.
//
// Every way a call runs is an algorithm: the transports' native paths
// "exchange" and "meet" and the chain collectives "chain" run natively
// where their rule lets them (see their When in Algorithms) and as their
// stand-in message schedules elsewhere.
func WithAlgorithm(name string) CallOption { return func(o *plan.Options) { o.Alg = name } }

// WithChosen stores in *name the registry name of the algorithm the call
// runs (the default choice's, or the one named), once the call is
// prepared and before it runs; a call that fails to prepare leaves *name
// as it was. Programs that report what ran use it, as scoll's MPI drop-in
// library does for SCOLL_MPI_REPORT.
func WithChosen(name *string) CallOption { return func(o *plan.Options) { o.Chosen = name } }

// WithInner names the algorithm the node-aware algorithm "hier" runs among
// the node leaders (for example "rd-optimal" or "ring"); without it the
// default rule chooses for the leaders' call. hier is the default choice
// when the communicator's ranks share nodes (hosts): Init learns them from
// the transport (host name and boot id, or SCOLL_HOSTNAME). An unknown name
// fails with ErrInvalidArgument; one that cannot run the leaders' call (say
// recursive doubling on 3 leaders) makes the default choice pass hier by,
// and a call naming hier fail with ErrUnsupported. Every rank must pass the
// same one; other algorithms ignore it.
func WithInner(name string) CallOption { return func(o *plan.Options) { o.Inner = name } }

// WithoutAlgorithm keeps the default choice from taking the named
// algorithms: WithoutAlgorithm("exchange", "meet") makes a small in-process
// call run a message schedule, WithoutAlgorithm("ring") leaves the ring to
// the others. A name no collective has, or one WithAlgorithm also names,
// fails with ErrInvalidArgument; every rank must exclude the same ones.
func WithoutAlgorithm(names ...string) CallOption {
	names = append([]string(nil), names...)
	return func(o *plan.Options) { o.Exclude = append(o.Exclude, names...) }
}

// WithSegmentSize sets the segment size in bytes of pipelined algorithms
// (ring allreduce, pipeline bcast and reduce). It is rounded down to whole
// elements (at least one).
func WithSegmentSize(bytes int) CallOption { return withKnob(algorithms.SegmentKnob, bytes) }

// WithSegments sets the number of segments of segmented algorithms: the
// clairvoyant reduce's N (its default: the optimal count of an
// equi-segmenting reduction under the round model, Marendic et al. sec.
// 5.2), and for the pipelined ones a segment length of ⌈count/n⌉ elements.
// n must be at least 1, and WithSegmentSize must not be given too;
// otherwise the call fails with ErrInvalidArgument on every rank.
func WithSegments(n int) CallOption {
	return func(o *plan.Options) { o.Segments, o.SegmentsSet = n, true }
}

// WithArrivals gives the clairvoyant reduce the ranks' arrival times at the
// call: one per rank (any origin, none negative), equal on every rank. Its
// schedule lets the early ranks reduce while the late ones still compute:
// a rank takes part from the first round that starts after its arrival,
// rounds lasting the round time (WithRoundTime). A vector of the wrong
// length or with a negative time fails with ErrInvalidArgument on every
// rank; ranks that pass different vectors fail with ErrMismatch where the
// transport checks calls. Other algorithms ignore it.
func WithArrivals(a []time.Duration) CallOption {
	a = append([]time.Duration(nil), a...)
	return func(o *plan.Options) { o.Arrivals = a }
}

// WithRoundTime sets the clairvoyant reduce's round time d, the time to
// receive and combine one segment, which converts WithArrivals' times into
// rounds. Without it d = α + B(β + γ) for segments of B bytes, from the
// parameters file SCOLL_PARAMS names (scoll calibrate's output), else from
// the transport's α and β and this machine's measured γ — rank 0's, which
// ranks in separate processes take at the communicator's first clairvoyant
// call so that all build the same schedule. d must be positive (ErrInvalidArgument
// otherwise).
func WithRoundTime(d time.Duration) CallOption {
	return func(o *plan.Options) { o.RoundTime, o.RoundTimeSet = d, true }
}

// WithLogP sets the LogP model (latency L, overhead o, gap g) the
// fibonacci bcast and reduce build their tree for: the optimal
// single-item tree under that model (Karp et al.; Hoefler–Moor Fig. 2a).
// Without it, when named (WithAlgorithm("fibonacci")), they use the
// "latency", "overhead" and "gap" of the parameters file SCOLL_PARAMS
// names (scoll calibrate measures them; rank 0's where ranks are separate
// processes); with none, and when the default rule weighs them, L = g,
// o = 0, whose optimal tree is the binomial tree. Negative times, or o and
// g both 0, fail with ErrInvalidArgument. Other algorithms ignore it.
func WithLogP(L, o, g time.Duration) CallOption {
	lp := &algorithms.LogP{L: L.Seconds(), O: o.Seconds(), G: g.Seconds()}
	return func(opt *plan.Options) { opt.LogP = lp }
}

// WithRadix sets the radix of k-nomial algorithms, which is also the fan-out
// of k-ary trees (at least 2).
func WithRadix(k int) CallOption { return withKnob(algorithms.RadixKnob, k) }

// WithKnob sets the algorithms' knob called name to value for the call
// (Knobs lists them: "radix", "segment", ...); WithRadix and
// WithSegmentSize are two of them. 0 leaves the algorithms' default. An
// unknown name or a value below the knob's least fails with
// ErrInvalidArgument on every rank; every rank must pass the same value.
// The environment sets a knob for the calls that do not
// (SCOLL_<KNOB>_<COLLECTIVE>), and scoll bench, sim and model take it as
// --<name>.
func WithKnob(name string, value int) CallOption {
	k := algorithms.LookupKnob(name)
	if k == nil {
		return func(o *plan.Options) { o.UnknownKnob = name }
	}
	return withKnob(k, value)
}

// withKnob sets knob k to v.
func withKnob(k *algorithms.Knob, v int) CallOption {
	return func(o *plan.Options) { o.Knobs[k.Index()] = v }
}

// KnobInfo describes a knob of the algorithms.
type KnobInfo struct {
	// Name is what WithKnob and the --name flags take.
	Name string
	// Doc is a one-line description.
	Doc string
	// Bytes tells whether the value is a size in bytes.
	Bytes bool
	// Min is the least value a call may set (0 leaves the default).
	Min int
	// Env is the prefix of its environment variables (the collective's
	// name in capitals follows).
	Env string
}

// Knobs returns the algorithms' knobs.
func Knobs() []KnobInfo {
	var out []KnobInfo
	for _, k := range algorithms.Knobs() {
		out = append(out, KnobInfo{Name: k.Name, Doc: k.Doc, Bytes: k.Bytes, Min: k.Min, Env: k.Env()})
	}
	return out
}

// WithRadixVector sets the radix vector k = [k_1, …, k_r] of the radix-k
// reduce: round i exchanges among groups of k_i ranks, k_1·…·k_(i−1) apart
// (Marendic et al. sec. 5.5.4; {4, 4, 8} on 128 ranks in their runs).
// Without it radix-k factors the communicator size (see its Doc in
// Algorithms). Every entry must be at least 2 and their product the
// communicator size, and WithRadix must not be given too; otherwise the
// call fails with ErrInvalidArgument on every rank. Every rank must pass the
// same vector; other algorithms ignore it.
func WithRadixVector(ks ...int) CallOption {
	ks = append([]int(nil), ks...)
	return func(o *plan.Options) { o.RadixVector = ks }
}

// WithGrid sets the process grid of the topology-aware algorithms (rd-optimal,
// rh-optimal, bucket, bucket3, bucket6): the sizes of its dimensions, ranks
// numbered with the first dimension varying fastest (XYZ order), as on a
// torus or mesh whose nodes hold the ranks in order. Without it they use
// DefaultGrid(size, 3). Dimensions whose product is not the communicator size
// fail with ErrInvalidArgument; every rank must pass the same grid.
func WithGrid(dims ...int) CallOption {
	dims = append([]int(nil), dims...)
	return func(o *plan.Options) { o.Grid = dims }
}

// WithPlacement tells the path algorithms (rd-path, rd-paths, rh-path,
// rh-paths and the composites built on them) where the ranks sit on the
// machine: machine lists the torus or mesh dimensions (first fastest) and
// nodes[r] is rank r's node, numbered in that order. The ranks may occupy
// any subset of the nodes — an irregular, non-contiguous partition — and
// the algorithms order them along Hamiltonian paths of the whole machine.
// Without it they use the process grid with rank r on node r. A placement
// that does not list one distinct node per rank fails with
// ErrInvalidArgument; every rank must pass the same one.
func WithPlacement(machine, nodes []int) CallOption {
	pl := &algorithms.Placement{Machine: append([]int(nil), machine...), Nodes: append([]int(nil), nodes...)}
	return func(o *plan.Options) { o.Place = pl }
}

// DefaultGrid returns the grid of size ranks in d dimensions the
// topology-aware algorithms use when a call gives none: the dimensions as
// equal as possible, smallest first (8×8×8 for 512 ranks, 4×4×8 for 128).
func DefaultGrid(size, d int) []int { return algorithms.DefaultGrid(size, d) }

// AlgorithmInfo describes a registered algorithm.
type AlgorithmInfo struct {
	// Collective is the collective's name, as passed to Algorithms.
	Collective string
	// Name is the name WithAlgorithm takes.
	Name string
	// Doc is a one-line description.
	Doc string
	// Source is where the algorithm comes from.
	Source string
	// Commutative is true when the algorithm needs a commutative operator.
	Commutative bool
	// PowerOfTwo is true when the algorithm needs a power-of-two rank count.
	PowerOfTwo bool
	// Requires lists the requirements in words ("-" for none).
	Requires string
	// Path is how the algorithm moves the data: "messages" (its schedule,
	// on every transport), or a native path — "transport exchange",
	// "transport meeting", "chain" — that runs where its rule (When)
	// lets it, its stand-in schedule elsewhere.
	Path string
	// When says, for a native path, when it runs natively and when the
	// default choice takes it ("" for messages: the default takes the
	// cheapest schedule under the communicator's cost model).
	When string
}

// Algorithms returns the algorithms registered for a collective, sorted by
// name. Collective names: bcast, reduce, allreduce, gather, gatherv, scatter,
// scatterv, allgather, allgatherv, alltoall, alltoallv, reducescatter (block),
// reducescatterv, scan, exscan and barrier. An unknown name gives nil.
func Algorithms(collective string) []AlgorithmInfo {
	c, ok := schedule.ParseCollective(strings.ToLower(collective))
	if !ok {
		return nil
	}
	var out []AlgorithmInfo
	for _, in := range algorithms.List(c) {
		out = append(out, AlgorithmInfo{
			Collective:  c.String(),
			Name:        in.Name,
			Doc:         in.Doc,
			Source:      in.Source,
			Commutative: in.Requires&algorithms.NeedsCommutative != 0,
			PowerOfTwo:  in.Requires&algorithms.NeedsPowerOfTwo != 0,
			Requires:    in.Requires.String(),
			Path:        in.Path.String(),
			When:        in.When(),
		})
	}
	return out
}

// Collectives returns the names Algorithms accepts.
func Collectives() []string {
	var out []string
	for c := range schedule.NumCollectives {
		out = append(out, c.String())
	}
	return out
}

// parseOptions applies opts. Nothing is allocated: the options are
// applied to a record from optionsPool (an option is a function of a
// pointer, which would otherwise move every call's record to the heap).
func parseOptions(opts []CallOption) plan.Options {
	if len(opts) == 0 {
		return plan.Options{Simple: true}
	}
	o := optionsPool.Get().(*plan.Options)
	*o = plan.Options{}
	for _, f := range opts {
		if f != nil {
			f(o)
		}
	}
	out := *o
	out.Simple = out.IsSimple()
	*o = plan.Options{} // keep no caller's slices alive
	optionsPool.Put(o)
	return out
}

var optionsPool = sync.Pool{New: func() any { return new(plan.Options) }}
