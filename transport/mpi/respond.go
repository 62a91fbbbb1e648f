//go:build mpi

package mpi

import "github.com/scoll/scoll/transport"

var _ transport.Responder = (*Transport)(nil)

// Serve implements transport.Responder. Requests that arrived before it
// are answered now; later ones by whoever progresses the transport, as
// their headers arrive. Requests must fit in a header (inline payloads).
func (t *Transport) Serve(service uint64, h func(src int, req []byte) []byte) {
	t.mu.Lock()
	if t.services == nil {
		t.services = map[uint64]func(int, []byte) []byte{}
	}
	t.services[service] = h
	delete(t.unserved, service)
	for k, q := range t.unexp {
		if k.key.Comm != service || !transport.IsRequest(k.key) {
			continue
		}
		keep := q[:0]
		for _, a := range q {
			if a.inline {
				t.answer(a.src, k.key, h, a.data)
			} else {
				keep = append(keep, a)
			}
		}
		if len(keep) == 0 {
			delete(t.unexp, k)
		} else {
			t.unexp[k] = keep
		}
	}
	t.mu.Unlock()
	t.kickPump()
}

// Unserve implements transport.Responder.
func (t *Transport) Unserve(service uint64) {
	t.mu.Lock()
	delete(t.services, service)
	if t.unserved == nil {
		t.unserved = map[uint64]bool{}
	}
	t.unserved[service] = true
	t.mu.Unlock()
}

// handler returns the handler of a request with key k, one that answers
// empty when the service was withdrawn, or nil. Called with mu held.
func (t *Transport) handler(k transport.Key) func(int, []byte) []byte {
	if !transport.IsRequest(k) {
		return nil
	}
	if h := t.services[k.Comm]; h != nil {
		return h
	}
	if t.unserved[k.Comm] {
		return func(int, []byte) []byte { return nil }
	}
	return nil
}

// answer runs h on request req from src and sends the reply. Called with
// mu held. A reply that cannot be sent is dropped: the requester learns of
// the failure from its own receive.
func (t *Transport) answer(src int, k transport.Key, h func(int, []byte) []byte, req []byte) {
	if t.usable() != nil {
		return
	}
	w := transport.NewWaiter(0)
	w.Add(1)
	m := &transport.Msg{Peer: src, Key: transport.ReplyKey(k), Buf: h(src, req), Eager: true, W: w}
	if len(m.Buf) == 0 {
		m.Buf = nil
	}
	t.send(m)
}
