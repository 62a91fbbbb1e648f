package cid

import (
	"context"
	"fmt"

	"github.com/scoll/scoll/internal/errs"
)

// Agreement is one rank's input to Agree.
type Agreement struct {
	// Sig must be equal on every rank (the operation and its options).
	Sig uint64
	// Bad is this rank's error with its own arguments, or nil.
	Bad error
	// Max, when set, is replaced by the elementwise maximum over the
	// ranks (carried by the first round: the longest color and key of a
	// split).
	Max []int64
}

// Allreducer replaces v by its elementwise maximum over the ranks (the
// minimum when least); it is collective over the parent communicator.
type Allreducer func(ctx context.Context, v []int64, least bool) error

// Agree runs the collective part every communicator constructor starts
// with: it checks that every rank called the same constructor with the
// same options and that none had bad arguments (each error reaches every
// rank), and agrees on a context id free in every rank's pool, which it
// leaves reserved (Taken) in every pool.
//
// Each round is one allreduce (maximum) of a rank's lowest free id ≥ a
// starting point (never one it used before), with its negation (to learn
// the minimum too), the signature both ways and the error flag. When every
// rank proposed the same id, that is the id (the usual case: one round).
// Otherwise every rank tries to reserve the largest proposal and an
// allreduce (minimum) tells whether all could; if not, the next round
// starts above it (the next-cid search of Open MPI).
func Agree(ctx context.Context, p *Pool, a Agreement, allreduce Allreducer) (uint32, error) {
	from := uint32(1)
	for {
		cand := p.ReserveFrom(from)
		sig := int64(a.Sig >> 1)
		bad := int64(0)
		if a.Bad != nil {
			bad = 1
		}
		v := append([]int64{int64(cand), -int64(cand), sig, -sig, bad}, a.Max...)
		if err := allreduce(ctx, v, false); err != nil {
			p.Release(cand)
			if a.Bad != nil {
				// This rank's own fault is the better report (in-process
				// ranks cancel each other when one returns first).
				return 0, a.Bad
			}
			return 0, err
		}
		hi, lo := uint32(v[0]), uint32(-v[1])
		copy(a.Max, v[5:])
		switch {
		case a.Bad != nil:
			p.Release(cand)
			return 0, a.Bad
		case v[4] != 0:
			p.Release(cand)
			return 0, fmt.Errorf("%w: another rank passed bad arguments", errs.InvalidArgument)
		case v[2] != -v[3]:
			p.Release(cand)
			return 0, fmt.Errorf("%w: ranks created communicators with different operations or options", errs.Mismatch)
		case lo == 0:
			p.Release(cand)
			return 0, fmt.Errorf("%w: a rank has no free context id left", errs.Unsupported)
		case hi == lo:
			p.Taken(cand)
			return cand, nil
		}
		p.Release(cand)
		mine := p.Reserve(hi)
		ok := []int64{0}
		if mine {
			ok[0] = 1
		}
		if err := allreduce(ctx, ok, true); err != nil {
			if mine {
				p.Release(hi)
			}
			return 0, err
		}
		if ok[0] == 1 {
			p.Taken(hi)
			return hi, nil
		}
		if mine {
			p.Release(hi)
		}
		from = hi + 1
	}
}
