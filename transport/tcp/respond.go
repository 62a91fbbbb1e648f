package tcp

import (
	"slices"

	"github.com/scoll/scoll/transport"
)

// Serve implements transport.Responder. Requests that arrived before it
// are answered now; later ones are answered by the reader of the
// connection they arrive on, as soon as they are whole.
func (t *Transport) Serve(service uint64, h func(src int, req []byte) []byte) {
	t.services.Store(service, h)
	t.unserved.Delete(service)
	for _, p := range t.peers {
		var reqs []*inbound
		p.mu.Lock()
		p.unexp = slices.DeleteFunc(p.unexp, func(in *inbound) bool {
			if in.key.Comm == service && transport.IsRequest(in.key) && in.part == nil && !in.rts && in.self == nil {
				reqs = append(reqs, in)
				return true
			}
			return false
		})
		p.mu.Unlock()
		for _, in := range reqs {
			t.answer(p.rank, in.key, h, in.buf)
		}
	}
}

// Unserve implements transport.Responder.
func (t *Transport) Unserve(service uint64) {
	t.unserved.Store(service, struct{}{})
	t.services.Delete(service)
}

// handler returns the handler of a request with key k, one that answers
// empty when the service has been withdrawn, or nil when k is no request
// of a known service.
func (t *Transport) handler(k transport.Key) func(int, []byte) []byte {
	if !transport.IsRequest(k) {
		return nil
	}
	if h, ok := t.services.Load(k.Comm); ok {
		return h.(func(int, []byte) []byte)
	}
	if _, ok := t.unserved.Load(k.Comm); ok {
		return func(int, []byte) []byte { return nil }
	}
	return nil
}

// answer runs the handler on request req from src and sends the reply.
// A reply that cannot be sent is dropped: the requester learns of the
// failure from its own receive.
func (t *Transport) answer(src int, k transport.Key, h func(int, []byte) []byte, req []byte) {
	w := transport.NewWaiter(0)
	w.Add(1)
	t.Isend(&transport.Msg{Peer: src, Key: transport.ReplyKey(k), Buf: h(src, req), Eager: true, W: w})
}
