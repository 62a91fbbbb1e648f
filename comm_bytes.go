package scoll

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"strings"

	"github.com/scoll/scoll/internal/plan"
	"github.com/scoll/scoll/internal/postbox"
	"github.com/scoll/scoll/split"
	"github.com/scoll/scoll/transport"
)

// WithColorCompare orders the colors of SplitBytes with cmp instead of
// bytes.Compare; colors cmp calls equal join one communicator. The hash
// and radix algorithms cannot respect it and refuse it (ErrUnsupported).
// Every rank must pass a comparator that orders alike.
func WithColorCompare(cmp func(a, b []byte) int) SplitOption {
	return func(c *splitConfig) { c.opts.ColorCompare = cmp }
}

// WithKeyCompare orders the keys of SplitBytes with cmp instead of
// bytes.Compare.
func WithKeyCompare(cmp func(a, b []byte) int) SplitOption {
	return func(c *splitConfig) { c.opts.KeyCompare = cmp }
}

// WithoutReorder keeps the order of the parent in the new communicators:
// keys are ignored.
func WithoutReorder() SplitOption { return func(c *splitConfig) { c.opts.NoReorder = true } }

// WithoutSplit makes one communicator of every rank, reordered by key:
// colors are ignored (a nil color too).
func WithoutSplit() SplitOption { return func(c *splitConfig) { c.opts.NoSplit = true } }

// WithChainGroup keeps the new communicator's membership as a chain
// (Moody et al.): each rank holds its rank, the size and the addresses of
// itself, its neighbours and rank 0 — O(1) memory. The chain algorithms
// (bitonic, hash, hash64, radix, gather-scatter) make chains directly;
// others' tables are cut down to one. Collectives that the chain
// algorithms do not serve, and point-to-point messages to ranks other
// than the neighbours and rank 0, first resolve addresses: see Comm.
func WithChainGroup() SplitOption { return func(c *splitConfig) { c.opts.Chain = true } }

// SplitBytes is Split generalized (Moody, Ahn and de Supinski 2011):
// colors and keys are byte strings of any length (ranks may pass different
// lengths), ordered by bytes.Compare or the comparators of
// WithColorCompare and WithKeyCompare. A nil color is undefined: the rank
// gets (nil, nil). WithoutReorder and WithoutSplit turn off either half;
// WithSplitAlgorithm picks among the algorithms of SplitAlgorithms (the
// integer-only ones refuse byte colors with ErrUnsupported). It is
// collective over c, with the same options on every rank.
func (c *Comm) SplitBytes(ctx context.Context, color, key []byte, opts ...SplitOption) (*Comm, error) {
	var cfg splitConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	return c.splitItem(ctx, split.Item{Color: color, Key: key}, &cfg, plan.NewHash())
}

// HostnameEnv names the environment variable that overrides the host name
// of SplitByNode and every node-aware feature, so that one machine can
// pretend to be several.
const HostnameEnv = "SCOLL_HOSTNAME"

// Hostname returns the name of the node this rank runs on: $SCOLL_HOSTNAME
// when set, else the operating system's host name.
func Hostname() (string, error) {
	if h := os.Getenv(HostnameEnv); h != "" {
		return h, nil
	}
	return os.Hostname()
}

// hostnameOf returns the node of c's rank (tests fake several nodes in one
// process through it).
var hostnameOf = func(*Comm) (string, error) { return Hostname() }

// SplitByNode returns the communicator of the ranks of c that run on the
// same node (same Hostname), in the order of c. It is collective over c.
func (c *Comm) SplitByNode(ctx context.Context) (*Comm, error) {
	h, err := hostnameOf(c)
	if err != nil || strings.TrimSpace(h) == "" {
		// Fail on every rank: the agreement carries the error.
		bad := fmt.Errorf("%w: split by node: no host name (%v); set %s", ErrUnsupported, err, HostnameEnv)
		if c.startable(ctx) != nil {
			return nil, bad
		}
		_, err := c.agree(ctx, agreement{sig: sigSplit, bad: bad})
		return nil, fmt.Errorf("split by node: %w", err)
	}
	cfg := &splitConfig{}
	cfg.opts.NoReorder = true
	hs := plan.NewHash()
	hs.Add(0x6e6f6465) // "node"
	return c.splitItem(ctx, split.Item{Color: []byte(h)}, cfg, hs)
}

// postBit marks the context of the service that takes a sorting split's
// replies to contributors (split.Poster).
const postBit = 1 << 60

// servePosts starts taking c's posts (once; every rank does so before the
// agreement of a split, so before any rank can post).
func (c *Comm) servePosts() bool {
	rs, ok := c.t.(transport.Responder)
	if !ok {
		return false
	}
	c.postOnce.Do(func() {
		c.posts = &postbox.Box{}
		svc := c.id | postBit
		rs.Serve(svc, func(_ int, req []byte) []byte {
			if len(req) < 8 {
				return nil
			}
			if !c.posts.Put(binary.LittleEndian.Uint64(req), append([]byte(nil), req[8:]...)) {
				return nil // a second post: refused
			}
			return []byte{1}
		})
		c.addUnserve(func() { rs.Unserve(svc) })
	})
	return true
}

// addUnserve adds f to what Close withdraws.
func (c *Comm) addUnserve(f func()) {
	if prev := c.unserve; prev != nil {
		c.unserve = func() { prev(); f() }
		return
	}
	c.unserve = f
}

// postConn is a splitConn that also posts (split.Poster).
type postConn struct{ *splitConn }

// Post implements split.Poster.
func (p postConn) Post(ctx context.Context, to int32, data []byte) error {
	c := p.c
	req := binary.LittleEndian.AppendUint64(make([]byte, 0, 8+len(data)), p.seq)
	req = append(req, data...)
	if int(to) == c.t.Rank() {
		if !c.posts.Put(p.seq, req[8:]) {
			return fmt.Errorf("%w: split: two replies posted to one rank", ErrMismatch)
		}
		return nil
	}
	a := asker{c: c, service: c.id | postBit}
	rep := [][]byte{make([]byte, 1)}
	if err := a.Ask(ctx, []int32{to}, [][]byte{req}, rep); err != nil {
		return err
	}
	if len(rep[0]) != 1 {
		return fmt.Errorf("%w: split: transport address %d refused a reply", ErrMismatch, to)
	}
	return nil
}

// Take implements split.Poster. It waits, as for any message (polling
// transports keep progressing), for the post, the context, or — on
// transports whose ranks tell each other of abandoned calls
// (transport.CallAborter) — another rank giving the split up: a receive
// from itself that no message matches is posted in the split's message
// space for that.
func (p postConn) Take(ctx context.Context, buf []byte) (int, error) {
	c := p.c
	w := c.newWaiter()
	if _, ok := c.posts.Await(p.seq, w); !ok {
		var sentinel *transport.Msg
		if _, ok := c.t.(transport.CallAborter); ok && c.size > 1 {
			// From itself: a peer that has its reply may leave before
			// this rank has its own, and its leaving must not end the wait.
			// Its completion, like the post's, ends the wait.
			sentinel = &transport.Msg{Peer: c.t.Rank(), W: w, Sig: p.sig, Buf: make([]byte, 1),
				Key: transport.Key{Comm: c.id | splitBit, Seq: p.seq, Tag: takeTag}}
			if c.t.Irecv(sentinel) != nil {
				sentinel = nil
			}
		}
		err := w.Wait(ctx)
		if sentinel != nil && !c.t.Cancel(sentinel) && err == nil {
			if _, got := c.posts.Take(p.seq); !got {
				err = sentinel.Err
				if err == nil {
					err = fmt.Errorf("%w: split: unexpected message", ErrMismatch)
				}
				return 0, err
			}
		}
		if err != nil {
			c.posts.Take(p.seq)
			return 0, err
		}
	}
	m, _ := c.posts.Take(p.seq)
	if len(m) > len(buf) {
		return 0, fmt.Errorf("%w: split: reply of %d bytes", ErrMismatch, len(m))
	}
	return copy(buf, m), nil
}

// takeTag is the tag of Take's sentinel receive (no algorithm uses it).
const takeTag = 1 << 40

// links returns this rank's place in c seen as a chain.
func (c *Comm) links(ctx context.Context) (split.Links, error) {
	if ch, ok := c.grp.(*split.Chain); ok {
		return ch.Links, nil
	}
	l := split.Links{Rank: c.rank, Size: c.size, Left: split.None, Right: split.None}
	want := []int{c.rank, 0}
	if c.rank > 0 {
		want = append(want, c.rank-1)
	}
	if c.rank+1 < c.size {
		want = append(want, c.rank+1)
	}
	addrs := make([]int32, len(want))
	for i, r := range want {
		addrs[i] = int32(r)
	}
	if c.grp != nil {
		if err := c.grp.Resolve(ctx, want, addrs); err != nil {
			return l, err
		}
	}
	l.Self, l.First = addrs[0], addrs[1]
	for i, r := range want[2:] {
		if r < c.rank {
			l.Left = addrs[2+i]
		} else {
			l.Right = addrs[2+i]
		}
	}
	return l, nil
}

// learnMembers makes a chain communicator hold every member's address,
// gathered along the chain (collective over c; ⌈lg n⌉ rounds and n
// addresses per rank, once).
func (c *Comm) learnMembers(ctx context.Context) error {
	ch, ok := c.grp.(*split.Chain)
	if !ok || ch.Learnt() {
		return nil
	}
	all, err := split.ChainAllgather(ctx, c.splitConn(0x6c6561726e), ch.Links, binary.LittleEndian.AppendUint32(nil, uint32(ch.Self)))
	if err != nil {
		return fmt.Errorf("resolving a chain's members: %w", err)
	}
	m := make([]int32, c.size)
	for i := range m {
		m[i] = int32(binary.LittleEndian.Uint32(all[4*i:]))
	}
	ch.Learn(m)
	return nil
}
