package comm

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/scoll/scoll/internal/cid"
	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/internal/join"
	"github.com/scoll/scoll/internal/plan"
	"github.com/scoll/scoll/internal/wire"
	"github.com/scoll/scoll/split"
)

// The communicator constructors (package scoll documents them on Comm):
// each agrees on its options and a context id (cid.Agree), runs its split
// algorithm over the construction messages (internal/wire) and derives
// the new communicator.

// SplitReport is one rank's part of a split: the algorithm that ran, its
// counts and phases, the whole call's time and the kind of the new group
// ("" for an undefined color).
type SplitReport struct {
	Algorithm string
	Stats     split.Stats
	Total     time.Duration
	Group     string
}

// hostname returns the host name of c's rank: the tests' (Hooks.Hostname)
// or the system's (SCOLL_HOSTNAME first).
func (c *Comm) hostname() (string, error) {
	if h := c.rs.hooks.Hostname; h != nil {
		return h(c.t.Rank()), nil
	}
	return Hostname()
}

// Hostname returns the name of the node this rank runs on: $SCOLL_HOSTNAME
// when set, else the operating system's host name.
func Hostname() (string, error) {
	if h := os.Getenv(join.HostnameEnv); h != "" {
		return h, nil
	}
	return os.Hostname()
}

// Signatures of the constructors, so that ranks calling different ones
// (or one with different options) find out.
const (
	sigSplit  = 0x73706c6974 // "split"
	sigDup    = 0x647570     // "dup"
	sigCreate = 0x637265617465
)

// Split partitions c by color and key (scoll.Comm.Split) with options o,
// filling rep (if not nil) with this rank's part; h is the signature of
// what the caller agreed on besides the options. It is a generalized
// split of IntBytes items.
func (c *Comm) Split(ctx context.Context, color, key int, o *split.Options, rep *SplitReport, h plan.Hash) (*Comm, error) {
	it := split.Item{Key: split.IntBytes(int64(key))}
	if color >= 0 {
		it.Color = split.IntBytes(int64(color))
	}
	o.Ints = true
	return c.SplitItem(ctx, it, o, rep, h)
}

// SplitItem runs a split of this rank's item (its color, its key) with
// options o, filling rep (if not nil), with the signature h of what the
// caller agreed on besides the options.
func (c *Comm) SplitItem(ctx context.Context, it split.Item, o *split.Options, rep *SplitReport, h plan.Hash) (*Comm, error) {
	start := time.Now()
	if err := c.startable(ctx); err != nil {
		return nil, err
	}
	h.Add(sigSplit, uint64(o.Sorters), uint64(o.GroupSize))
	h.Str(o.Algorithm)
	for _, b := range []bool{o.ColorCompare != nil, o.KeyCompare != nil, o.NoReorder, o.NoSplit, o.Chain, o.Ints} {
		h.Add(uint64(btoi(b)))
	}
	bad := o.Check(c.size)
	if bad == nil && o.Sorters > c.size {
		bad = fmt.Errorf("%w: %d sorters for %d ranks", errs.InvalidArgument, o.Sorters, c.size)
	}
	name := o.Algorithm
	if name == "" {
		name = split.DefaultItemsAlgorithm(c.size, o)
	}
	if bad == nil {
		bad = split.Refusal(name, o)
	}
	if bad == nil && c.rs.tc.Responder == nil && o.GroupFor(c.size) > 1 && !o.Chain {
		bad = fmt.Errorf("%w: distributed tables need a transport that answers lookups (transport.Responder)", errs.Unsupported)
	}
	// Take replies to contributors (sorting algorithms) from here on:
	// every rank does before the agreement, so before anyone posts.
	posting := c.servePosts()
	lens := []int64{-1, int64(len(it.Key))}
	if it.Color != nil {
		lens[0] = int64(len(it.Color))
	}
	id, err := c.agree(ctx, cid.Agreement{Sig: h.Sig(plan.SigConstructor), Bad: bad, Max: lens})
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Comm, error) {
		c.rs.cids.Release(id)
		return nil, err
	}
	if in, _ := split.Lookup(name); in.Items == nil {
		// A table algorithm addresses the parent's ranks: a chain parent
		// learns them first.
		if err := c.learnMembers(ctx); err != nil {
			return fail(err)
		}
	}
	l, err := c.endpoint().Links(ctx)
	if err != nil {
		return fail(err)
	}
	it.Rank, it.Addr = int32(c.rank), l.Self
	sh := split.Shape{ColorLen: int(max(lens[0], 0)), KeyLen: int(lens[1])}
	sc := c.conn(h.Sig(plan.SigConstructor))
	var conn split.Conn = sc
	if posting {
		conn = wire.PostConn{Conn: sc, Box: c.mem.posts}
	}
	res, err := wire.RunItems(ctx, conn, it, l, sh, *o)
	if err != nil {
		sc.Abort(err) // tell the ranks still waiting for this one
		return fail(err)
	}
	if rep != nil {
		rep.Algorithm, rep.Stats = name, res.Stats
	}
	var d *Comm
	if res.Group == nil {
		c.rs.cids.Release(id)
	} else {
		leader, err := c.leaderOf(ctx, res.Group)
		if err != nil {
			return fail(err)
		}
		d = c.derive(id, leader, res.Group)
	}
	if rep != nil {
		rep.Total = time.Since(start)
		if d != nil {
			rep.Group = res.Group.Kind()
		}
	}
	return d, nil
}

// startable returns the error of a communicator constructor that cannot
// start at all (nil communicator or context). A closed communicator or an
// ended context fail the agreement's first collective instead, which
// tells the other ranks (see Comm.abandon) rather than leaving them
// waiting.
func (c *Comm) startable(ctx context.Context) error {
	if c == nil {
		return fmt.Errorf("%w: nil communicator", errs.InvalidArgument)
	}
	if ctx == nil {
		return fmt.Errorf("%w: nil context", errs.InvalidArgument)
	}
	return nil
}

// leaderOf returns the transport address of rank 0 of g.
func (c *Comm) leaderOf(ctx context.Context, g split.Group) (int32, error) {
	if a, ok := g.Addr(0); ok {
		return a, nil
	}
	var out [1]int32
	err := g.Resolve(ctx, []int{0}, out[:])
	return out[0], err
}

// entry returns this rank's entry of a split.
func (c *Comm) entry(color, key int) (split.Entry, error) {
	a, err := c.addr(context.Background(), c.rank)
	if err != nil {
		return split.Entry{}, err
	}
	return split.Entry{Color: int64(color), Key: int64(key), Rank: int32(c.rank), Addr: int32(a)}, nil
}

// Dup returns a communicator with the same ranks in the same order and a
// message space of its own (scoll.Comm.Dup).
func (c *Comm) Dup(ctx context.Context) (*Comm, error) {
	if err := c.startable(ctx); err != nil {
		return nil, err
	}
	id, err := c.agree(ctx, cid.Agreement{Sig: sigDup})
	if err != nil {
		return nil, err
	}
	g := c.mem.grp
	leader := c.mem.leader
	if dg, ok := g.(*split.Distributed); ok {
		g = dg.Clone() // its own cache and lookups
	}
	if ch, ok := g.(*split.Chain); ok {
		cl := split.NewChain(ch.Links)
		if m := ch.Members(); m != nil {
			cl.Learn(m)
		}
		g = cl
	}
	if g == nil {
		g = worldGroup(c.rank, c.size)
		leader = 0
	}
	d := c.derive(id, leader, g)
	d.layout.grid = c.layout.grid
	if c.layout.place != nil {
		d.layout.place = c.layout.place
	}
	return d, nil
}

// worldGroup returns the membership of a world of size ranks as a table.
func worldGroup(rank, size int) split.Group {
	addrs := make([]int32, size)
	for i := range addrs {
		addrs[i] = int32(i)
	}
	return split.NewTable(rank, addrs)
}

// Create returns the communicator of the ranks of c listed in ranks: rank i
// of the result is ranks[i] of c. Every rank of c must call it with the
// same list of distinct ranks; the ranks not in the list get (nil, nil).
// Lists that are invalid on some rank fail on every rank
// (errs.InvalidArgument), and lists that differ between ranks fail with
// ErrMismatch.
func (c *Comm) Create(ctx context.Context, ranks []int) (*Comm, error) {
	if err := c.startable(ctx); err != nil {
		return nil, err
	}
	h := plan.NewHash()
	h.Add(sigCreate)
	h.Ints(ranks)
	var bad error
	seen := make(map[int]bool, len(ranks))
	me := -1
	for i, r := range ranks {
		switch {
		case r < 0 || r >= c.size:
			bad = fmt.Errorf("%w: rank %d out of range [0,%d)", errs.InvalidArgument, r, c.size)
		case seen[r]:
			bad = fmt.Errorf("%w: rank %d listed twice", errs.InvalidArgument, r)
		}
		if bad != nil {
			break
		}
		seen[r] = true
		if r == c.rank {
			me = i
		}
	}
	id, err := c.agree(ctx, cid.Agreement{Sig: h.Sig(plan.SigConstructor), Bad: bad})
	if err != nil {
		return nil, err
	}
	if me < 0 {
		c.rs.cids.Release(id)
		return nil, nil
	}
	addrs := make([]int32, len(ranks))
	if c.mem.grp == nil {
		for i, r := range ranks {
			addrs[i] = int32(r)
		}
	} else if err := c.mem.grp.Resolve(ctx, ranks, addrs); err != nil {
		c.rs.cids.Release(id)
		return nil, err
	}
	return c.derive(id, addrs[0], split.NewTable(me, addrs)), nil
}

// TranslateRanks returns the ranks in other of the ranks of c listed in
// ranks (MPI_Group_translate_ranks): Undefined for those that are not
// members of other. It is local when both communicators' members are known
// here; with distributed tables it asks their owners (one lookup round for
// c's, one request to each of other's P' block owners for other); a chain
// (WithChainGroup) is walked: a request per hop for c's ranks, n − 1 in
// sequence for other's, remembered afterwards.
func (c *Comm) TranslateRanks(ranks []int, other *Comm) ([]int, error) {
	if c == nil || other == nil {
		return nil, fmt.Errorf("%w: nil communicator", errs.InvalidArgument)
	}
	if c.rs != other.rs {
		return nil, fmt.Errorf("%w: communicators of different worlds", errs.InvalidArgument)
	}
	for _, r := range ranks {
		if r < 0 || r >= c.size {
			return nil, fmt.Errorf("%w: rank %d out of range [0,%d)", errs.InvalidArgument, r, c.size)
		}
	}
	addrs := make([]int32, len(ranks))
	if c.mem.grp == nil {
		for i, r := range ranks {
			addrs[i] = int32(r)
		}
	} else if err := c.mem.grp.Resolve(context.Background(), ranks, addrs); err != nil {
		return nil, err
	}
	out := make([]int, len(ranks))
	if other.mem.grp == nil {
		for i, a := range addrs {
			out[i] = int(a)
		}
		return out, nil
	}
	members := other.mem.grp.Members()
	if ch, ok := other.mem.grp.(*split.Chain); ok && members == nil {
		// A chain's members are found by walking it once (n − 1
		// requests, kept for later calls).
		var err error
		if members, err = ch.Walk(context.Background()); err != nil {
			return nil, err
		}
	}
	if members == nil {
		dg, ok := other.mem.grp.(*split.Distributed)
		if !ok {
			return nil, fmt.Errorf("%w: the other communicator's members are not known here", errs.Unsupported)
		}
		found, err := dg.Find(context.Background(), addrs)
		if err != nil {
			return nil, err
		}
		for i, r := range found {
			out[i] = max(r, Undefined)
		}
		return out, nil
	}
	other.mem.revOnce.Do(func() {
		other.mem.rev = make(map[int32]int, len(members))
		for r, a := range members {
			other.mem.rev[a] = r
		}
	})
	for i, a := range addrs {
		r, ok := other.mem.rev[a]
		if !ok {
			r = Undefined
		}
		out[i] = r
	}
	return out, nil
}

// SplitGrid splits c, seen as a row-major process grid of the sizes dims
// (the last dimension varying fastest, as MPI's Cartesian topologies
// number ranks), into the sub-grids that keep the dimensions marked in
// keep (MPI_Cart_sub): with dims {R, C}, keep {false, true} gives each
// rank its row's communicator, {true, false} its column's. The ranks of a
// sub-grid are numbered row-major in the kept dimensions, and the
// topology-aware algorithms know its grid (WithGrid is its default). It is
// collective over c.
func (c *Comm) SplitGrid(ctx context.Context, dims []int, keep []bool) (*Comm, error) {
	if err := c.startable(ctx); err != nil {
		return nil, err
	}
	var bad error
	prod := 1
	for _, d := range dims {
		if d < 1 {
			bad = fmt.Errorf("%w: dimension %d", errs.InvalidArgument, d)
			break
		}
		prod *= d
	}
	if bad == nil && prod != c.size {
		bad = fmt.Errorf("%w: dimensions %v hold %d ranks, the communicator %d", errs.InvalidArgument, dims, prod, c.size)
	}
	if bad == nil && len(keep) != len(dims) {
		bad = fmt.Errorf("%w: %d dimensions, %d keep flags", errs.InvalidArgument, len(dims), len(keep))
	}
	if bad != nil {
		// Fail on every rank: the agreement carries the error.
		_, err := c.agree(ctx, cid.Agreement{Sig: sigSplit, Bad: bad})
		return nil, err
	}
	// Row-major coordinates of this rank; color from the dropped
	// dimensions, key from the kept ones.
	coord := make([]int, len(dims))
	r := c.rank
	for i := len(dims) - 1; i >= 0; i-- {
		coord[i] = r % dims[i]
		r /= dims[i]
	}
	color, key := 0, 0
	var sub []int
	for i, d := range dims {
		if keep[i] {
			key = key*d + coord[i]
			sub = append(sub, d)
		} else {
			color = color*d + coord[i]
		}
	}
	h := plan.NewHash()
	h.Ints(dims)
	for _, k := range keep {
		if k {
			h.Add(1)
		} else {
			h.Add(0)
		}
	}
	d, err := c.Split(ctx, color, key, &split.Options{}, nil, h)
	if err != nil || d == nil {
		return d, err
	}
	// The algorithms number grids first dimension fastest.
	slices.Reverse(sub)
	if len(sub) > 0 {
		d.layout.grid = sub
	}
	if c.mem.grp == nil && d.layout.place != nil {
		// The world seen as this grid is the machine its ranks sit on.
		m := slices.Clone(dims)
		slices.Reverse(m)
		d.layout.place.Machine = m
	}
	return d, nil
}

// SplitByNode returns the communicator of the ranks of c that run on the
// same node (same Hostname), in the order of c. It is collective over c.
func (c *Comm) SplitByNode(ctx context.Context) (*Comm, error) {
	h, err := c.hostname()
	if err != nil || strings.TrimSpace(h) == "" {
		// Fail on every rank: the agreement carries the error.
		bad := fmt.Errorf("%w: no host name (%v); set %s", errs.Unsupported, err, join.HostnameEnv)
		if c.startable(ctx) != nil {
			return nil, bad
		}
		_, err := c.agree(ctx, cid.Agreement{Sig: sigSplit, Bad: bad})
		return nil, err
	}
	hs := plan.NewHash()
	hs.Add(0x6e6f6465) // "node"
	return c.SplitItem(ctx, split.Item{Color: []byte(h)}, &split.Options{NoReorder: true}, nil, hs)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
