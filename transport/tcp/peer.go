package tcp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/scoll/scoll/internal/clock"
	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// A peer's state and connection lifecycle. The rest of what a peer does is
// split by concern: match.go pairs messages with receives, syncsend.go
// completes the sends of collective calls, reader.go and writer.go move
// frames, failure.go fails what a broken peer or an aborted call leaves.

type peerState int

const (
	stateIdle       peerState = iota // no connection yet (lazy)
	stateConnecting                  // this rank is dialing
	stateUp                          // connected
	stateDown                        // failed or closed; err says why
)

// peer is the state this rank keeps about one other rank.
type peer struct {
	t    *Transport
	rank int
	up   chan struct{} // closed when the state leaves idle/connecting

	mu     sync.Mutex
	state  peerState
	err    error // why the peer is down
	conn   net.Conn
	posted []*transport.Msg          // receives not matched yet, in posting order
	unexp  []*inbound                // messages without a receive, in arrival order
	rts    map[uint64]*transport.Msg // long sends announced, waiting for cts
	acks   map[uint64]*syncSend      // sync sends not complete yet
	// The collective call the peer last proved to be in: a message of it
	// with that signature arrived, so the peer takes this rank's messages
	// of the call and sync sends of it need no ack.
	proofKey callKey
	proofSig uint64
	// The collective call this rank last sent the peer a message of: that
	// message proves this rank is in the call, so the peer's sync sends of
	// it need no ack.
	sentKey callKey
	sentSig uint64
	data    map[uint64]*incoming // receives matched to an rts, waiting for data
	nextID  uint64
	out     []*frame // frames to write, in order
	ctrl    []*frame // control frames, written before anything still in out
	kick    chan struct{}
	// postedSig is signalled when a receive is posted (a reader may be
	// waiting for one: awaitPosted).
	postedSig chan struct{}
	closing   bool // Close called: write what is queued, then goodbye
	started   bool
	writing   bool       // a goroutine is writing to conn
	rawc      *rawWriter // conn's socket, for sendControl; nil when conn is no socket
	// scratch is the inline writers' memory (sendInline, sendControl),
	// used only by the goroutine that set writing.
	scratch struct {
		hdr       [headerLen]byte
		bufs, tmp net.Buffers
	}

	lastWrite atomic.Int64 // unix ns of the last write, by the transport's clock
	upOnce    sync.Once

	readDone chan struct{} // closed when the reader ends
}

func newPeer(t *Transport, r int) *peer {
	return &peer{
		t: t, rank: r, up: make(chan struct{}),
		rts: map[uint64]*transport.Msg{}, data: map[uint64]*incoming{}, acks: map[uint64]*syncSend{},
		kick: make(chan struct{}, 1), readDone: make(chan struct{}), postedSig: make(chan struct{}, 1),
	}
}

func (p *peer) markUp() { p.upOnce.Do(func() { close(p.up) }) }

// connect dials the peer in the background (state idle → connecting).
// Called with p.mu not held.
func (p *peer) connect() {
	p.mu.Lock()
	if p.state != stateIdle {
		p.mu.Unlock()
		return
	}
	p.state = stateConnecting
	p.mu.Unlock()
	t := p.t
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		conn, err := p.dial()
		if err != nil {
			p.down(err)
			return
		}
		if conn == nil {
			return // the peer's own connection wins
		}
		p.mu.Lock()
		if p.state != stateConnecting {
			p.mu.Unlock()
			conn.Close()
			return
		}
		p.conn, p.state = conn, stateUp
		p.mu.Unlock()
		p.start()
	}()
}

// dial connects and authenticates, retrying failed attempts until the
// connect timeout; a refused connection is not retried. It returns a nil
// conn when the peer reports that the pair already has a connection.
func (p *peer) dial() (net.Conn, error) {
	t := p.t
	deadline := t.clk.Now().Add(t.cfg.ConnectTimeout)
	addr := t.addrs[p.rank]
	backoff := 5 * time.Millisecond
	for {
		select {
		case <-t.done:
			return nil, errs.Closed
		default:
		}
		raw, err := t.cfg.network.Dial(context.Background(), addr, deadline)
		if err == nil {
			done, ok := t.opened(raw)
			if !ok {
				return nil, errs.Closed
			}
			conn, verdict, herr := p.handshake(raw, addr, deadline)
			done()
			if herr == nil {
				if verdict == verdictDuplicate {
					conn.Close()
					return nil, nil
				}
				return conn, nil
			}
			raw.Close()
			err = herr
			if errors.Is(herr, errAuth) {
				t.log.Warn("scoll: connection refused by peer or peer not authenticated", "peer", p.rank, "addr", addr, "err", herr)
			}
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			// The peer listened before its address was published: it is
			// gone.
			return nil, fmt.Errorf("connecting to %s: %w", addr, err)
		}
		if t.clk.Now().Add(backoff).After(deadline) {
			return nil, fmt.Errorf("connecting to %s: %w", addr, err)
		}
		if !clock.Sleep(t.clk, backoff, t.done) {
			return nil, errs.Closed
		}
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}

// handshake runs the dialer's side of the handshake on raw, inside TLS
// when configured, and returns the connection to use with the verdict.
func (p *peer) handshake(raw net.Conn, addr string, deadline time.Time) (net.Conn, byte, error) {
	t := p.t
	t.tune(raw)
	conn := raw
	if t.cfg.TLS != nil {
		cfg := t.cfg.TLS.Clone()
		if cfg.ServerName == "" {
			host, _, _ := net.SplitHostPort(addr)
			cfg.ServerName = host
		}
		tc := tls.Client(raw, cfg)
		tc.SetDeadline(deadline)
		if err := tc.Handshake(); err != nil {
			return nil, 0, fmt.Errorf("%w: TLS: %v", errAuth, err)
		}
		conn = tc
	}
	v, err := dialHandshake(conn, t.cfg.Secret, t.size, t.rank, p.rank, deadline)
	return conn, v, err
}

// start runs the connection's reader and writer.
func (p *peer) start() {
	p.mu.Lock()
	p.started = true
	p.rawc = newRawConnWriter(p.conn)
	p.mu.Unlock()
	p.markUp()
	t := p.t
	t.wg.Add(2)
	go func() {
		defer t.wg.Done()
		defer close(p.readDone)
		p.readLoop()
	}()
	go func() {
		defer t.wg.Done()
		p.writeLoop()
	}()
	p.wake()
}

// wake tells the writer that there are frames to write.
func (p *peer) wake() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// close flushes queued frames and a goodbye, then closes the connection.
func (p *peer) close() {
	p.mu.Lock()
	if p.rank == p.t.rank || p.state != stateUp || !p.started {
		p.mu.Unlock()
		p.down(errClosing)
		return
	}
	p.closing = true
	// Pending operations fail: the caller closes with them outstanding.
	failed := p.takePending(errs.Closed)
	kept := p.out[:0]
	for _, f := range p.out {
		if f.m != nil {
			if f.done() {
				failed = append(failed, f.m)
			}
			continue
		}
		kept = append(kept, f)
	}
	p.out = append(kept, &frame{h: header{kind: kindGoodbye}})
	p.mu.Unlock()
	for _, m := range failed {
		complete(m, errs.Closed)
	}
	p.wake()
}
