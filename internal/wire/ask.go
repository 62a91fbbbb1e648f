package wire

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// Asker sends lookups (a distributed table's rows, a chain's walks, posts)
// to the responders of a service (transport.Responder). It implements
// split.Asker.
type Asker struct {
	E       *Endpoint
	Service uint64
	next    atomic.Int64 // request tags
}

// Ask implements split.Asker: every request goes out at once (each at
// most transport.MaxRequest bytes) and every reply is awaited. A reply
// shorter than its buffer shortens it (the owner could not answer).
func (a *Asker) Ask(ctx context.Context, to []int32, reqs, replies [][]byte) error {
	e := a.E
	if e.closed() {
		return errs.Closed
	}
	msgs := make([]transport.Msg, 0, 2*len(reqs))
	for i, req := range reqs {
		if len(req) > transport.MaxRequest {
			return fmt.Errorf("%w: lookup of %d bytes", errs.InvalidArgument, len(req))
		}
		k := transport.Key{Comm: a.Service, Tag: a.next.Add(1) % transport.ReplyTag}
		msgs = append(msgs,
			transport.Msg{Peer: int(to[i]), Key: transport.ReplyKey(k), Buf: replies[i]},
			transport.Msg{Peer: int(to[i]), Key: k, Buf: req, Eager: true})
	}
	w := e.Waiter()
	if posted, err := postWait(ctx, e.T, w, msgs, func(i int) bool { return i%2 == 1 }); err != nil {
		withdraw(e.T, w, msgs[:posted])
		return fmt.Errorf("lookup: %w", err)
	}
	transport.EndRound(e.T, w)
	for i := 0; i < len(msgs); i += 2 {
		if err := msgs[i].Err; err != nil {
			return fmt.Errorf("lookup: %w", err)
		}
		if err := msgs[i+1].Err; err != nil {
			return fmt.Errorf("lookup: %w", err)
		}
		replies[i/2] = replies[i/2][:msgs[i].N]
	}
	return nil
}
