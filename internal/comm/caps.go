package comm

import (
	"runtime"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/transport"
)

// paths is what a communicator's transport offers its calls: the checks
// of a call's agreement and the native paths, with the capabilities the
// planner sees (algorithms.Caps).
type paths struct {
	checker   transport.Checker   // nil unless the transport checks calls
	meeter    transport.Meeter    // nil unless the ranks meet in shared memory
	exchanger transport.Exchanger // nil unless the transport exchanges
	xch       transport.Exchange  // the record blocking exchanges reuse (one at a time)
	caps      algorithms.Caps     // CapExchange and CapMeet, with the exchange's slot size
}

// pathsOf returns what a transport (or a communicator's view of it)
// offering tc offers a communicator; members tells whether the
// communicator knows every member's address (the meeting needs them).
func pathsOf(tc transport.Caps, size int, members bool) paths {
	var p paths
	p.checker = tc.Checker
	if m := tc.Meeter; m != nil && members {
		p.meeter = m
		p.caps.Has |= algorithms.CapMeet
		// The CPUs are counted once, when the communicator is made: every
		// rank of a process counts alike, and a call does not take the
		// scheduler's lock to ask.
		if size > runtime.GOMAXPROCS(0) {
			p.caps.Has |= algorithms.CapOversubscribed
		}
	}
	if x := tc.Exchanger; x != nil && x.ExchangeLimit() >= 0 {
		p.exchanger = x
		p.caps.Has |= algorithms.CapExchange
		p.caps.ExchangeBytes = x.ExchangeLimit()
	}
	return p
}

// Caps returns what c and a call's form offer the native paths (see
// algorithms.Cap): the transport's exchange and meeting, more ranks than
// CPUs (GOMAXPROCS when c was made) where they meet, a chain that has not
// learnt its members, a blocking call. Every rank of a call computes the
// same.
func (c *Comm) Caps(blocking bool) algorithms.Caps {
	k := c.paths.caps
	if blocking {
		k.Has |= algorithms.CapBlocking
	}
	if c.unlearntChain() {
		k.Has |= algorithms.CapChain
	}
	return k
}
