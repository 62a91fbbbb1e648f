package record

import (
	"errors"
	"fmt"

	"github.com/scoll/scoll/schedule"
)

// Errors. Every error about a trace wraps one of them.
var (
	// ErrFormat: a trace file is not in the format Read documents.
	ErrFormat = errors.New("record: malformed trace")
	// ErrInconsistent: a trace's fields are out of range, or its sends and
	// receives do not match (in number or size), or its ranks cannot all
	// run to their end.
	ErrInconsistent = errors.New("record: inconsistent trace")
)

// Limits of a trace, checked by Validate and Read.
const (
	// MaxRanks is the largest number of ranks.
	MaxRanks = 1 << 20
	// MaxBytes is the largest message.
	MaxBytes = 1 << 48
	// maxTotal bounds the bytes of all sends and receives together.
	maxTotal = 1 << 62
)

// Op is one message a rank posts: a send to Peer or a receive from Peer of
// Bytes bytes. Peers are ranks of the trace (transport ranks).
type Op struct {
	Recv  bool
	Peer  int
	Bytes int64
}

// String renders the op as in a trace file: s<peer>:<bytes> or
// r<peer>:<bytes>.
func (o Op) String() string {
	k := 's'
	if o.Recv {
		k = 'r'
	}
	return fmt.Sprintf("%c%d:%d", k, o.Peer, o.Bytes)
}

// Round is the messages a rank posts together; it starts its next round
// when they have all completed. A round is never empty.
type Round []Op

// Trace is a recorded run as schedules: Ranks[r] is the rounds of rank r,
// in order. Between two ranks, the i-th send of one matches the i-th
// receive of the other, as in a schedule.
type Trace struct {
	Size  int
	Ranks [][]Round
}

// Messages returns the number of sends of all ranks.
func (t *Trace) Messages() int64 {
	n, _ := t.sent()
	return n
}

// Bytes returns the bytes sent by all ranks.
func (t *Trace) Bytes() int64 {
	_, b := t.sent()
	return b
}

// sent returns the number of sends of all ranks and the bytes they send.
func (t *Trace) sent() (msgs, bytes int64) {
	for _, rs := range t.Ranks {
		for _, rd := range rs {
			for _, o := range rd {
				if !o.Recv {
					msgs++
					bytes += o.Bytes
				}
			}
		}
	}
	return msgs, bytes
}

// Rounds returns the most rounds of any rank.
func (t *Trace) Rounds() int {
	n := 0
	for _, rs := range t.Ranks {
		n = max(n, len(rs))
	}
	return n
}

// Generator returns a schedule.Generator that replays the trace: rank r's
// schedule has the rounds of t.Ranks[r], each send of b bytes a Send of
// b elements of the send buffer, each receive a Recv into the receive
// buffer (the receives of a round into disjoint regions), empty messages
// kept. Elements are bytes: pass element size 1 to the simulator and the
// cost models. The schedules have no Reduce or Copy operations (see the
// package documentation). The generator fails (through the builder) when
// it is run for another number of ranks than t.Size or when t is not
// valid; call Validate first to learn why.
func (t *Trace) Generator() schedule.Generator {
	return func(b *schedule.Builder) {
		if b.Size() != t.Size || len(t.Ranks) != t.Size {
			b.Failf("trace of %d ranks replayed on %d", t.Size, b.Size())
			return
		}
		b.KeepEmpty()
		for _, rd := range t.Ranks[b.Rank()] {
			off := 0
			for _, o := range rd {
				if o.Bytes < 0 || o.Bytes > MaxBytes {
					b.Failf("message of %d bytes", o.Bytes)
					return
				}
				n := int(o.Bytes)
				if o.Recv {
					b.Recv(o.Peer, schedule.RecvBuf(off, n))
					off += n
				} else {
					b.Send(o.Peer, schedule.SendBuf(0, n))
				}
			}
			b.EndRound()
		}
	}
}

// Validate checks that t is a usable trace: 1 ≤ Size ≤ MaxRanks, one list
// of rounds per rank, no empty round, peers in range and not the rank
// itself, sizes in [0, MaxBytes] and below 2^62 in all; that the sends and
// receives between every pair of ranks match in order, in number and in
// size; and that every rank runs to its end when sends complete at once
// (eager messages, as the flow model and the transports' point-to-point
// sends treat them). Errors wrap ErrInconsistent. Validate never modifies
// t.
func (t *Trace) Validate() error {
	if t.Size < 1 || t.Size > MaxRanks {
		return fmt.Errorf("%w: %d ranks (want 1 to %d)", ErrInconsistent, t.Size, MaxRanks)
	}
	if len(t.Ranks) != t.Size {
		return fmt.Errorf("%w: %d ranks with rounds for %d", ErrInconsistent, t.Size, len(t.Ranks))
	}
	var total int64 // bounded so that no sum of sizes overflows
	for r, rs := range t.Ranks {
		for k, rd := range rs {
			if len(rd) == 0 {
				return fmt.Errorf("%w: rank %d: round %d is empty", ErrInconsistent, r, k)
			}
			for _, o := range rd {
				switch {
				case o.Peer < 0 || o.Peer >= t.Size:
					return fmt.Errorf("%w: rank %d: round %d: peer %d of %d ranks", ErrInconsistent, r, k, o.Peer, t.Size)
				case o.Peer == r:
					return fmt.Errorf("%w: rank %d: round %d: message to itself", ErrInconsistent, r, k)
				case o.Bytes < 0 || o.Bytes > MaxBytes:
					return fmt.Errorf("%w: rank %d: round %d: message of %d bytes", ErrInconsistent, r, k, o.Bytes)
				case total > maxTotal-o.Bytes:
					return fmt.Errorf("%w: more than 2^62 bytes sent and received in all", ErrInconsistent)
				}
				total += o.Bytes
			}
		}
	}
	return t.replay()
}

// pairQ holds the sizes of the messages sent from one rank to another
// that the receiver has not taken yet, in order.
type pairQ struct {
	sizes []int64
	head  int
}

func (q *pairQ) avail() int { return len(q.sizes) - q.head }

// replayRank is one rank's progress in replay.
type replayRank struct {
	round   int
	posted  bool            // the current round's sends are posted
	need    map[int32]int32 // receives of the current round per peer
	missing int             // peers of need whose messages have not all arrived
	done    bool
}

// replay runs the trace with eager sends and reports the first mismatch,
// unmatched message or rank that waits forever.
func (t *Trace) replay() error {
	size := int64(t.Size)
	qs := make(map[int64]*pairQ)
	q := func(src, dst int) *pairQ {
		k := int64(src)*size + int64(dst)
		p := qs[k]
		if p == nil {
			p = &pairQ{}
			qs[k] = p
		}
		return p
	}
	rks := make([]replayRank, t.Size)
	work := make([]int, 0, t.Size)
	for r := t.Size - 1; r >= 0; r-- {
		work = append(work, r)
	}
	for len(work) > 0 {
		r := work[len(work)-1]
		work = work[:len(work)-1]
		rk := &rks[r]
		for !rk.done {
			if rk.round == len(t.Ranks[r]) {
				rk.done = true
				break
			}
			rd := t.Ranks[r][rk.round]
			if !rk.posted {
				rk.posted = true
				if rk.need == nil {
					rk.need = make(map[int32]int32)
				}
				clear(rk.need)
				for _, o := range rd {
					if o.Recv {
						rk.need[int32(o.Peer)]++
					}
				}
				rk.missing = 0
				for p, n := range rk.need {
					if q(int(p), r).avail() < int(n) {
						rk.missing++
					}
				}
				for _, o := range rd {
					if o.Recv {
						continue
					}
					pq := q(r, o.Peer)
					pq.sizes = append(pq.sizes, o.Bytes)
					// Wake the peer if this message completes what its
					// current round waits for from r.
					pk := &rks[o.Peer]
					if pk.posted && !pk.done {
						if n := pk.need[int32(r)]; n > 0 && pq.avail() == int(n) {
							pk.missing--
							if pk.missing == 0 {
								work = append(work, o.Peer)
							}
						}
					}
				}
			}
			if rk.missing > 0 {
				break
			}
			for i, o := range rd {
				if !o.Recv {
					continue
				}
				pq := q(o.Peer, r)
				got := pq.sizes[pq.head]
				pq.head++
				if pq.head == len(pq.sizes) {
					pq.sizes, pq.head = pq.sizes[:0], 0
				}
				if got != o.Bytes {
					return fmt.Errorf("%w: rank %d: round %d: receive %d from rank %d is of %d bytes; the message is of %d",
						ErrInconsistent, r, rk.round, i, o.Peer, o.Bytes, got)
				}
			}
			rk.round++
			rk.posted = false
		}
	}
	for r := range rks {
		rk := &rks[r]
		if rk.done {
			continue
		}
		for _, o := range t.Ranks[r][rk.round] {
			if o.Recv && q(o.Peer, r).avail() < int(rk.need[int32(o.Peer)]) {
				if rks[o.Peer].done {
					return fmt.Errorf("%w: rank %d: round %d: a receive from rank %d matches no send", ErrInconsistent, r, rk.round, o.Peer)
				}
				return fmt.Errorf("%w: rank %d waits forever in round %d for rank %d, which waits in its round %d (a cycle of receives)",
					ErrInconsistent, r, rk.round, o.Peer, rks[o.Peer].round)
			}
		}
	}
	// Report the first pair with messages left over, in rank order.
	first := int64(-1)
	for k, p := range qs {
		if p.avail() > 0 && (first < 0 || k < first) {
			first = k
		}
	}
	if first >= 0 {
		return fmt.Errorf("%w: rank %d sent %d message(s) to rank %d that it never receives", ErrInconsistent, first/size, qs[first].avail(), first%size)
	}
	return nil
}
