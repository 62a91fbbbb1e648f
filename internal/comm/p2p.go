package comm

import (
	"context"
	"fmt"

	"github.com/scoll/scoll/internal/cid"
	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// p2p keys live on their own context id so they never match collectives.
func (c *Comm) p2pKey(tag int) transport.Key {
	return transport.Key{Comm: c.id | cid.P2PBit, Tag: int64(tag)}
}

// Send sends buf to rank dst with a tag ≥ 0 (scoll.Comm.Send).
func (c *Comm) Send(ctx context.Context, dst, tag int, buf []byte) error {
	if err := c.Usable(ctx); err != nil {
		return err
	}
	if dst < 0 || dst >= c.size || tag < 0 {
		return fmt.Errorf("%w: send to rank %d with tag %d (size %d)", errs.InvalidArgument, dst, tag, c.size)
	}
	peer, err := c.addr(ctx, dst)
	if err != nil {
		return err
	}
	return c.p2p(ctx, &transport.Msg{Peer: peer, Key: c.p2pKey(tag), Buf: buf, Eager: true}, true)
}

// Recv receives a message from rank src with the given tag into buf and
// returns its length. A message longer than buf fails with
// errs.InvalidArgument (its first len(buf) bytes are kept).
func (c *Comm) Recv(ctx context.Context, src, tag int, buf []byte) (int, error) {
	if err := c.Usable(ctx); err != nil {
		return 0, err
	}
	if src < 0 || src >= c.size || tag < 0 {
		return 0, fmt.Errorf("%w: receive from rank %d with tag %d (size %d)", errs.InvalidArgument, src, tag, c.size)
	}
	peer, err := c.addr(ctx, src)
	if err != nil {
		return 0, err
	}
	m := &transport.Msg{Peer: peer, Key: c.p2pKey(tag), Buf: buf}
	err = c.p2p(ctx, m, false)
	return m.N, err
}

// newWaiter returns a waiter for operations posted on c's transport,
// which it keeps progressing while it waits if the transport polls.
func (c *Comm) newWaiter() *transport.Waiter {
	w := transport.NewWaiter(c.spin)
	if p := c.rs.tc.Poller; p != nil {
		w.SetPoller(p)
	}
	return w
}

func (c *Comm) p2p(ctx context.Context, m *transport.Msg, send bool) error {
	w := c.newWaiter()
	m.W = w
	if err := transport.Post(c.t, m, send); err != nil {
		return err
	}
	if err := w.Wait(ctx); err != nil {
		if c.t.Cancel(m) {
			return err
		}
		w.WaitAll()
	}
	transport.EndRound(c.t, w)
	return m.Err
}
