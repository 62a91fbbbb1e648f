package scoll

import (
	"context"
	"fmt"
	"runtime"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/exec"
	"github.com/scoll/scoll/internal/plan"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/transport"
)

// Exchanges: the fast path of small blocking collectives when the ranks share
// memory and each has a CPU (transport.Exchanger; in-process ranks with
// size ≤ GOMAXPROCS). Every rank publishes its input, polls until every rank
// has published for the same call, and computes its own result from all the
// inputs: no messages, no leader, about one cache-line transfer per peer.
//
//	allreduce  in_0 ⊕ in_1 ⊕ … ⊕ in_{P-1}, combined in rank order by every rank
//	reduce     the same, at the root only
//	bcast      the root's buffer (the others publish nothing)
//	allgather  in_0 ‖ in_1 ‖ … ‖ in_{P-1}
//	barrier    nothing to publish
//
// Every rank folds the inputs in the same order (lower ranks are the left
// operand), so results are bitwise equal on all ranks and non-commutative
// operators are right. Cost: α_shm + P·n·γ per rank, with α_shm about one
// cache-line handoff; every call synchronises all ranks (a bcast root waits
// for the others too), which is what lets two slots per rank suffice.

// exchangeReadBytes bounds the bytes one rank reads from its peers' slots
// in an exchange: all P inputs for allreduce, reduce (at the root) and
// allgather, the root's for bcast. The exchange's per-rank cost grows with
// them (P·n), a message schedule's with n·log P or n, so the bound leaves
// larger inputs and large rank counts to schedules.
//
// Provenance: BenchmarkExchange (exchange_test.go), 2 ranks, Intel Xeon @
// 2.50GHz with 2 vCPUs, Go 1.26; ns per call, exchange / message schedule:
//
//	bytes per rank   8          256         1024
//	allreduce        265/920    500/1200    900/1300
//	bcast            260/800    330/960     465/1060
//	allgather        245/930    460/1150    720/1180
//
// With the slots enlarged to 4 KiB for the measurement, exchanges still won
// at 2 KiB per rank (allreduce 1000/1470) and allgather broke even at 4 KiB
// (1330/1290). The bound keeps half of that, as more ranks also mean more
// cache lines to fetch per rank.
const exchangeReadBytes = 2048

// choosePath decides whether a prepared call runs on a shared-memory path
// (the registered algorithms exchange and meet) instead of its plan: when
// alg (WithAlgorithm's, or the environment's or tuning file's choice)
// names the path and the transport offers it (else the plan,
// its message schedule, runs), or by default (alg "") when the path's rule takes
// the call and WithoutAlgorithm does not exclude it. n is the input bytes
// per rank. Every rank decides alike: the rules depend only on the call,
// the options, the rank count and the transport, equal on all ranks.
func (cl *call) choosePath(alg string, o *plan.Options, n int) {
	c, coll := cl.c, cl.coll
	switch alg {
	case algorithms.Exchange:
		cl.exch = c.canExchange(coll, n)
	case algorithms.Meet:
		cl.meet = c.meeter != nil && meets(coll)
	case "":
		cl.exch = !o.Excludes(algorithms.Exchange) && c.exchangeable(coll, n)
		cl.meet = !cl.exch && !o.Excludes(algorithms.Meet) && c.meetable(coll, n)
	}
	// A meeting runs blocking and non-blocking calls alike, so the call
	// reports it (Persistent.Algorithm); an exchange runs blocking calls
	// only, and the others run the plan, whose algorithm the call keeps.
	if cl.meet {
		cl.info = meetInfo[coll]
	}
}

// meetInfo is the meet algorithm's registry entry of each collective that
// has one (looked up once: a meeting is a small call's path, and every
// nanosecond of it shows).
var meetInfo = func() (t [schedule.NumCollectives]*algorithms.Info) {
	for c := range schedule.NumCollectives {
		t[c], _ = algorithms.Lookup(c, algorithms.Meet)
	}
	return t
}()

// canExchange reports whether the transport can run a call of coll with
// n bytes of input per rank as an exchange (its slots hold the input).
func (c *Comm) canExchange(coll schedule.Collective, n int) bool {
	if c.exchanger == nil || n > c.exchLimit {
		return false
	}
	switch coll {
	case schedule.Barrier, schedule.Bcast, schedule.Allreduce, schedule.Reduce, schedule.Allgather:
		return true
	}
	return false
}

// exchangeable reports whether a call of coll with n bytes of input per
// rank runs as an exchange when it is blocking and has the default
// algorithm (the exchange algorithm's When).
func (c *Comm) exchangeable(coll schedule.Collective, n int) bool {
	if !c.canExchange(coll, n) {
		return false
	}
	switch coll {
	case schedule.Barrier:
		return true
	case schedule.Bcast:
		return n <= exchangeReadBytes
	case schedule.Allreduce, schedule.Reduce, schedule.Allgather:
		return n*c.size <= exchangeReadBytes
	}
	return false
}

// exchangeMark is mixed into the signatures of exchanges, so that a rank
// on the exchange path and one running a message schedule for the same
// call (a blocking call on one rank, a non-blocking one on another) see
// different signatures in the transport's call records.
const exchangeMark = 0x65786368616e6765 // "exchange"

// runExchange runs a prepared blocking call as an exchange (its data:
// exec.ExchangeInput and exec.ExchangeResult).
func (cl *call) runExchange(ctx context.Context) error {
	c := cl.c
	if c.isClosed() {
		return ErrClosed
	}
	x := &c.xch
	x.Comm, x.Seq, x.Sig, x.Spin = c.id, c.seq.Add(1), cl.marked(exchangeMark), c.spin
	x.Payload = exec.ExchangeInput(cl.coll, c.rank, c.size, cl.root, cl.send, cl.recv)
	err := c.exchanger.Exchange(ctx, x)
	x.Payload = nil // do not keep the caller's buffer
	if err != nil {
		return fmt.Errorf("%s/exchange: %w", cl.coll, err)
	}
	exec.ExchangeResult(cl.coll, c.rank, c.size, cl.root, x.Data, cl.recv, cl.kernel)
	return nil
}

// Meetings: the path of small calls when the ranks outnumber the CPUs
// (transport.Meeter; the registered algorithm meet).

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
