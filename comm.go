package scoll

import (
	"context"
	"encoding/binary"
	"fmt"
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
// world. It has its own context id, agreed by the ranks of its parent (see
// agree), so its messages never match another communicator's; its members
// are a split.Group (a replicated table or Sack's distributed table), and
// every call translates its ranks into transport addresses before it posts
// (a plan's peers are resolved once, when the plan is made).
//
// Context ids. id = cid<<32 | (leader+1), where cid is a number every
// member had free when the communicator was made and leader is the
// transport address of its rank 0. Siblings made by one Split share cid
// but not leader; communicators with a member in common never share cid
// while both live, because that member reserved it for the first. The world
// is cid 0, leader 0: id 1. Bit 63 marks point-to-point messages, bit 62
// the messages of a split running on the communicator and bit 61 the
// lookups of its distributed table.
const (
	p2pBit     = 1 << 63
	splitBit   = 1 << 62
	serviceBit = 1 << 61
)

// rankState is what the communicators of one rank share.
type rankState struct {
	closed atomic.Bool // the world was closed: every derived communicator fails
	cids   cid.Pool    // the context ids in use and the floor (never reused)
}

// isClosed reports whether c or its world was closed.
func (c *Comm) isClosed() bool { return c.closed.Load() || c.rs.closed.Load() }

// addr returns the transport address of rank r of c.
func (c *Comm) addr(ctx context.Context, r int) (int, error) {
	if c.grp == nil {
		return r, nil
	}
	if a, ok := c.grp.Addr(r); ok {
		return int(a), nil
	}
	var out [1]int32
	if err := c.grp.Resolve(ctx, []int{r}, out[:]); err != nil {
		return 0, err
	}
	return int(out[0]), nil
}

// agreement is one rank's input to agree.
type agreement struct {
	// sig must be equal on every rank (the operation and its options).
	sig uint64
	// bad is this rank's error with its own arguments, or nil.
	bad error
	// max, when set, is replaced by the elementwise maximum over the ranks
	// (carried by the first round: the longest color and key of a split).
	max []int64
}

// agree runs the collective part every communicator constructor starts
// with, over c: it checks that every rank called the same constructor
// with the same options and that none had bad arguments (each error
// reaches every rank), and agrees on a context id free on every rank of c,
// which it leaves reserved on every rank.
//
// Each round is one Allreduce(Max) of a rank's lowest free id ≥ a
// starting point (never one it used before), with its negation (to learn
// the minimum too), the signature both ways and the error flag. When every rank proposed the
// same id, that is the id (the usual case: one round). Otherwise every
// rank tries to reserve the largest proposal and an Allreduce(Min) tells
// whether all could; if not, the next round starts above it (Open MPI's
// next-cid search).
func (c *Comm) agree(ctx context.Context, a agreement) (uint32, error) {
	from := uint32(1)
	for {
		cand := c.rs.cids.ReserveFrom(from)
		sig := int64(a.sig >> 1)
		bad := int64(0)
		if a.bad != nil {
			bad = 1
		}
		v := append([]int64{int64(cand), -int64(cand), sig, -sig, bad}, a.max...)
		if err := c.allreduceInts(ctx, v, Max); err != nil {
			c.rs.cids.Release(cand)
			if a.bad != nil {
				// This rank's own fault is the better report (in-process
				// ranks cancel each other when one returns first).
				return 0, a.bad
			}
			return 0, err
		}
		hi, lo := uint32(v[0]), uint32(-v[1])
		copy(a.max, v[5:])
		switch {
		case a.bad != nil:
			c.rs.cids.Release(cand)
			return 0, a.bad
		case v[4] != 0:
			c.rs.cids.Release(cand)
			return 0, fmt.Errorf("%w: another rank passed bad arguments", ErrInvalidArgument)
		case v[2] != -v[3]:
			c.rs.cids.Release(cand)
			return 0, fmt.Errorf("%w: ranks created communicators with different operations or options", ErrMismatch)
		case lo == 0:
			c.rs.cids.Release(cand)
			return 0, fmt.Errorf("%w: a rank has no free context id left", ErrUnsupported)
		case hi == lo:
			c.rs.cids.Taken(cand)
			return cand, nil
		}
		c.rs.cids.Release(cand)
		mine := c.rs.cids.Reserve(hi)
		ok := []int64{0}
		if mine {
			ok[0] = 1
		}
		if err := c.allreduceInts(ctx, ok, Min); err != nil {
			if mine {
				c.rs.cids.Release(hi)
			}
			return 0, err
		}
		if ok[0] == 1 {
			c.rs.cids.Taken(hi)
			return hi, nil
		}
		if mine {
			c.rs.cids.Release(hi)
		}
		from = hi + 1
	}
}

// agreeAlg is the algorithm of the agreement's allreduces: recursive
// doubling (⌈lg n⌉ rounds for any n) is what a 40-byte allreduce wants,
// and naming it spares each rank the default choice's cost evaluation of
// every algorithm, which on large parents costs more than the allreduce.
var agreeAlg = WithAlgorithm("recursive-doubling")

// derive makes the communicator of group g with context id cid.
func (c *Comm) derive(cid uint32, leader int32, g split.Group) *Comm {
	d := &Comm{t: c.t, rs: c.rs, rank: g.Rank(), size: g.Size(), spin: c.spin,
		grp: g, cid: cid, leader: leader, machine: c.machine}
	d.id = uint64(cid)<<32 | (uint64(uint32(leader)) + 1)
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
		svc := d.id | serviceBit
		rs, served := c.t.(transport.Responder)
		if served {
			rs.Serve(svc, func(_ int, req []byte) []byte { return lg.Answer(req) })
			d.addUnserve(func() { rs.Unserve(svc) })
		}
		if _, chain := g.(*split.Chain); served || !chain {
			lg.Attach(&asker{c: d, service: svc})
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

// asker sends a distributed table's lookups to the owners' responders.
type asker struct {
	c       *Comm
	service uint64
	next    atomic.Int64 // request tags
}

// Ask implements split.Asker: every request goes out at once (each at
// most transport.MaxRequest bytes) and every reply is awaited.
func (a *asker) Ask(ctx context.Context, to []int32, reqs, replies [][]byte) error {
	c := a.c
	if c.isClosed() {
		return ErrClosed
	}
	msgs := make([]transport.Msg, 0, 2*len(reqs))
	for i, req := range reqs {
		if len(req) > transport.MaxRequest {
			return fmt.Errorf("%w: lookup of %d bytes", ErrInvalidArgument, len(req))
		}
		k := transport.Key{Comm: a.service, Tag: a.next.Add(1) % transport.ReplyTag}
		msgs = append(msgs,
			transport.Msg{Peer: int(to[i]), Key: transport.ReplyKey(k), Buf: replies[i]},
			transport.Msg{Peer: int(to[i]), Key: k, Buf: req, Eager: true})
	}
	w := c.newWaiter()
	posted := 0
	var err error
	for i := range msgs {
		m := &msgs[i]
		m.W = w
		w.Add(1)
		if i%2 == 0 {
			err = c.t.Irecv(m)
		} else {
			err = c.t.Isend(m)
		}
		if err != nil {
			w.Done()
			break
		}
		posted++
	}
	if err == nil {
		err = w.Wait(ctx)
	}
	if err != nil {
		for i := range msgs[:posted] {
			if c.t.Cancel(&msgs[i]) {
				w.Done()
			}
		}
		w.WaitAll()
		return fmt.Errorf("lookup: %w", err)
	}
	transport.EndRound(c.t, w)
	for i := 0; i < len(msgs); i += 2 {
		if e := msgs[i].Err; e != nil {
			return fmt.Errorf("lookup: %w", e)
		}
		if e := msgs[i+1].Err; e != nil {
			return fmt.Errorf("lookup: %w", e)
		}
		replies[i/2] = replies[i/2][:msgs[i].N] // short: the owner could not answer

	}
	return nil
}

// allreduceInts is the agreement's allreduce: along the chain on a chain
// communicator (keeping its O(1) state), else Allreduce.
func (c *Comm) allreduceInts(ctx context.Context, v []int64, op Op) error {
	ch, ok := c.grp.(*split.Chain)
	if !ok || ch.Learnt() {
		return Allreduce(ctx, c, nil, v, op, agreeAlg)
	}
	if c.isClosed() {
		return ErrClosed
	}
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	pick := func(a, b []byte) []byte {
		out := make([]byte, len(a))
		for i := 0; i < len(a); i += 8 {
			x, y := int64(binary.LittleEndian.Uint64(a[i:])), int64(binary.LittleEndian.Uint64(b[i:]))
			if (op.id == Min.id) == (y < x) {
				x = y
			}
			binary.LittleEndian.PutUint64(out[i:], uint64(x))
		}
		return out
	}
	r, err := split.ChainAllreduce(ctx, c.splitConn(0x6167726565), ch.Links, b, pick)
	if err != nil {
		return err
	}
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(r[8*i:]))
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
