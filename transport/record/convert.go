package record

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/scoll/scoll/transport"
)

// Trace returns what the recorder has recorded so far as a valid Trace
// (call it after the run): the rounds of every rank of the group its
// endpoints belong to, ranks that posted nothing with no rounds. Rounds
// still open (a run that failed in the middle of a wait) count as ended.
//
// The messages of the recording are matched the way the transport matched
// them: between two ranks, by key, in posting order. Each round's messages
// to (from) a peer are then put in the order of the rounds that receive
// (send) them, so that the trace's matching in posting order is the
// transport's; see the package documentation for receives taken out of
// order across rounds. Each receive gets the size of its message (the
// receive buffer may have been longer).
//
// Errors wrap ErrInconsistent: nothing recorded, endpoints of groups of
// different sizes wrapped with one recorder, a message sent and never
// received or a receive that matched nothing (a run that failed, or
// point-to-point messages left unreceived), or a recording that does not
// replay to its end (see Trace.Validate).
func (r *Recorder) Trace() (*Trace, error) {
	r.mu.Lock()
	size, logs, err := r.size, slices.Clone(r.logs), r.err
	services := maps.Clone(r.services)
	r.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, fmt.Errorf("%w: nothing recorded (no endpoint was wrapped)", ErrInconsistent)
	}
	ranks := make([][][]event, size)
	for rk, l := range logs {
		if l == nil {
			continue
		}
		// Messages to self cross no network; rounds left empty go.
		for _, rd := range l.snapshot() {
			rd = slices.DeleteFunc(rd, func(ev event) bool { return int(ev.peer) == rk })
			for i := range rd {
				if k := &rd[i].key; services[k.Comm] {
					// A handler does not see a request's tag: requests
					// and replies between two ranks match in order.
					k.Seq, k.Tag = 0, k.Tag&transport.ReplyTag
				}
			}
			if len(rd) > 0 {
				ranks[rk] = append(ranks[rk], rd)
			}
		}
	}
	t := &Trace{Size: size, Ranks: make([][]Round, size)}
	for rk, rs := range ranks {
		t.Ranks[rk] = make([]Round, len(rs))
		for k, rd := range rs {
			t.Ranks[rk][k] = make(Round, len(rd))
			for i, ev := range rd {
				t.Ranks[rk][k][i] = Op{Recv: ev.recv, Peer: int(ev.peer), Bytes: ev.bytes}
			}
		}
	}
	if err := order(t, ranks); err != nil {
		return nil, err
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return t, nil
}

// slot is the place of an operation in a trace: rank, round and index.
type slot struct{ rank, round, idx int32 }

func cmpSlot(a, b slot) int {
	if c := cmp.Compare(a.round, b.round); c != 0 {
		return c
	}
	return cmp.Compare(a.idx, b.idx)
}

// message is a matched send and receive.
type message struct {
	send, recv slot
	bytes      int64
}

// matchKey identifies the messages that match in posting order.
type matchKey struct {
	src, dst int32
	key      transport.Key
}

// order matches the recorded messages by key and rewrites the sizes of
// t's operations so that matching in posting order, pair by pair, gives
// the same messages (or, where no order does, the same sizes).
func order(t *Trace, ranks [][][]event) error {
	type ends struct{ sends, recvs []slot }
	byKey := make(map[matchKey]*ends)
	var keys []matchKey
	for rk, rs := range ranks {
		for k, rd := range rs {
			for i, ev := range rd {
				mk := matchKey{int32(rk), ev.peer, ev.key}
				if ev.recv {
					mk.src, mk.dst = ev.peer, int32(rk)
				}
				e := byKey[mk]
				if e == nil {
					e = &ends{}
					byKey[mk] = e
					keys = append(keys, mk)
				}
				s := slot{int32(rk), int32(k), int32(i)}
				if ev.recv {
					e.recvs = append(e.recvs, s)
				} else {
					e.sends = append(e.sends, s)
				}
			}
		}
	}
	// Pair up each key's sends and receives, grouped by pair of ranks.
	byPair := make(map[[2]int32][]message)
	var pairs [][2]int32
	for _, mk := range keys {
		e := byKey[mk]
		if len(e.sends) != len(e.recvs) {
			return fmt.Errorf("%w: rank %d sent %d message(s) to rank %d with key %+v, which posted %d receive(s) for them",
				ErrInconsistent, mk.src, len(e.sends), mk.dst, mk.key, len(e.recvs))
		}
		p := [2]int32{mk.src, mk.dst}
		if _, ok := byPair[p]; !ok {
			pairs = append(pairs, p)
		}
		for i, s := range e.sends {
			byPair[p] = append(byPair[p], message{send: s, recv: e.recvs[i], bytes: ranks[s.rank][s.round][s.idx].bytes})
		}
	}
	for _, p := range pairs {
		ms := byPair[p]
		// The order of the messages: by the sender's round, then the
		// receiver's, then the sender's posting order. It agrees with
		// both ranks' rounds unless the receiver took them out of order
		// across rounds.
		slices.SortFunc(ms, func(a, b message) int {
			if c := cmp.Compare(a.send.round, b.send.round); c != 0 {
				return c
			}
			if c := cmp.Compare(a.recv.round, b.recv.round); c != 0 {
				return c
			}
			return cmp.Compare(a.send.idx, b.send.idx)
		})
		sends := make([]slot, len(ms))
		recvs := make([]slot, len(ms))
		for i, m := range ms {
			sends[i], recvs[i] = m.send, m.recv
		}
		slices.SortFunc(sends, cmpSlot)
		slices.SortFunc(recvs, cmpSlot)
		for i, m := range ms {
			s, r := sends[i], recvs[i]
			t.Ranks[s.rank][s.round][s.idx].Bytes = m.bytes
			t.Ranks[r.rank][r.round][r.idx].Bytes = m.bytes
		}
	}
	return nil
}
