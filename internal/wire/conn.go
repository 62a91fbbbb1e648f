package wire

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/scoll/scoll/internal/cid"
	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/split"
	"github.com/scoll/scoll/transport"
)

// Conn carries one call's messages (a split, a chain collective) on an
// endpoint's point-to-point layer, in the message space (id|SplitBit,
// the call's sequence number). It implements split.Conn and chain.Conn.
type Conn struct {
	e   *Endpoint
	seq uint64
	sig uint64
	w   *transport.Waiter
	// rounds run so far
	round int

	msgs  []transport.Msg
	ranks []int   // the ranks of a round's messages that need a lookup
	idx   []int   // where each goes in addrs
	res   []int32 // their addresses
	addrs []int32 // every message's transport address
}

// NewConn returns the connection of the call numbered seq on e, whose
// messages carry the signature sig (for transports that check calls).
func NewConn(e *Endpoint, seq, sig uint64) *Conn {
	return &Conn{e: e, seq: seq, sig: sig, w: e.Waiter()}
}

// Seq returns the call's sequence number.
func (s *Conn) Seq() uint64 { return s.seq }

// Sig returns the call's signature.
func (s *Conn) Sig() uint64 { return s.sig }

// Rank implements split.Conn.
func (s *Conn) Rank() int { return s.e.Rank }

// Size implements split.Conn.
func (s *Conn) Size() int { return s.e.Size }

// Round implements split.Conn: ranks are the endpoint's unless a message
// is Direct (a transport address already); every rank that needs a lookup
// is looked up at once.
func (s *Conn) Round(ctx context.Context, sends []split.Send, recvs []split.Recv) error {
	e := s.e
	if e.Hook != nil {
		e.Hook(s.round)
	}
	s.round++
	if e.closed() {
		err := error(errs.Closed)
		s.abort(nil, err)
		return err
	}
	n := len(sends) + len(recvs)
	s.ranks, s.idx = s.ranks[:0], s.idx[:0]
	s.addrs = slices.Grow(s.addrs[:0], n)[:n]
	peer := func(i, r int, direct bool) {
		if direct {
			s.addrs[i] = int32(r)
			return
		}
		s.ranks = append(s.ranks, r)
		s.idx = append(s.idx, i)
	}
	for i, m := range sends {
		peer(i, m.To, m.Direct)
	}
	for i, m := range recvs {
		peer(len(sends)+i, m.From, m.Direct)
	}
	for _, r := range s.ranks {
		if r < 0 || r >= e.Size {
			return fmt.Errorf("%w: split: message to rank %d of %d", errs.InvalidArgument, r, e.Size)
		}
	}
	if e.Group == nil {
		for k, r := range s.ranks {
			s.addrs[s.idx[k]] = int32(r)
		}
	} else if len(s.ranks) > 0 {
		s.res = slices.Grow(s.res[:0], len(s.ranks))[:len(s.ranks)]
		if err := e.Group.Resolve(ctx, s.ranks, s.res); err != nil {
			return err
		}
		for k, a := range s.res {
			s.addrs[s.idx[k]] = a
		}
	}
	for _, a := range s.addrs {
		if a < 0 || int(a) >= e.T.Size() {
			return fmt.Errorf("%w: split: message to transport address %d", errs.InvalidArgument, a)
		}
	}
	if cap(s.msgs) < n {
		s.msgs = make([]transport.Msg, n)
	}
	msgs := s.msgs[:n]
	space := e.ID | cid.SplitBit
	for i := range n {
		m := &msgs[i]
		*m = transport.Msg{Peer: int(s.addrs[i]), W: s.w, Sig: s.sig, Key: transport.Key{Comm: space, Seq: s.seq}}
		if i < len(sends) {
			m.Key.Tag, m.Buf = int64(sends[i].Tag), sends[i].Data
		} else {
			r := &recvs[i-len(sends)]
			m.Key.Tag, m.Buf = int64(r.Tag), r.Buf
		}
	}
	if posted, err := postWait(ctx, e.T, s.w, msgs, func(i int) bool { return i < len(sends) }); err != nil {
		s.abort(msgs[:posted], err)
		return err
	}
	transport.EndRound(e.T, s.w)
	for i := range msgs {
		if msgs[i].Err != nil {
			s.abort(nil, msgs[i].Err)
			return msgs[i].Err
		}
		if i >= len(sends) {
			recvs[i-len(sends)].N = msgs[i].N
		}
	}
	return nil
}

// Abort tells the other ranks (on transports whose ranks tell each other
// of abandoned calls, transport.CallAborter) that this rank gave up the
// call. It implements chain.Conn.
func (s *Conn) Abort(err error) { s.abort(nil, err) }

// abort withdraws posted operations, waits for those it could not, and
// tells the other ranks that this rank gave up the call.
func (s *Conn) abort(posted []transport.Msg, err error) {
	e := s.e
	if a := transport.CapsOf(e.T).CallAborter; a != nil {
		a.AbortCall(e.ID|cid.SplitBit, s.seq, err)
	}
	withdraw(e.T, s.w, posted)
}

// postWait posts msgs on t with the waiter w (msgs[i] is a send when
// send(i), else a receive) and waits for all of them. On an error it
// returns how many it posted; the caller withdraws those.
func postWait(ctx context.Context, t transport.Transport, w *transport.Waiter, msgs []transport.Msg, send func(i int) bool) (posted int, err error) {
	for i := range msgs {
		m := &msgs[i]
		m.W = w
		w.Add(1)
		if send(i) {
			err = t.Isend(m)
		} else {
			err = t.Irecv(m)
		}
		if err != nil {
			w.Done()
			return posted, err
		}
		posted++
	}
	return posted, w.Wait(ctx)
}

// withdraw cancels the posted operations it can and waits for the others.
func withdraw(t transport.Transport, w *transport.Waiter, posted []transport.Msg) {
	for i := range posted {
		if t.Cancel(&posted[i]) {
			w.Done()
		}
	}
	w.WaitAll()
}

// LearnMembers makes a chain membership hold every member's address,
// gathered along the chain (collective; ⌈lg n⌉ rounds and n addresses per
// rank, once) in a call whose sequence number next claims. Other
// memberships, and chains that learnt already, have nothing to learn and
// claim no number, so that a rank's calls stay numbered like those of the
// ranks that did not call it (it runs where a rank's plan cache misses).
func LearnMembers(ctx context.Context, e *Endpoint, next func() uint64) error {
	ch, ok := e.Group.(*split.Chain)
	if !ok || ch.Learnt() {
		return nil
	}
	all, err := split.ChainAllgather(ctx, NewConn(e, next(), sigLearn), ch.Links, binary.LittleEndian.AppendUint32(nil, uint32(ch.Self)))
	if err != nil {
		return fmt.Errorf("resolving a chain's members: %w", err)
	}
	m := make([]int32, e.Size)
	for i := range m {
		m[i] = int32(binary.LittleEndian.Uint32(all[4*i:]))
	}
	ch.Learn(m)
	return nil
}

// ChainAllreduceInts replaces v by its elementwise maximum (minimum when
// least) over the ranks of a chain, along the chain over the call numbered
// seq (collective; O(1) state per rank).
func ChainAllreduceInts(ctx context.Context, e *Endpoint, seq uint64, v []int64, least bool) error {
	ch, ok := e.Group.(*split.Chain)
	if !ok {
		return fmt.Errorf("%w: not a chain", errs.InvalidArgument)
	}
	if e.closed() {
		return errs.Closed
	}
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	pick := func(a, b []byte) []byte {
		out := make([]byte, len(a))
		for i := 0; i < len(a); i += 8 {
			x, y := int64(binary.LittleEndian.Uint64(a[i:])), int64(binary.LittleEndian.Uint64(b[i:]))
			if least == (y < x) {
				x = y
			}
			binary.LittleEndian.PutUint64(out[i:], uint64(x))
		}
		return out
	}
	r, err := split.ChainAllreduce(ctx, NewConn(e, seq, sigAgree), ch.Links, b, pick)
	if err != nil {
		return err
	}
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(r[8*i:]))
	}
	return nil
}

// Signatures of the chain's own calls.
const (
	sigLearn = 0x6c6561726e // "learn"
	sigAgree = 0x6167726565 // "agree"
)
