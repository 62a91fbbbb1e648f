package comm

import (
	"context"
	"fmt"
	"github.com/scoll/scoll/schedule"

	"github.com/scoll/scoll/exec"
	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// The native paths of the transports (algorithms.ExchangePath, MeetPath):
// the planner chose them by their Rules (algorithms.ExchangeRule,
// MeetRule), which the transport's capabilities and the call's form let
// run; their data movement is exec's (exec.ExchangeInput, ExchangeResult,
// MeetFunc), their protocol the transport's.

// runExchange runs a prepared blocking call as an exchange with sequence
// number seq: every rank publishes its input, waits for every rank's, and
// computes its own result from all of them, in rank order.
func (cl *Call) runExchange(ctx context.Context, seq uint64) error {
	c := cl.c
	x := &c.paths.xch
	x.Comm, x.Seq, x.Sig, x.Spin = c.id, seq, cl.sig, c.spin
	// Ranks that need no peer's payload do not wait for it.
	x.Flow, x.Root = transport.FlowAll, cl.root
	switch cl.coll {
	case schedule.Bcast:
		x.Flow = transport.FlowFromRoot
	case schedule.Reduce:
		x.Flow = transport.FlowToRoot
	}
	x.Payload = exec.ExchangeInput(cl.coll, c.rank, c.size, cl.root, cl.send, cl.recv)
	err := c.paths.exchanger.Exchange(ctx, x)
	x.Payload = nil // do not keep the caller's buffer
	if err != nil {
		return err
	}
	exec.ExchangeResult(cl.coll, c.rank, c.size, cl.root, x.Data, cl.recv, cl.kernel)
	return nil
}

// runMeet runs the call as a meeting with sequence number seq: the last
// rank to arrive combines every input in rank order and writes every
// rank's result (exec.MeetFunc).
func (cl *Call) runMeet(ctx context.Context, seq uint64) error {
	in := cl.send
	if in == nil {
		in = cl.recv // in place
	}
	fn := exec.MeetFunc(cl.coll, cl.root, cl.kernel)
	if fn == nil {
		return fmt.Errorf("%w: no shared-memory form", errs.Unsupported)
	}
	key := transport.Key{Comm: cl.c.id, Seq: seq}
	// Ranks that took a message schedule for this call (a mismatch) find
	// this record when they wait, fail, and so end the meeting.
	if ch := cl.c.paths.checker; ch != nil {
		ch.RecordCall(cl.c.id, seq, cl.sig)
	}
	return cl.c.paths.meeter.Meet(ctx, key, cl.sig, exec.MeetArg{In: in, Out: cl.recv}, fn)
}
