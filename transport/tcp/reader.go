package tcp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
)

// The reader: one goroutine per connection reads frames and acts on them,
// reading payloads straight into posted receives where it can.

// errProtocol marks frames that break the protocol (the connection is then
// dropped).
var errProtocol = errors.New("protocol error")

// readLoop reads frames until the connection ends.
func (p *peer) readLoop() {
	t := p.t
	p.mu.Lock()
	conn := p.conn
	p.mu.Unlock()
	br := bufio.NewReaderSize(newPollReader(conn, &t.spinners), readBufSize)
	var hb [headerLen]byte
	var h header
	for {
		if br.Buffered() < headerLen {
			conn.SetReadDeadline(t.dl.next())
		}
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
			p.onAck(&h)
		case kindReady:
			p.onReady(&h)
		case kindRTS:
			p.onRTS(&h)
		case kindCTS:
			p.onCTS(&h)
		case kindData:
			err = p.onData(conn, br, &h)
		case kindNack:
			p.onNack(&h)
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

// readFailed takes the peer down for an error of its connection's reads.
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
	first := min(h.len, dataChunk) // the rest follows in data frames
	x := &incoming{key: h.key, sig: h.sig, total: h.len, got: first, ack: h.kind == kindSync, id: h.id}
	if err := t.foreign(h.key, h.sig, p.rank); err != nil {
		t.failCallOf(h.key, err)
	}
	if t.callErr(h.key) != nil {
		if first < h.len {
			p.mu.Lock()
			p.data[h.id] = x // drop the chunks
			p.mu.Unlock()
		}
		return discard(conn, br, first, t.dl)
	}
	p.mu.Lock()
	x.m = p.takePosted(h.key)
	proved := p.prove(h.key, h.sig)
	p.mu.Unlock()
	for _, m := range proved {
		t.finish(m, nil)
	}
	if x.m == nil && h.len > eagerWaitFrom {
		x.m = p.awaitPosted(h.key)
	}
	if x.m != nil && x.m.Sig == h.sig && x.m.Combine == nil {
		x.buf, x.direct = x.m.Buf, true
	} else {
		x.buf = make([]byte, h.len) // h.len ≤ EagerLimit: checked by decodeHeader
	}
	if err := readChunk(conn, br, x.buf, 0, first, t.dl); err != nil {
		if x.m != nil {
			t.finish(x.m, p.peerErr(err))
		}
		return err
	}
	done := first == h.len
	if x.m == nil {
		p.mu.Lock()
		x.m = p.takePosted(h.key) // posted meanwhile
		if x.m == nil && done {
			if serve := t.handler(h.key); serve != nil {
				p.mu.Unlock()
				t.answer(p.rank, h.key, serve, x.buf)
				return nil
			}
		}
		if x.m == nil {
			in := &inbound{key: h.key, sig: h.sig, buf: x.buf, ack: x.ack, id: h.id}
			if !done {
				in.part, x.in = x, in
				p.data[h.id] = x
			}
			p.unexp = append(p.unexp, in)
			p.mu.Unlock()
			return nil
		}
		p.mu.Unlock()
	}
	if !done {
		p.mu.Lock()
		p.data[h.id] = x
		p.mu.Unlock()
		return nil
	}
	p.complete(x)
	return nil
}

// onAck completes sync send h.id once written: the receiver took it.
func (p *peer) onAck(h *header) {
	p.mu.Lock()
	var s *syncSend
	if x := p.acks[h.id]; x != nil {
		x.acked = true
		s = p.settle(h.id)
	}
	p.mu.Unlock()
	if s != nil {
		p.t.finish(s.m, s.err)
	}
}

// onReady takes the peer's word that it joined call h.key with signature
// h.sig (a proof without a message): this rank's sends of the call complete
// once written. A rank that started the call with another signature fails
// it everywhere.
func (p *peer) onReady(h *header) {
	t := p.t
	if err := t.foreign(h.key, h.sig, p.rank); err != nil {
		t.failCallOf(h.key, err)
		return
	}
	p.mu.Lock()
	proved := p.prove(h.key, h.sig)
	p.mu.Unlock()
	for _, m := range proved {
		t.finish(m, nil)
	}
}

// onNack fails long send h.id, which the receiver refused.
func (p *peer) onNack(h *header) {
	p.mu.Lock()
	m := p.rts[h.id]
	delete(p.rts, h.id)
	p.mu.Unlock()
	if m != nil {
		p.t.finish(m, codeErr(h.code, p.rank, "refused the message"))
	}
}

func (p *peer) onRTS(h *header) {
	t := p.t
	if err := t.foreign(h.key, h.sig, p.rank); err != nil {
		t.failCallOf(h.key, err)
	}
	if err := t.callErr(h.key); err != nil {
		p.mu.Lock()
		p.control(header{kind: kindNack, code: errCode(err), id: h.id})
		p.mu.Unlock()
		p.wake()
		return
	}
	p.mu.Lock()
	proved := p.prove(h.key, h.sig)
	if m := p.takePosted(h.key); m != nil {
		p.matchRTS(m, h.id, h.len, h.sig) // unlocks
	} else {
		p.unexp = append(p.unexp, &inbound{key: h.key, sig: h.sig, rts: true, id: h.id, n: h.len})
		p.mu.Unlock()
	}
	for _, m := range proved {
		t.finish(m, nil)
	}
}

func (p *peer) onCTS(h *header) {
	p.mu.Lock()
	m, ok := p.rts[h.id]
	if ok {
		delete(p.rts, h.id)
		// The writer sends it in chunks; key.Tag is each chunk's offset.
		p.out = append(p.out, &frame{h: header{kind: kindData, id: h.id, len: uint64(len(m.Buf))}, payload: m.Buf, m: m})
	}
	p.mu.Unlock()
	if ok {
		p.wake()
	}
}

func (p *peer) onData(conn net.Conn, br *bufio.Reader, h *header) error {
	t := p.t
	off := uint64(h.key.Tag)
	p.mu.Lock()
	x, ok := p.data[h.id]
	if ok && (off != x.got || h.len > x.total-off) {
		p.mu.Unlock()
		return fmt.Errorf("%w: chunk of %d bytes at %d of message %d (%d of %d bytes in)", errProtocol, h.len, off, h.id, x.got, x.total)
	}
	if ok {
		x.busy = true
	}
	p.mu.Unlock()
	if !ok {
		// Its receive failed or was withdrawn meanwhile: drop it.
		return discard(conn, br, h.len, t.dl)
	}
	err := readChunk(conn, br, x.buf, off, h.len, t.dl)
	p.mu.Lock()
	x.busy = false
	x.got += h.len
	failed, last := x.err, x.got == x.total
	if err != nil || last {
		delete(p.data, h.id)
	}
	m := x.m
	p.mu.Unlock()
	switch {
	case failed != nil:
		if m != nil {
			t.finish(m, failed)
		}
	case err != nil:
		if m != nil {
			t.finish(m, p.peerErr(err))
		}
	case last:
		p.complete(x)
	}
	return err
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
	err := codeErr(h.code, p.rank, "withdrew the message")
	m := p.drop(h.id, err)
	p.mu.Unlock()
	if m != nil {
		p.t.finish(m, err)
	}
}

// readChunk reads the n bytes at offset off of a message into buf, keeping
// what fits (buf may be shorter: a truncating receive, or nil: dropped).
func readChunk(conn net.Conn, br *bufio.Reader, buf []byte, off, n uint64, dl deadlines) error {
	lo := min(off, uint64(len(buf)))
	hi := min(off+n, uint64(len(buf)))
	if err := readFull(conn, br, buf[lo:hi], dl); err != nil {
		return err
	}
	if off+n > hi {
		return discard(conn, br, off+n-hi, dl)
	}
	return nil
}

// readFull reads len(buf) bytes, renewing the read deadline every ioChunk
// bytes (not when r has them buffered: a small message usually comes in
// one segment with its header, and setting a deadline costs a clock read
// and a timer update).
func readFull(conn net.Conn, r io.Reader, buf []byte, dl deadlines) error {
	for len(buf) > 0 {
		n := min(len(buf), ioChunk)
		if br, ok := r.(*bufio.Reader); !ok || br.Buffered() < n {
			conn.SetReadDeadline(dl.next())
		}
		if _, err := io.ReadFull(r, buf[:n]); err != nil {
			return err
		}
		buf = buf[n:]
	}
	return nil
}

// discard reads and drops n bytes.
func discard(conn net.Conn, r *bufio.Reader, n uint64, dl deadlines) error {
	for n > 0 {
		k := min(n, ioChunk)
		conn.SetReadDeadline(dl.next())
		if _, err := r.Discard(int(k)); err != nil {
			return err
		}
		n -= k
	}
	return nil
}
