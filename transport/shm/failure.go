//go:build linux

package shm

import (
	"encoding/binary"

	"github.com/scoll/scoll/transport"
)

// failPeer marks p failed with err. The drainer then delivers what p wrote
// before it failed and fails every other operation with p, and every later
// one (finishPeer).
func (t *Transport) failPeer(p int, err error) {
	t.mu.Lock()
	if t.failErr[p] == nil {
		t.failErr[p] = err
	}
	t.mu.Unlock()
	t.failed[p].Store(true)
}

// FailRank fails the job's rank r, found failed by other means (a mixed
// endpoint's network): what it wrote is delivered, then its operations
// fail with err, as when this endpoint finds it dead.
func (t *Transport) FailRank(r int, err error) {
	if !t.Local(r) || r == t.Rank() {
		return
	}
	t.segMu.RLock()
	defer t.segMu.RUnlock()
	if t.shut.Load() {
		return // the segment may be unmapped
	}
	t.failPeer(t.localOf[r], err)
	t.bell(t.rank).Ring() // a sleeping progress goroutine drains and finishes it
}

// corrupt fails p, whose ring holds a corrupted record: nothing more is
// read from it. drainMu is held.
func (t *Transport) corrupt(p int, err error) {
	t.broken[p] = true
	t.failPeer(p, err)
}

// finishPeer fails the operations with p, a failed peer whose ring is
// drained (or broken), and makes later ones fail at once. drainMu is held.
func (t *Transport) finishPeer(p int) {
	t.final[p] = true
	t.mu.Lock()
	err := t.failErr[p]
	t.peerErr[p] = err
	t.mu.Unlock()
	if t.inMsg[p] != nil {
		t.dropInFlight(p) // the rest will never come
	}
	t.mu.Lock()
	fail := t.takeOps(func(q int, _ transport.Key) bool { return q == p }, func(m *transport.Msg) bool { return t.localOf[m.Peer] == p }, true)
	t.mu.Unlock()
	failAll(fail, err)
}

// dropInFlight fails the message in progress from p, a failed peer,
// whose ring is drained: the receive that matched it fails with p's error,
// and an unexpected one is forgotten. drainMu is held.
func (t *Transport) dropInFlight(p int) {
	x := t.inMsg[p]
	t.inMsg[p] = nil
	t.mu.Lock()
	m, err := x.m, t.peerErr[p]
	if m == nil {
		take(&t.unexp[p], func(y *incoming) bool { return y == x })
	}
	t.mu.Unlock()
	if m != nil {
		m.Err = err
		m.W.Done()
	}
}

// takeOps removes and returns the posted receives whose peer and key recv
// accepts and the sync sends send accepts, single-copy sends too when
// reads is set (their receiver no longer reads them); t.mu is held.
func (t *Transport) takeOps(recv func(int, transport.Key) bool, send func(*transport.Msg) bool, reads bool) []*transport.Msg {
	var out []*transport.Msg
	for p := range t.posted {
		out = append(out, filter(&t.posted[p], func(m *transport.Msg) bool { return recv(p, m.Key) })...)
	}
	for p := range t.syncs {
		for _, s := range filter(&t.syncs[p], func(s idMsg) bool { return send(s.m) }) {
			out = append(out, s.m)
		}
		if reads {
			for _, s := range filter(&t.reads[p], func(s idMsg) bool { return send(s.m) }) {
				out = append(out, s.m)
			}
		}
	}
	return out
}

// failAll completes ms with err.
func failAll(ms []*transport.Msg, err error) {
	for _, m := range ms {
		m.Err = err
		m.W.Done()
	}
}

// AbortCall fails this rank's operations of the collective call (comm,
// seq) with err, and those posted later, and tells the other ranks of the
// segment, whose operations of the call then fail too (transport.
// CallAborter).
func (t *Transport) AbortCall(comm, seq uint64, err error) {
	if seq == 0 {
		return
	}
	t.failCall(callKey{comm, seq}, err, -1)
}

// failCall records call k as failed, fails its operations here and, the
// first time, tells every peer but from.
func (t *Transport) failCall(k callKey, err error, from int) {
	t.mu.Lock()
	if _, ok := t.aborted[k]; ok || t.closed {
		t.mu.Unlock()
		return
	}
	t.aborted[k] = err
	inCall := func(key transport.Key) bool { return key.Comm == k.comm && key.Seq == k.seq }
	// Single-copy sends of the call stay until their receiver acks: it
	// may be reading them.
	fail := t.takeOps(func(_ int, key transport.Key) bool { return inCall(key) }, func(m *transport.Msg) bool { return inCall(m.Key) }, false)
	// Single-copy messages of the call that no receive took are refused,
	// so that their senders stop waiting.
	type refusal struct {
		src int
		id  uint64
	}
	var refuse []refusal
	for p := range t.unexp {
		for _, x := range filter(&t.unexp[p], func(x *incoming) bool { return x.cma && inCall(x.key) }) {
			refuse = append(refuse, refusal{p, x.id})
		}
	}
	t.mu.Unlock()
	failAll(fail, err)
	for _, r := range refuse {
		t.ackID(r.src, r.id, ackFailed)
	}
	rec := make([]byte, hdrLen)
	rec[0], rec[1] = recAbort, abortCode(err)
	binary.LittleEndian.PutUint64(rec[8:], k.comm)
	binary.LittleEndian.PutUint64(rec[16:], k.seq)
	for p := range t.size {
		if p != t.rank && p != from {
			t.control(p, rec)
		}
	}
}
