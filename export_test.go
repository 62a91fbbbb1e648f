package scoll

import (
	"context"
	"time"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/comm"
	"github.com/scoll/scoll/internal/plan"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/transport/inproc"
)

// WithLanesForTest forces the in-process transport's lanes on or off.
func WithLanesForTest(on bool) Option { return WithLanes(on) }

// WithExchangesForTest forces the in-process transport's exchanges on or off.
func WithExchangesForTest(on bool) Option { return withWorld(inproc.Exchanges(on)) }

// ExchangeLimitForTest returns the transport's largest exchange input, in
// bytes, on c (-1: no exchanges).
func ExchangeLimitForTest(c *Comm) int { return c.c.ExchangeLimit() }

// ExchangeMaxForTest returns the largest input per rank, in bytes, with
// which a blocking call of coll with the default algorithm runs as an
// exchange on c (-1: none).
func ExchangeMaxForTest(c *Comm, coll string) int {
	cl, _ := schedule.ParseCollective(coll)
	n := -1
	for b := 0; b <= c.c.ExchangeLimit(); b++ {
		p := algorithms.Params{Spec: schedule.Spec{Coll: cl, Size: c.Size(), Count: b}, ElemSize: 1}
		if algorithms.ExchangeRule.Takes(&p, c.c.Caps(true)) == algorithms.Default {
			n = b
		}
	}
	return n
}

// SetSplitHookForTest makes fn run before each round of the splits of c's
// rank.
func SetSplitHookForTest(c *Comm, fn func(round int)) { comm.HooksOf(c.c).Split = fn }

// MeetsForTest reports whether c may run small calls as shared-memory
// meetings.
func MeetsForTest(c *Comm) bool { return c.c.Meets() }

// GridForTest returns the process grid c gives the topology-aware
// algorithms by default (nil: DefaultGrid).
func GridForTest(c *Comm) []int { return c.c.Grid() }

// PlacementForTest returns the machine and nodes c gives the path
// algorithms by default (nil: rank r on node r).
func PlacementForTest(c *Comm) (machine, nodes []int) {
	pl := c.c.Placement()
	if pl == nil {
		return nil, nil
	}
	return pl.Machine, pl.Nodes
}

// WithHostsForTest makes SplitByNode see the node name f(world rank).
func WithHostsForTest(f func(worldRank int) string) Option {
	return func(c *runConfig) { c.hooks.Hostname = f }
}

// PathForTest prepares a blocking allreduce (bcast for coll "bcast") of
// count float32s on c with opts and tells what would move its bytes:
// "exchange" or "meet" for the shared-memory paths, else "plan:" and the
// algorithm whose schedule runs.
func PathForTest(c *Comm, coll string, count int, opts ...CallOption) (string, error) {
	var cl comm.Call
	buf := make([]float32, count)
	var err error
	if coll == "bcast" {
		err = prepare(&cl, context.Background(), c, plan.Args{Coll: schedule.Bcast}, nil, buf, Op{}, true, opts)
	} else {
		err = prepare(&cl, context.Background(), c, plan.Args{Coll: schedule.Allreduce}, buf, make([]float32, count), Sum, true, opts)
	}
	switch {
	case err != nil:
		return "", err
	case cl.Path() == algorithms.ExchangePath:
		return "exchange", nil
	case cl.Path() == algorithms.MeetPath:
		return "meet", nil
	}
	return "plan:" + cl.Algorithm(), nil
}

// PredictionForTest returns the arrival times call site id of c predicts
// for its next call (nil: none).
func PredictionForTest(c *Comm, id string) []time.Duration { return c.c.Prediction(id) }

// ClockOffsetForTest returns c's estimated clock offset to rank 0 and
// whether it was estimated.
func ClockOffsetForTest(c *Comm) (time.Duration, bool) { return c.c.ClockOffset() }

// PlansForTest returns the number of plans c keeps.
func PlansForTest(c *Comm) int { return c.c.Plans() }

// SetModelHookForTest makes fn rank r's local machine model on c's rank
// (as if each rank measured its own γ or read its own parameters file).
func SetModelHookForTest(c *Comm, fn func(r int) (algorithms.Machine, *algorithms.LogP)) {
	comm.HooksOf(c.c).Model = fn
}

// CapsForTest returns what c and a call's form (blocking or not) offer the
// native paths, as scoll sim --caps takes them.
func CapsForTest(c *Comm, blocking bool) string { return c.c.Caps(blocking).String() }

// MachineForTest returns the cost model of c's default algorithm choice.
func MachineForTest(c *Comm) algorithms.Machine { return c.c.Machine() }
