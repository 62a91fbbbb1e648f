package wire

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/scoll/scoll/internal/cid"
	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/internal/postbox"
	"github.com/scoll/scoll/transport"
)

// ServePosts makes rs take the posts to e's communicator into box (the
// replies of sorting splits, split.Poster) and returns what stops it.
// Every rank serves before the agreement of its first sorting split, so
// before any rank can post.
func ServePosts(e *Endpoint, rs transport.Responder, box *postbox.Box) (unserve func()) {
	svc := e.ID | cid.PostBit
	rs.Serve(svc, func(_ int, req []byte) []byte {
		if len(req) < 8 {
			return nil
		}
		if !box.Put(binary.LittleEndian.Uint64(req), append([]byte(nil), req[8:]...)) {
			return nil // a second post: refused
		}
		return []byte{1}
	})
	return func() { rs.Unserve(svc) }
}

// PostConn is a Conn that also posts (split.Poster), into the boxes that
// ServePosts fills.
type PostConn struct {
	*Conn
	Box *postbox.Box // this rank's posts
}

// Post implements split.Poster.
func (p PostConn) Post(ctx context.Context, to int32, data []byte) error {
	e := p.e
	req := binary.LittleEndian.AppendUint64(make([]byte, 0, 8+len(data)), p.seq)
	req = append(req, data...)
	if int(to) == e.T.Rank() {
		if !p.Box.Put(p.seq, req[8:]) {
			return fmt.Errorf("%w: split: two replies posted to one rank", errs.Mismatch)
		}
		return nil
	}
	a := Asker{E: e, Service: e.ID | cid.PostBit}
	rep := [][]byte{make([]byte, 1)}
	if err := a.Ask(ctx, []int32{to}, [][]byte{req}, rep); err != nil {
		return err
	}
	if len(rep[0]) != 1 {
		return fmt.Errorf("%w: split: transport address %d refused a reply", errs.Mismatch, to)
	}
	return nil
}

// Take implements split.Poster. It waits, as for any message (polling
// transports keep progressing), for the post, the context, or — on
// transports whose ranks tell each other of abandoned calls
// (transport.CallAborter) — another rank giving the split up: a receive
// from itself that no message matches is posted in the split's message
// space for that.
func (p PostConn) Take(ctx context.Context, buf []byte) (int, error) {
	e := p.e
	w := e.Waiter()
	if _, ok := p.Box.Await(p.seq, w); !ok {
		var sentinel *transport.Msg
		if transport.CapsOf(e.T).CallAborter != nil && e.Size > 1 {
			// From itself: a peer that has its reply may leave before
			// this rank has its own, and its leaving must not end the wait.
			// Its completion, like the post's, ends the wait.
			sentinel = &transport.Msg{Peer: e.T.Rank(), W: w, Sig: p.sig, Buf: make([]byte, 1),
				Key: transport.Key{Comm: e.ID | cid.SplitBit, Seq: p.seq, Tag: takeTag}}
			if e.T.Irecv(sentinel) != nil {
				sentinel = nil
			}
		}
		err := w.Wait(ctx)
		if sentinel != nil && !e.T.Cancel(sentinel) && err == nil {
			if _, got := p.Box.Take(p.seq); !got {
				err = sentinel.Err
				if err == nil {
					err = fmt.Errorf("%w: split: unexpected message", errs.Mismatch)
				}
				return 0, err
			}
		}
		if err != nil {
			p.Box.Take(p.seq)
			return 0, err
		}
	}
	m, _ := p.Box.Take(p.seq)
	if len(m) > len(buf) {
		return 0, fmt.Errorf("%w: split: reply of %d bytes", errs.Mismatch, len(m))
	}
	return copy(buf, m), nil
}

// takeTag is the tag of Take's sentinel receive (no algorithm uses it).
const takeTag = 1 << 40
