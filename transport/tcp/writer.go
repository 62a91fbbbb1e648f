package tcp

import (
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// The writer: sends queue frames on the peer and one goroutine per
// connection writes them, control frames first, with a heartbeat when the
// connection is idle and a goodbye at close. A small send finding nothing
// queued is written by its caller instead.

// frame is a frame to write; m is the send it carries, if any.
type frame struct {
	h       header
	payload []byte
	m       *transport.Msg
	raw     []byte // set instead: the unwritten rest of a control frame (sendControl)
	eager   bool   // a sync frame whose send completes when written (ledger.go)
}

// done reports whether writing f completes its send (rts and sync sends
// complete when the receiver answers).
func (f *frame) done() bool {
	return f.m != nil && (f.h.kind == kindEager || f.h.kind == kindData || f.eager)
}

// control queues a control frame (answers, failures, heartbeats): the
// writer sends it before any frame still queued and between the chunks of
// a long message, so answers never wait behind bulk data. Called with p.mu
// held.
func (p *peer) control(h header) {
	p.ctrl = append(p.ctrl, &frame{h: h})
}

// inlineLimit is the largest message a sender writes itself when the
// connection is idle.
const inlineLimit = 64 << 10

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
	if m.Key.Seq != 0 {
		p.sentKey, p.sentSig = callKey{m.Key.Comm, m.Key.Seq}, m.Sig
	}
	if len(m.Buf) <= p.t.cfg.EagerLimit {
		p.nextID++
		f.h.kind, f.h.id, f.payload = kindEager, p.nextID, m.Buf
		switch {
		case m.Eager || p.proven(m):
		case m.Key.Seq != 0 && p.detachable(len(m.Buf)):
			// Acknowledged, but complete once written (ledger.go).
			f.h.kind, f.eager = kindSync, true
			p.acks[f.h.id] = eagerEntry(m)
			p.t.ledger.add(m.Key)
		default:
			f.h.kind = kindSync
			p.acks[f.h.id] = &syncSend{m: m}
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
	if f.h.kind != kindRTS && len(m.Buf) <= inlineLimit && p.state == stateUp && p.started && !p.writing && len(p.out) == 0 && len(p.ctrl) == 0 && !p.closing {
		// Nothing queued and nobody writing: write from the caller's
		// goroutine, sparing the hand-off to the writer.
		p.writing = true
		conn := p.conn
		p.mu.Unlock()
		p.sendInline(conn, f)
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

// sendControl sends control frame h (an ack): when nothing is queued and
// nobody is writing, the calling goroutine writes it at once if the socket
// takes it without waiting, sparing the hand-off to the writer goroutine;
// otherwise the writer sends it. The write never blocks: the caller may be
// the reader, which must not wait for the peer to read (the peer's reader
// may be waiting for this one).
func (p *peer) sendControl(h header) {
	p.mu.Lock()
	p.sendFrame(h, false)
}

// canWriteNow reports whether the calling goroutine may write a frame to
// the socket at once (setting p.writing): nothing is queued and nobody is
// writing. Called with p.mu held.
func (p *peer) canWriteNow() bool {
	return p.rawc != nil && p.state == stateUp && p.started && !p.writing && len(p.out) == 0 && len(p.ctrl) == 0 && !p.closing
}

// sendFrame writes header-only frame h at once if it can, else queues it:
// ahead of the queued data frames (a control frame), or, inOrder, behind
// them. A ready frame goes in order: like a message, it tells the peer
// which call this rank last joined (sentKey), so it must not overtake the
// messages that told it of an earlier one. Called with p.mu held; returns
// with it released.
func (p *peer) sendFrame(h header, inOrder bool) {
	if !p.canWriteNow() {
		if inOrder {
			p.out = append(p.out, &frame{h: h})
		} else {
			p.control(h)
		}
		p.mu.Unlock()
		p.wake()
		return
	}
	p.writing = true
	p.mu.Unlock()
	p.writeControl(h)
}

// writeControl writes control frame h without blocking, the caller having
// set p.writing; what the socket does not take goes to the writer ahead of
// anything queued.
func (p *peer) writeControl(h header) {
	b := p.scratch.hdr[:]
	h.encode(b)
	n, err := p.rawc.tryWrite(b)
	if n > 0 {
		p.lastWrite.Store(p.t.clk.Now().UnixNano())
	}
	p.mu.Lock()
	p.writing = false
	switch {
	case err != nil:
	case n == 0:
		p.control(h)
	case n < headerLen:
		// The rest goes first, before any control frame queued meanwhile.
		p.ctrl = append([]*frame{{raw: append([]byte(nil), b[n:]...)}}, p.ctrl...)
	}
	more := len(p.out) > 0 || len(p.ctrl) > 0
	p.mu.Unlock()
	if err != nil {
		p.down(p.peerErr(fmt.Errorf("write: %v", err)))
		return
	}
	if more {
		p.wake()
	}
}

// sendInline writes f, an eager or sync frame, from the sender's goroutine
// and completes what it can; the caller has set p.writing.
func (p *peer) sendInline(conn net.Conn, f *frame) {
	hb := p.scratch.hdr[:]
	f.h.encode(hb)
	p.scratch.bufs = append(p.scratch.bufs[:0], hb, f.payload)
	err := writeAll(conn, p.scratch.bufs, &p.scratch.tmp, p.t.dl)
	p.scratch.bufs[0], p.scratch.bufs[1] = nil, nil // keep no reference to the message
	p.lastWrite.Store(p.t.clk.Now().UnixNano())
	if err != nil {
		err = p.peerErr(fmt.Errorf("write: %v", err))
	}
	p.mu.Lock()
	p.writing = false
	more := len(p.out) > 0 || len(p.ctrl) > 0
	var sync *syncSend
	if f.h.kind == kindSync {
		sync = p.wroteSync(f.h.id, err)
	}
	p.mu.Unlock()
	if more {
		p.wake()
	}
	switch {
	case f.done():
		p.t.finish(f.m, err)
	case sync != nil:
		p.t.finish(sync.m, sync.err)
	}
	if err != nil {
		p.down(err)
	}
}

// writeLoop writes queued frames, a heartbeat when idle, and the goodbye.
func (p *peer) writeLoop() {
	t := p.t
	p.mu.Lock()
	conn := p.conn
	p.mu.Unlock()
	tick := t.clk.NewTicker(t.cfg.Timeout / 4)
	defer tick.Stop()
	w := &frameWriter{conn: conn, dl: t.dl}
	for {
		select {
		case <-p.kick:
		case <-tick.C():
			if t.clk.Now().Sub(time.Unix(0, p.lastWrite.Load())) >= t.cfg.Timeout/4 {
				p.mu.Lock()
				p.control(header{kind: kindHeartbeat})
				p.mu.Unlock()
			}
		}
		p.mu.Lock()
		if p.writing && p.state != stateDown {
			p.mu.Unlock() // the inline writer kicks when done
			continue
		}
		batch, ctrl := p.out, p.ctrl
		p.out, p.ctrl = nil, nil
		busy := len(batch)+len(ctrl) > 0
		p.writing = busy
		down := p.state == stateDown
		var downErr error
		if down {
			downErr = p.failure()
		}
		p.mu.Unlock()
		if down {
			p.written(batch, downErr)
			return
		}
		if !busy {
			continue
		}
		err := w.write(p, ctrl, batch)
		p.lastWrite.Store(t.clk.Now().UnixNano())
		p.mu.Lock()
		p.writing = false
		p.mu.Unlock()
		if err != nil {
			err = p.peerErr(fmt.Errorf("write: %v", err))
		}
		p.written(batch, err)
		bye := slices.ContainsFunc(batch, func(f *frame) bool { return f.h.kind == kindGoodbye })
		if err != nil {
			p.down(err)
			return
		}
		if bye {
			if tc, ok := conn.(interface{ CloseWrite() error }); ok {
				tc.CloseWrite()
			}
			p.afterGoodbye()
			return
		}
	}
}

// dataChunk is the largest payload of one frame: the writer sends a longer
// message as chunks (an eager or sync frame with the first chunk, then data
// frames) and slips pending control frames in between, so that an answer
// (clear to send, ack) never waits for more than one chunk. Fewer, larger
// chunks cost fewer system calls and frames: 2-process allgather over
// loopback, 1 MiB 418-446 µs with 256 KiB chunks against 411-412 with
// 1 MiB, 16 MiB 11.7-12.2 ms against 11.6-11.7.
const dataChunk = 1 << 20

// frameWriter gathers frames into vectored writes of about dataChunk
// bytes.
type frameWriter struct {
	conn net.Conn
	dl   deadlines
	hdrs []byte // header storage of the current group
	bufs net.Buffers
	tmp  net.Buffers // writeAll's
	n    int         // payload bytes in the current group
}

func (w *frameWriter) add(h *header, payload []byte) {
	off := len(w.hdrs)
	w.hdrs = append(w.hdrs, make([]byte, headerLen)...)
	h.encode(w.hdrs[off:])
	w.bufs = append(w.bufs, w.hdrs[off:off+headerLen:off+headerLen])
	if len(payload) > 0 {
		w.bufs = append(w.bufs, payload)
		w.n += len(payload)
	}
}

// addCtrl adds control frame f, or the rest of one (f.raw).
func (w *frameWriter) addCtrl(f *frame) {
	if f.raw != nil {
		w.bufs = append(w.bufs, f.raw)
		return
	}
	w.add(&f.h, nil)
}

// flush writes the current group. Headers are appended to hdrs (a slice
// taken before hdrs grows keeps its bytes), and hdrs is reused only once
// the group is written.
func (w *frameWriter) flush() error {
	if len(w.bufs) == 0 {
		return nil
	}
	err := writeAll(w.conn, w.bufs, &w.tmp, w.dl)
	w.hdrs, w.bufs, w.n = w.hdrs[:0], w.bufs[:0], 0
	return err
}

// write writes ctrl, then batch; long data payloads go as chunks, with the
// control frames queued meanwhile written between them.
func (w *frameWriter) write(p *peer, ctrl, batch []*frame) error {
	for _, f := range ctrl {
		w.addCtrl(f)
	}
	moreCtrl := func() error {
		p.mu.Lock()
		c := p.ctrl
		p.ctrl = nil
		p.mu.Unlock()
		if len(c) == 0 {
			return nil
		}
		if err := w.flush(); err != nil {
			return err
		}
		for _, f := range c {
			w.addCtrl(f)
		}
		return w.flush()
	}
	for _, f := range batch {
		if len(f.payload) <= dataChunk {
			if w.n+len(f.payload) > dataChunk && w.n > 0 {
				if err := w.flush(); err != nil {
					return err
				}
				if err := moreCtrl(); err != nil {
					return err
				}
			}
			w.add(&f.h, f.payload)
			continue
		}
		for off := 0; off < len(f.payload); off += dataChunk {
			if w.n > 0 {
				if err := w.flush(); err != nil {
					return err
				}
				if err := moreCtrl(); err != nil {
					return err
				}
			}
			end := min(off+dataChunk, len(f.payload))
			h := f.h // an eager message's first chunk goes with its header
			if off > 0 || f.h.kind == kindData {
				h = header{kind: kindData, id: f.h.id, len: uint64(end - off), key: transport.Key{Tag: int64(off)}}
			}
			w.add(&h, f.payload[off:end])
		}
	}
	return w.flush()
}

// written completes the sends of a batch the writer is done with (err: it
// failed): eager and data sends at once, sync sends once also acked.
func (p *peer) written(batch []*frame, err error) {
	var syncs []*syncSend
	p.mu.Lock()
	for _, f := range batch {
		if f.h.kind != kindSync {
			continue
		}
		if s := p.wroteSync(f.h.id, err); s != nil {
			syncs = append(syncs, s)
		}
	}
	p.mu.Unlock()
	for _, f := range batch {
		if f.done() {
			p.t.finish(f.m, err)
		}
	}
	for _, s := range syncs {
		p.t.finish(s.m, s.err)
	}
}

// afterGoodbye waits up to Timeout for the peer to close its side (the
// reader then ends), then closes.
func (p *peer) afterGoodbye() {
	timer := p.t.clk.NewTimer(p.t.cfg.Timeout)
	defer timer.Stop()
	select {
	case <-timer.C():
	case <-p.readDone:
	}
	p.down(errClosing)
}

// writeAll writes bufs with one vectored write under a deadline, consuming
// a copy of it in *tmp (which must outlive the call, so that nothing is
// allocated per write).
func writeAll(conn net.Conn, bufs net.Buffers, tmp *net.Buffers, dl deadlines) error {
	conn.SetWriteDeadline(dl.next())
	*tmp = bufs
	_, err := tmp.WriteTo(conn)
	*tmp = nil
	return err
}
