package inproc

import (
	"slices"

	"github.com/scoll/scoll/transport"
)

// Responder: the handler of a request runs in the requesting rank's
// goroutine, on the serving rank's data, the way a one-sided read would
// reach into its memory; the reply is an eager message from the server.

// svcKey names a service of one rank.
type svcKey struct {
	rank int
	svc  uint64
}

var _ transport.Responder = (*Endpoint)(nil)

// unservedHandler answers requests to a withdrawn service.
func unservedHandler(int, []byte) []byte { return nil }

// Serve implements transport.Responder.
func (e *Endpoint) Serve(service uint64, h func(src int, req []byte) []byte) {
	e.w.services.Store(svcKey{e.rank, service}, h)
	// Requests that arrived first wait in this rank's mailbox as eager
	// messages; the lock orders this scan against senders that did not
	// see the handler yet.
	b := &e.w.boxes[e.rank]
	var early []sendEntry
	b.mu.Lock()
	b.sends = slices.DeleteFunc(b.sends, func(s sendEntry) bool {
		if s.m == nil && s.key.Comm == service && transport.IsRequest(s.key) {
			early = append(early, s)
			return true
		}
		return false
	})
	b.mu.Unlock()
	for _, s := range early {
		e.reply(s.src, s.key, h(s.src, s.buf))
	}
}

// Unserve implements transport.Responder.
func (e *Endpoint) Unserve(service uint64) {
	e.w.services.Store(svcKey{e.rank, service}, unservedHandler)
}

// handler returns rank's handler of service, or nil.
func (w *World) handler(rank int, service uint64) func(int, []byte) []byte {
	h, ok := w.services.Load(svcKey{rank, service})
	if !ok {
		return nil
	}
	return h.(func(int, []byte) []byte)
}

// reply sends the reply to a request with key k from src.
func (e *Endpoint) reply(src int, k transport.Key, data []byte) {
	w := transport.NewWaiter(0)
	w.Add(1)
	e.Isend(&transport.Msg{Peer: src, Key: transport.ReplyKey(k), Buf: data, Eager: true, W: w})
}
