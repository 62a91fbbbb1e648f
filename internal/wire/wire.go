// Package wire carries the messages of communicator construction over a
// transport: the rounds of a split algorithm (split.Conn), the replies a
// sorting split posts to its contributors (split.Poster), the lookups of a
// distributed table or a chain (split.Asker), and a chain's links and
// members. The public package holds the communicators; this package holds
// what their constructors send.
//
// Every message lives in a message space derived from the communicator's
// context id by the bits of package cid: a split's rounds and its posts'
// sentinels in id|cid.SplitBit (sequence number: the call's), lookups in
// id|cid.ServiceBit, posts in id|cid.PostBit.
package wire

import (
	"context"
	"fmt"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/split"
	"github.com/scoll/scoll/transport"
)

// Endpoint is one rank's communicator as its construction messages see
// it. Its fields do not change once a communicator exists.
type Endpoint struct {
	T transport.Transport
	// ID is the communicator's context id (see package cid).
	ID         uint64
	Rank, Size int
	// Group is the membership: nil when ranks are transport addresses
	// (the world).
	Group split.Group
	// Spin is the waiters' spin count before they block.
	Spin int
	// Closed reports whether the communicator was closed (nil: never).
	Closed func() bool
	// Hook, when set (by tests), runs before each round of a Conn with
	// the number of rounds the Conn ran before.
	Hook func(round int)
}

// Waiter returns a waiter for operations posted on e's transport (one
// that polls it when the transport progresses by polling).
func (e *Endpoint) Waiter() *transport.Waiter {
	w := transport.NewWaiter(e.Spin)
	if p := transport.CapsOf(e.T).Poller; p != nil {
		w.SetPoller(p)
	}
	return w
}

func (e *Endpoint) closed() bool { return e.Closed != nil && e.Closed() }

// Addr returns the transport address of rank r.
func (e *Endpoint) Addr(ctx context.Context, r int) (int, error) {
	if e.Group == nil {
		return r, nil
	}
	if a, ok := e.Group.Addr(r); ok {
		return int(a), nil
	}
	var out [1]int32
	if err := e.Group.Resolve(ctx, []int{r}, out[:]); err != nil {
		return 0, err
	}
	return int(out[0]), nil
}

// Links returns this rank's place in the communicator seen as a chain: its
// own, its neighbours' and rank 0's transport addresses.
func (e *Endpoint) Links(ctx context.Context) (split.Links, error) {
	if ch, ok := e.Group.(*split.Chain); ok {
		return ch.Links, nil
	}
	l := split.Links{Rank: e.Rank, Size: e.Size, Left: split.None, Right: split.None}
	want := []int{e.Rank, 0}
	if e.Rank > 0 {
		want = append(want, e.Rank-1)
	}
	if e.Rank+1 < e.Size {
		want = append(want, e.Rank+1)
	}
	addrs := make([]int32, len(want))
	for i, r := range want {
		addrs[i] = int32(r)
	}
	if e.Group != nil {
		if err := e.Group.Resolve(ctx, want, addrs); err != nil {
			return l, err
		}
	}
	l.Self, l.First = addrs[0], addrs[1]
	for i, r := range want[2:] {
		if r < e.Rank {
			l.Left = addrs[2+i]
		} else {
			l.Right = addrs[2+i]
		}
	}
	return l, nil
}

// RunItems runs split.RunItems and turns a panic of a user comparator into
// an error.
func RunItems(ctx context.Context, c split.Conn, it split.Item, l split.Links, sh split.Shape, o split.Options) (res *split.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("%w: split: a comparator panicked: %v", errs.InvalidArgument, p)
		}
	}()
	return split.RunItems(ctx, c, it, l, sh, o)
}
