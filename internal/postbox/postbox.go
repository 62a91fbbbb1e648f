// Package postbox holds the replies posted to one rank by the sorting
// splits of a communicator, by the split's sequence number, until the
// rank takes them. A Box is safe for concurrent use: the rank's transport
// delivers into it while the rank waits.
package postbox

import (
	"sync"

	"github.com/scoll/scoll/transport"
)

// Box is one rank's posts. The zero Box is empty and ready.
type Box struct {
	mu    sync.Mutex
	posts map[uint64]*post
}

// post is one split's reply: its data once posted, and the waiter of the
// rank waiting for it.
type post struct {
	data []byte
	got  bool
	w    *transport.Waiter
}

// postLocked returns split seq's post, made on first use; b.mu is held.
func (b *Box) postLocked(seq uint64) *post {
	if b.posts == nil {
		b.posts = map[uint64]*post{}
	}
	p := b.posts[seq]
	if p == nil {
		p = &post{}
		b.posts[seq] = p
	}
	return p
}

// Put delivers data for split seq and wakes the rank waiting for it;
// false if a reply was there already.
func (b *Box) Put(seq uint64, data []byte) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.postLocked(seq)
	if p.got {
		return false
	}
	p.data, p.got = data, true
	if p.w != nil {
		p.w.Done()
	}
	return true
}

// Await returns split seq's reply if it is there, else registers w (with
// one operation added, which Put completes) to be told of it.
func (b *Box) Await(seq uint64, w *transport.Waiter) ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.postLocked(seq)
	if p.got {
		return p.data, true
	}
	w.Add(1)
	p.w = w
	return nil, false
}

// Take removes split seq's post and returns its reply, if any.
func (b *Box) Take(seq uint64) ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.posts[seq]
	delete(b.posts, seq)
	if p == nil {
		return nil, false
	}
	return p.data, p.got
}
