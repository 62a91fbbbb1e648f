package comm

import (
	"context"
	"sync"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/cid"
	"github.com/scoll/scoll/internal/postbox"
	"github.com/scoll/scoll/internal/wire"
	"github.com/scoll/scoll/split"
	"github.com/scoll/scoll/transport"
)

// members is a derived communicator's membership and what serves it (the
// zero members: the world, whose ranks are the transport's).
type members struct {
	// grp is the membership, cid the context id and leader the transport
	// address of rank 0, which together make the communicator's id.
	grp    split.Group
	cid    uint32
	leader int32
	view   transport.GroupView // the transport's per-communicator state, if any
	// unserve stops answering lookups (distributed table, chain, posts).
	unserve func()
	// posts takes the replies of sorting splits on the communicator
	// (split.Poster), served from the first such split on.
	postOnce sync.Once
	posts    *postbox.Box
	// rev maps transport addresses to ranks of a derived communicator
	// whose members are known, made by the first TranslateRanks into it.
	revOnce sync.Once
	rev     map[int32]int
}

// derive makes the communicator of group g with context id id.
func (c *Comm) derive(id uint32, leader int32, g split.Group) *Comm {
	d := &Comm{t: c.t, rs: c.rs, rank: g.Rank(), size: g.Size(), spin: c.spin}
	d.mem.grp, d.mem.cid, d.mem.leader = g, id, leader
	d.layout.machine = c.layout.machine
	d.id = cid.ID(id, leader)
	if gr := c.rs.tc.Grouper; gr != nil {
		d.mem.view = gr.Join(transport.Group{Comm: d.id, Rank: d.rank, Size: d.size, Members: g.Members()})
		// Shared-memory paths need every member's address.
		d.paths = pathsOf(transport.CapsOf(d.mem.view), d.size, g.Members() != nil)
	} else {
		// Call records keyed by context id need no membership.
		d.paths.checker = c.rs.tc.Checker
	}
	if lg, ok := g.(lookupGroup); ok {
		// Answer the members' lookups (a distributed table's rows, a
		// chain's walks to ranks beyond the neighbours) through the
		// transport's responder, and ask theirs. A chain asks only where
		// members answer; a distributed table exists only there.
		svc := d.id | cid.ServiceBit
		rs := c.rs.tc.Responder
		served := rs != nil
		if served {
			rs.Serve(svc, func(_ int, req []byte) []byte { return lg.Answer(req) })
			d.addUnserve(func() { rs.Unserve(svc) })
		}
		if _, chain := g.(*split.Chain); served || !chain {
			lg.Attach(&wire.Asker{E: d.endpoint(), Service: svc})
		}
	}
	if m := g.Members(); m != nil {
		if c.rs.nodes != nil {
			d.layout.nodes = make([]int, len(m))
			for i, a := range m {
				d.layout.nodes[i] = c.rs.nodes[a]
			}
		}
		nodes := make([]int, len(m))
		for i, a := range m {
			nodes[i] = int(a)
		}
		d.layout.place = &algorithms.Placement{Machine: c.machineDims(), Nodes: nodes}
		if algorithms.CheckPlacement(d.layout.place, d.size) != nil {
			d.layout.place = nil // calls check only their own placements
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

// addUnserve adds f to what Close withdraws.
func (c *Comm) addUnserve(f func()) {
	if prev := c.mem.unserve; prev != nil {
		c.mem.unserve = func() { prev(); f() }
		return
	}
	c.mem.unserve = f
}

// servePosts starts taking c's posts (once; every rank does so before the
// agreement of a split, so before any rank can post).
func (c *Comm) servePosts() bool {
	rs := c.rs.tc.Responder
	if rs == nil {
		return false
	}
	c.mem.postOnce.Do(func() {
		c.mem.posts = &postbox.Box{}
		c.addUnserve(wire.ServePosts(c.endpoint(), rs, c.mem.posts))
	})
	return true
}

// learnMembers makes a chain communicator hold every member's address
// (collective over c, once).
func (c *Comm) learnMembers(ctx context.Context) error {
	return wire.LearnMembers(ctx, c.endpoint(), func() uint64 { return c.seq.Add(1) })
}
