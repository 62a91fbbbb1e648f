package comm

import (
	"context"
	"fmt"
	"time"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/exec"
	"github.com/scoll/scoll/internal/arrival"
	"github.com/scoll/scoll/internal/cid"
	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/internal/plan"
	"github.com/scoll/scoll/schedule"
)

// Op is a call's operator as a call needs it: its kernel for the call's
// element type (Err: the operator does not apply to it), its identity and
// whether it is commutative, and whether every grouping of the terms gives
// the same bits (not so for floating-point Sum and Prod and user
// operators), which the chain allreduce needs to know.
type Op struct {
	Kernel      exec.Kernel
	Err         error
	ID          uint64
	Commutative bool
	Exact       bool
}

// Call is one collective call on one rank, prepared: the registry entry
// chosen for it and the path it runs on.
type Call struct {
	c      *Comm
	coll   schedule.Collective
	info   *algorithms.Info
	path   algorithms.Path
	plan   *exec.Plan
	kernel exec.Kernel
	exact  bool
	send   []byte
	recv   []byte
	sig    uint64
	root   int
	// peers translates the plan's ranks into transport ranks (nil on the
	// world; see exec.Call.Peers).
	peers []int32
	// site is the call site (WithCallSite) and at this rank's arrival
	// there (sites.go); nil without one.
	site *arrival.Site
	at   time.Duration
	// replan, for calls at a site, records a persistent call's arrival at
	// Start and takes the plan of the site's prediction.
	replan func(context.Context, *Call) error
}

// Algorithm returns the name of the registry entry the call runs.
func (cl *Call) Algorithm() string { return cl.info.Name }

// Path returns the path the call runs on.
func (cl *Call) Path() algorithms.Path { return cl.path }

// checkArgs checks that c can take a call now, then the call's arguments
// a (plan.Args.Check with c's rank and size, which sets spec).
func checkArgs(ctx context.Context, c *Comm, a *plan.Args, spec *schedule.Spec) (plan.Use, error) {
	if err := c.Usable(ctx); err != nil {
		return plan.Use{}, err
	}
	a.Rank, a.Size = c.rank, c.size
	return a.Check(spec)
}

// Prepare makes cl the call a of c (its buffers' lengths in elements of
// elemSize bytes in a.Send and a.Recv) on the bytes send and recv with op
// and options o, blocking or not: it checks the arguments, the operator
// and the options, and takes the call's entry, path and plan from c's
// cache or chooses and builds them.
func Prepare(cl *Call, ctx context.Context, c *Comm, a *plan.Args, send, recv []byte, elemSize int, op *Op, o *plan.Options, blocking bool) error {
	var pc plan.Call
	cl.coll = a.Coll // for the error's name, should a check fail
	use, err := checkArgs(ctx, c, a, &pc.Spec)
	if err != nil {
		return err
	}
	pc.Rank, pc.ElemSize, pc.Commutative, pc.Caps = c.rank, elemSize, true, c.Caps(blocking)
	if !use.Send {
		send = nil
	}
	if !use.Recv {
		recv = nil
	}
	spec := &pc.Spec
	coll := spec.Coll
	kernel, exact := exec.Kernel{ElemSize: elemSize}, true
	if coll.Reduces() {
		if op.Err != nil {
			return op.Err
		}
		kernel, exact, pc.Commutative, pc.OpID = op.Kernel, op.Exact, op.Commutative, op.ID
	}
	if !o.Simple {
		if err := o.Check(coll, c.size); err != nil {
			return err
		}
	}
	var orig plan.Options // the options before a site's prediction, for replans
	if o.CallSite != "" {
		orig = *o
		if cl.site, cl.at, err = c.atSite(ctx, &pc, o); err != nil {
			return err
		}
	}
	var e *plan.Entry
	fresh := false
	if o.Simple {
		// A call without options but an algorithm's name: its plan is
		// found by its arguments when it repeats the latest such call.
		f := plan.FastOf(&pc, o)
		if e = c.plans.Last(f); e == nil {
			if e, fresh, err = c.planOf(ctx, &pc, o); err != nil {
				return err
			}
		}
	} else if e, fresh, err = c.planOf(ctx, &pc, o); err != nil {
		return err
	}
	*cl = Call{c: c, coll: coll, info: e.Info, path: e.Path, plan: e.Plan, kernel: kernel, exact: exact, sig: e.Sig, peers: e.Peers,
		send: send, recv: recv, root: spec.Root, site: cl.site, at: cl.at}
	if fresh {
		c.logChoice(cl, e.By, spec.Count*elemSize)
	}
	if cl.site != nil {
		cl.replan = c.replanner(pc, orig)
	}
	return nil
}

// replanner returns what a persistent call at a site does at Start: record
// its arrival and take the plan of the site's latest prediction. (Its own
// function, not inlined, so that only calls at a site move pc and o to the
// heap.)
//
//go:noinline
func (c *Comm) replanner(pc plan.Call, orig plan.Options) func(context.Context, *Call) error {
	return func(ctx context.Context, cl *Call) error {
		o := orig
		s, at, err := c.atSite(ctx, &pc, &o)
		if err != nil {
			return err
		}
		e, _, err := c.planOf(ctx, &pc, &o)
		if err != nil {
			return err
		}
		cl.site, cl.at, cl.info, cl.path, cl.plan, cl.sig, cl.peers = s, at, e.Info, e.Path, e.Plan, e.Sig, e.Peers
		return nil
	}
}

// planOf returns the plan of call pc with options o from c's cache, built
// and kept there if it was not (fresh).
func (c *Comm) planOf(ctx context.Context, pc *plan.Call, o *plan.Options) (e *plan.Entry, fresh bool, err error) {
	key := plan.KeyOf(pc, o)
	if e := c.plans.Get(key); e != nil {
		if o.Simple {
			c.plans.Remember(plan.FastOf(pc, o), e)
		}
		return e, false, nil
	}
	e, err = c.newPlan(ctx, pc, o)
	if err != nil {
		return nil, false, err
	}
	if o.Simple {
		c.plans.PutFast(key, plan.FastOf(pc, o), e)
	} else {
		c.plans.Put(key, e)
	}
	return e, true, nil
}

// newPlan builds the plan of call pc with options o on c (plan.New with
// c's defaults) and, on the Messages path of a derived communicator,
// resolves its peers into transport addresses.
func (c *Comm) newPlan(ctx context.Context, pc *plan.Call, o *plan.Options) (*plan.Entry, error) {
	if err := c.agreeModel(ctx, o.NeedsMachineModel()); err != nil {
		return nil, err
	}
	d := &plan.Defaults{Grid: c.layout.grid, Place: c.layout.place, Nodes: c.layout.nodes, Machine: c.layout.machine,
		Rounds: c.roundModel, LogP: c.logPModel, Over: c.rs.set.Over}
	e, err := plan.New(pc, o, d)
	if err == nil && o.Alg == "" && c.agreed == nil {
		// The environment or a tuning file chose an algorithm whose
		// schedule depends on the machine model: agree on it first, as a
		// call naming it does, and plan again (the same on every rank:
		// their overrides are alike).
		named := *o
		named.Alg = e.Info.Name
		if named.NeedsMachineModel() {
			if err := c.agreeModel(ctx, true); err != nil {
				return nil, err
			}
			e, err = plan.New(pc, o, d)
		}
	}
	if err != nil || c.mem.grp == nil || e.Path != algorithms.Messages {
		return e, err
	}
	// A chain learns its members at the first call whose path needs them
	// (the same call on every rank).
	if err := c.learnMembers(ctx); err != nil {
		return nil, err
	}
	ranks := e.Plan.Peers()
	e.Peers = make([]int32, len(ranks))
	if err := c.mem.grp.Resolve(ctx, ranks, e.Peers); err != nil {
		return nil, err
	}
	return e, nil
}

// run executes a prepared call to completion, on its path.
func (cl *Call) run(ctx context.Context) error {
	if cl.c.isClosed() {
		return errs.Closed
	}
	if cl.path == algorithms.ChainPath {
		return cl.explain(cl.runChain(ctx)) // its connection claims the sequence number
	}
	return cl.runOn(ctx, cl.c.seq.Add(1))
}

// runOn runs the call with sequence number seq (its messages' key) on its
// path, which is not the chain's.
func (cl *Call) runOn(ctx context.Context, seq uint64) error {
	var err error
	switch cl.path {
	case algorithms.ExchangePath:
		err = cl.runExchange(ctx, seq)
	case algorithms.MeetPath:
		err = cl.runMeet(ctx, seq)
	default:
		c := cl.c
		ec := exec.Call{T: c.t, Comm: c.id, Seq: seq, Plan: cl.plan, Send: cl.send, Recv: cl.recv,
			Kernel: cl.kernel, Spin: c.spin, Sig: cl.sig, Peers: cl.peers, Checker: c.paths.checker, Caps: &c.rs.tc}
		err = exec.Run(ctx, &ec)
	}
	return cl.explain(err)
}

// launch starts the call without waiting for it. Every rank claims the
// call's sequence number here, in call order. (The rules of the exchange
// and the chain take blocking calls only, so a started call runs messages
// or a meeting.)
//
// The request's error is that of the call in form f on this rank (errs.At).
func (cl *Call) launch(ctx context.Context, f Form) (*Request, error) {
	if cl.c.isClosed() {
		return nil, errs.Closed
	}
	if cl.path == algorithms.ChainPath || cl.path == algorithms.ExchangePath {
		return nil, fmt.Errorf("%w: algorithm %q runs blocking calls only", errs.InvalidArgument, cl.info.Name)
	}
	seq := cl.c.seq.Add(1)
	r := &Request{done: make(chan struct{}), rank: cl.c.rank, name: CallName(cl.coll, f)}
	go func() {
		r.err = cl.errAt(cl.c, f, cl.runOn(ctx, seq))
		close(r.done)
	}()
	return r, nil
}

// Blocking runs call cl prepared with error err (which it returns, after
// telling the other ranks that this one gives the call up). Its error is
// that of the call on this rank (errs.At).
func Blocking(ctx context.Context, c *Comm, cl *Call, err error) error {
	return cl.errAt(c, FormBlocking, blocking(ctx, c, cl, err))
}

// blocking is Blocking without naming the call in errors.
func blocking(ctx context.Context, c *Comm, cl *Call, err error) error {
	if err != nil {
		if cl.site != nil {
			cl.site.Failed()
		}
		c.Abandon(err)
		return err
	}
	err = cl.run(ctx)
	if cl.site != nil {
		err = c.arrived(ctx, cl.site, cl.at, err)
	}
	return err
}

// Nonblocking starts call cl prepared with error err.
func Nonblocking(ctx context.Context, c *Comm, cl *Call, err error) (*Request, error) {
	name := CallName(cl.coll, FormStarted)
	if err != nil {
		c.Abandon(err)
		return nil, errs.At(RankOf(c), name, err)
	}
	r, err := cl.launch(ctx, FormStarted)
	return r, errs.At(c.rank, name, err)
}

// Abandon tells the other ranks, on transports whose ranks cannot see each
// other, that this rank gives up the call it was asked for (bad arguments,
// a context already ended): it claims the call's sequence number and aborts
// it, so the others' part of the call fails instead of waiting. On a chain
// that has not learnt its members the others may be learning them, in the
// split message space, where it is aborted too.
func (c *Comm) Abandon(err error) {
	// A closed derived communicator's transport still runs: tell the
	// others, who may still be using it.
	if c == nil || c.rs.closed.Load() {
		return
	}
	c.abandonIn(err, c.unlearntChain())
}

// abandonIn tells the other ranks that this rank gave up its next call on
// c, in c's message space and, if splits is set, in its splits' too.
func (c *Comm) abandonIn(err error, splits bool) {
	if c == nil || c.rs.closed.Load() {
		return
	}
	if a := c.rs.tc.CallAborter; a != nil {
		seq := c.seq.Add(1)
		a.AbortCall(c.id, seq, err)
		if splits {
			a.AbortCall(c.id|cid.SplitBit, seq, err)
		}
	}
}
