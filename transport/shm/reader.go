//go:build linux

package shm

import (
	"encoding/binary"
	"fmt"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// drain handles every record in the incoming rings and writes the records
// waiting for room; it reports whether it handled a record. drainMu is
// held.
func (t *Transport) drain() bool {
	busy := false
	for p := range t.size {
		if p == t.rank {
			continue
		}
		in := t.in[p]
		got := false
		for !t.broken[p] {
			rec, err := in.Peek()
			if err != nil {
				t.corrupt(p, err)
				break
			}
			if rec == nil {
				break
			}
			t.handle(p, rec)
			in.Release()
			got = true
		}
		if got {
			busy = true
			if in.TakeWant() {
				t.bell(p).Ring() // room for its pending records
			}
		}
		if t.failed[p].Load() && !t.final[p] {
			t.finishPeer(p) // what p wrote before it failed is in
		}
	}
	if t.npend.Load() > 0 {
		t.flushAll()
	}
	return busy
}

// handle processes one record from rank p.
func (t *Transport) handle(p int, rec []byte) {
	if len(rec) < hdrLen {
		t.corrupt(p, ErrCorrupt)
		return
	}
	id := binary.LittleEndian.Uint64(rec[40:])
	switch rec[0] {
	case recAck:
		byID := func(s idMsg) bool { return s.id == id }
		t.mu.Lock()
		m := take(&t.syncs[p], byID).m
		if m == nil {
			m = take(&t.reads[p], byID).m
		}
		t.mu.Unlock()
		if m != nil {
			switch rec[1] {
			case ackMismatch:
				m.Err = mismatch(t.global[p])
			case ackFailed:
				m.Err = fmt.Errorf("%w: rank %d could not receive the message", errs.PeerFailed, t.global[p])
			}
			m.W.Done()
		}
	case recAbort:
		t.failCall(callKey{binary.LittleEndian.Uint64(rec[8:]), binary.LittleEndian.Uint64(rec[16:])}, abortErr(rec[1], t.global[p]), p)
	case recFirst:
		key := transport.Key{Comm: binary.LittleEndian.Uint64(rec[8:]), Seq: binary.LittleEndian.Uint64(rec[16:]),
			Tag: int64(binary.LittleEndian.Uint64(rec[24:]))}
		x := &incoming{key: key, sig: binary.LittleEndian.Uint64(rec[32:]), id: id, sync: rec[1]&flagSync != 0,
			total: int(binary.LittleEndian.Uint32(rec[4:])), cma: rec[1]&flagCMA != 0}
		if x.cma {
			t.handleCMA(p, x, rec)
			return
		}
		t.mu.Lock()
		done := t.proveLocked(p, x)
		x.m = t.takePosted(p, key)
		matched := x.m != nil
		if matched {
			x.short = len(x.m.Buf) < x.total
			x.own = true
		} else {
			// Irecv may take it (and acknowledge it) as soon as the
			// lock is released.
			x.data = make([]byte, 0, x.total)
			t.unexp[p] = append(t.unexp[p], x)
		}
		t.mu.Unlock()
		for _, m := range done {
			m.W.Done()
		}
		if matched {
			t.ack(p, x)
		}
		t.inMsg[p] = x
		t.chunk(p, rec[hdrLen:])
	case recMore:
		if t.inMsg[p] == nil {
			t.corrupt(p, ErrCorrupt)
			return
		}
		t.chunk(p, rec[hdrLen:])
	default:
		t.corrupt(p, ErrCorrupt)
	}
}

// chunk adds data to the message in progress from p and completes it when
// whole. drainMu is held.
func (t *Transport) chunk(p int, data []byte) {
	x := t.inMsg[p]
	if !x.own {
		t.mu.Lock()
		if x.m == nil {
			// Unexpected: Irecv may match it at any time.
			if x.got+len(data) > x.total {
				t.mu.Unlock()
				t.corrupt(p, ErrCorrupt)
				return
			}
			x.data = append(x.data, data...)
			x.got += len(data)
			if x.got == x.total {
				t.inMsg[p] = nil // Irecv completes it
			}
			t.mu.Unlock()
			return
		}
		x.own = true // Irecv matched it and copied what had arrived
		t.mu.Unlock()
	}
	m := x.m
	if x.got+len(data) > x.total {
		t.corrupt(p, ErrCorrupt)
		return
	}
	if !x.short && x.sig == m.Sig && m.Combine == nil {
		copy(m.Buf[x.got:], data)
	} else {
		x.data = append(x.data, data...)
	}
	x.got += len(data)
	if x.got < x.total {
		return
	}
	t.inMsg[p] = nil
	switch {
	case x.sig != m.Sig:
		m.Err = mismatch(t.global[p])
	case x.short || m.Combine != nil:
		transport.Finish(m, x.data)
	default:
		m.N = x.total
	}
	m.W.Done()
}
