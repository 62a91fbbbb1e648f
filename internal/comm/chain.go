package comm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/exec"
	"github.com/scoll/scoll/internal/chain"
	"github.com/scoll/scoll/internal/cid"
	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/internal/plan"
	"github.com/scoll/scoll/internal/wire"
	"github.com/scoll/scoll/schedule"
)

// The chain path (algorithms.ChainPath): Moody et al.'s collectives over
// the communicator's chain, run by package internal/chain, which moves the
// bytes; here the call gets its connection and place in the chain, and a
// watch for ranks that disagree on the call.

// runChain runs a prepared call on the chain path.
func (cl *Call) runChain(ctx context.Context) error {
	c, k, coll := cl.c, cl.kernel, cl.coll
	m := cl.countBytes()
	switch coll {
	case schedule.Bcast:
		return c.chainCall(ctx, cl.sig, k, func(ctx context.Context, x *chain.Call) error {
			return x.Bcast(ctx, cl.root, cl.recv)
		})
	case schedule.Reduce:
		return cl.chainReduce(ctx, cl.root, cl.send, cl.recv, cl.sig)
	case schedule.Allreduce:
		if !cl.exact {
			// A double scan groups every rank's terms differently, and
			// floating point rounds each grouping its own way: a reduce to
			// rank 0 and a broadcast give every rank the same bits
			// (2⌈lg n⌉ rounds).
			in := cl.send
			if in == nil && c.rank != 0 {
				in = cl.recv
			}
			if err := cl.chainReduce(ctx, 0, in, cl.recv, subSig(cl.sig, 1)); err != nil {
				return err
			}
			return c.chainCall(ctx, subSig(cl.sig, 2), k, func(ctx context.Context, x *chain.Call) error {
				return x.Bcast(ctx, 0, cl.recv)
			})
		}
		fallthrough
	case schedule.Scan, schedule.Exscan:
		in := cl.send
		if in == nil {
			in = cl.recv
		}
		var w chain.Want
		switch coll {
		case schedule.Scan:
			w = chain.Want{LR: true}
		case schedule.Exscan:
			w = chain.Want{LR: true, ExL: true}
		default: // (send_0 ⊕ … ⊕ send_r) ⊕ (send_r+1 ⊕ … ⊕ send_n−1)
			w = chain.Want{LR: true, RL: true, ExR: true}
		}
		return c.chainCall(ctx, cl.sig, k, func(ctx context.Context, x *chain.Call) error {
			accL, _, exL, exR, err := x.Scan(ctx, in, w)
			if err != nil {
				return err
			}
			switch {
			case coll == schedule.Exscan:
				if exL != nil {
					copy(cl.recv, exL)
				}
				return nil
			case coll == schedule.Allreduce && exR != nil:
				k.Reduce(accL, exR)
			}
			copy(cl.recv, accL)
			return nil
		})
	case schedule.Gather:
		out := cl.recv
		if c.rank == cl.root && cl.send != nil {
			copy(out[cl.root*m:(cl.root+1)*m], cl.send)
		}
		return c.chainCall(ctx, cl.sig, k, func(ctx context.Context, x *chain.Call) error {
			return x.Gather(ctx, cl.root, m, cl.send, out)
		})
	case schedule.Scatter:
		if c.rank == cl.root && cl.recv != nil {
			copy(cl.recv, cl.send[cl.root*m:(cl.root+1)*m])
		}
		return c.chainCall(ctx, cl.sig, k, func(ctx context.Context, x *chain.Call) error {
			return x.Scatter(ctx, cl.root, m, cl.send, cl.recv)
		})
	}
	return fmt.Errorf("%w: no chain form", errs.Unsupported)
}

// countBytes returns the bytes of one rank's block (its count).
func (cl *Call) countBytes() int {
	switch {
	case cl.coll == schedule.Gather && cl.send != nil:
		return len(cl.send)
	case cl.coll == schedule.Gather:
		return len(cl.recv) / cl.c.size
	case cl.coll == schedule.Scatter && cl.recv != nil:
		return len(cl.recv)
	case cl.coll == schedule.Scatter:
		return len(cl.send) / cl.c.size
	}
	return 0
}

// chainReduce reduces in into recv at root along the chain.
func (cl *Call) chainReduce(ctx context.Context, root int, in, recv []byte, sig uint64) error {
	c := cl.c
	if in == nil && c.rank == root {
		in = recv // in place
	}
	n := len(in)
	acc := chain.Msg(n)
	copy(acc[chain.Hdr:], in)
	if err := c.chainCall(ctx, sig, cl.kernel, func(ctx context.Context, x *chain.Call) error {
		return x.Reduce(ctx, root, acc)
	}); err != nil {
		return err
	}
	if c.rank == root {
		copy(recv, acc[chain.Hdr:])
	}
	return nil
}

// subSig returns the signature of part i of a call of signature sig.
func subSig(sig uint64, i uint64) uint64 {
	h := plan.Hash(sig)
	h.Add(i)
	return h.Sig(plan.SigKind(sig))
}

// chainCall runs f as one chain collective with signature sig and kernel k
// on c.
func (c *Comm) chainCall(ctx context.Context, sig uint64, k exec.Kernel, f func(context.Context, *chain.Call) error) error {
	x, ctx, err := c.chainStart(ctx, sig, k)
	if err != nil {
		return err
	}
	return x.end(f(ctx, x.Call))
}

// chainStart begins a chain call on c: c's place in its chain and a
// connection in a message space of the call's own (the next sequence
// number of c). A failure is reported to the others.
//
// Ranks that disagree about the call (another collective, root or count)
// may post messages that never match, so the call is recorded with the
// transport's Checker, as the executor records its calls, and while it
// runs a timer asks the Checker now and then (after 0.5 ms, then ever
// less often, up to every 50 ms) whether the neighbouring ranks recorded
// another call: the returned context is then cancelled with the mismatch.
// end must be called when the call is over.
func (c *Comm) chainStart(ctx context.Context, sig uint64, k exec.Kernel) (*chainX, context.Context, error) {
	l, err := c.endpoint().Links(ctx)
	if err != nil {
		c.abandonIn(err, true)
		return nil, ctx, err
	}
	conn := c.conn(sig)
	x := &chainX{Call: chain.New(conn, l, k), c: c, conn: conn}
	ck := c.paths.checker
	if ck == nil || c.size == 1 {
		return x, ctx, nil
	}
	seq := x.conn.Seq()
	// The communicator's record, which the executor's calls share (they
	// number their calls from the same sequence). Transports whose ranks
	// cannot see each other find mismatches as messages arrive, by the
	// key they carry: the call's own message space is recorded there too.
	ck.RecordCall(c.id, seq, sig)
	if c.rs.tc.CallAborter != nil {
		x.space = c.id | cid.SplitBit
		ck.RecordCall(x.space, seq, sig)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	delay := 500 * time.Microsecond
	var tick func()
	tick = func() {
		if err := x.check(false); err != nil {
			cancel(err)
			return
		}
		x.mu.Lock()
		defer x.mu.Unlock()
		if x.timer != nil {
			delay = min(2*delay, 50*time.Millisecond)
			x.timer.Reset(delay)
		}
	}
	x.mu.Lock()
	x.timer = time.AfterFunc(delay, tick)
	x.mu.Unlock()
	x.cancel = cancel
	return x, ctx, nil
}

// chainX is one chain collective on one rank: the algorithms' call
// (package internal/chain) and the watch of chainStart.
type chainX struct {
	*chain.Call
	c    *Comm
	conn *wire.Conn

	// The watch of chainStart (nil cancel: none) and the second message
	// space it records the call in (0: none).
	space  uint64
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	timer  *time.Timer // nil once the call is over
}

// check asks the Checker whether another rank recorded this call with
// another signature.
func (x *chainX) check(full bool) error {
	c, seq, sig := x.c, x.conn.Seq(), x.conn.Sig()
	if err := c.paths.checker.CheckCall(c.id, seq, sig, full); err != nil || x.space == 0 {
		return err
	}
	return c.paths.checker.CheckCall(x.space, seq, sig, full)
}

// end finishes a chain call: it stops the watch of chainStart and returns
// err (nil or not) as the call's error, a mismatch the Checker knows of
// first.
func (x *chainX) end(err error) error {
	if x.cancel != nil {
		x.mu.Lock()
		x.timer.Stop()
		x.timer = nil
		x.mu.Unlock()
		x.cancel(nil)
		if err != nil {
			if cerr := x.check(true); cerr != nil && !errors.Is(err, errs.Mismatch) {
				err = fmt.Errorf("%w (then: %w)", cerr, err)
			}
		}
	}
	return err
}

// Pseudo-collectives of the signatures of the double scans.
const (
	sigDoubleScan   = uint64(schedule.NumCollectives) + 1
	sigDoubleExscan = uint64(schedule.NumCollectives) + 2
)

// dscan names the double scans in errors.
type dscan bool

func (d dscan) String() string {
	if d {
		return "doubleexscan"
	}
	return "doublescan"
}

// DoubleScan runs Moody et al.'s double scan of send (the results in
// fromLeft and fromRight; exclusive ones with exclusive) with op along
// c's chain. The only algorithm o may name is the chain.
func (c *Comm) DoubleScan(ctx context.Context, send, fromLeft, fromRight []byte, op *Op, exclusive bool, o *plan.Options) error {
	name := dscan(exclusive)
	err := c.Usable(ctx)
	if err == nil && (len(fromLeft) != len(send) || len(fromRight) != len(send)) {
		es := max(op.Kernel.ElemSize, 1)
		err = plan.Invalid("len(send)=%d, len(fromLeft)=%d, len(fromRight)=%d: want equal lengths", len(send)/es, len(fromLeft)/es, len(fromRight)/es)
	}
	if err == nil && op.Err != nil {
		err = op.Err
	}
	if err == nil {
		err = o.CheckOnly(name, c.size, algorithms.Chain)
	}
	if err != nil {
		if c != nil {
			c.abandonIn(err, true)
		}
		return err
	}
	coll := sigDoubleScan
	if exclusive {
		coll = sigDoubleExscan
	}
	h := plan.NewHash()
	h.Add(coll, uint64(len(send)), uint64(op.Kernel.ElemSize), op.ID)
	w := chain.Want{LR: true, RL: true, ExL: exclusive, ExR: exclusive}
	return c.chainCall(ctx, h.Sig(0), op.Kernel, func(ctx context.Context, x *chain.Call) error {
		accL, accR, exL, exR, err := x.Scan(ctx, send, w)
		if err != nil {
			return err
		}
		if !exclusive {
			copy(fromLeft, accL)
			copy(fromRight, accR)
			return nil
		}
		if exL != nil {
			copy(fromLeft, exL)
		}
		if exR != nil {
			copy(fromRight, exR)
		}
		return nil
	})
}
