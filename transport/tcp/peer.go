package tcp

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
	"sync"
	"sync/atomic"
)

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

	mu      sync.Mutex
	state   peerState
	err     error // why the peer is down
	conn    net.Conn
	posted  []*transport.Msg          // receives not matched yet, in posting order
	unexp   []*inbound                // messages without a receive, in arrival order
	rts     map[uint64]*transport.Msg // long sends announced, waiting for cts
	acks    map[uint64]*transport.Msg // sync sends written, waiting for their ack
	data    map[uint64]*transport.Msg // receives matched to an rts, waiting for data
	nextID  uint64
	out     []*frame // frames to write, in order
	kick    chan struct{}
	closing bool // Close called: write what is queued, then goodbye
	started bool
	writing bool // a goroutine is writing to conn

	lastWrite atomic.Int64 // unix ns of the last write
	upOnce    sync.Once

	readDone chan struct{} // closed when the reader ends
}

// inbound is a message that arrived before its receive was posted.
type inbound struct {
	key  transport.Key
	sig  uint64
	buf  []byte         // an eager message's payload
	rts  bool           // a long message announced by rts id, of n bytes
	ack  bool           // a sync message: answer ack id when it matches
	id   uint64         //
	n    uint64         //
	self *transport.Msg // a long send to self, waiting for its receive
}

// frame is a frame to write; m is the send it carries, if any.
type frame struct {
	h       header
	payload []byte
	m       *transport.Msg
}

// done reports whether writing f completes its send (rts and sync sends
// complete when the receiver answers).
func (f *frame) done() bool {
	return f.m != nil && (f.h.kind == kindEager || f.h.kind == kindData)
}

func newPeer(t *Transport, r int) *peer {
	return &peer{
		t: t, rank: r, up: make(chan struct{}),
		rts: map[uint64]*transport.Msg{}, data: map[uint64]*transport.Msg{}, acks: map[uint64]*transport.Msg{},
		kick: make(chan struct{}, 1), readDone: make(chan struct{}),
	}
}

func (p *peer) markUp() { p.upOnce.Do(func() { close(p.up) }) }

func (p *peer) failure() error {
	return fmt.Errorf("%w: rank %d: %v", errs.PeerFailed, p.rank, p.err)
}

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

// dial connects and authenticates, retrying refused connections until the
// connect timeout. It returns a nil conn when the peer reports that the
// pair already has a connection.
func (p *peer) dial() (net.Conn, error) {
	t := p.t
	deadline := time.Now().Add(t.cfg.ConnectTimeout)
	addr := t.addrs[p.rank]
	backoff := 5 * time.Millisecond
	for {
		select {
		case <-t.done:
			return nil, errs.Closed
		default:
		}
		d := net.Dialer{Deadline: deadline}
		raw, err := d.Dial("tcp", addr)
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
		if time.Now().Add(backoff).After(deadline) {
			return nil, fmt.Errorf("connecting to %s: %w", addr, err)
		}
		select {
		case <-t.done:
			return nil, errs.Closed
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}

func (p *peer) handshake(raw net.Conn, addr string, deadline time.Time) (net.Conn, byte, error) {
	t := p.t
	if tc, ok := raw.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
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

func (p *peer) wake() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// down marks the peer failed: its connection closes and every operation
// that involves it fails, as do the calls those operations belong to.
func (p *peer) down(cause error) {
	p.mu.Lock()
	if p.state == stateDown {
		p.mu.Unlock()
		return
	}
	p.state, p.err = stateDown, cause
	conn := p.conn
	var failed []*transport.Msg
	failed = append(failed, p.posted...)
	for _, m := range p.rts {
		failed = append(failed, m)
	}
	for _, m := range p.data {
		failed = append(failed, m)
	}
	for _, m := range p.acks {
		failed = append(failed, m)
	}
	for _, f := range p.out {
		if f.done() { // the others are in p.rts or p.acks
			failed = append(failed, f.m)
		}
	}
	// Messages that arrived complete stay receivable (a peer may send and
	// then leave); announced ones can no longer come.
	p.unexp = slices.DeleteFunc(p.unexp, func(in *inbound) bool {
		if in.self != nil {
			failed = append(failed, in.self)
		}
		return in.rts || in.self != nil
	})
	p.posted, p.out = nil, nil
	clear(p.rts)
	clear(p.data)
	clear(p.acks)
	closing := p.closing
	p.mu.Unlock()
	p.markUp()
	if conn != nil {
		conn.Close()
	}
	p.wake()
	t := p.t
	if !closing && !t.isClosed() && !errors.Is(cause, errGoodbye) {
		t.log.Warn("scoll: peer failed", "peer", p.rank, "err", cause)
	}
	err := p.failure()
	if closing || t.isClosed() {
		err = errs.Closed
	}
	keys := make([]transport.Key, len(failed))
	for i, m := range failed {
		keys[i] = m.Key
		complete(m, err)
	}
	for _, k := range keys {
		t.failCallOf(k, err)
	}
}

// errClosing is the cause recorded for peers of a closed transport,
// errGoodbye for a peer that closed its own.
var (
	errClosing = errors.New("transport closed")
	errGoodbye = errors.New("closed its endpoint")
)

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
	var failed []*transport.Msg
	failed = append(failed, p.posted...)
	for _, m := range p.rts {
		failed = append(failed, m)
	}
	for _, m := range p.data {
		failed = append(failed, m)
	}
	for _, m := range p.acks {
		failed = append(failed, m)
	}
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
	p.posted = nil
	clear(p.rts)
	clear(p.data)
	clear(p.acks)
	p.mu.Unlock()
	for _, m := range failed {
		complete(m, errs.Closed)
	}
	p.wake()
}

// send queues m: one eager frame, or an rts for a long message.
func (p *peer) send(m *transport.Msg) error {
	p.mu.Lock()
	if p.state == stateDown {
		err := p.failure()
		p.mu.Unlock()
		p.t.finish(m, err)
		return nil
	}
	f := &frame{h: header{key: m.Key, sig: m.Sig, len: uint64(len(m.Buf))}, m: m}
	if len(m.Buf) <= p.t.cfg.EagerLimit {
		f.h.kind, f.payload = kindEager, m.Buf
		if !m.Eager {
			p.nextID++
			f.h.kind, f.h.id = kindSync, p.nextID
			p.acks[f.h.id] = m
		}
	} else {
		if int64(len(m.Buf)) > p.t.cfg.MaxMessage {
			p.mu.Unlock()
			return fmt.Errorf("%w: message of %d bytes exceeds the limit %d", errs.InvalidArgument, len(m.Buf), p.t.cfg.MaxMessage)
		}
		p.nextID++
		f.h.kind, f.h.id = kindRTS, p.nextID
		p.rts[f.h.id] = m
	}
	if f.h.kind != kindRTS && len(m.Buf) <= inlineLimit && p.state == stateUp && p.started && !p.writing && len(p.out) == 0 && !p.closing {
		// Nothing queued and nobody writing: write from the caller's
		// goroutine, sparing the hand-off to the writer.
		p.writing = true
		conn := p.conn
		p.mu.Unlock()
		var hb [headerLen]byte
		f.h.encode(hb[:])
		err := writeAll(conn, net.Buffers{hb[:], m.Buf}, p.t.cfg.Timeout)
		p.lastWrite.Store(time.Now().UnixNano())
		p.mu.Lock()
		p.writing = false
		more := len(p.out) > 0
		p.mu.Unlock()
		if more {
			p.wake()
		}
		if err != nil {
			err = fmt.Errorf("%w: rank %d: write: %v", errs.PeerFailed, p.rank, err)
			if f.done() {
				p.t.finish(m, err)
			}
			p.down(err) // fails a sync send waiting for its ack
			return nil
		}
		if f.done() {
			complete(m, nil)
		}
		return nil
	}
	p.out = append(p.out, f)
	idle := p.state == stateIdle
	p.mu.Unlock()
	if idle {
		p.connect()
	}
	p.wake()
	return nil
}

// inlineLimit is the largest message a sender writes itself when the
// connection is idle.
const inlineLimit = 64 << 10

// failCallOf aborts the call of a collective message.
func (t *Transport) failCallOf(k transport.Key, err error) {
	if k.Seq != 0 {
		t.failCall(callKey{k.Comm, k.Seq}, err, -1)
	}
}

// takePosted removes and returns the first posted receive for key.
// Called with p.mu held.
func (p *peer) takePosted(k transport.Key) *transport.Msg {
	for i, m := range p.posted {
		if m.Key == k {
			p.posted = slices.Delete(p.posted, i, i+1)
			return m
		}
	}
	return nil
}

// recv matches m with a message that arrived already or posts it.
func (p *peer) recv(m *transport.Msg) error {
	p.mu.Lock()
	for i, in := range p.unexp {
		if in.key != m.Key {
			continue
		}
		p.unexp = slices.Delete(p.unexp, i, i+1)
		switch {
		case in.self != nil:
			p.mu.Unlock()
			fill(m, in.self.Buf, in.sig, p.rank)
			e := m.Err
			p.t.finish(m, nil)
			p.t.finish(in.self, e)
		case in.rts:
			p.matchRTS(m, in.id, in.n, in.sig) // unlocks
		default:
			if in.ack && in.sig == m.Sig {
				p.out = append(p.out, &frame{h: header{kind: kindAck, id: in.id}})
			}
			p.mu.Unlock()
			if in.ack {
				p.wake()
			}
			fill(m, in.buf, in.sig, p.rank)
			p.t.finish(m, nil)
		}
		return nil
	}
	if p.state == stateDown {
		err := p.failure()
		p.mu.Unlock()
		p.t.finish(m, err)
		return nil
	}
	p.posted = append(p.posted, m)
	idle := p.state == stateIdle
	p.mu.Unlock()
	if idle {
		p.connect()
	}
	return nil
}

// matchRTS pairs receive m with rts id of n bytes: clear to send, or a nack
// when the calls differ. Called with p.mu held; returns with it released.
func (p *peer) matchRTS(m *transport.Msg, id, n, sig uint64) {
	if sig != m.Sig {
		p.out = append(p.out, &frame{h: header{kind: kindNack, code: codeMismatch, id: id}})
		p.mu.Unlock()
		p.wake()
		err := fmt.Errorf("%w: message from rank %d belongs to another call", errs.Mismatch, p.rank)
		p.t.finish(m, err)
		return
	}
	p.data[id] = m
	p.out = append(p.out, &frame{h: header{kind: kindCTS, id: id}})
	p.mu.Unlock()
	p.wake()
}

// cancel withdraws m if it has not started to move.
func (p *peer) cancel(m *transport.Msg) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i := slices.Index(p.posted, m); i >= 0 {
		p.posted = slices.Delete(p.posted, i, i+1)
		return true
	}
	for i, f := range p.out {
		if f.m == m {
			if f.h.kind == kindData {
				return false // the receiver is waiting for it
			}
			p.out = slices.Delete(p.out, i, i+1)
			switch f.h.kind {
			case kindRTS:
				delete(p.rts, f.h.id)
			case kindSync:
				delete(p.acks, f.h.id)
			}
			return true
		}
	}
	for id, s := range p.rts {
		if s == m {
			// Announced but not cleared: tell the receiver.
			delete(p.rts, id)
			p.out = append(p.out, &frame{h: header{kind: kindWithdraw, code: codeCanceled, id: id}})
			p.wake()
			return true
		}
	}
	if p.rank == p.t.rank {
		for i, in := range p.unexp {
			if in.self == m {
				p.unexp = slices.Delete(p.unexp, i, i+1)
				return true
			}
		}
	}
	return false
}

// failCall fails this peer's operations of call k; with notify it also
// queues a fail frame to the peer.
func (p *peer) failCall(k callKey, err error, code uint8, notify bool) {
	in := func(key transport.Key) bool { return key.Seq == k.seq && key.Comm == k.comm }
	var failed []*transport.Msg
	p.mu.Lock()
	p.posted = slices.DeleteFunc(p.posted, func(m *transport.Msg) bool {
		if in(m.Key) {
			failed = append(failed, m)
			return true
		}
		return false
	})
	p.unexp = slices.DeleteFunc(p.unexp, func(x *inbound) bool {
		if in(x.key) && x.self != nil {
			failed = append(failed, x.self)
		}
		return in(x.key)
	})
	for id, m := range p.rts {
		if in(m.Key) {
			failed = append(failed, m)
			delete(p.rts, id)
		}
	}
	for id, m := range p.data {
		if in(m.Key) {
			failed = append(failed, m)
			delete(p.data, id) // its data, if it comes, is dropped
		}
	}
	for id, m := range p.acks {
		if in(m.Key) {
			failed = append(failed, m)
			delete(p.acks, id)
		}
	}
	p.out = slices.DeleteFunc(p.out, func(f *frame) bool {
		if f.m == nil || !in(f.m.Key) {
			return false
		}
		if f.done() {
			failed = append(failed, f.m)
		}
		return true
	})
	if notify && (p.state == stateUp || p.state == stateConnecting) && !p.closing {
		p.out = append(p.out, &frame{h: header{kind: kindFail, code: code, key: transport.Key{Comm: k.comm, Seq: k.seq}}})
	}
	p.mu.Unlock()
	p.wake()
	for _, m := range failed {
		complete(m, err)
	}
}

// readLoop reads frames until the connection ends.
func (p *peer) readLoop() {
	t := p.t
	p.mu.Lock()
	conn := p.conn
	p.mu.Unlock()
	br := bufio.NewReaderSize(conn, readBufSize)
	var hb [headerLen]byte
	var h header
	for {
		conn.SetReadDeadline(time.Now().Add(t.cfg.Timeout))
		if _, err := io.ReadFull(br, hb[:]); err != nil {
			p.readFailed(err)
			return
		}
		if err := decodeHeader(hb[:], &h, t.cfg.EagerLimit, t.cfg.MaxMessage); err != nil {
			p.protocolError(err)
			return
		}
		var err error
		switch h.kind {
		case kindEager, kindSync:
			err = p.onEager(conn, br, &h)
		case kindAck:
			p.mu.Lock()
			m := p.acks[h.id]
			delete(p.acks, h.id)
			p.mu.Unlock()
			if m != nil {
				complete(m, nil)
			}
		case kindRTS:
			p.onRTS(&h)
		case kindCTS:
			p.onCTS(&h)
		case kindData:
			err = p.onData(conn, br, &h)
		case kindNack:
			p.mu.Lock()
			m := p.rts[h.id]
			delete(p.rts, h.id)
			p.mu.Unlock()
			if m != nil {
				e := codeErr(h.code, p.rank, "refused the message")
				p.t.finish(m, e)
			}
		case kindFail:
			t.failCall(callKey{h.key.Comm, h.key.Seq}, codeErr(h.code, p.rank, fmt.Sprintf("call %d aborted", h.key.Seq)), p.rank)
		case kindWithdraw:
			p.onWithdraw(&h)
		case kindHeartbeat:
		case kindGoodbye:
			p.down(errGoodbye)
			return
		}
		if err != nil {
			p.readFailed(err)
			return
		}
	}
}

func (p *peer) readFailed(err error) {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		err = fmt.Errorf("silent for %v: %w", p.t.cfg.Timeout, err)
	} else if errors.Is(err, io.EOF) {
		err = fmt.Errorf("connection closed without goodbye: %w", err)
	}
	p.down(err)
}

func (p *peer) protocolError(err error) {
	p.t.log.Error("scoll: protocol error, dropping connection", "peer", p.rank, "err", err)
	p.down(fmt.Errorf("protocol error: %w", err))
}

func (p *peer) onEager(conn net.Conn, br *bufio.Reader, h *header) error {
	t := p.t
	if t.foreign(h.key, h.sig) {
		t.failCallOf(h.key, mismatchErr(p.rank))
	}
	if t.callErr(h.key) != nil {
		return discard(conn, br, h.len, t.cfg.Timeout)
	}
	p.mu.Lock()
	m := p.takePosted(h.key)
	p.mu.Unlock()
	if m == nil {
		buf := make([]byte, h.len) // h.len ≤ EagerLimit: checked by decodeHeader
		if err := readFull(conn, br, buf, t.cfg.Timeout); err != nil {
			return err
		}
		p.mu.Lock()
		m = p.takePosted(h.key)
		if m == nil {
			if t.callErr(h.key) == nil {
				p.unexp = append(p.unexp, &inbound{key: h.key, sig: h.sig, buf: buf, ack: h.kind == kindSync, id: h.id})
			}
			p.mu.Unlock()
			return nil
		}
		p.mu.Unlock()
		fill(m, buf, h.sig, p.rank)
		p.acknowledge(h, m.Err == nil)
		t.finish(m, nil)
		return nil
	}
	err := p.readInto(conn, br, m, h)
	if err != nil {
		t.finish(m, fmt.Errorf("%w: rank %d: %v", errs.PeerFailed, p.rank, err))
		return err
	}
	p.acknowledge(h, m.Err == nil)
	t.finish(m, nil)
	return nil
}

// acknowledge answers a sync message that matched a receive of the same
// call (ok).
func (p *peer) acknowledge(h *header, ok bool) {
	if h.kind != kindSync || !ok {
		return
	}
	p.mu.Lock()
	p.out = append(p.out, &frame{h: header{kind: kindAck, id: h.id}})
	p.mu.Unlock()
	p.wake()
}

// readInto reads a payload of h.len bytes into receive m: at most len(m.Buf)
// bytes are kept, a longer message fails m with a truncation error, a
// message of another call with a mismatch. It does not complete m.
func (p *peer) readInto(conn net.Conn, br *bufio.Reader, m *transport.Msg, h *header) error {
	t := p.t
	n := min(uint64(len(m.Buf)), h.len)
	if h.sig != m.Sig {
		m.Err = fmt.Errorf("%w: message from rank %d belongs to another call", errs.Mismatch, p.rank)
		return discard(conn, br, h.len, t.cfg.Timeout)
	}
	if m.Combine != nil {
		// Not offered (no Combiner), but stay correct if asked.
		buf := make([]byte, h.len)
		if err := readFull(conn, br, buf, t.cfg.Timeout); err != nil {
			return err
		}
		transport.Finish(m, buf)
		return nil
	}
	if err := readFull(conn, br, m.Buf[:n], t.cfg.Timeout); err != nil {
		return err
	}
	m.N = int(n)
	if h.len > n {
		m.Err = fmt.Errorf("%w: message of %d bytes truncated to %d", errs.InvalidArgument, h.len, n)
		return discard(conn, br, h.len-n, t.cfg.Timeout)
	}
	return nil
}

func (p *peer) onRTS(h *header) {
	t := p.t
	if t.foreign(h.key, h.sig) {
		t.failCallOf(h.key, mismatchErr(p.rank))
	}
	if err := t.callErr(h.key); err != nil {
		p.mu.Lock()
		p.out = append(p.out, &frame{h: header{kind: kindNack, code: errCode(err), id: h.id}})
		p.mu.Unlock()
		p.wake()
		return
	}
	p.mu.Lock()
	if m := p.takePosted(h.key); m != nil {
		p.matchRTS(m, h.id, h.len, h.sig) // unlocks
		return
	}
	p.unexp = append(p.unexp, &inbound{key: h.key, sig: h.sig, rts: true, id: h.id, n: h.len})
	p.mu.Unlock()
}

func (p *peer) onCTS(h *header) {
	p.mu.Lock()
	m, ok := p.rts[h.id]
	if ok {
		delete(p.rts, h.id)
		p.out = append(p.out, &frame{h: header{kind: kindData, id: h.id, len: uint64(len(m.Buf)), key: m.Key, sig: m.Sig}, payload: m.Buf, m: m})
	}
	p.mu.Unlock()
	if ok {
		p.wake()
	}
}

func (p *peer) onData(conn net.Conn, br *bufio.Reader, h *header) error {
	t := p.t
	p.mu.Lock()
	m, ok := p.data[h.id]
	delete(p.data, h.id)
	p.mu.Unlock()
	if !ok {
		// Its receive failed or was withdrawn meanwhile: drop it.
		return discard(conn, br, h.len, t.cfg.Timeout)
	}
	h.sig = m.Sig // checked at rts time
	if err := p.readInto(conn, br, m, h); err != nil {
		t.finish(m, fmt.Errorf("%w: rank %d: %v", errs.PeerFailed, p.rank, err))
		return err
	}
	t.finish(m, nil)
	return nil
}

func (p *peer) onWithdraw(h *header) {
	p.mu.Lock()
	for i, in := range p.unexp {
		if in.rts && in.id == h.id {
			p.unexp = slices.Delete(p.unexp, i, i+1)
			p.mu.Unlock()
			return
		}
	}
	m, ok := p.data[h.id]
	delete(p.data, h.id)
	p.mu.Unlock()
	if ok {
		p.t.finish(m, codeErr(h.code, p.rank, "withdrew the message"))
	}
}

// writeLoop writes queued frames, a heartbeat when idle, and the goodbye.
func (p *peer) writeLoop() {
	t := p.t
	p.mu.Lock()
	conn := p.conn
	p.mu.Unlock()
	tick := time.NewTicker(t.cfg.Timeout / 4)
	defer tick.Stop()
	var hdrs []byte
	var bufs net.Buffers
	for {
		select {
		case <-p.kick:
		case <-tick.C:
			if time.Since(time.Unix(0, p.lastWrite.Load())) >= t.cfg.Timeout/4 {
				p.mu.Lock()
				p.out = append(p.out, &frame{h: header{kind: kindHeartbeat}})
				p.mu.Unlock()
			}
		}
		p.mu.Lock()
		if p.writing && p.state != stateDown {
			p.mu.Unlock() // the inline writer kicks when done
			continue
		}
		batch := p.out
		p.out = nil
		p.writing = len(batch) > 0
		down := p.state == stateDown
		var downErr error
		if down {
			downErr = p.failure()
		}
		p.mu.Unlock()
		if down {
			for _, f := range batch {
				if f.done() {
					t.finish(f.m, downErr)
				}
			}
			return
		}
		if len(batch) == 0 {
			continue
		}
		hdrs = slices.Grow(hdrs[:0], len(batch)*headerLen)[:len(batch)*headerLen]
		bufs = bufs[:0]
		bye := false
		for i, f := range batch {
			hb := hdrs[i*headerLen : (i+1)*headerLen]
			f.h.encode(hb)
			bufs = append(bufs, hb)
			if len(f.payload) > 0 {
				bufs = append(bufs, f.payload)
			}
			bye = bye || f.h.kind == kindGoodbye
		}
		err := writeAll(conn, bufs, t.cfg.Timeout)
		p.lastWrite.Store(time.Now().UnixNano())
		p.mu.Lock()
		p.writing = false
		p.mu.Unlock()
		if err != nil {
			err = fmt.Errorf("%w: rank %d: write: %v", errs.PeerFailed, p.rank, err)
		}
		for _, f := range batch {
			if f.done() {
				t.finish(f.m, err)
			}
		}
		if err != nil {
			p.down(err)
			return
		}
		if bye {
			if tc, ok := conn.(interface{ CloseWrite() error }); ok {
				tc.CloseWrite()
			}
			p.afterGoodbye(conn)
			return
		}
	}
}

// afterGoodbye waits up to Timeout for the peer to close its side (the
// reader then ends), then closes.
func (p *peer) afterGoodbye(conn net.Conn) {
	timer := time.NewTimer(p.t.cfg.Timeout)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-p.readDone:
	}
	p.down(errClosing)
}

// writeAll writes bufs with vectored writes of at most ioChunk bytes each,
// renewing the write deadline for each.
func writeAll(conn net.Conn, bufs net.Buffers, timeout time.Duration) error {
	for len(bufs) > 0 {
		var group net.Buffers
		n := 0
		for len(bufs) > 0 && n < ioChunk {
			b := bufs[0]
			if n+len(b) > ioChunk && n > 0 {
				break
			}
			if len(b) > ioChunk {
				group = append(group, b[:ioChunk])
				bufs[0] = b[ioChunk:]
				n += ioChunk
				break
			}
			group = append(group, b)
			n += len(b)
			bufs = bufs[1:]
		}
		conn.SetWriteDeadline(time.Now().Add(timeout))
		if _, err := group.WriteTo(conn); err != nil {
			return err
		}
	}
	return nil
}
