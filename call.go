package scoll

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/exec"
	"github.com/scoll/scoll/internal/arrival"
	"github.com/scoll/scoll/internal/cid"
	"github.com/scoll/scoll/internal/plan"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/split"
	"github.com/scoll/scoll/transport"
)

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
	// meet: run as a shared-memory meeting instead of the plan (see shm.go).
	meet bool
	// exch: run a blocking call as a shared-memory exchange (shm.go).
	exch bool
	root int
	// site is the call site (WithCallSite) and at this rank's arrival
	// there (callsite.go); nil without one.
	site *arrival.Site
	at   time.Duration
	// replan, for calls at a site, records a persistent call's arrival at
	// Start and takes the plan of the site's prediction.
	replan func(context.Context, *call) error
}

// marked returns the call's signature with mark mixed in: the signature
// of another way to run the same call (shm.go).
func (cl *call) marked(mark uint64) uint64 {
	h := plan.Hash(cl.sig)
	h.Add(mark)
	return uint64(h)
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

// WaitAll waits for every request (MPI_Waitall) and returns their errors
// joined, each naming the request's index (nil when all succeeded). It
// waits for the others after one fails. If ctx is done first it returns an
// error matching ErrCanceled while the collectives go on, as Wait does; a
// nil request fails with ErrInvalidArgument before any wait.
func WaitAll(ctx context.Context, reqs ...*Request) error {
	for i, r := range reqs {
		if r == nil {
			return fmt.Errorf("%w: request %d is nil", ErrInvalidArgument, i)
		}
	}
	var errs []error
	for i, r := range reqs {
		select {
		case <-r.done:
		case <-ctx.Done():
			return transport.CtxErr(ctx)
		}
		if r.err != nil {
			errs = append(errs, fmt.Errorf("request %d: %w", i, r.err))
		}
	}
	return errors.Join(errs...)
}

// TestAll reports whether every request has completed (MPI_Testall),
// without waiting, and then their errors joined as WaitAll returns them;
// before that it returns false and nil. A nil request fails with
// ErrInvalidArgument.
func TestAll(reqs ...*Request) (bool, error) {
	for i, r := range reqs {
		if r == nil {
			return false, fmt.Errorf("%w: request %d is nil", ErrInvalidArgument, i)
		}
	}
	for _, r := range reqs {
		select {
		case <-r.done:
		default:
			return false, nil
		}
	}
	return true, WaitAll(context.Background(), reqs...)
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
	if p.cl.replan != nil {
		if err := p.cl.replan(ctx, p.cl); err != nil {
			p.cl.site.Failed()
			return err
		}
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
	done, _ := p.req.Test()
	if done {
		p.req = nil
	}
	if done && p.cl.site != nil {
		err = p.cl.c.arrived(ctx, p.cl.site, p.cl.at, err)
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
		if cl.site != nil {
			cl.site.Failed()
		}
		c.abandon(err)
		return err
	}
	err = cl.run(ctx)
	if cl.site != nil {
		err = c.arrived(ctx, cl.site, cl.at, err)
	}
	return err
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
			a.AbortCall(c.id|cid.SplitBit, seq, err)
		}
	}
}
