// Package tcp is scoll's transport between processes: one process per rank,
// on one host or many, over a mesh of TCP connections.
//
// Every pair of ranks shares one connection, opened when the transport
// starts (the higher rank dials the lower) or, with Config.Lazy, on the
// first message between them (when both dial at once, the connection dialed
// by the lower rank wins). Every connection starts with a handshake in which
// both sides prove that they know the job's secret (HMAC-SHA256 challenge
// and response); optionally it runs inside mutual TLS. A peer that fails
// the handshake is logged and dropped before anything it sends is read as
// a message.
//
// Messages are frames with a fixed 56-byte header (frame.go). A message of
// at most Config.EagerLimit bytes (1 MiB) is sent at once; a receiver that
// has no receive posted for it yet waits briefly for one (the data waits in
// the socket, frames behind it too) and then buffers it. A longer one is
// announced first and sent when the receiver has posted its receive, in
// 1 MiB chunks that the sender writes with vectored writes straight from
// the send buffer and the receiver reads straight into the posted buffer:
// long messages are never copied in user space and never buffered unasked.
// Control frames (clear to send, acknowledgements, failures, heartbeats) go
// between chunks, ahead of queued data.
//
// A send of a collective call completes only once the receiver has taken it
// as a message of the same call (an acknowledgement, or a message of that
// call from the receiver itself), so ranks that called different
// collectives find out with errs.Mismatch instead of completing on messages
// nobody receives. A receive marked transport.Msg.Announce tells its peer at
// once that this rank joined the call (a ready frame with the call's
// signature), so that the peer's sends of the call complete when written.
// With Config.DetachedSends small sends complete once written, within a
// ledger of acknowledgements (ledger.go), as MPI's eager sends do.
//
// Liveness: each connection carries a heartbeat when idle, and a peer that
// sends nothing for Config.Timeout (2 s by default) is declared failed, as
// is one whose connection breaks. Failure is reported per call: the
// operations that involve the failed peer fail with an error wrapping
// errs.PeerFailed, and the collective calls they belong to are aborted on
// every rank (CallAborter), so no survivor waits for a call that cannot
// complete.
package tcp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scoll/scoll/internal/clock"
	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// Config configures a Transport. Rank, Size and Secret are required (Secret
// only when Size > 1).
type Config struct {
	// Rank and Size place this process in the job.
	Rank, Size int
	// Secret is the job's shared secret, at least 16 bytes; every
	// connection proves knowledge of it.
	Secret []byte
	// TLS, when set, runs every connection inside TLS with this
	// configuration, used both to accept (as server) and to dial (as
	// client). For mutual TLS give it Certificates, RootCAs, ClientCAs and
	// ClientAuth: tls.RequireAndVerifyClientCert. When ServerName is empty
	// the peer's host is expected in its certificate.
	TLS *tls.Config
	// Timeout is how long a peer may stay silent before it is declared
	// failed (default 2 s). Idle connections carry a heartbeat every
	// Timeout/4.
	Timeout time.Duration
	// ConnectTimeout bounds establishing connections (default 60 s).
	ConnectTimeout time.Duration
	// Lazy opens connections on first use instead of at start.
	Lazy bool
	// EagerLimit is the largest message sent without waiting for the
	// receiver to post its receive (default 1 MiB, at most 16 MiB); an
	// early message up to this size is buffered by the receiver. All ranks
	// must use the same.
	EagerLimit int
	// SocketBuffer sets each connection's kernel send and receive buffers
	// (default 1 MiB, which measured faster than the kernel's automatic
	// sizing for large messages on loopback; negative: the kernel's).
	SocketBuffer int
	// MaxMessage is the largest message accepted (default 1 TiB).
	MaxMessage int64
	// DetachedSends makes a send of a collective call of at most 4 KiB
	// complete once written, as MPI's eager protocol does, instead of once
	// its receiver took it (detached.go). A rank whose part of a
	// mismatched call is only such sends (a bcast's root, a reduce's leaf)
	// then completes it while the others fail with errs.Mismatch, and
	// learns of it at the end of its next call on the communicator, or at
	// its Close (Settle).
	DetachedSends bool
	// Logger receives connection events and rejected peers (default:
	// slog.Default()).
	Logger *slog.Logger

	// clock is where time comes from: timeouts, heartbeats, deadlines
	// (default clock.Real). It must agree with the connections' deadlines
	// (see package clock).
	clock clock.Clock
	// network dials the peers (default TCP); tests pass an in-memory one.
	network network
}

const (
	defaultTimeout        = 2 * time.Second
	defaultConnectTimeout = 60 * time.Second
	defaultEagerLimit     = 1 << 20
	maxEagerLimit         = 16 << 20
	defaultMaxMessage     = 1 << 40
	defaultSocketBuffer   = 1 << 20
	ioChunk               = 4 << 20 // bytes per read or write between deadline renewals
	readBufSize           = 16 << 10
)

// network opens connections: TCP (tcpNetwork), or an in-memory network in
// tests.
type network interface {
	// Listen listens at addr (host:port; port 0 picks a free one).
	Listen(addr string) (net.Listener, error)
	// Dial connects to addr by deadline (zero: none) or until ctx ends.
	Dial(ctx context.Context, addr string, deadline time.Time) (net.Conn, error)
}

// net returns the network to use: c.network, TCP by default.
func (c *Config) net() network {
	if c.network == nil {
		return tcpNetwork{}
	}
	return c.network
}

// tcpNetwork is the network of real sockets.
type tcpNetwork struct{}

func (tcpNetwork) Listen(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }

func (tcpNetwork) Dial(ctx context.Context, addr string, deadline time.Time) (net.Conn, error) {
	d := net.Dialer{Deadline: deadline}
	return d.DialContext(ctx, "tcp", addr)
}

// deadlines gives a connection's reads and writes their deadline: timeout
// from now, by the transport's clock, renewed as data moves.
type deadlines struct {
	clk     clock.Clock
	timeout time.Duration
}

// next returns the deadline of an I/O starting now.
func (d deadlines) next() time.Time { return d.clk.Now().Add(d.timeout) }

// Transport is one rank's endpoint. It implements transport.Transport and
// transport.CallAborter.
type Transport struct {
	cfg   Config
	rank  int
	size  int
	ln    net.Listener
	addrs []string
	peers []*peer
	log   *slog.Logger
	clk   clock.Clock // cfg.clock
	dl    deadlines   // of reads and writes on established connections

	onDown atomic.Pointer[func(rank int, err error)] // OnPeerDown's function

	mu      sync.Mutex
	failed  map[callKey]error     // aborted calls
	opening map[net.Conn]struct{} // connections in their handshake
	closed  bool
	nfailed atomic.Int32
	isDown  atomic.Bool

	spinners atomic.Int32 // readers polling their socket (pollReader)

	ledger *ledger // eager sends not taken yet (ledger.go)

	// Calls this rank has started, with their signatures (Checker): a
	// message of a started call with another signature is a mismatch
	// even when no receive is posted for it.
	callsMu   sync.Mutex
	calls     map[callKey]uint64
	callOrder []callKey // oldest first; at most maxCalls kept

	done chan struct{} // closed by Close
	wg   sync.WaitGroup

	// Responder: handlers by service, and services no longer served.
	services sync.Map // uint64 → func(int, []byte) []byte
	unserved sync.Map // uint64 → struct{}
}

// maxCalls is how many started calls the mismatch check remembers.
const maxCalls = 4096

var (
	_ transport.Transport   = (*Transport)(nil)
	_ transport.CallAborter = (*Transport)(nil)
	_ transport.Checker     = (*Transport)(nil)
	_ transport.Modeler     = (*Transport)(nil)
	_ transport.Responder   = (*Transport)(nil)
)

type callKey struct{ comm, seq uint64 }

// New starts rank cfg.Rank's endpoint. ln is this rank's listener (its
// address is addrs[cfg.Rank]); addrs[r] is rank r's address as host:port.
// New takes ownership of ln. Unless cfg.Lazy, it returns once connections
// to every peer are up, or with an error wrapping errs.PeerFailed when a
// peer cannot be reached, or ctx ends or ConnectTimeout passes first.
func New(ctx context.Context, cfg Config, ln net.Listener, addrs []string) (*Transport, error) {
	if cfg.Size < 1 || cfg.Rank < 0 || cfg.Rank >= cfg.Size || len(addrs) != cfg.Size {
		ln.Close()
		return nil, fmt.Errorf("%w: tcp transport for rank %d of %d with %d addresses", errs.InvalidArgument, cfg.Rank, cfg.Size, len(addrs))
	}
	if cfg.Size > 1 {
		if err := checkSecret(cfg.Secret); err != nil {
			ln.Close()
			return nil, err
		}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = defaultTimeout
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = defaultConnectTimeout
	}
	if cfg.EagerLimit <= 0 {
		cfg.EagerLimit = defaultEagerLimit
	}
	cfg.EagerLimit = min(cfg.EagerLimit, maxEagerLimit)
	if cfg.SocketBuffer == 0 {
		cfg.SocketBuffer = defaultSocketBuffer
	}
	if cfg.MaxMessage <= 0 {
		cfg.MaxMessage = defaultMaxMessage
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.clock == nil {
		cfg.clock = clock.Real{}
	}
	cfg.network = cfg.net()
	t := &Transport{
		cfg: cfg, rank: cfg.Rank, size: cfg.Size, ln: ln, addrs: addrs,
		log: cfg.Logger.With("rank", cfg.Rank),
		clk: cfg.clock, dl: deadlines{cfg.clock, cfg.Timeout},
		failed: map[callKey]error{}, opening: map[net.Conn]struct{}{},
		calls: map[callKey]uint64{}, ledger: newLedger(),
		done: make(chan struct{}),
	}
	t.peers = make([]*peer, t.size)
	for r := range t.peers {
		t.peers[r] = newPeer(t, r)
	}
	t.peers[t.rank].state = stateUp // messages to self never touch the network
	t.peers[t.rank].markUp()
	t.wg.Add(1)
	go t.acceptLoop()
	if !cfg.Lazy {
		for r := range t.rank {
			t.peers[r].connect()
		}
		ctx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout)
		defer cancel()
		for _, p := range t.peers {
			select {
			case <-p.up:
			case <-ctx.Done():
				t.Close()
				return nil, fmt.Errorf("%w: rank %d: connecting to rank %d: %w", errs.PeerFailed, t.rank, p.rank, context.Cause(ctx))
			}
			p.mu.Lock()
			var err error
			if p.err != nil {
				err = p.failure()
			}
			p.mu.Unlock()
			if err != nil {
				t.Close()
				return nil, err
			}
		}
	}
	return t, nil
}

// Rank returns this endpoint's rank.
func (t *Transport) Rank() int { return t.rank }

// Size returns the number of ranks.
func (t *Transport) Size() int { return t.size }

// Addr returns the address this endpoint listens on.
func (t *Transport) Addr() net.Addr { return t.ln.Addr() }

func (t *Transport) peerOf(r int) (*peer, error) {
	if r < 0 || r >= t.size {
		return nil, fmt.Errorf("%w: rank %d out of range [0, %d)", errs.InvalidArgument, r, t.size)
	}
	return t.peers[r], nil
}

// complete completes m, with err unless it failed already. m belongs to
// its owner again afterwards: read nothing from it.
func complete(m *transport.Msg, err error) {
	if err != nil && m.Err == nil {
		m.Err = err
	}
	m.W.Done()
}

// finish completes m like complete and, when it failed, aborts the
// collective call it belongs to.
func (t *Transport) finish(m *transport.Msg, err error) {
	if err != nil && m.Err == nil {
		m.Err = err
	}
	k, e := m.Key, m.Err
	m.W.Done()
	if e != nil {
		t.failCallOf(k, e)
	}
}

func (t *Transport) isClosed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed
}

// Isend posts a send of m.Buf to m.Peer.
func (t *Transport) Isend(m *transport.Msg) error {
	p, err := t.admit(m)
	if p == nil {
		return err
	}
	if p.rank == t.rank {
		t.selfSend(m)
		return nil
	}
	return p.send(m)
}

// Irecv posts a receive from m.Peer into m.Buf.
func (t *Transport) Irecv(m *transport.Msg) error {
	p, err := t.admit(m)
	if p == nil {
		return err
	}
	return p.recv(m)
}

// admit checks an operation about to be posted and returns its peer, or
// nil with the error to return (nil when m was failed at once because its
// call was aborted).
func (t *Transport) admit(m *transport.Msg) (*peer, error) {
	p, err := t.peerOf(m.Peer)
	if err != nil {
		return nil, err
	}
	if t.isDown.Load() {
		return nil, errs.Closed
	}
	if err := t.callErr(m.Key); err != nil {
		complete(m, err)
		return nil, nil
	}
	return p, nil
}

// Cancel withdraws a receive that has not matched, or a send whose receiver
// has not started taking it, and reports whether it did.
func (t *Transport) Cancel(m *transport.Msg) bool {
	p, err := t.peerOf(m.Peer)
	if err != nil {
		return false
	}
	return p.cancel(m)
}

// Model returns the α and β the default algorithm choice assumes for TCP:
// 20 µs per message (a one-way trip of a small message between processes,
// with the wake-ups on both ends) and 2.5 GB/s (a loopback stream with the
// kernel's copies on both ends), as measured on loopback.
func (t *Transport) Model() (alpha, beta float64) { return 20e-6, 1 / 2.5e9 }

// RecordCall notes that this rank started call (comm, seq) with signature
// sig. Messages of that call that arrived already, or arrive later, with
// another signature abort the call with errs.Mismatch on every rank.
func (t *Transport) RecordCall(comm, seq, sig uint64) {
	k := callKey{comm, seq}
	t.callsMu.Lock()
	if _, ok := t.calls[k]; !ok {
		t.callOrder = append(t.callOrder, k)
		if len(t.callOrder) > maxCalls {
			delete(t.calls, t.callOrder[0])
			t.callOrder = t.callOrder[1:]
		}
	}
	t.calls[k] = sig
	t.callsMu.Unlock()
	for _, p := range t.peers {
		p.mu.Lock()
		theirs, bad := uint64(0), false
		if i := slices.IndexFunc(p.unexp, func(in *inbound) bool {
			return in.key.Comm == comm && in.key.Seq == seq && in.sig != sig
		}); i >= 0 {
			theirs, bad = p.unexp[i].sig, true
		} else if p.proofKey == k && p.proofSig != sig { // a ready of another call
			theirs, bad = p.proofSig, true
		}
		p.mu.Unlock()
		if bad {
			t.failCall(k, mismatchErr(t.rank, p.rank, seq, sig, theirs), -1)
			return
		}
	}
}

// CheckCall reports a mismatch already known for the call; mismatches are
// otherwise found as messages arrive.
func (t *Transport) CheckCall(comm, seq, sig uint64, full bool) error {
	if err := t.callErr(transport.Key{Comm: comm, Seq: seq}); errors.Is(err, errs.Mismatch) {
		return err
	}
	return nil
}

// foreign returns the mismatch when a message from rank from of call k
// with signature sig belongs to another call than the one this rank
// started with that sequence number, else nil.
func (t *Transport) foreign(k transport.Key, sig uint64, from int) error {
	if k.Seq == 0 {
		return nil
	}
	t.callsMu.Lock()
	mine, ok := t.calls[callKey{k.Comm, k.Seq}]
	t.callsMu.Unlock()
	if !ok || mine == sig {
		return nil
	}
	return mismatchErr(t.rank, from, k.Seq, mine, sig)
}

// mismatchErr is the mismatch of call seq found by rank me: a message from
// rank from with signature theirs, where me called with mine. The
// communicator names the collectives the signatures encode.
func mismatchErr(me, from int, seq, mine, theirs uint64) error {
	return &errs.MismatchError{Seq: seq, Rank: me, Other: from, Sig: mine, OtherSig: theirs}
}

// Close fails every outstanding operation with errs.Closed, says goodbye to
// the peers and releases the connections. It waits up to Timeout for queued
// frames to drain.
func (t *Transport) Close() error {
	// Opens as the mpi transport's Close does (a flag under the lock that
	// guards the rest of the state): the transports share no code below
	// package transport, and a helper for three lines would not pay.
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	for c := range t.opening {
		c.Close()
	}
	t.mu.Unlock()
	t.isDown.Store(true)
	close(t.done)
	t.ln.Close()
	for _, p := range t.peers {
		p.close()
	}
	t.wg.Wait()
	return nil
}

func (t *Transport) acceptLoop() {
	defer t.wg.Done()
	for {
		conn, err := t.ln.Accept()
		if err != nil {
			select {
			case <-t.done:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			t.log.Error("scoll: accept failed", "err", err)
			return
		}
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			t.accept(conn)
		}()
	}
}

// tune sets a new connection's options.
func (t *Transport) tune(c net.Conn) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return
	}
	tc.SetNoDelay(true)
	if n := t.cfg.SocketBuffer; n > 0 {
		tc.SetReadBuffer(n)
		tc.SetWriteBuffer(n)
	}
}

// opened registers a connection in its handshake, so that Close can abort
// it; it returns false, having closed conn, when the transport is closed.
// done unregisters it.
func (t *Transport) opened(conn net.Conn) (done func(), ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		conn.Close()
		return nil, false
	}
	t.opening[conn] = struct{}{}
	return func() {
		t.mu.Lock()
		delete(t.opening, conn)
		t.mu.Unlock()
	}, true
}

// accept authenticates an incoming connection and attaches it to its peer.
func (t *Transport) accept(raw net.Conn) {
	done, ok := t.opened(raw)
	if !ok {
		return
	}
	defer done()
	deadline := t.clk.Now().Add(t.cfg.ConnectTimeout)
	t.tune(raw)
	conn := raw
	if t.cfg.TLS != nil {
		tc := tls.Server(raw, t.cfg.TLS)
		tc.SetDeadline(deadline)
		if err := tc.Handshake(); err != nil {
			t.log.Warn("scoll: rejected connection: TLS handshake failed", "remote", raw.RemoteAddr().String(), "err", err)
			raw.Close()
			return
		}
		conn = tc
	}
	from, err := acceptHandshake(conn, t.cfg.Secret, t.rank, t.size, deadline)
	if err != nil {
		t.log.Warn("scoll: rejected connection", "remote", raw.RemoteAddr().String(), "err", err)
		conn.Close()
		return
	}
	p := t.peers[from]
	if t.isClosed() {
		conn.Close()
		return
	}
	p.mu.Lock()
	accept := p.state == stateIdle || p.state == stateConnecting && from < t.rank
	if accept {
		p.conn, p.state = conn, stateUp
	}
	p.mu.Unlock()
	if !accept {
		sendVerdict(conn, verdictDuplicate)
		conn.Close()
		return
	}
	if err := sendVerdict(conn, verdictAccept); err != nil {
		p.down(fmt.Errorf("accepting the connection: %w", err))
		return
	}
	p.start()
}
