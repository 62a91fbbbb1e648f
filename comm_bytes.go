package scoll

import (
	"context"

	"github.com/scoll/scoll/internal/comm"
	"github.com/scoll/scoll/internal/join"
	"github.com/scoll/scoll/internal/plan"
	"github.com/scoll/scoll/split"
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
	cfg := splitOptions(opts)
	d, err := c.core().SplitItem(ctx, split.Item{Color: color, Key: key}, &cfg.opts, cfg.report(), plan.NewHash())
	return cfg.done(d, at(c, "SplitBytes", err))
}

// HostnameEnv names the environment variable that overrides the host name
// of SplitByNode and every node-aware feature, so that one machine can
// pretend to be several.
const HostnameEnv = join.HostnameEnv

// Hostname returns the name of the node this rank runs on: $SCOLL_HOSTNAME
// when set, else the operating system's host name.
func Hostname() (string, error) { return comm.Hostname() }

// SplitByNode returns the communicator of the ranks of c that run on the
// same node (same Hostname), in the order of c. It is collective over c.
func (c *Comm) SplitByNode(ctx context.Context) (*Comm, error) {
	d, err := c.core().SplitByNode(ctx)
	return wrap(d), at(c, "SplitByNode", err)
}
