package comm

import (
	"context"
	"errors"
	"fmt"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// Request is an outstanding non-blocking collective.
type Request struct {
	done chan struct{}
	err  error
	// rank and name are the caller's rank and the call's public name, for
	// errors (errs.At).
	rank int
	name string
}

// Wait blocks until the collective completes and returns its error, or
// until ctx is done (an error matching errs.Canceled; the collective goes
// on).
func (r *Request) Wait(ctx context.Context) error {
	select {
	case <-r.done:
		return r.err
	default:
	}
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return errs.At(r.rank, r.name, transport.CtxErr(ctx))
	}
}

// Test reports whether the collective has completed, and its error if so.
func (r *Request) Test() (bool, error) {
	select {
	case <-r.done:
		return true, r.err
	default:
		return false, nil
	}
}

// WaitAll waits for every request and returns their errors joined, each
// naming the request's index; it returns an error matching errs.Canceled
// if ctx is done first. No request may be nil.
func WaitAll(ctx context.Context, reqs []*Request) error {
	var all []error
	for i, r := range reqs {
		select {
		case <-r.done:
		case <-ctx.Done():
			return transport.CtxErr(ctx)
		}
		if r.err != nil {
			all = append(all, errs.At(r.rank, fmt.Sprintf("%s (request %d)", r.name, i), errors.Unwrap(r.err)))
		}
	}
	return errors.Join(all...)
}

// TestAll reports whether every request has completed, and then their
// errors joined as WaitAll returns them. No request may be nil.
func TestAll(reqs []*Request) (bool, error) {
	for _, r := range reqs {
		select {
		case <-r.done:
		default:
			return false, nil
		}
	}
	return true, WaitAll(context.Background(), reqs)
}

// Persistent is a collective prepared once and started many times.
type Persistent struct {
	cl  *Call
	req *Request
}

// NewPersistent returns the persistent call of cl prepared with error err
// (which it returns, after telling the other ranks that this one gives the
// call up: their first Start fails).
func NewPersistent(c *Comm, cl *Call, err error) (*Persistent, error) {
	if err != nil {
		c.Abandon(err)
		return nil, errs.At(RankOf(c), CallName(cl.coll, FormPersistent), err)
	}
	return &Persistent{cl: cl}, nil
}

// name is the public name of p's call.
func (p *Persistent) name() string { return CallName(p.cl.coll, FormPersistent) }

// Start starts one execution; it fails with errs.InvalidArgument while the
// previous one has not been waited for.
func (p *Persistent) Start(ctx context.Context) error {
	return errs.At(p.cl.c.rank, p.name(), p.start(ctx))
}

func (p *Persistent) start(ctx context.Context) error {
	if p.req != nil {
		return fmt.Errorf("%w: Start while the previous execution is active", errs.InvalidArgument)
	}
	if err := p.cl.c.Usable(ctx); err != nil {
		return err
	}
	if p.cl.replan != nil {
		if err := p.cl.replan(ctx, p.cl); err != nil {
			p.cl.site.Failed()
			return err
		}
	}
	r, err := p.cl.launch(ctx, FormPersistent)
	if err != nil {
		return err
	}
	p.req = r
	return nil
}

// Wait waits for the execution started last.
func (p *Persistent) Wait(ctx context.Context) error {
	if p.req == nil {
		return errs.At(p.cl.c.rank, p.name(), fmt.Errorf("%w: Wait without Start", errs.InvalidArgument))
	}
	err := p.req.Wait(ctx)
	done, _ := p.req.Test()
	if done {
		p.req = nil
	}
	if done && p.cl.site != nil {
		err = p.cl.c.arrived(ctx, p.cl.site, p.cl.at, err)
	}
	return errs.At(p.cl.c.rank, p.name(), err)
}

// Test reports whether the execution started last has completed.
func (p *Persistent) Test() (bool, error) {
	if p.req == nil {
		return false, errs.At(p.cl.c.rank, p.name(), fmt.Errorf("%w: Test without Start", errs.InvalidArgument))
	}
	done, err := p.req.Test()
	if done {
		p.req = nil
	}
	return done, err
}

// Algorithm returns the name of the registry entry the call runs.
func (p *Persistent) Algorithm() string { return p.cl.info.Name }
