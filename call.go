package scoll

import (
	"context"
	"fmt"

	"github.com/scoll/scoll/internal/comm"
)

// Request is an outstanding non-blocking collective.
type Request struct {
	r *comm.Request
}

// Wait blocks until the collective completes and returns its error. If ctx is
// done first, Wait returns an error matching ErrCanceled while the collective
// goes on (it stops only when the context of the call that started it is
// done); its buffers must not be touched until a later Wait returns nil or
// the collective's error.
func (r *Request) Wait(ctx context.Context) error {
	if r == nil {
		return at(nil, "Wait", fmt.Errorf("%w: nil request", ErrInvalidArgument))
	}
	return r.r.Wait(ctx)
}

// Test reports whether the collective has completed, and its error if so.
func (r *Request) Test() (bool, error) {
	if r == nil {
		return false, at(nil, "Test", fmt.Errorf("%w: nil request", ErrInvalidArgument))
	}
	return r.r.Test()
}

// WaitAll waits for every request (MPI_Waitall) and returns their errors
// joined, each naming the request's index (nil when all succeeded). It
// waits for the others after one fails. If ctx is done first it returns an
// error matching ErrCanceled while the collectives go on, as Wait does; a
// nil request fails with ErrInvalidArgument before any wait.
func WaitAll(ctx context.Context, reqs ...*Request) error {
	rs, err := requests(reqs)
	if err != nil {
		return at(nil, "WaitAll", err)
	}
	return comm.WaitAll(ctx, rs)
}

// TestAll reports whether every request has completed (MPI_Testall),
// without waiting, and then their errors joined as WaitAll returns them;
// before that it returns false and nil. A nil request fails with
// ErrInvalidArgument.
func TestAll(reqs ...*Request) (bool, error) {
	rs, err := requests(reqs)
	if err != nil {
		return false, at(nil, "TestAll", err)
	}
	return comm.TestAll(rs)
}

// requests returns the requests behind reqs; a nil one is an error.
func requests(reqs []*Request) ([]*comm.Request, error) {
	rs := make([]*comm.Request, len(reqs))
	for i, r := range reqs {
		if r == nil {
			return nil, fmt.Errorf("%w: request %d is nil", ErrInvalidArgument, i)
		}
		rs[i] = r.r
	}
	return rs, nil
}

// Persistent is a collective prepared once and started many times (the
// MPI persistent collectives): the schedule is built at Init, and each Start
// runs it on the buffers given at Init.
type Persistent struct {
	p *comm.Persistent
}

// Start starts one execution. It fails with ErrInvalidArgument while the
// previous one has not been waited for.
func (p *Persistent) Start(ctx context.Context) error {
	if p == nil || p.p == nil {
		return at(nil, "Start", fmt.Errorf("%w: nil persistent request", ErrInvalidArgument))
	}
	return p.p.Start(ctx)
}

// Wait waits for the execution started last.
func (p *Persistent) Wait(ctx context.Context) error {
	if p == nil || p.p == nil {
		return at(nil, "Wait", fmt.Errorf("%w: nil persistent request", ErrInvalidArgument))
	}
	return p.p.Wait(ctx)
}

// Test reports whether the execution started last has completed.
func (p *Persistent) Test() (bool, error) {
	if p == nil || p.p == nil {
		return false, at(nil, "Test", fmt.Errorf("%w: nil persistent request", ErrInvalidArgument))
	}
	return p.p.Test()
}

// Algorithm returns the name of the algorithm the handle runs.
func (p *Persistent) Algorithm() string { return p.p.Algorithm() }

// The three forms of a call (api.go): each prepares it (prep.go) and runs,
// starts or keeps it.

func blocking(ctx context.Context, c *Comm, cl *comm.Call, err error) error {
	return comm.Blocking(ctx, c.core(), cl, err)
}

func nonblocking(ctx context.Context, c *Comm, cl *comm.Call, err error) (*Request, error) {
	r, err := comm.Nonblocking(ctx, c.core(), cl, err)
	if err != nil {
		return nil, err
	}
	return &Request{r: r}, nil
}

func persistent(c *Comm, cl *comm.Call, err error) (*Persistent, error) {
	p, err := comm.NewPersistent(c.core(), cl, err)
	if err != nil {
		return nil, err
	}
	return &Persistent{p: p}, nil
}

// newCall returns a call for the non-blocking and persistent forms, which
// outlive the function that prepares them.
func newCall() *comm.Call { return new(comm.Call) }
