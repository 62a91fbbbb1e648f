//go:build linux

package shm

import (
	"encoding/binary"
	"unsafe"

	"github.com/scoll/scoll/transport"
)

// Isend posts a send.
func (t *Transport) Isend(m *transport.Msg) error {
	d, err := t.peer(m)
	if err != nil {
		return err
	}
	t.mu.Lock()
	if err := t.refusal(d, m.Key); err != nil {
		t.mu.Unlock()
		return err
	}
	t.nextID++
	id := t.nextID
	sync := !m.Eager
	if d == t.rank {
		t.mu.Unlock()
		t.deliverSelf(m)
		return nil
	}
	if m.Key.Seq != 0 {
		t.sent[d] = callSig{m.Key.Comm, m.Key.Seq, m.Sig}
	}
	if sync && len(m.Buf) >= t.cfg.cmaMin() && t.cfg.cmaMin() > 0 && t.canRead(d, t.rank) {
		t.reads[d] = append(t.reads[d], idMsg{id, m})
		t.mu.Unlock()
		var rec [hdrLen + 8]byte
		putMsgHeader(rec[:], recFirst, flagSync|flagCMA, m, id)
		binary.LittleEndian.PutUint64(rec[hdrLen:], uint64(uintptr(unsafe.Pointer(unsafe.SliceData(m.Buf)))))
		t.control(d, rec[:])
		return nil
	}
	if sync && m.Key.Seq != 0 && t.proof[d] == t.sent[d] {
		// d sent this rank a message of the call: it is in the call, and
		// its receive will match (or fail on its side).
		sync = false
	}
	if sync {
		t.syncs[d] = append(t.syncs[d], idMsg{id, m})
	}
	t.mu.Unlock()
	t.write(d, m, id, sync)
	if !sync {
		m.W.Done()
	}
	return nil
}

// deliverSelf delivers a send to this rank itself.
func (t *Transport) deliverSelf(m *transport.Msg) {
	x := &incoming{key: m.Key, sig: m.Sig, total: len(m.Buf), got: len(m.Buf), data: append([]byte(nil), m.Buf...)}
	t.mu.Lock()
	r := t.takePosted(t.rank, m.Key)
	if r == nil {
		t.unexp[t.rank] = append(t.unexp[t.rank], x)
	}
	t.mu.Unlock()
	if r != nil {
		finish(r, x.data, x.sig, t.Rank())
		r.W.Done()
	}
	m.W.Done()
}

// write queues message m's records to its peer; the caller's goroutine
// writes what fits and the progress goroutine the rest. The data is copied
// into the records, so m's buffer is free once this returns (an eager send
// completes then).
func (t *Transport) write(d int, m *transport.Msg, id uint64, sync bool) {
	t.outMu[d].Lock()
	defer t.outMu[d].Unlock()
	maxData := t.out[d].MaxRecord() - hdrLen
	buf := m.Buf
	var hdr [hdrLen]byte
	flags := byte(0)
	if sync {
		flags = flagSync
	}
	putMsgHeader(hdr[:], recFirst, flags, m, id)
	wrote := false
	for first := true; first || len(buf) > 0; first = false {
		n := min(len(buf), maxData)
		if len(t.pending[d]) == 0 {
			// The common case: straight from the caller's buffer into
			// the ring, one copy.
			if ok, _ := t.out[d].Write(hdr[:], buf[:n]); ok {
				wrote = true
				buf = buf[n:]
				hdr[0] = recMore
				continue
			}
		}
		rec := make([]byte, hdrLen+n)
		copy(rec, hdr[:])
		copy(rec[hdrLen:], buf[:n])
		buf = buf[n:]
		hdr[0] = recMore
		t.pending[d] = append(t.pending[d], rec)
		t.npend.Add(1)
	}
	if wrote {
		t.bell(d).Ring()
	}
	t.flushLocked(d)
}

// flushLocked writes d's pending records while they fit; outMu[d] is held.
// When the ring is full it asks d for room (Ring.WantRoom) and tries once
// more, so that d, consuming in between, rings this rank's bell.
func (t *Transport) flushLocked(d int) {
	wrote, asked := false, false
	for len(t.pending[d]) > 0 {
		ok, err := t.out[d].Write(t.pending[d][0])
		if err != nil {
			break
		}
		if !ok {
			if asked {
				break
			}
			t.out[d].WantRoom()
			asked = true
			continue
		}
		t.pending[d][0] = nil
		t.pending[d] = t.pending[d][1:]
		t.npend.Add(-1)
		wrote = true
	}
	if len(t.pending[d]) == 0 {
		t.pending[d] = nil
	}
	if wrote {
		t.bell(d).Ring()
	}
}

// flushAll writes what waits for room, to every destination.
func (t *Transport) flushAll() {
	for p := range t.size {
		t.outMu[p].Lock()
		if len(t.pending[p]) > 0 {
			t.flushLocked(p)
		}
		t.outMu[p].Unlock()
	}
}

// control writes the control record rec (an ack or an abort) to d, after
// the records waiting for room there.
func (t *Transport) control(d int, rec []byte) {
	t.outMu[d].Lock()
	defer t.outMu[d].Unlock()
	if len(t.pending[d]) == 0 {
		if ok, _ := t.out[d].Write(rec); ok {
			t.bell(d).Ring()
			return
		}
	}
	t.pending[d] = append(t.pending[d], append([]byte(nil), rec...))
	t.npend.Add(1)
	t.flushLocked(d)
}

// ack tells the sender of a sync message that its receive matched it.
func (t *Transport) ack(src int, x *incoming) {
	if !x.sync || src == t.rank || x.proof && x.m != nil && x.m.Sig == x.sig {
		return
	}
	status := byte(ackOK)
	if x.m != nil && x.m.Sig != x.sig {
		status = ackMismatch
	}
	t.ackID(src, x.id, status)
}

// ackID sends the ack of message id to src.
func (t *Transport) ackID(src int, id uint64, status byte) {
	var rec [hdrLen]byte
	rec[0], rec[1] = recAck, status
	binary.LittleEndian.PutUint64(rec[40:], id)
	t.control(src, rec[:])
}
