package scoll

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/scoll/scoll/internal/comm"
	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/internal/jobenv"
	"github.com/scoll/scoll/internal/join"
	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/inproc"
	"github.com/scoll/scoll/transport/tcp"
)

// The environment Init reads.
const (
	EnvRank       = jobenv.Rank        // this process's rank
	EnvSize       = jobenv.Size        // the number of ranks
	EnvRendezvous = "SCOLL_RENDEZVOUS" // tcp:host:port (served by rank 0) or file:/shared/dir
	EnvSecret     = "SCOLL_SECRET"     // the job's shared secret (at least 16 bytes)
	EnvJob        = jobenv.Job         // a job id (scoll run sets it)
)

// WithRendezvous sets where Init's ranks meet, overriding SCOLL_RENDEZVOUS:
// "tcp:host:port" (rank 0 serves it; host is rank 0's host) or
// "file:/dir" (a directory every rank can read and write, such as a shared
// file system).
func WithRendezvous(spec string) Option { return func(c *runConfig) { c.rendezvous = spec } }

// WithSecret sets the job's secret, overriding SCOLL_SECRET. Every rank must
// use the same; connections from processes that do not know it are refused.
func WithSecret(secret []byte) Option { return func(c *runConfig) { c.secret = secret } }

// WithTimeout sets how long Init's ranks wait for a silent peer before its
// failure is reported (default 2 s). A peer whose process dies is noticed
// at once; the timeout covers hosts that stop answering.
func WithTimeout(d time.Duration) Option { return func(c *runConfig) { c.timeout = d } }

// WithConnectTimeout bounds Init's rendezvous and connection set-up
// (default 60 s).
func WithConnectTimeout(d time.Duration) Option {
	return func(c *runConfig) { c.connectTimeout = d }
}

// WithTLS runs Init's connections inside TLS with cfg, used to accept and to
// dial. For mutual TLS give cfg Certificates, RootCAs, ClientCAs and
// ClientAuth: tls.RequireAndVerifyClientCert. The secret is still checked
// inside TLS.
func WithTLS(cfg *tls.Config) Option { return func(c *runConfig) { c.tls = cfg } }

// WithLogger sets where Init's transport logs connection problems and
// rejected peers (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *runConfig) { c.logger = l } }

// WithLazyConnect makes Init open a connection to a peer only when the first
// message is exchanged with it, instead of connecting to every peer at
// start.
func WithLazyConnect() Option { return func(c *runConfig) { c.lazy = true } }

// WithEagerSends makes Init's TCP connections complete a small send (at
// most 4 KiB) of a collective call once it is written, as MPI's eager
// protocol does, instead of once its receiver has taken it as a message of
// the same call; SCOLL_EAGER_SENDS=1 does the same without recompiling.
// The error contract changes: a rank whose part of a mismatched call
// (ranks passing different counts or roots) is only such sends (a bcast's
// root) completes it, while the ranks that receive fail in it with
// ErrMismatch; the sender's next call on the communicator, or its Close,
// then fails with ErrMismatch naming the earlier call. To learn of it in
// time a sender runs at most one call ahead of its receivers: each call
// waits, after its own work, for the receivers to have taken the previous
// call's eager sends. Back-to-back 8-byte bcasts between two processes
// gain about 5% over the default this way (docs/latency.md).
func WithEagerSends() Option { return func(c *runConfig) { c.eagerSends = true } }

// EnvEagerSends names the environment variable that turns on
// WithEagerSends for Init ("1" or "true"; "0", "false" or unset: off).
const EnvEagerSends = "SCOLL_EAGER_SENDS"

// Init joins the job this process belongs to and returns its world
// communicator, one rank per process.
//
// Rank and size come from SCOLL_RANK and SCOLL_SIZE (set by scoll run), or
// from the environment of Open MPI (OMPI_COMM_WORLD_RANK/SIZE), MPICH and
// other PMI launchers (PMI_RANK/PMI_SIZE) or Slurm (SLURM_PROCID/
// SLURM_NTASKS). With none of them set Init returns a communicator of one
// rank, so the same program runs alone.
//
// The ranks meet through the rendezvous in SCOLL_RENDEZVOUS: "tcp:host:port"
// is served by rank 0 on port, "file:/dir" is a directory they share. Without
// it, ranks launched by Open MPI or Slurm meet in a directory under
// os.TempDir() named after the job (one host only). Then every pair of ranks
// connects over TCP, each connection authenticated with the job's secret
// (SCOLL_SECRET; with a file rendezvous and no secret, the ranks share one
// kept in the directory, readable by its owner only).
//
// On Linux the ranks of one host then exchange the messages of collective
// calls through shared memory (package transport/shm; hosts are told apart
// by host name and boot id, or by SCOLL_HOSTNAME), and the others keep TCP.
// When a rank of a host cannot join its segment, that host's ranks agree to
// keep TCP; SCOLL_TRANSPORT=shm makes that an error, SCOLL_TRANSPORT=tcp
// keeps TCP everywhere.
//
// Built with the mpi build tag, Init runs over the MPI library instead when
// an MPI launcher started the process, unless SCOLL_TRANSPORT is set.
//
// ctx bounds the start-up only. Close releases the communicator.
func Init(ctx context.Context, opts ...Option) (*Comm, error) {
	rank := -1 // not known until the environment is read
	c, err := initComm(ctx, &rank, opts)
	return c, errs.At(rank, "Init", err)
}

// initComm is Init; it sets *rankp to the rank once it is known.
func initComm(ctx context.Context, rankp *int, opts []Option) (*Comm, error) {
	if ctx == nil {
		return nil, fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	cfg := runConfig{spin: -1}
	for _, o := range opts {
		o(&cfg)
	}
	set := cfg.settings()
	if set.Err != nil {
		return nil, set.Err
	}
	mode := os.Getenv(EnvTransport)
	switch mode {
	case "", "tcp", "shm":
	default:
		return nil, fmt.Errorf("%w: %s=%q: want tcp or shm", ErrInvalidArgument, EnvTransport, mode)
	}
	switch v := os.Getenv(EnvEagerSends); v {
	case "", "0", "false":
	case "1", "true":
		cfg.eagerSends = true
	default:
		return nil, fmt.Errorf("%w: %s=%q: want 1 or 0", ErrInvalidArgument, EnvEagerSends, v)
	}
	if mpiInit != nil && mode == "" {
		t, ok, err := mpiInit()
		if err != nil {
			return nil, err
		}
		if ok {
			return NewComm(t, opts...), nil
		}
	}
	rank, size, found, err := jobenv.RankFromEnv(os.Getenv)
	if err != nil {
		return nil, err
	}
	if found {
		*rankp = rank
	}
	if !found || size == 1 {
		w := inproc.NewWorld(1)
		release := func() error { w.Exit(0); w.Close(); return nil }
		return wrap(comm.New(w.Endpoint(0), comm.Config{Spin: cfg.spin, Settings: set, Release: release})), nil
	}
	spec := cfg.rendezvous
	if spec == "" {
		spec = os.Getenv(EnvRendezvous)
	}
	job := jobenv.JobFromEnv(os.Getenv)
	if spec == "" {
		if job == "" {
			return nil, fmt.Errorf("%w: no rendezvous for %d ranks; set %s to tcp:host:port or file:/shared/dir", ErrInvalidArgument, size, EnvRendezvous)
		}
		spec = "file:" + filepath.Join(os.TempDir(), "scoll-"+jobenv.Sanitize(job))
	}
	secret := cfg.secret
	if secret == nil {
		if s := os.Getenv(EnvSecret); s != "" {
			secret = []byte(s)
		}
	}
	if secret == nil {
		dir, ok := strings.CutPrefix(spec, "file:")
		if !ok {
			return nil, fmt.Errorf("%w: a tcp rendezvous needs the job's secret in %s (the same on every rank)", ErrInvalidArgument, EnvSecret)
		}
		if secret, err = jobenv.SharedSecret(dir); err != nil {
			return nil, err
		}
	}
	if len(secret) < 16 {
		return nil, fmt.Errorf("%w: the job secret has %d bytes, want at least 16 (%s)", ErrInvalidArgument, len(secret), EnvSecret)
	}
	rv, err := tcp.ParseRendezvous(spec, secret, job)
	if err != nil {
		return nil, err
	}
	tc := tcp.Config{
		Rank: rank, Size: size, Secret: secret, TLS: cfg.tls,
		Timeout: cfg.timeout, ConnectTimeout: cfg.connectTimeout,
		Lazy: cfg.lazy, Logger: cfg.logger, DetachedSends: cfg.eagerSends,
	}
	connect := cfg.connectTimeout
	if connect <= 0 {
		connect = 60 * time.Second
	}
	sctx, cancel := context.WithTimeout(ctx, connect)
	defer cancel()
	t, err := tcp.Start(sctx, tc, rv)
	if err != nil {
		return nil, fmt.Errorf("starting %d ranks: %w", size, err)
	}
	if mode == "tcp" {
		return NewComm(t, opts...), nil
	}
	mt, err := join.Host(sctx, t, join.Config{Secret: secret, Job: job, Required: mode == "shm"})
	if err != nil {
		t.Close()
		return nil, fmt.Errorf("joining the host's ranks: %w", err)
	}
	return NewComm(mt, opts...), nil
}

// EnvTransport names the environment variable that chooses Init's
// transport between processes: "tcp" (TCP between every pair of ranks),
// "shm" (shared memory between the ranks of one host, TCP between hosts;
// Linux only, elsewhere TCP; an error when the host's ranks cannot share a
// segment), or unset: the MPI library when the program is built with the
// mpi tag and an MPI launcher started it, else shared memory between the
// ranks of each host where they all can share a segment (Linux), falling
// back to TCP where they cannot, and TCP between hosts.
const EnvTransport = "SCOLL_TRANSPORT"

// mpiInit starts the MPI transport when the package is built with the mpi
// tag (init_mpi.go) and the process was started by an MPI launcher (ok);
// nil otherwise.
var mpiInit func() (t transport.Transport, ok bool, err error)

// NewComm returns the world communicator over an endpoint of any transport
// (one rank's, already connected to its peers). The communicator owns t:
// Close closes it. Options that configure transports are ignored.
func NewComm(t transport.Transport, opts ...Option) *Comm {
	cfg := runConfig{spin: -1}
	for _, o := range opts {
		o(&cfg)
	}
	return wrap(comm.New(t, comm.Config{Spin: cfg.spin, Settings: cfg.settings(), Release: t.Close}))
}

// Close releases a communicator: later calls on it fail with ErrClosed.
//
// Closing a world communicator (made by Init or NewComm) closes its
// transport: peers' calls that still need this rank fail with
// ErrPeerFailed, the connections close, and every communicator derived
// from it fails with ErrClosed. Every rank should call it when done.
// Closing a world communicator of Run only marks it closed.
//
// Closing a derived communicator (Split, Dup, Create, SplitGrid) frees
// what it holds on this rank and does not affect the communicators derived
// from it, as MPI_Comm_free: a program may duplicate, split, then close
// the duplicate. Close is local and idempotent; but a communicator kept in
// a distributed table stops answering its members' lookups when closed, so
// close it when no member will make new calls on it any more (MPI_Comm_free
// is collective for the same reason).
func (c *Comm) Close() error { return at(c, "Close", c.core().Close()) }
