package comm

import (
	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/split"
)

// What a communicator holds, for tests and diagnostics.

// ExchangeLimit returns the largest input per rank, in bytes, the
// transport's exchange slots hold on c (-1: no exchanges).
func (c *Comm) ExchangeLimit() int {
	if c.paths.caps.Has&algorithms.CapExchange == 0 {
		return -1
	}
	return c.paths.caps.ExchangeBytes
}

// Meets reports whether c's ranks may meet in shared memory.
func (c *Comm) Meets() bool { return c.paths.meeter != nil }

// Grid returns the process grid c gives the topology-aware algorithms by
// default (nil: DefaultGrid).
func (c *Comm) Grid() []int { return c.layout.grid }

// Placement returns where c's ranks sit on the machine (nil: rank r on
// node r).
func (c *Comm) Placement() *algorithms.Placement { return c.layout.place }

// ChainState reports whether c keeps its members as a chain and whether it
// has learnt them.
func (c *Comm) ChainState() (chain, learnt bool) {
	ch, ok := c.mem.grp.(*split.Chain)
	return ok, ok && ch.Learnt()
}

// Plans returns the number of plans c keeps.
func (c *Comm) Plans() int { return c.plans.Len() }

// Machine returns the cost model of c's default algorithm choice.
func (c *Comm) Machine() algorithms.Machine { return c.layout.machine }
