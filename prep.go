package scoll

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/scoll/scoll/exec"
	"github.com/scoll/scoll/internal/kernels"
	"github.com/scoll/scoll/internal/plan"
	"github.com/scoll/scoll/schedule"
)

// The prep functions turn the public collectives' arguments into a call
// (api.go's forms share them): the checks and the plan are package plan's;
// what is generic over the element type — the buffers, the operator's
// kernel — is here.

// elemSize returns the size in bytes of a T.
func elemSize[T Element]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

// bufOf describes s to the argument checks.
func bufOf[T any](s []T) plan.Buf { return plan.Buf{Len: len(s), Nil: s == nil} }

// checkArgs checks that c can take a call now, then the call's arguments
// a (plan.Args.Check with c's rank and size, which sets spec).
func checkArgs(ctx context.Context, c *Comm, a *plan.Args, spec *schedule.Spec) (plan.Use, error) {
	if err := c.usable(ctx); err != nil {
		return plan.Use{}, err
	}
	a.Rank, a.Size = c.rank, c.size
	return a.Check(spec)
}

// prepare makes cl the call a on send and recv with op: it checks the
// arguments, the operator and the options, and takes the plan from c's
// cache or builds it.
func prepare[T Element](cl *call, ctx context.Context, c *Comm, a plan.Args, send, recv []T, op Op, opts []CallOption) error {
	a.Send, a.Recv = bufOf(send), bufOf(recv)
	var pc plan.Call
	use, err := checkArgs(ctx, c, &a, &pc.Spec)
	if err != nil {
		return err
	}
	pc.Rank, pc.ElemSize, pc.Commutative = c.rank, elemSize[T](), true
	if !use.Send {
		send = nil
	}
	if !use.Recv {
		recv = nil
	}
	spec := &pc.Spec
	coll := spec.Coll
	o := parseOptions(opts)
	kernel := exec.Kernel{ElemSize: pc.ElemSize}
	if coll.Reduces() {
		k, err := kernelFor[T](op)
		if err != nil {
			return fmt.Errorf("%s: %w", coll, err)
		}
		kernel, pc.Commutative, pc.OpID = k, op.commutative, op.id
	}
	if err := o.Check(coll, c.size); err != nil {
		return err
	}
	var orig plan.Options // the options before a site's prediction, for replans
	if o.CallSite != "" {
		orig = o
		if cl.site, cl.at, err = c.atSite(ctx, &pc, &o); err != nil {
			return err
		}
	}
	e, fresh, err := c.planOf(ctx, &pc, &o)
	if err != nil {
		return err
	}
	*cl = call{c: c, coll: coll, info: e.Info, plan: e.Plan, kernel: kernel, sig: e.Sig, peers: e.Peers,
		send: kernels.Bytes(send), recv: kernels.Bytes(recv), root: spec.Root, site: cl.site, at: cl.at}
	alg := o.Alg
	if alg == "" && e.By != byCostModel {
		alg = e.Info.Name // the environment's or the tuning file's choice
	}
	n := spec.Count * kernel.ElemSize
	cl.choosePath(alg, &o, n)
	if fresh {
		c.logChoice(cl, e.By, n)
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
func (c *Comm) replanner(pc plan.Call, orig plan.Options) func(context.Context, *call) error {
	return func(ctx context.Context, cl *call) error {
		o := orig
		s, at, err := c.atSite(ctx, &pc, &o)
		if err != nil {
			return err
		}
		e, _, err := c.planOf(ctx, &pc, &o)
		if err != nil {
			return err
		}
		cl.site, cl.at, cl.info, cl.plan, cl.sig, cl.peers = s, at, e.Info, e.Plan, e.Sig, e.Peers
		return nil
	}
}

// planOf returns the plan of call pc with options o from c's cache, built
// and kept there if it was not (fresh).
func (c *Comm) planOf(ctx context.Context, pc *plan.Call, o *plan.Options) (e *plan.Entry, fresh bool, err error) {
	key := plan.KeyOf(pc, o)
	if e := c.plans.Get(key); e != nil {
		return e, false, nil
	}
	e, err = c.newPlan(ctx, pc, o)
	if err != nil {
		return nil, false, err
	}
	c.plans.Put(key, e)
	return e, true, nil
}

// byCostModel is plan.Entry.By of the cost model's choices.
const byCostModel = "cost model"

// newPlan builds the plan of call pc with options o on c (plan.New with
// c's defaults) and, on a derived communicator, resolves its peers into
// transport addresses.
func (c *Comm) newPlan(ctx context.Context, pc *plan.Call, o *plan.Options) (*plan.Entry, error) {
	if err := c.agreeModel(ctx, o.NeedsMachineModel()); err != nil {
		return nil, err
	}
	e, err := plan.New(pc, o, &plan.Defaults{Grid: c.grid, Place: c.place, Nodes: c.nodes, Machine: c.machine, Rounds: c.roundModel, LogP: c.logPModel, Over: c.rs.set.over})
	if err != nil || c.grp == nil {
		return e, err
	}
	// A chain learns its members at the first collective that needs them
	// (the same call on every rank).
	if err := c.learnMembers(ctx); err != nil {
		return nil, err
	}
	ranks := e.Plan.Peers()
	e.Peers = make([]int32, len(ranks))
	if err := c.grp.Resolve(ctx, ranks, e.Peers); err != nil {
		return nil, fmt.Errorf("%s/%s: %w", pc.Spec.Coll, e.Info.Name, err)
	}
	return e, nil
}

func prepBcast[T Element](cl *call, ctx context.Context, c *Comm, buf []T, root int, opts []CallOption) error {
	return prepare(cl, ctx, c, plan.Args{Coll: schedule.Bcast, Root: root}, nil, buf, Op{}, opts)
}

func prepReduce[T Element](cl *call, ctx context.Context, c *Comm, send, recv []T, op Op, root int, opts []CallOption) error {
	return prepare(cl, ctx, c, plan.Args{Coll: schedule.Reduce, Root: root}, send, recv, op, opts)
}

func prepAllreduce[T Element](cl *call, ctx context.Context, c *Comm, send, recv []T, op Op, opts []CallOption) error {
	return prepare(cl, ctx, c, plan.Args{Coll: schedule.Allreduce}, send, recv, op, opts)
}

func prepScan[T Element](cl *call, ctx context.Context, c *Comm, send, recv []T, op Op, opts []CallOption) error {
	return prepare(cl, ctx, c, plan.Args{Coll: schedule.Scan}, send, recv, op, opts)
}

func prepExscan[T Element](cl *call, ctx context.Context, c *Comm, send, recv []T, op Op, opts []CallOption) error {
	return prepare(cl, ctx, c, plan.Args{Coll: schedule.Exscan}, send, recv, op, opts)
}

func prepGather[T Element](cl *call, ctx context.Context, c *Comm, send, recv []T, root int, opts []CallOption) error {
	return prepare(cl, ctx, c, plan.Args{Coll: schedule.Gather, Root: root}, send, recv, Op{}, opts)
}

func prepScatter[T Element](cl *call, ctx context.Context, c *Comm, send, recv []T, root int, opts []CallOption) error {
	return prepare(cl, ctx, c, plan.Args{Coll: schedule.Scatter, Root: root}, send, recv, Op{}, opts)
}

func prepAllgather[T Element](cl *call, ctx context.Context, c *Comm, send, recv []T, opts []CallOption) error {
	return prepare(cl, ctx, c, plan.Args{Coll: schedule.Allgather}, send, recv, Op{}, opts)
}

func prepAlltoall[T Element](cl *call, ctx context.Context, c *Comm, send, recv []T, opts []CallOption) error {
	return prepare(cl, ctx, c, plan.Args{Coll: schedule.Alltoall}, send, recv, Op{}, opts)
}

func prepReduceScatterBlock[T Element](cl *call, ctx context.Context, c *Comm, send, recv []T, op Op, opts []CallOption) error {
	return prepare(cl, ctx, c, plan.Args{Coll: schedule.ReduceScatterBlock}, send, recv, op, opts)
}

func prepGatherv[T Element](cl *call, ctx context.Context, c *Comm, send, recv []T, counts, displs []int, root int, opts []CallOption) error {
	a := plan.Args{Coll: schedule.Gatherv, Root: root, Counts: counts, Displs: displs}
	return prepare(cl, ctx, c, a, send, recv, Op{}, opts)
}

func prepAllgatherv[T Element](cl *call, ctx context.Context, c *Comm, send, recv []T, counts, displs []int, opts []CallOption) error {
	a := plan.Args{Coll: schedule.Allgatherv, Counts: counts, Displs: displs}
	return prepare(cl, ctx, c, a, send, recv, Op{}, opts)
}

func prepScatterv[T Element](cl *call, ctx context.Context, c *Comm, send, recv []T, counts, displs []int, root int, opts []CallOption) error {
	a := plan.Args{Coll: schedule.Scatterv, Root: root, Counts: counts, Displs: displs}
	return prepare(cl, ctx, c, a, send, recv, Op{}, opts)
}

func prepAlltoallv[T Element](cl *call, ctx context.Context, c *Comm, send []T, sendCounts, sendDispls []int, recv []T, recvCounts, recvDispls []int, opts []CallOption) error {
	a := plan.Args{Coll: schedule.Alltoallv, Counts: sendCounts, Displs: sendDispls, RecvCounts: recvCounts, RecvDispls: recvDispls}
	return prepare(cl, ctx, c, a, send, recv, Op{}, opts)
}

func prepReduceScatter[T Element](cl *call, ctx context.Context, c *Comm, send, recv []T, counts []int, op Op, opts []CallOption) error {
	return prepare(cl, ctx, c, plan.Args{Coll: schedule.ReduceScatter, Counts: counts}, send, recv, op, opts)
}

func prepBarrier(cl *call, ctx context.Context, c *Comm, opts []CallOption) error {
	return prepare[byte](cl, ctx, c, plan.Args{Coll: schedule.Barrier}, nil, nil, Op{}, opts)
}
