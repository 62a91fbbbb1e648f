package scoll

import (
	"context"
	"fmt"
	"strings"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/exec"
	"github.com/scoll/scoll/internal/kernels"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/split"
	"github.com/scoll/scoll/transport"
)

// CallOption tunes one collective call.
type CallOption func(*callConfig)

type callConfig struct {
	alg      string
	segBytes int
	radix    int
	grid     []int
	place    *algorithms.Placement
}

// WithAlgorithm selects the algorithm by its registry name (see Algorithms).
// An unknown name fails with ErrInvalidArgument; an algorithm that cannot run
// the call (for example a commutative-only one with a non-commutative
// operator) fails with ErrUnsupported. Every rank must choose the same one.
func WithAlgorithm(name string) CallOption { return func(c *callConfig) { c.alg = name } }

// WithSegmentSize sets the segment size in bytes of pipelined algorithms
// (ring allreduce, pipeline bcast and reduce). It is rounded down to whole
// elements (at least one).
func WithSegmentSize(bytes int) CallOption { return func(c *callConfig) { c.segBytes = bytes } }

// WithRadix sets the radix of k-nomial algorithms, which is also the fan-out
// of k-ary trees (at least 2).
func WithRadix(k int) CallOption { return func(c *callConfig) { c.radix = k } }

// WithGrid sets the process grid of the topology-aware algorithms (rd-optimal,
// rh-optimal, bucket, bucket3, bucket6): the sizes of its dimensions, ranks
// numbered with the first dimension varying fastest (XYZ order), as on a
// torus or mesh whose nodes hold the ranks in order. Without it they use
// DefaultGrid(size, 3). Dimensions whose product is not the communicator size
// fail with ErrInvalidArgument; every rank must pass the same grid.
func WithGrid(dims ...int) CallOption {
	dims = append([]int(nil), dims...)
	return func(c *callConfig) { c.grid = dims }
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
	return func(c *callConfig) { c.place = pl }
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

// call is one collective call on one rank, before it is started.
type call struct {
	c      *Comm
	coll   schedule.Collective
	info   *algorithms.Info
	plan   *exec.Plan
	kernel exec.Kernel
	send   []byte
	recv   []byte
	sig    uint64
	// peers translates the plan's ranks into transport ranks (nil on the
	// world; see exec.Call.Peers).
	peers []int32
	// meet: run as a shared-memory meeting instead of the plan (see meet.go).
	meet bool
	// exch: run a blocking call as a shared-memory exchange (exchange.go).
	exch bool
	root int
}

type planKey struct {
	coll        schedule.Collective
	alg         string
	root, count int
	inPlace     bool
	commutative bool
	radix, seg  int
	elemSize    int
	opID        uint64
	grid        string // gridKey of WithGrid's dimensions
	place       string // placeKey of WithPlacement
}

// gridKey renders a process grid for the plan cache ("" without one).
func gridKey(dims []int) string {
	if dims == nil {
		return ""
	}
	return fmt.Sprint(dims)
}

// placeKey renders a placement for the plan cache ("" without one).
func placeKey(pl *algorithms.Placement) string {
	if pl == nil {
		return ""
	}
	return fmt.Sprint(pl.Machine, pl.Nodes)
}

type planEntry struct {
	key   planKey
	plan  *exec.Plan
	info  *algorithms.Info
	sig   uint64
	peers []int32
}

// parseOptions applies opts. Without options nothing is allocated.
func parseOptions(opts []CallOption) callConfig {
	if len(opts) == 0 {
		return callConfig{}
	}
	cfg := new(callConfig)
	for _, o := range opts {
		if o != nil {
			o(cfg)
		}
	}
	return *cfg
}

func argErr(coll schedule.Collective, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidArgument, coll, fmt.Sprintf(format, args...))
}

func argErrU(coll schedule.Collective, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrUnsupported, coll, fmt.Sprintf(format, args...))
}

// prepare validates a call, picks its algorithm and plan.
func prepare[T Number](cl *call, ctx context.Context, c *Comm, spec schedule.Spec, send, recv []T, op Op, opts []CallOption) error {
	if err := c.usable(ctx); err != nil {
		return err
	}
	cfg := parseOptions(opts)
	coll := spec.Coll
	spec.Size = c.size
	// A derived communicator's own grid and placement are the defaults.
	// They are not part of the plan key: the cache is per communicator.
	cfgGrid, cfgPlace := cfg.grid, cfg.place
	if cfg.grid == nil {
		cfg.grid = c.grid
	}
	if cfg.place == nil {
		cfg.place = c.place
	}
	var kernel exec.Kernel
	var z T
	kernel.ElemSize = int(sizeOf(z))
	commutative := true
	var opID uint64
	if coll.Reduces() {
		k, err := kernelFor[T](op)
		if err != nil {
			return fmt.Errorf("%s: %w", coll, err)
		}
		kernel, commutative, opID = k, op.commutative, op.id
	}
	if cfg.segBytes < 0 {
		return argErr(coll, "negative segment size %d", cfg.segBytes)
	}
	if cfg.radix != 0 && cfg.radix < 2 {
		return argErr(coll, "radix %d (want ≥ 2)", cfg.radix)
	}
	seg := 0
	if cfg.segBytes > 0 {
		seg = max(1, cfg.segBytes/kernel.ElemSize)
	}
	// The call's own grid and placement are checked; the communicator's
	// were checked when it was made.
	if cfgGrid != nil {
		if err := algorithms.CheckGrid(cfgGrid, c.size); err != nil {
			return fmt.Errorf("%s: %w", coll, err)
		}
	}
	if cfgPlace != nil {
		if err := algorithms.CheckPlacement(cfgPlace, c.size); err != nil {
			return fmt.Errorf("%s: %w", coll, err)
		}
	}
	key := planKey{coll, cfg.alg, spec.Root, spec.Count, spec.InPlaceAt(c.rank), commutative, cfg.radix, seg, kernel.ElemSize, opID, gridKey(cfgGrid), placeKey(cfgPlace)}
	cacheable := !coll.Vector()
	if cacheable {
		e := c.last.Load()
		if e == nil || e.key != key {
			c.mu.Lock()
			e = c.plans[key]
			c.mu.Unlock()
			if e != nil {
				c.last.Store(e)
			}
		}
		if e != nil {
			*cl = call{c: c, info: e.info, plan: e.plan, kernel: kernel, sig: e.sig, peers: e.peers,
				send: kernels.Bytes(send), recv: kernels.Bytes(recv), coll: coll}
			cl.exch = cfg.alg == "" && c.exchangeable(coll, spec.Count*kernel.ElemSize)
			cl.meet = !cl.exch && cfg.alg == "" && c.meetable(coll, spec.Count*kernel.ElemSize)
			cl.root = spec.Root
			return nil
		}
	}
	p := algorithms.Params{Spec: spec, Rank: c.rank, Commutative: commutative, Radix: cfg.radix, Segment: seg, ElemSize: kernel.ElemSize, Grid: cfg.grid, Placement: cfg.place}
	var info *algorithms.Info
	if cfg.alg != "" {
		in, ok := algorithms.Lookup(coll, cfg.alg)
		if !ok {
			var names []string
			for _, a := range algorithms.List(coll) {
				names = append(names, a.Name)
			}
			return argErr(coll, "unknown algorithm %q (have %s)", cfg.alg, strings.Join(names, ", "))
		}
		if err := in.Check(&p); err != nil {
			return err
		}
		info = in
	} else {
		sel := p
		sel.InPlace = false // every rank must pick the same algorithm
		info = algorithms.Select(&sel, c.machine)
		if info == nil {
			return fmt.Errorf("%w: %s: no registered algorithm fits", ErrUnsupported, coll)
		}
	}
	*cl = call{c: c, coll: coll, info: info, kernel: kernel, send: kernels.Bytes(send), recv: kernels.Bytes(recv)}
	// The signature every rank must agree on (in-place-ness may differ).
	h := newHash()
	h.add(uint64(coll), uint64(spec.Count), uint64(spec.Root), uint64(kernel.ElemSize), opID, uint64(cfg.radix), uint64(seg))
	h.str(info.Name)
	h.ints(cfg.grid)
	if cfg.place != nil {
		h.ints(cfg.place.Machine)
		h.ints(cfg.place.Nodes)
	}
	if coll.Vector() && coll != schedule.Alltoallv {
		h.ints(spec.Counts)
		h.ints(spec.Displs)
	}
	cl.sig = uint64(h)
	s, err := info.Schedule(&p)
	if err != nil {
		return fmt.Errorf("%w: %s/%s: %w", ErrInvalidArgument, coll, info.Name, err)
	}
	cl.plan = exec.NewPlan(s)
	if c.grp != nil {
		// A chain learns its members at the first collective that needs
		// them (the same call on every rank).
		if err := c.learnMembers(ctx); err != nil {
			return err
		}
		ranks := cl.plan.Peers()
		cl.peers = make([]int32, len(ranks))
		if err := c.grp.Resolve(ctx, ranks, cl.peers); err != nil {
			return fmt.Errorf("%s/%s: %w", coll, info.Name, err)
		}
	}
	if cacheable {
		c.mu.Lock()
		if len(c.plans) > 256 {
			clear(c.plans)
		}
		c.plans[key] = &planEntry{key: key, plan: cl.plan, info: info, sig: cl.sig, peers: cl.peers}
		c.mu.Unlock()
	}
	cl.exch = cfg.alg == "" && c.exchangeable(coll, spec.Count*kernel.ElemSize)
	cl.meet = !cl.exch && cfg.alg == "" && c.meetable(coll, spec.Count*kernel.ElemSize)
	cl.root = spec.Root
	return nil
}

// hash is FNV-1a over 64-bit words.
type hash uint64

func newHash() hash { return 14695981039346656037 }

func (h *hash) add(xs ...uint64) {
	for _, x := range xs {
		*h = (*h ^ hash(x)) * 1099511628211
	}
}

func (h *hash) str(s string) {
	for i := 0; i < len(s); i++ {
		h.add(uint64(s[i]))
	}
}

func (h *hash) ints(xs []int) {
	h.add(uint64(len(xs)))
	for _, x := range xs {
		h.add(uint64(x))
	}
}

// start claims the next sequence number. Agreement between the ranks is
// checked by the signature every message carries and, when the call has to
// wait, by the transport's Checker.
func (cl *call) start(ec *exec.Call) error {
	c := cl.c
	if c.isClosed() {
		return ErrClosed
	}
	seq := c.seq.Add(1)
	*ec = exec.Call{T: c.t, Comm: c.id, Seq: seq, Plan: cl.plan, Send: cl.send, Recv: cl.recv,
		Kernel: cl.kernel, Spin: c.spin, Sig: cl.sig, Peers: cl.peers, Checker: c.checker}
	return nil
}

// run executes a prepared call to completion.
func (cl *call) run(ctx context.Context) error {
	if cl.exch {
		return cl.runExchange(ctx)
	}
	if cl.meet {
		return cl.runMeet(ctx, cl.c.seq.Add(1))
	}
	var ec exec.Call
	if err := cl.start(&ec); err != nil {
		return err
	}
	if err := exec.Run(ctx, &ec); err != nil {
		return fmt.Errorf("%s/%s: %w", cl.coll, cl.info.Name, err)
	}
	return nil
}

// Request is an outstanding non-blocking collective.
type Request struct {
	done chan struct{}
	err  error
}

func (cl *call) launch(ctx context.Context) (*Request, error) {
	if cl.meet {
		if cl.c.isClosed() {
			return nil, ErrClosed
		}
		seq := cl.c.seq.Add(1)
		r := &Request{done: make(chan struct{})}
		go func() {
			r.err = cl.runMeet(ctx, seq)
			close(r.done)
		}()
		return r, nil
	}
	ec := new(exec.Call)
	if err := cl.start(ec); err != nil {
		return nil, err
	}
	r := &Request{done: make(chan struct{})}
	go func() {
		if err := exec.Run(ctx, ec); err != nil {
			r.err = fmt.Errorf("%s/%s: %w", cl.coll, cl.info.Name, err)
		}
		close(r.done)
	}()
	return r, nil
}

// Wait blocks until the collective completes and returns its error. If ctx is
// done first, Wait returns an error matching ErrCanceled while the collective
// goes on (it stops only when the context of the call that started it is
// done); its buffers must not be touched until a later Wait returns nil or
// the collective's error.
func (r *Request) Wait(ctx context.Context) error {
	if r == nil {
		return fmt.Errorf("%w: nil request", ErrInvalidArgument)
	}
	select {
	case <-r.done:
		return r.err
	default:
	}
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return transport.CtxErr(ctx)
	}
}

// Test reports whether the collective has completed, and its error if so.
func (r *Request) Test() (bool, error) {
	if r == nil {
		return false, fmt.Errorf("%w: nil request", ErrInvalidArgument)
	}
	select {
	case <-r.done:
		return true, r.err
	default:
		return false, nil
	}
}

// Persistent is a collective prepared once and started many times (the
// MPI persistent collectives): the schedule is built at Init, and each Start
// runs it on the buffers given at Init.
type Persistent struct {
	cl  *call
	req *Request
}

// Start starts one execution. It fails with ErrInvalidArgument while the
// previous one has not been waited for.
func (p *Persistent) Start(ctx context.Context) error {
	if p == nil || p.cl == nil {
		return fmt.Errorf("%w: nil persistent request", ErrInvalidArgument)
	}
	if p.req != nil {
		return fmt.Errorf("%w: Start while the previous execution is active", ErrInvalidArgument)
	}
	if err := p.cl.c.usable(ctx); err != nil {
		return err
	}
	r, err := p.cl.launch(ctx)
	if err != nil {
		return err
	}
	p.req = r
	return nil
}

// Wait waits for the execution started last.
func (p *Persistent) Wait(ctx context.Context) error {
	if p == nil || p.req == nil {
		return fmt.Errorf("%w: Wait without Start", ErrInvalidArgument)
	}
	err := p.req.Wait(ctx)
	if done, _ := p.req.Test(); done {
		p.req = nil
	}
	return err
}

// Test reports whether the execution started last has completed.
func (p *Persistent) Test() (bool, error) {
	if p == nil || p.req == nil {
		return false, fmt.Errorf("%w: Test without Start", ErrInvalidArgument)
	}
	done, err := p.req.Test()
	if done {
		p.req = nil
	}
	return done, err
}

// Algorithm returns the name of the algorithm the handle runs.
func (p *Persistent) Algorithm() string { return p.cl.info.Name }

func persistent(c *Comm, cl *call, err error) (*Persistent, error) {
	if err != nil {
		c.abandon(err) // the others' first Start fails
		return nil, err
	}
	return &Persistent{cl: cl}, nil
}

// newCall returns a call for the non-blocking and persistent forms, which
// outlive the function that prepares them.
func newCall() *call { return new(call) }

func nonblocking(ctx context.Context, c *Comm, cl *call, err error) (*Request, error) {
	if err != nil {
		c.abandon(err)
		return nil, err
	}
	return cl.launch(ctx)
}

func blocking(ctx context.Context, c *Comm, cl *call, err error) error {
	if err != nil {
		c.abandon(err)
		return err
	}
	return cl.run(ctx)
}

// abandon tells the other ranks, on transports whose ranks cannot see each
// other, that this rank gives up the call it was asked for (bad arguments,
// a context already ended): it claims the call's sequence number and aborts
// it, so the others' part of the call fails instead of waiting.
func (c *Comm) abandon(err error) {
	// A closed derived communicator's transport still runs: tell the
	// others, who may still be using it.
	if c == nil || c.rs.closed.Load() {
		return
	}
	// The others may be learning a chain's members, along the chain in
	// the split message space.
	ch, ok := c.grp.(*split.Chain)
	c.abandonIn(err, ok && !ch.Learnt())
}

// abandonIn tells the other ranks that this rank gave up its next call on
// c, in c's message space and, if splits is set, in its splits' too.
func (c *Comm) abandonIn(err error, splits bool) {
	if c == nil || c.rs.closed.Load() {
		return
	}
	if a, ok := c.t.(transport.CallAborter); ok {
		seq := c.seq.Add(1)
		a.AbortCall(c.id, seq, err)
		if splits {
			a.AbortCall(c.id|splitBit, seq, err)
		}
	}
}
