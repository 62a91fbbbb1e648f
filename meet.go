package scoll

import (
	"context"
	"fmt"
	"runtime"

	"github.com/scoll/scoll/exec"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/transport"
)

// meetBytes is the largest message for which calls may use a shared-memory
// meeting.
const meetBytes = 4096

// meetable reports whether a call of coll (allreduce, reduce, bcast or
// barrier) with n bytes per rank runs as a shared-memory meeting by default: when the transport supports meetings
// (ranks in one process) and the ranks outnumber the CPUs, so that waiting
// ranks park. Then message schedules pay a goroutine wake-up per message,
// while a meeting wakes each rank once. Every rank decides alike: the rule
// depends only on the call and the process.
func (c *Comm) meetable(coll schedule.Collective, n int) bool {
	return c.meeter != nil && c.size > runtime.GOMAXPROCS(0) && n <= meetBytes && meets(coll)
}

// meets reports whether coll has a shared-memory meeting (the meet
// algorithm's collectives).
func meets(coll schedule.Collective) bool {
	switch coll {
	case schedule.Allreduce, schedule.Barrier, schedule.Bcast, schedule.Reduce:
		return true
	}
	return false
}

// runMeet runs the call as a meeting: the last rank to arrive combines every
// input in rank order and writes every rank's result (exec.MeetFunc).
func (cl *call) runMeet(ctx context.Context, seq uint64) error {
	in := cl.send
	if in == nil {
		in = cl.recv // in place
	}
	fn := exec.MeetFunc(cl.coll, cl.root, cl.kernel)
	if fn == nil {
		return fmt.Errorf("%w: %s has no shared-memory form", ErrUnsupported, cl.coll)
	}
	key := transport.Key{Comm: cl.c.id, Seq: seq}
	// Ranks that took a message schedule for this call (a mismatch) find
	// this record when they wait, fail, and so end the meeting.
	if ch := cl.c.checker; ch != nil {
		ch.RecordCall(cl.c.id, seq, cl.sig)
	}
	if err := cl.c.meeter.Meet(ctx, key, cl.sig, exec.MeetArg{In: in, Out: cl.recv}, fn); err != nil {
		return fmt.Errorf("%s/meet: %w", cl.coll, err)
	}
	return nil
}
