package scoll

import (
	"context"
	"github.com/scoll/scoll/internal/wire"
	"sync/atomic"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/cid"
	"github.com/scoll/scoll/split"
	"github.com/scoll/scoll/transport"
)

// Undefined is the color of a rank that joins no communicator in Split
// (any negative color does), like MPI_UNDEFINED.
const Undefined = -1

// Communicators derived from the world.
//
// A derived communicator shares its rank's transport endpoint with the
// world. It has its own context id, agreed by the ranks of its parent
// (cid.Agree), so its messages never match another communicator's; its
// members are a split.Group (a replicated table or Sack's distributed
// table), and every call translates its ranks into transport addresses
// before it posts (a plan's peers are resolved once, when the plan is
// made). Siblings made by one Split share a context id but not a leader
// (the transport address of their rank 0); communicators with a member in
// common never share a context id while both live, because that member
// reserved it for the first. The message spaces a communicator's id
// derives are in package cid.

// rankState is what the communicators of one rank share.
type rankState struct {
	closed atomic.Bool // the world was closed: every derived communicator fails
	cids   cid.Pool    // the context ids in use and the floor (never reused)
	set    *settings   // the environment's and the options' settings
	nodes  []int       // the node of each of the transport's ranks (nil: not known)
}

// isClosed reports whether c or its world was closed.
func (c *Comm) isClosed() bool { return c.closed.Load() || c.rs.closed.Load() }

// addr returns the transport address of rank r of c.
func (c *Comm) addr(ctx context.Context, r int) (int, error) { return c.endpoint().Addr(ctx, r) }

// endpoint returns c as its construction messages see it.
func (c *Comm) endpoint() *wire.Endpoint {
	return &wire.Endpoint{T: c.t, ID: c.id, Rank: c.rank, Size: c.size, Group: c.grp, Spin: c.spin, Closed: c.isClosed, Hook: c.splitHook}
}

// conn returns the connection of a new call on c (a split, a chain
// collective) with signature sig.
func (c *Comm) conn(sig uint64) *wire.Conn { return wire.NewConn(c.endpoint(), c.seq.Add(1), sig) }

// agree runs cid.Agree over c: every constructor's check of its options
// and agreement on a context id.
func (c *Comm) agree(ctx context.Context, a cid.Agreement) (uint32, error) {
	return cid.Agree(ctx, &c.rs.cids, a, c.allreduceInts)
}

// agreeAlg is the algorithm of the agreement's allreduces: recursive
// doubling (⌈lg n⌉ rounds for any n) is what a 40-byte allreduce wants,
// and naming it spares each rank the default choice's cost evaluation of
// every algorithm, which on large parents costs more than the allreduce.
var agreeAlg = WithAlgorithm("recursive-doubling")

// derive makes the communicator of group g with context id cid.
func (c *Comm) derive(id uint32, leader int32, g split.Group) *Comm {
	d := &Comm{t: c.t, rs: c.rs, rank: g.Rank(), size: g.Size(), spin: c.spin,
		grp: g, cid: id, leader: leader, machine: c.machine}
	d.id = cid.ID(id, leader)
	d.exchLimit = -1
	if gr, ok := c.t.(transport.Grouper); ok {
		d.view = gr.Join(transport.Group{Comm: d.id, Rank: d.rank, Size: d.size, Members: g.Members()})
		d.checker, _ = d.view.(transport.Checker)
		if g.Members() != nil {
			// Shared-memory paths need every member's address.
			d.meeter, _ = d.view.(transport.Meeter)
		}
		if x, ok := d.view.(transport.Exchanger); ok && x.ExchangeLimit() >= 0 {
			d.exchanger, d.exchLimit = x, x.ExchangeLimit()
		}
	} else {
		// Call records keyed by context id need no membership.
		d.checker, _ = c.t.(transport.Checker)
	}
	if lg, ok := g.(lookupGroup); ok {
		// Answer the members' lookups (a distributed table's rows, a
		// chain's walks to ranks beyond the neighbours) through the
		// transport's responder, and ask theirs. A chain asks only where
		// members answer; a distributed table exists only there.
		svc := d.id | cid.ServiceBit
		rs, served := c.t.(transport.Responder)
		if served {
			rs.Serve(svc, func(_ int, req []byte) []byte { return lg.Answer(req) })
			d.addUnserve(func() { rs.Unserve(svc) })
		}
		if _, chain := g.(*split.Chain); served || !chain {
			lg.Attach(&wire.Asker{E: d.endpoint(), Service: svc})
		}
	}
	if m := g.Members(); m != nil && c.rs.nodes != nil {
		d.nodes = make([]int, len(m))
		for i, a := range m {
			d.nodes[i] = c.rs.nodes[a]
		}
	}
	if m := g.Members(); m != nil {
		nodes := make([]int, len(m))
		for i, a := range m {
			nodes[i] = int(a)
		}
		d.place = &algorithms.Placement{Machine: c.machineDims(), Nodes: nodes}
		if algorithms.CheckPlacement(d.place, d.size) != nil {
			d.place = nil // calls check only their own placements
		}
	}
	return d
}

// lookupGroup is a membership whose ranks look up each other's addresses
// (split.Chain, split.Distributed).
type lookupGroup interface {
	split.Group
	Answer(req []byte) []byte
	Attach(a split.Asker)
}

// machineDims returns the machine the ranks of c's world sit on: the grid
// of the whole world (DefaultGrid of the world's size in 3 dimensions, or
// the grid a SplitGrid of the world named).
func (c *Comm) machineDims() []int {
	if c.place != nil {
		return c.place.Machine
	}
	return algorithms.DefaultGrid(c.size, 3)
}

// allreduceInts is the agreement's allreduce: along the chain on a chain
// communicator (keeping its O(1) state), else Allreduce.
func (c *Comm) allreduceInts(ctx context.Context, v []int64, least bool) error {
	ch, ok := c.grp.(*split.Chain)
	if !ok || ch.Learnt() {
		op := Max
		if least {
			op = Min
		}
		return Allreduce(ctx, c, nil, v, op, agreeAlg)
	}
	return wire.ChainAllreduceInts(ctx, c.endpoint(), c.seq.Add(1), v, least)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
