//go:build mpi

package mpi

import (
	"encoding/binary"
	"fmt"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// Caller answers requests (transport.Responder) while some goroutine
// polls it: under the drop-in, while the application is inside an MPI
// call. Requests and point-to-point messages (a key's Seq 0 and a tag
// below transport.ReplyTag) travel on a request channel of their own,
// with their key, and are at most transport.MaxRequest bytes; an reqArrival
// goes to its service's handler, else to a point-to-point receive posted
// for it, else waits for one of them.

var _ transport.Responder = (*Caller)(nil)

// reqArrival is a message of the request channel that nothing took yet.
type reqArrival struct {
	src  int
	key  transport.Key
	data []byte
}

// Serve implements transport.Responder: requests for service that arrived
// before are answered now.
func (e *Caller) Serve(service uint64, h func(src int, req []byte) []byte) {
	e.mu.Lock()
	if e.services == nil {
		e.services = map[uint64]func(int, []byte) []byte{}
	}
	e.services[service] = h
	delete(e.unserved, service)
	var replies []*transport.Msg
	keep := e.unexp[:0]
	for _, a := range e.unexp {
		if a.key.Comm == service {
			replies = append(replies, reply(a.src, a.key, h(a.src, a.data)))
		} else {
			keep = append(keep, a)
		}
	}
	e.unexp = keep
	e.mu.Unlock()
	e.sendReplies(replies)
}

// Unserve implements transport.Responder: later requests get an empty
// reply.
func (e *Caller) Unserve(service uint64) {
	e.mu.Lock()
	delete(e.services, service)
	if e.unserved == nil {
		e.unserved = map[uint64]bool{}
	}
	e.unserved[service] = true
	e.mu.Unlock()
}

// arrive takes a message of the request channel from src (a 16-byte key,
// then its payload), and returns replies with those it makes appended.
// Called with mu held.
func (e *Caller) arrive(src int, b []byte, replies []*transport.Msg) []*transport.Msg {
	if len(b) < 16 {
		return replies // not one of ours
	}
	key := transport.Key{Comm: binary.LittleEndian.Uint64(b), Tag: int64(binary.LittleEndian.Uint64(b[8:]))}
	data := append([]byte(nil), b[16:]...)
	if h := e.services[key.Comm]; h != nil {
		return append(replies, reply(src, key, h(src, data)))
	}
	if e.unserved[key.Comm] {
		return append(replies, reply(src, key, nil))
	}
	for i, m := range e.local {
		if m.Peer == src && m.Key == key {
			e.local = append(e.local[:i], e.local[i+1:]...)
			deliverLocal(m, data)
			return replies
		}
	}
	e.unexp = append(e.unexp, reqArrival{src, key, data})
	return replies
}

// postLocal posts a point-to-point receive: it takes the first reqArrival
// from its peer with its key, now or when one comes. Called with mu held.
func (e *Caller) postLocal(m *transport.Msg) error {
	for i, a := range e.unexp {
		if a.src == m.Peer && a.key == m.Key {
			e.unexp = append(e.unexp[:i], e.unexp[i+1:]...)
			deliverLocal(m, a.data)
			return nil
		}
	}
	e.local = append(e.local, m)
	return nil
}

// deliverLocal completes receive m with data.
func deliverLocal(m *transport.Msg, data []byte) {
	m.N = copy(m.Buf, data)
	if len(data) > len(m.Buf) {
		m.Err = fmt.Errorf("%w: a message of %d bytes into %d", errs.Mismatch, len(data), len(m.Buf))
	}
	m.W.Done()
}

// reply is the reply to request key from src.
func reply(src int, key transport.Key, b []byte) *transport.Msg {
	w := transport.NewWaiter(0)
	w.Add(1)
	if len(b) == 0 {
		b = nil
	}
	return &transport.Msg{Peer: src, Key: transport.ReplyKey(key), Buf: b, Eager: true, W: w}
}

// sendReplies posts replies (with mu not held). A reply that cannot be
// sent is dropped: the requester learns of the failure from its receive.
func (e *Caller) sendReplies(replies []*transport.Msg) {
	for _, m := range replies {
		e.post(m, false)
	}
}
