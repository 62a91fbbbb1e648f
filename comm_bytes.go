package scoll

import (
	"context"
	"fmt"
	"github.com/scoll/scoll/internal/cid"
	"github.com/scoll/scoll/internal/wire"
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
		_, err := c.agree(ctx, cid.Agreement{Sig: sigSplit, Bad: bad})
		return nil, fmt.Errorf("split by node: %w", err)
	}
	cfg := &splitConfig{}
	cfg.opts.NoReorder = true
	hs := plan.NewHash()
	hs.Add(0x6e6f6465) // "node"
	return c.splitItem(ctx, split.Item{Color: []byte(h)}, cfg, hs)
}

// servePosts starts taking c's posts (once; every rank does so before the
// agreement of a split, so before any rank can post).
func (c *Comm) servePosts() bool {
	rs, ok := c.t.(transport.Responder)
	if !ok {
		return false
	}
	c.postOnce.Do(func() {
		c.posts = &postbox.Box{}
		c.addUnserve(wire.ServePosts(c.endpoint(), rs, c.posts))
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

// learnMembers makes a chain communicator hold every member's address
// (collective over c, once).
func (c *Comm) learnMembers(ctx context.Context) error {
	return wire.LearnMembers(ctx, c.endpoint(), func() uint64 { return c.seq.Add(1) })
}
