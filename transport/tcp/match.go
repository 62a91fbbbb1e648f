package tcp

import (
	"fmt"
	"slices"
	"time"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// Matching: receives are paired with messages by key, in posting and
// arrival order. A message that finds no receive waits in p.unexp; a
// receive that finds no message waits in p.posted.

// inbound is a message that arrived before its receive was posted.
type inbound struct {
	key  transport.Key
	sig  uint64
	buf  []byte         // an eager message's payload
	rts  bool           // a long message announced by rts id, of n bytes
	ack  bool           // a sync message: answer ack id when it matches
	id   uint64         //
	part *incoming      // chunks of an eager message still coming
	n    uint64         //
	self *transport.Msg // a long send to self, waiting for its receive
}

// incoming is a message whose chunks are still arriving (in order): a long
// message cleared to send, or an eager message longer than one chunk.
type incoming struct {
	key    transport.Key
	sig    uint64
	m      *transport.Msg // the receive it completes; nil while unexpected
	in     *inbound       // the unexpected message it fills, if any
	buf    []byte         // where the chunks go: m.Buf (direct) or a buffer; nil drops them
	direct bool           // buf is m.Buf
	total  uint64         // message length
	got    uint64         // bytes arrived so far
	ack    bool           // a sync message: ack id once complete and matched
	id     uint64
	busy   bool  // the reader is writing a chunk into buf
	err    error // set instead of completing m while busy
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
			fill(m, in.self.Buf, in.sig, p.t.rank, p.rank)
			e := m.Err
			p.t.finish(m, nil)
			p.t.finish(in.self, e)
		case in.rts:
			p.matchRTS(m, in.id, in.n, in.sig) // unlocks
		case in.part != nil:
			in.part.m = m // the reader completes m with the last chunk
			p.mu.Unlock()
		default:
			ack := in.ack && in.sig == m.Sig && !p.sentProof(in.key, in.sig)
			p.mu.Unlock()
			if ack {
				p.sendControl(header{kind: kindAck, id: in.id})
			}
			fill(m, in.buf, in.sig, p.t.rank, p.rank)
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
	select {
	case p.postedSig <- struct{}{}:
	default:
	}
	idle := p.state == stateIdle
	if m.Announce && m.Key.Seq != 0 && p.rank != p.t.rank && !p.sentProof(m.Key, m.Sig) {
		// The peer's sends of this call complete once written instead of
		// once acknowledged (the ready proves this rank is in the call).
		p.sentKey, p.sentSig = callKey{m.Key.Comm, m.Key.Seq}, m.Sig
		p.sendFrame(header{kind: kindReady, key: transport.Key{Comm: m.Key.Comm, Seq: m.Key.Seq}, sig: m.Sig}, true) // unlocks
	} else {
		p.mu.Unlock()
	}
	if idle {
		p.connect()
	}
	return nil
}

// matchRTS pairs receive m with rts id of n bytes: clear to send, or a nack
// when the calls differ. Called with p.mu held; returns with it released.
func (p *peer) matchRTS(m *transport.Msg, id, n, sig uint64) {
	if sig != m.Sig {
		p.control(header{kind: kindNack, code: codeMismatch, id: id})
		p.mu.Unlock()
		p.wake()
		p.t.finish(m, mismatchErr(p.t.rank, p.rank, m.Key.Seq, m.Sig, sig))
		return
	}
	p.data[id] = &incoming{key: m.Key, sig: m.Sig, m: m, buf: m.Buf, direct: true, total: n, id: id}
	p.control(header{kind: kindCTS, id: id})
	p.mu.Unlock()
	p.wake()
}

// eagerWaitFrom is the size from which an eager message that finds no
// receive waits up to eagerWait for one to be posted (the data waits in the
// socket) rather than being buffered and copied: in exchanges the receive
// usually follows within microseconds. Frames behind it wait as long.
const (
	eagerWaitFrom = 64 << 10
	eagerWait     = 300 * time.Microsecond
)

// awaitPosted waits up to eagerWait for a receive with key k to be posted
// and takes it, or returns nil.
func (p *peer) awaitPosted(k transport.Key) *transport.Msg {
	timer := p.t.clk.NewTimer(eagerWait)
	defer timer.Stop()
	for {
		select {
		case <-p.postedSig:
		case <-timer.C():
			return nil
		}
		p.mu.Lock()
		m := p.takePosted(k)
		down := p.state == stateDown
		p.mu.Unlock()
		if m != nil || down {
			return m
		}
	}
}

// complete delivers a message whose last chunk has arrived (x is no longer
// in p.data): into its receive, or it stays unexpected, now whole.
func (p *peer) complete(x *incoming) {
	p.mu.Lock()
	m := x.m
	if x.in != nil {
		x.in.part = nil
	}
	p.mu.Unlock()
	switch {
	case m == nil:
		return
	case x.direct:
		m.N = int(min(x.total, uint64(len(m.Buf))))
		if x.total > uint64(len(m.Buf)) {
			m.Err = fmt.Errorf("%w: message of %d bytes truncated to %d", errs.InvalidArgument, x.total, len(m.Buf))
		}
	default:
		fill(m, x.buf, x.sig, p.t.rank, p.rank)
	}
	if x.ack && m.Err == nil {
		p.mu.Lock()
		ack := !p.sentProof(x.key, x.sig)
		p.mu.Unlock()
		if ack {
			p.sendControl(header{kind: kindAck, id: x.id})
		}
	}
	p.t.finish(m, nil)
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
				if f.eager {
					p.t.ledger.done(f.m.Key, p.rank, nil) // it never goes
				}
			}
			return true
		}
	}
	for id, s := range p.rts {
		if s == m {
			// Announced but not cleared: tell the receiver.
			delete(p.rts, id)
			p.control(header{kind: kindWithdraw, code: codeCanceled, id: id})
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

// selfSend delivers a message to this rank.
func (t *Transport) selfSend(m *transport.Msg) {
	p := t.peers[t.rank]
	p.mu.Lock()
	if r := p.takePosted(m.Key); r != nil {
		p.mu.Unlock()
		fill(r, m.Buf, m.Sig, t.rank, t.rank)
		e := r.Err
		t.finish(r, nil)
		t.finish(m, e)
		return
	}
	if serve := t.handler(m.Key); serve != nil {
		p.mu.Unlock()
		req := append([]byte(nil), m.Buf...)
		complete(m, nil)
		t.answer(t.rank, m.Key, serve, req)
		return
	}
	in := &inbound{key: m.Key, sig: m.Sig}
	if m.Eager || len(m.Buf) <= t.cfg.EagerLimit {
		in.buf = append([]byte(nil), m.Buf...)
		p.unexp = append(p.unexp, in)
		p.mu.Unlock()
		complete(m, nil)
		return
	}
	in.self = m // rendezvous: the send completes when matched
	p.unexp = append(p.unexp, in)
	p.mu.Unlock()
}

// fill gives receive r a message held in memory (it does not complete r).
func fill(r *transport.Msg, data []byte, sig uint64, me, from int) {
	if sig != r.Sig {
		r.Err = mismatchErr(me, from, r.Key.Seq, r.Sig, sig)
		return
	}
	transport.Finish(r, data)
}
