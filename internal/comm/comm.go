// Package comm is the communicator behind package scoll's Comm: its state,
// how a collective call is planned and which way it runs (a message
// schedule, a transport's exchange or meeting, the chain collectives), the
// communicator constructors (split, dup, create), point-to-point messages,
// call sites and the agreement on a machine model. Package scoll is the
// typed public API over it: it turns a call's arguments into bytes, an
// operator's kernel and options, and hands them here.
//
// # How a call runs
//
// Every way a call runs is a registry entry (package algorithms): a
// message schedule, or a native path with a Rule saying when it runs
// natively. Prepare evaluates the call's capabilities (Caps: what the
// transport, the communicator and the call's form offer), lets the
// planner (internal/plan) choose the entry and its path, and the call
// dispatches on that path (Call.run). Nothing else decides.
package comm

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/cid"
	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/internal/kernels"
	"github.com/scoll/scoll/internal/plan"
	"github.com/scoll/scoll/internal/wire"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/split"
	"github.com/scoll/scoll/transport"
)

// Undefined is the color of a rank that joins no communicator in a split,
// and the rank TranslateRanks gives a rank that is not a member.
const Undefined = -1

// Comm is one rank's communicator.
//
// A derived communicator shares its rank's transport endpoint with the
// world. It has its own context id, agreed by the ranks of its parent
// (cid.Agree), so its messages never match another communicator's; its
// members are a split.Group (a replicated table, Sack's distributed table
// or Moody's chain), and every call translates its ranks into transport
// addresses before it posts (a plan's peers are resolved once, when the
// plan is made). Siblings made by one split share a context id but not a
// leader (the transport address of their rank 0); communicators with a
// member in common never share a context id while both live, because that
// member reserved it for the first.
type Comm struct {
	t      transport.Transport
	rs     *rankState // shared by every communicator of this rank
	id     uint64     // context id and leader (cid.ID)
	rank   int
	size   int
	spin   int
	seq    atomic.Uint64
	closed atomic.Bool

	mem     members // a derived communicator's membership (zero for the world)
	layout  layout  // where the ranks sit, for the topology- and node-aware algorithms
	paths   paths   // what the transport offers the native paths
	release func() error

	// agreed is the machine model every rank agreed on (agreeModel; nil
	// before).
	agreed *localModel
	plans  plan.Cache
	sites  sites
}

// layout is where a communicator's ranks sit, the defaults of the
// topology-aware and node-aware algorithms and of the cost model.
type layout struct {
	// grid is the process grid (from SplitGrid; nil: DefaultGrid).
	grid []int
	// place is where the ranks sit on the machine (a derived
	// communicator's members; nil: rank r on node r).
	place *algorithms.Placement
	// nodes is the node of each rank (nil: not known).
	nodes []int
	// machine is the cost model of the default algorithm choice: the
	// transport's (transport.Modeler), else in-process ranks'.
	machine algorithms.Machine
}

// Config is how New makes a world communicator.
type Config struct {
	// Spin is how many times a waiting rank polls before it parks (-1: the
	// transport's hint, or 0).
	Spin int
	// Settings are the environment's and the options' settings.
	Settings *Settings
	// Release is what Close does (nil: nothing).
	Release func() error
}

// New returns the world communicator over t: its ranks are the
// transport's.
func New(t transport.Transport, cfg Config) *Comm {
	c := &Comm{t: t, id: 1, rank: t.Rank(), size: t.Size(), release: cfg.Release}
	c.rs = &rankState{set: cfg.Settings}
	if c.rs.set == nil {
		c.rs.set = &Settings{}
	}
	c.rs.hooks = c.rs.set.Hooks
	c.rs.tc = transport.CapsOf(t)
	tc := &c.rs.tc
	if n := tc.Noder; n != nil && len(n.Nodes()) == c.size {
		c.rs.nodes = n.Nodes()
		c.layout.nodes = c.rs.nodes
	}
	c.paths = pathsOf(*tc, c.size, true)
	c.layout.machine = algorithms.InProcess
	if m := tc.Modeler; m != nil {
		c.layout.machine.Alpha, c.layout.machine.Beta = m.Model()
	}
	c.spin = cfg.Spin
	if c.spin < 0 {
		c.spin = 0
		if h := tc.SpinHinter; h != nil {
			c.spin = h.SpinHint()
		}
	}
	return c
}

// rankState is what the communicators of one rank share.
type rankState struct {
	closed atomic.Bool    // the world was closed: every derived communicator fails
	cids   cid.Pool       // the context ids in use and the floor (never reused)
	set    *Settings      // the environment's and the options' settings
	nodes  []int          // the node of each of the transport's ranks (nil: not known)
	tc     transport.Caps // what the transport offers (transport.CapsOf)
	hooks  Hooks          // what tests injected
}

// Rank returns the caller's rank in [0, Size()).
func (c *Comm) Rank() int { return c.rank }

// Size returns the number of ranks.
func (c *Comm) Size() int { return c.size }

// Transport returns the transport endpoint c runs over.
func (c *Comm) Transport() transport.Transport { return c.t }

// Exit marks c and its world closed (the end of a rank of Run).
func (c *Comm) Exit() {
	c.closed.Store(true)
	c.rs.closed.Store(true)
}

// isClosed reports whether c or its world was closed.
func (c *Comm) isClosed() bool { return c.closed.Load() || c.rs.closed.Load() }

// Usable returns the error of a call that cannot start on c now: a nil
// communicator or context, a closed communicator, an ended context, a bad
// environment.
func (c *Comm) Usable(ctx context.Context) error {
	if c == nil {
		return fmt.Errorf("%w: nil communicator", errs.InvalidArgument)
	}
	if c.isClosed() {
		return errs.Closed
	}
	if ctx == nil {
		return fmt.Errorf("%w: nil context", errs.InvalidArgument)
	}
	if ctx.Err() != nil {
		return transport.CtxErr(ctx)
	}
	return c.rs.set.Err
}

// closeSettle bounds how long Close waits for the peers to take part in
// this rank's last calls (transport.Settler).
const closeSettle = 10 * time.Second

// Close releases c: later calls on it fail with errs.Closed. Closing the
// world closes its transport (its Config.Release); closing a derived
// communicator frees what it holds on this rank (see scoll.Comm.Close).
func (c *Comm) Close() error {
	if c == nil {
		return fmt.Errorf("%w: nil communicator", errs.InvalidArgument)
	}
	if c.closed.Swap(true) {
		return nil
	}
	// A call whose part here was only eager sends may have failed at its
	// receivers: Close reports it when no later call on c did.
	var settled error
	if st := c.rs.tc.Settler; st != nil {
		// Bounded: a live peer that never makes the last call (an
		// erroneous program) must not hold Close forever.
		ctx, cancel := context.WithTimeout(context.Background(), closeSettle)
		settled = st.Settle(ctx, c.id, ^uint64(0))
		cancel()
		if errors.Is(settled, errs.Canceled) {
			settled = fmt.Errorf("%w: closing: the peers did not take part in this rank's last call within %v", errs.PeerFailed, closeSettle)
		}
	}
	if c.mem.grp != nil {
		if c.mem.view != nil {
			c.mem.view.Leave()
		}
		if c.mem.unserve != nil {
			c.mem.unserve()
		}
		c.rs.cids.Release(c.mem.cid)
		c.plans.Clear()
		return settled
	}
	c.rs.closed.Store(true)
	if c.release != nil {
		return errors.Join(settled, c.release())
	}
	return settled
}

// addr returns the transport address of rank r of c.
func (c *Comm) addr(ctx context.Context, r int) (int, error) { return c.endpoint().Addr(ctx, r) }

// endpoint returns c as its construction messages see it.
func (c *Comm) endpoint() *wire.Endpoint {
	return &wire.Endpoint{T: c.t, ID: c.id, Rank: c.rank, Size: c.size, Group: c.mem.grp, Spin: c.spin, Closed: c.isClosed, Hook: c.rs.hooks.Split}
}

// conn returns the connection of a new call on c (a split, a chain
// collective) with signature sig.
func (c *Comm) conn(sig uint64) *wire.Conn { return wire.NewConn(c.endpoint(), c.seq.Add(1), sig) }

// agree runs cid.Agree over c: every constructor's check of its options
// and agreement on a context id.
func (c *Comm) agree(ctx context.Context, a cid.Agreement) (uint32, error) {
	return cid.Agree(ctx, &c.rs.cids, a, c.allreduceInts)
}

// machineDims returns the machine the ranks of c's world sit on: the grid
// of the whole world (DefaultGrid of the world's size in 3 dimensions, or
// the grid a SplitGrid of the world named).
func (c *Comm) machineDims() []int {
	if c.layout.place != nil {
		return c.layout.place.Machine
	}
	return algorithms.DefaultGrid(c.size, 3)
}

// allreduceInts is the agreement's allreduce: along the chain on a chain
// communicator (keeping its O(1) state), else a recursive-doubling
// allreduce (⌈lg n⌉ rounds for any n, what a 40-byte allreduce wants;
// naming it spares each rank the default choice's evaluation of every
// algorithm, which on large parents costs more than the allreduce).
func (c *Comm) allreduceInts(ctx context.Context, v []int64, least bool) error {
	if c.unlearntChain() {
		return wire.ChainAllreduceInts(ctx, c.endpoint(), c.seq.Add(1), v, least)
	}
	op := kernels.Max
	if least {
		op = kernels.Min
	}
	return own(ctx, c, plan.Args{Coll: schedule.Allreduce}, nil, v, op, algorithms.RecursiveDoubling, plan.SigConstructor)
}

// unlearntChain reports whether c keeps its members as a chain it has not
// learnt (a rank knows its neighbours only).
func (c *Comm) unlearntChain() bool {
	ch, ok := c.mem.grp.(*split.Chain)
	return ok && !ch.Learnt()
}
