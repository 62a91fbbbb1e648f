package scoll

import (
	"context"
	"time"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/transport/inproc"
)

// WithLanesForTest forces the in-process transport's lanes on or off.
func WithLanesForTest(on bool) Option { return WithLanes(on) }

// WithExchangesForTest forces the in-process transport's exchanges on or off.
func WithExchangesForTest(on bool) Option { return withWorld(inproc.Exchanges(on)) }

// ExchangeLimitForTest returns the transport's largest exchange input, in
// bytes, on c (-1: no exchanges).
func ExchangeLimitForTest(c *Comm) int { return c.exchLimit }

// ExchangeMaxForTest returns the largest input per rank, in bytes, with
// which a blocking call of coll with the default algorithm runs as an
// exchange on c (-1: none).
func ExchangeMaxForTest(c *Comm, coll string) int {
	cl, _ := schedule.ParseCollective(coll)
	n := -1
	for b := 0; b <= c.exchLimit; b++ {
		if c.exchangeable(cl, b) {
			n = b
		}
	}
	return n
}

// SetSplitHookForTest makes fn run before each round of the splits of c.
func SetSplitHookForTest(c *Comm, fn func(round int)) { c.splitHook = fn }

// MeetsForTest reports whether c may run small calls as shared-memory
// meetings.
func MeetsForTest(c *Comm) bool { return c.meeter != nil }

// GridForTest returns the process grid c gives the topology-aware
// algorithms by default (nil: DefaultGrid).
func GridForTest(c *Comm) []int { return c.grid }

// PlacementForTest returns the machine and nodes c gives the path
// algorithms by default (nil: rank r on node r).
func PlacementForTest(c *Comm) (machine, nodes []int) {
	if c.place == nil {
		return nil, nil
	}
	return c.place.Machine, c.place.Nodes
}

// FakeHostsForTest makes SplitByNode see the node name f(world rank) and
// returns what undoes it.
func FakeHostsForTest(f func(worldRank int) string) (restore func()) {
	prev := hostnameOf
	hostnameOf = func(c *Comm) (string, error) { return f(c.t.Rank()), nil }
	return func() { hostnameOf = prev }
}

// PathForTest prepares a blocking allreduce (bcast for coll "bcast") of
// count float32s on c with opts and tells what would move its bytes:
// "exchange" or "meet" for the shared-memory paths, else "plan:" and the
// algorithm whose schedule runs.
func PathForTest(c *Comm, coll string, count int, opts ...CallOption) (string, error) {
	var cl call
	buf := make([]float32, count)
	var err error
	if coll == "bcast" {
		err = prepBcast(&cl, context.Background(), c, buf, 0, opts)
	} else {
		err = prepAllreduce(&cl, context.Background(), c, buf, make([]float32, count), Sum, opts)
	}
	switch {
	case err != nil:
		return "", err
	case cl.exch:
		return "exchange", nil
	case cl.meet:
		return "meet", nil
	}
	return "plan:" + cl.info.Name, nil
}

// PredictionForTest returns the arrival times call site id of c predicts
// for its next call (nil: none).
func PredictionForTest(c *Comm, id string) []time.Duration {
	c.sitesMu.Lock()
	defer c.sitesMu.Unlock()
	if s := c.sites[id]; s != nil {
		return s.Prediction()
	}
	return nil
}

// ClockOffsetForTest returns c's estimated clock offset to rank 0 and
// whether it was estimated.
func ClockOffsetForTest(c *Comm) (time.Duration, bool) { return c.clockOff, c.clockSynced }

// PlansForTest returns the number of plans c keeps.
func PlansForTest(c *Comm) int { return c.plans.Len() }

// SetModelHookForTest makes fn rank r's local machine model on c (as if
// each rank measured its own γ or read its own parameters file).
func SetModelHookForTest(c *Comm, fn func(r int) (algorithms.Machine, *algorithms.LogP)) {
	c.modelHook = fn
}
