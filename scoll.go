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
// hanging.
//
// # Errors
//
// Errors are values to test with errors.Is: ErrInvalidArgument,
// ErrUnsupported, ErrPeerFailed, ErrCanceled (which context errors also
// match), ErrMismatch and ErrClosed. Every error of the API reads
//
//	rank R: Call: scoll: kind: what and why
//
// the caller's rank first (left out where no rank is known: Run's and
// Init's own checks, a nil request), the public name of the call
// (Allreduce, IAllreduce, AllreduceInit, Split, Send, Init, ...), then the
// sentinel's text, "scoll:" once, and the details:
//
//	rank 2: Allreduce: scoll: invalid argument: len(send)=4 != len(recv)=5
//	rank 1: Allreduce: scoll: ranks called mismatched collectives: rank 0 called Bcast
//	rank 0: Allreduce: scoll: invalid argument: unknown algorithm "rign" for allreduce; did you mean "ring"? (valid: ...)
//	rank 0: Allreduce: scoll: canceled: peer failed: rank 3: Allreduce: invalid argument: ...
//
// An error caused by another rank's names that rank and its call after
// the sentinel. How a call ran (its algorithm and path) is not in the
// text; errors.As with the internal CallError type gives it to scoll's own
// tests. Run returns the first failing rank's error as it is (the
// function's own errors get "rank R: " in front).
package scoll

//go:generate go run ./internal/genapi

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/scoll/scoll/internal/comm"
	"github.com/scoll/scoll/internal/errs"
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
	hooks          comm.Hooks   // what tests inject (export_test.go)
}

// settings returns the settings of cfg's communicators: the environment's
// and the options'.
func (cfg *runConfig) settings() *comm.Settings {
	s := comm.NewSettings(cfg.logger, cfg.tuning)
	s.Hooks = cfg.hooks
	return s
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
	c *comm.Comm
}

// wrap returns the public communicator of c (nil for nil).
func wrap(c *comm.Comm) *Comm {
	if c == nil {
		return nil
	}
	return &Comm{c: c}
}

// at returns err as the error of the call name on c's rank (errs.At; no
// rank for a nil c): "rank 2: Split: scoll: invalid argument: ...".
func at(c *Comm, name string, err error) error {
	return errs.At(comm.RankOf(c.core()), name, err)
}

// core returns the communicator behind c (nil for a nil c).
func (c *Comm) core() *comm.Comm {
	if c == nil {
		return nil
	}
	return c.c
}

// Rank returns the caller's rank in [0, Size()).
func (c *Comm) Rank() int { return c.c.Rank() }

// Size returns the number of ranks.
func (c *Comm) Size() int { return c.c.Size() }

// Run starts p ranks as goroutines of this process, calls fn on each with its
// communicator, and waits for all of them. If a rank returns an error or
// panics, the others' contexts are cancelled and Run returns that first error
// (a panic is returned as an error wrapping ErrPeerFailed). The communicators
// must not be used after Run returns: calls then fail with ErrClosed.
func Run(ctx context.Context, p int, fn func(ctx context.Context, c *Comm) error, opts ...Option) error {
	if p < 1 {
		return at(nil, "Run", fmt.Errorf("%w: %d ranks", ErrInvalidArgument, p))
	}
	if fn == nil {
		return at(nil, "Run", fmt.Errorf("%w: nil function", ErrInvalidArgument))
	}
	cfg := runConfig{spin: -1}
	for _, o := range opts {
		o(&cfg)
	}
	set := cfg.settings()
	if set.Err != nil {
		return at(nil, "Run", set.Err)
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
			c := comm.New(cfg.endpoint(w.Endpoint(r)), comm.Config{Spin: cfg.spin, Settings: set})
			defer func() {
				if v := recover(); v != nil {
					fail(errs.At(r, "", fmt.Errorf("%w: panic: %v\n%s", ErrPeerFailed, v, debug.Stack())))
				}
				c.Exit()
				w.Exit(r)
			}()
			if err := fn(ctx, wrap(c)); err != nil {
				// The library's errors name their rank first already.
				if ce, ok := err.(*errs.CallError); !ok || ce.Rank != r {
					err = fmt.Errorf("rank %d: %w", r, err)
				}
				fail(err)
			}
		}()
	}
	wg.Wait()
	w.Close()
	return firstErr
}

// Send sends buf to rank dst with a tag ≥ 0 and returns when buf may be reused.
// Messages between a pair of ranks with the same tag arrive in order.
func (c *Comm) Send(ctx context.Context, dst, tag int, buf []byte) error {
	return at(c, "Send", c.core().Send(ctx, dst, tag, buf))
}

// Recv receives a message from rank src with the given tag into buf and
// returns its length. A message longer than buf fails with
// ErrInvalidArgument (its first len(buf) bytes are kept).
func (c *Comm) Recv(ctx context.Context, src, tag int, buf []byte) (int, error) {
	n, err := c.core().Recv(ctx, src, tag, buf)
	return n, at(c, "Recv", err)
}

// Barrier returns once every rank has entered it (the default algorithm;
// see the function Barrier for options).
func (c *Comm) Barrier(ctx context.Context) error {
	return Barrier(ctx, c)
}
