package scoll

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/inproc"
	"github.com/scoll/scoll/transport/tcp"
)

// The environment Init reads.
const (
	EnvRank       = "SCOLL_RANK"       // this process's rank
	EnvSize       = "SCOLL_SIZE"       // the number of ranks
	EnvRendezvous = "SCOLL_RENDEZVOUS" // tcp:host:port (served by rank 0) or file:/shared/dir
	EnvSecret     = "SCOLL_SECRET"     // the job's shared secret (at least 16 bytes)
	EnvJob        = "SCOLL_JOB"        // a job id (scoll run sets it)
)

// rankSources are the launchers whose environment gives rank and size, in
// the order Init tries them.
var rankSources = []struct{ name, rank, size string }{
	{"scoll", EnvRank, EnvSize},
	{"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
	{"PMI", "PMI_RANK", "PMI_SIZE"},
	{"Slurm", "SLURM_PROCID", "SLURM_NTASKS"},
}

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
// Built with the mpi build tag, Init runs over the MPI library instead when
// an MPI launcher started the process, unless SCOLL_TRANSPORT=tcp.
//
// ctx bounds the start-up only. Close releases the communicator.
func Init(ctx context.Context, opts ...Option) (*Comm, error) {
	if ctx == nil {
		return nil, fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	cfg := runConfig{spin: -1}
	for _, o := range opts {
		o(&cfg)
	}
	if mpiInit != nil && os.Getenv("SCOLL_TRANSPORT") != "tcp" {
		t, ok, err := mpiInit()
		if err != nil {
			return nil, err
		}
		if ok {
			return NewComm(t, opts...), nil
		}
	}
	rank, size, found, err := rankFromEnv(os.Getenv)
	if err != nil {
		return nil, err
	}
	if !found || size == 1 {
		w := inproc.NewWorld(1)
		c := newComm(w.Endpoint(0), 1, cfg.spin)
		c.release = func() error { w.Exit(0); w.Close(); return nil }
		return c, nil
	}
	spec := cfg.rendezvous
	if spec == "" {
		spec = os.Getenv(EnvRendezvous)
	}
	job := jobFromEnv(os.Getenv)
	if spec == "" {
		if job == "" {
			return nil, fmt.Errorf("%w: rank %d of %d: no rendezvous; set %s to tcp:host:port or file:/shared/dir", ErrInvalidArgument, rank, size, EnvRendezvous)
		}
		spec = "file:" + filepath.Join(os.TempDir(), "scoll-"+sanitize(job))
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
			return nil, fmt.Errorf("%w: rank %d: a tcp rendezvous needs the job's secret in %s (the same on every rank)", ErrInvalidArgument, rank, EnvSecret)
		}
		if secret, err = sharedSecret(dir); err != nil {
			return nil, err
		}
	}
	if len(secret) < 16 {
		return nil, fmt.Errorf("%w: rank %d: the job secret has %d bytes, want at least 16 (%s)", ErrInvalidArgument, rank, len(secret), EnvSecret)
	}
	rv, err := tcp.ParseRendezvous(spec, secret, job)
	if err != nil {
		return nil, err
	}
	tc := tcp.Config{
		Rank: rank, Size: size, Secret: secret, TLS: cfg.tls,
		Timeout: cfg.timeout, ConnectTimeout: cfg.connectTimeout,
		Lazy: cfg.lazy, Logger: cfg.logger,
	}
	connect := cfg.connectTimeout
	if connect <= 0 {
		connect = 60 * time.Second
	}
	sctx, cancel := context.WithTimeout(ctx, connect)
	defer cancel()
	t, err := tcp.Start(sctx, tc, rv)
	if err != nil {
		return nil, fmt.Errorf("rank %d of %d: %w", rank, size, err)
	}
	return NewComm(t, opts...), nil
}

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
	c := newComm(t, 1, cfg.spin)
	c.release = t.Close
	return c
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
func (c *Comm) Close() error {
	if c == nil {
		return fmt.Errorf("%w: nil communicator", ErrInvalidArgument)
	}
	if c.closed.Swap(true) {
		return nil
	}
	if c.grp != nil {
		if c.view != nil {
			c.view.Leave()
		}
		if c.unserve != nil {
			c.unserve()
		}
		c.rs.cids.Release(c.cid)
		c.plans.Clear()
		return nil
	}
	c.rs.closed.Store(true)
	if c.release != nil {
		return c.release()
	}
	return nil
}

// rankFromEnv finds rank and size in the environment.
func rankFromEnv(getenv func(string) string) (rank, size int, found bool, err error) {
	for _, s := range rankSources {
		rs, ss := getenv(s.rank), getenv(s.size)
		if rs == "" && ss == "" {
			continue
		}
		r, err1 := strconv.Atoi(rs)
		n, err2 := strconv.Atoi(ss)
		if err1 != nil || err2 != nil || n < 1 || r < 0 || r >= n {
			return 0, 0, false, fmt.Errorf("%w: %s environment gives rank %q of size %q (%s, %s)", ErrInvalidArgument, s.name, rs, ss, s.rank, s.size)
		}
		return r, n, true, nil
	}
	return 0, 1, false, nil
}

// jobFromEnv returns an id of the job the launcher gives, or "".
func jobFromEnv(getenv func(string) string) string {
	if j := getenv(EnvJob); j != "" {
		return j
	}
	for _, k := range []string{"OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE", "PMI_KVSNAME"} {
		if j := getenv(k); j != "" {
			return j
		}
	}
	if j := getenv("SLURM_JOB_ID"); j != "" {
		return j + "." + getenv("SLURM_STEP_ID")
	}
	return ""
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// sharedSecret returns the secret kept in dir/secret, creating it if no
// rank has yet: written to a private temporary file and linked into place,
// so that every rank reads the same complete secret.
func sharedSecret(dir string) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("rendezvous directory: %w", err)
	}
	path := filepath.Join(dir, "secret")
	if b, err := os.ReadFile(path); err == nil && len(b) >= 32 {
		return b, nil
	}
	tmp, err := os.CreateTemp(dir, ".secret-*")
	if err != nil {
		return nil, fmt.Errorf("rendezvous secret: %w", err)
	}
	defer os.Remove(tmp.Name())
	var raw [32]byte
	rand.Read(raw[:])
	_, err = tmp.WriteString(hex.EncodeToString(raw[:]))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("rendezvous secret: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("rendezvous secret: %w", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("rendezvous secret: %w", err)
	}
	return b, nil
}
