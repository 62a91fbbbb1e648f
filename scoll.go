// Package scoll is a library of MPI-style collective communication with many
// algorithms per collective.
//
// Every algorithm is a schedule (package schedule): rounds of sends, receives
// and local reductions on symbolic buffer regions. The same schedule runs for
// real over a transport, is verified symbolically at any size, simulated on
// network topologies and costed.
//
// Run starts p in-process ranks, one goroutine each, and hands each a *Comm:
//
//	err := scoll.Run(ctx, 4, func(ctx context.Context, c *scoll.Comm) error {
//		send := []float64{float64(c.Rank())}
//		recv := make([]float64, 1)
//		return scoll.Allreduce(ctx, c, send, recv, scoll.Sum)
//	})
//
// Collectives are generic over the element types in Number. Every rank of a
// communicator must call the same collectives in the same order with matching
// arguments; when they do not, the calls fail with ErrMismatch instead of
// hanging. Errors are values to test with errors.Is: ErrInvalidArgument,
// ErrUnsupported, ErrPeerFailed, ErrCanceled (which context errors also
// match), ErrMismatch and ErrClosed.
package scoll

//go:generate go run ./internal/genapi

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/arrival"
	"github.com/scoll/scoll/internal/cid"
	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/internal/plan"
	"github.com/scoll/scoll/internal/postbox"
	"github.com/scoll/scoll/split"
	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/inproc"
	"github.com/scoll/scoll/tuning"
)

// Sentinel errors. Every error scoll returns wraps one of them.
var (
	// ErrInvalidArgument: a buffer length, count, root, rank, tag or operator
	// is wrong for the call.
	ErrInvalidArgument = errs.InvalidArgument
	// ErrUnsupported: the requested algorithm cannot run this call (for
	// example a commutative-only algorithm with a non-commutative operator).
	ErrUnsupported = errs.Unsupported
	// ErrPeerFailed: another rank failed or exited while this one depended on
	// it.
	ErrPeerFailed = errs.PeerFailed
	// ErrCanceled: the context was cancelled or its deadline passed. The
	// error also matches the context's own error.
	ErrCanceled = errs.Canceled
	// ErrMismatch: ranks called different collectives, or the same one with
	// different arguments.
	ErrMismatch = errs.Mismatch
	// ErrClosed: the communicator is no longer usable (its Run has returned).
	ErrClosed = errs.Closed
)

// Option configures Run, Init and NewComm.
type Option func(*runConfig)

type runConfig struct {
	spin  int // -1: transport default
	world []inproc.Option
	wrap  func(transport.Transport) transport.Transport // Run's endpoints go through it (WithRecorder)

	// Init's transport.
	rendezvous     string
	secret         []byte
	timeout        time.Duration
	connectTimeout time.Duration
	tls            *tls.Config
	logger         *slog.Logger
	lazy           bool
	eagerSends     bool         // WithEagerSends
	tuning         *tuning.File // WithTuning
}

// withWorld passes options to the in-process transport (tests use it to
// force transport paths).
func withWorld(opts ...inproc.Option) Option {
	return func(c *runConfig) { c.world = append(c.world, opts...) }
}

// WithLanes turns the in-process transport's lanes on or off for the
// ranks Run starts: lock-free per-pair rings that carry collective
// messages (by default on when there are 2..256 ranks and no more than
// GOMAXPROCS; off, messages go through each rank's mailbox). scoll
// algorithms lists the transports' paths and when each is taken.
func WithLanes(on bool) Option { return withWorld(inproc.Lanes(on)) }

// WithSpin sets how many times a waiting rank polls for completion before it
// parks its goroutine. The default polls only when every rank can have a CPU
// (GOMAXPROCS ≥ ranks); 0 never polls.
func WithSpin(n int) Option { return func(c *runConfig) { c.spin = n } }

// Comm is a communicator: a group of ranks that call collectives together.
// A Comm is used by its own rank's goroutine; non-blocking calls may be
// outstanding concurrently, but calls must be issued in the same order on
// every rank.
type Comm struct {
	t      transport.Transport
	rs     *rankState // shared by every communicator of this rank
	id     uint64
	rank   int
	size   int
	spin   int
	seq    atomic.Uint64
	closed atomic.Bool

	// A derived communicator's membership (nil for the world, whose
	// ranks are the transport's), its context id (cid) and the transport
	// address of its rank 0 (leader), which together make id.
	grp     split.Group
	cid     uint32
	leader  int32
	view    transport.GroupView // the transport's per-communicator state, if any
	unserve func()              // stops answering lookups (distributed table, chain, posts)
	// posts takes the replies of sorting splits on c (split.Poster),
	// served from the first such split on.
	postOnce sync.Once
	posts    *postbox.Box
	// rev maps transport addresses to ranks of a derived communicator
	// whose members are known, made by the first TranslateRanks into it.
	revOnce sync.Once
	rev     map[int32]int

	// Defaults of the topology-aware algorithms: the process grid (from
	// SplitGrid; nil: DefaultGrid) and where the ranks sit on the
	// machine (a derived communicator's members; nil: rank r on node r).
	grid  []int
	place *algorithms.Placement
	nodes []int // the node of each rank, for the node-aware algorithms (nil: not known)

	// splitHook, set by tests, runs before each round of a split on c.
	splitHook func(round int)

	checker transport.Checker // nil unless the transport checks calls
	meeter  transport.Meeter  // nil unless ranks share memory

	// Exchanges (see shm.go): the transport's, its payload limit (-1:
	// none), and the record blocking calls reuse (one at a time).
	exchanger transport.Exchanger
	exchLimit int
	xch       transport.Exchange

	release func() error // Close's work (Init, NewComm)

	// machine is the cost model of the default algorithm choice: the
	// transport's (transport.Modeler), else in-process ranks'.
	machine algorithms.Machine

	// agreed is the machine model every rank agreed on (agreeModel; nil
	// before), for the clairvoyant reduce's rounds and the fibonacci
	// trees. modelHook, set by tests, replaces the local model of rank r.
	agreed    *localModel
	modelHook func(r int) (algorithms.Machine, *algorithms.LogP)

	plans plan.Cache

	// Call sites (callsite.go): their records, and the offset of this
	// rank's clock to rank 0's, estimated at the first site's first call.
	sitesMu     sync.Mutex
	sites       map[string]*arrival.Site
	clockOff    time.Duration
	clockSynced bool
}

// Rank returns the caller's rank in [0, Size()).
func (c *Comm) Rank() int { return c.rank }

// Size returns the number of ranks.
func (c *Comm) Size() int { return c.size }

func newComm(t transport.Transport, id uint64, spin int, set *settings) *Comm {
	c := &Comm{t: t, id: id, rank: t.Rank(), size: t.Size()}
	c.rs = &rankState{set: set}
	if n, ok := t.(transport.Noder); ok && len(n.Nodes()) == c.size {
		c.rs.nodes = n.Nodes()
		c.nodes = c.rs.nodes
	}
	c.checker, _ = t.(transport.Checker)
	c.meeter, _ = t.(transport.Meeter)
	c.machine = algorithms.InProcess
	if m, ok := t.(transport.Modeler); ok {
		c.machine.Alpha, c.machine.Beta = m.Model()
	}
	c.exchLimit = -1
	if x, ok := t.(transport.Exchanger); ok && x.ExchangeLimit() >= 0 {
		c.exchanger, c.exchLimit = x, x.ExchangeLimit()
	}
	c.spin = spin
	if spin < 0 {
		c.spin = 0
		if h, ok := t.(transport.SpinHinter); ok {
			c.spin = h.SpinHint()
		}
	}
	return c
}

// Run starts p ranks as goroutines of this process, calls fn on each with its
// communicator, and waits for all of them. If a rank returns an error or
// panics, the others' contexts are cancelled and Run returns that first error
// (a panic is returned as an error wrapping ErrPeerFailed). The communicators
// must not be used after Run returns: calls then fail with ErrClosed.
func Run(ctx context.Context, p int, fn func(ctx context.Context, c *Comm) error, opts ...Option) error {
	if p < 1 {
		return fmt.Errorf("%w: Run with %d ranks", ErrInvalidArgument, p)
	}
	if fn == nil {
		return fmt.Errorf("%w: Run with nil function", ErrInvalidArgument)
	}
	cfg := runConfig{spin: -1}
	for _, o := range opts {
		o(&cfg)
	}
	set := newSettings(&cfg)
	if set.err != nil {
		return set.err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w := inproc.NewWorld(p, cfg.world...)
	w.SetContext(ctx)
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	fail := func(err error) {
		once.Do(func() {
			firstErr = err
			cancel(fmt.Errorf("%w: %w", ErrPeerFailed, err))
		})
	}
	for r := range p {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each rank makes its own communicator: the work is spread
			// over the CPUs, and a rank that has ended frees its share.
			c := newComm(cfg.endpoint(w.Endpoint(r)), 1, cfg.spin, set)
			defer func() {
				if v := recover(); v != nil {
					fail(fmt.Errorf("%w: rank %d panicked: %v\n%s", ErrPeerFailed, r, v, debug.Stack()))
				}
				c.closed.Store(true)
				c.rs.closed.Store(true)
				w.Exit(r)
			}()
			if err := fn(ctx, c); err != nil {
				fail(fmt.Errorf("rank %d: %w", r, err))
			}
		}()
	}
	wg.Wait()
	w.Close()
	return firstErr
}

func (c *Comm) usable(ctx context.Context) error {
	if c == nil {
		return fmt.Errorf("%w: nil communicator", ErrInvalidArgument)
	}
	if c.isClosed() {
		return ErrClosed
	}
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	if ctx.Err() != nil {
		return transport.CtxErr(ctx)
	}
	return c.rs.set.err
}

// p2p keys live on their own context id so they never match collectives.
func (c *Comm) p2pKey(tag int) transport.Key {
	return transport.Key{Comm: c.id | cid.P2PBit, Tag: int64(tag)}
}

// Send sends buf to rank dst with a tag ≥ 0 and returns when buf may be reused.
// Messages between a pair of ranks with the same tag arrive in order.
func (c *Comm) Send(ctx context.Context, dst, tag int, buf []byte) error {
	if err := c.usable(ctx); err != nil {
		return err
	}
	if dst < 0 || dst >= c.size || tag < 0 {
		return fmt.Errorf("%w: send to rank %d with tag %d (size %d)", ErrInvalidArgument, dst, tag, c.size)
	}
	peer, err := c.addr(ctx, dst)
	if err != nil {
		return err
	}
	return c.p2p(ctx, &transport.Msg{Peer: peer, Key: c.p2pKey(tag), Buf: buf, Eager: true}, true)
}

// Recv receives a message from rank src with the given tag into buf and
// returns its length. A message longer than buf fails with
// ErrInvalidArgument (its first len(buf) bytes are kept).
func (c *Comm) Recv(ctx context.Context, src, tag int, buf []byte) (int, error) {
	if err := c.usable(ctx); err != nil {
		return 0, err
	}
	if src < 0 || src >= c.size || tag < 0 {
		return 0, fmt.Errorf("%w: receive from rank %d with tag %d (size %d)", ErrInvalidArgument, src, tag, c.size)
	}
	peer, err := c.addr(ctx, src)
	if err != nil {
		return 0, err
	}
	m := &transport.Msg{Peer: peer, Key: c.p2pKey(tag), Buf: buf}
	err = c.p2p(ctx, m, false)
	return m.N, err
}

// newWaiter returns a waiter for operations posted on c's transport,
// which it keeps progressing while it waits if the transport polls.
func (c *Comm) newWaiter() *transport.Waiter {
	w := transport.NewWaiter(c.spin)
	if p, ok := c.t.(transport.Poller); ok {
		w.SetPoller(p)
	}
	return w
}

func (c *Comm) p2p(ctx context.Context, m *transport.Msg, send bool) error {
	w := c.newWaiter()
	m.W = w
	if err := transport.Post(c.t, m, send); err != nil {
		return err
	}
	if err := w.Wait(ctx); err != nil {
		if c.t.Cancel(m) {
			return err
		}
		w.WaitAll()
	}
	transport.EndRound(c.t, w)
	return m.Err
}

// Barrier returns once every rank has entered it (the default algorithm;
// see the function Barrier for options).
func (c *Comm) Barrier(ctx context.Context) error {
	return Barrier(ctx, c)
}
