package model

import (
	"errors"
	"fmt"

	"github.com/scoll/scoll/schedule"
)

// ErrArgument is wrapped by errors about arguments other than machine
// parameters: a bad size or element size, a collective that cannot be
// evaluated, a schedule whose messages do not match.
var ErrArgument = errors.New("model: invalid argument")

// RankCounts is what one rank's schedule does, or a sum or extremum of that
// over ranks (see Counts). Bytes are element counts times the element size.
type RankCounts struct {
	// Rounds is the number of non-empty rounds.
	Rounds int64
	// MsgsSent and MsgsRecv count sends and receives (OpRecv and
	// OpRecvReduce), zero-length messages included.
	MsgsSent, MsgsRecv int64
	// BytesSent and BytesRecv are the bytes of those messages.
	BytesSent, BytesRecv int64
	// BytesReduced is the bytes combined by OpReduce and OpRecvReduce.
	BytesReduced int64
	// BytesCopied is the bytes moved by OpCopy.
	BytesCopied int64
	// Scratch is the scratch memory the schedule allocates, in bytes.
	Scratch int64
	// RoundOps is the most operations (messages and local operations) in
	// one round. Its Total over ranks bounds the operations CriticalPath
	// holds at once.
	RoundOps int64
}

// fold replaces each field of c by f of it and o's field.
func (c *RankCounts) fold(o RankCounts, f func(a, b int64) int64) {
	c.Rounds = f(c.Rounds, o.Rounds)
	c.MsgsSent = f(c.MsgsSent, o.MsgsSent)
	c.MsgsRecv = f(c.MsgsRecv, o.MsgsRecv)
	c.BytesSent = f(c.BytesSent, o.BytesSent)
	c.BytesRecv = f(c.BytesRecv, o.BytesRecv)
	c.BytesReduced = f(c.BytesReduced, o.BytesReduced)
	c.BytesCopied = f(c.BytesCopied, o.BytesCopied)
	c.Scratch = f(c.Scratch, o.Scratch)
	c.RoundOps = f(c.RoundOps, o.RoundOps)
}

func sum64(a, b int64) int64 { return a + b }
func max64(a, b int64) int64 { return max(a, b) }
func min64(a, b int64) int64 { return min(a, b) }

// Counts summarises the schedules of all ranks of one collective call.
//
// Total, Max and Min are taken field by field over the ranks' RankCounts (so
// Max.MsgsSent and Max.BytesSent may come from different ranks).
//
// The critical-path fields evaluate the schedule round-synchronously: round
// i of every rank is taken to run at the same time, and a round lasts as
// long as its busiest rank. A rank's load in a round is max(messages sent,
// messages received) and max(bytes sent, bytes received) — full duplex, one
// port: its sends are serialised, its receives are serialised, and sends
// overlap receives — plus the bytes it reduces and copies. For each round
// the maximum over ranks is taken per quantity, and the Crit fields sum those
// maxima over rounds. Per quantity maxima may come from different ranks, so
// a time built from them is an upper bound on the busiest rank's time of the
// round; for the regular rounds of the algorithms here they coincide.
//
// Rounds are local in the schedule IR (a rank starts its round i+1 when its
// round i is done, whatever the others do), so the round-synchronous view is
// exact only for algorithms whose ranks move in lockstep. A pipeline whose
// rank v first receives at global step v has its rounds shifted and is
// under-estimated, and so is a schedule whose empty rounds were dropped;
// CriticalPath charges both along their dependencies, and the package
// documentation compares the two views.
type Counts struct {
	// Size is the number of ranks and ElemSize the bytes of one element.
	Size, ElemSize int
	// Total, Max and Min are the sum, maximum and minimum over ranks.
	Total, Max, Min RankCounts

	// Rounds is the number of round indices any rank uses (Max.Rounds).
	Rounds int
	// CommRounds is the number of round indices in which some rank sends or
	// receives a message.
	CommRounds int
	// CritMsgs is the sum over rounds of the largest max(sent, received)
	// message count of any rank in that round.
	CritMsgs int64
	// CritBytes is the sum over rounds of the largest max(sent, received)
	// byte count of any rank in that round.
	CritBytes int64
	// CritReduced and CritCopied are the sums over rounds of the most bytes
	// any rank reduces, respectively copies, in that round.
	CritReduced, CritCopied int64
}

// step is the busiest rank's load in one round index.
type step struct {
	msgs, bytes, reduced, copied int64
	comm                         bool
}

// Count builds every rank's schedule with gen, one rank at a time with
// schedule.NewStream (no rank's schedule is ever held, only its current
// round), and counts what the ranks do. elemSize converts element counts to
// bytes. gen is called for one rank after the other, never concurrently.
//
// Besides the work of building the schedules, Count keeps one small record
// per round index, so its memory is O(rounds), independent of the
// schedules' total size (which is Θ(P²) for ring and linear algorithms).
//
// Count does not call b.KeepEmpty or b.SetBounds: a generator for a barrier
// must call KeepEmpty itself, as package workload's Generator does, or its empty messages are
// dropped. A schedule whose sends and receives do not balance (in number or
// bytes) is reported as an error wrapping ErrArgument; errors recorded by the
// builder are returned with the rank.
func Count(size, elemSize int, gen schedule.Generator) (Counts, error) {
	if err := checkArgs(size, elemSize, gen); err != nil {
		return Counts{}, err
	}
	var t tally
	for r := range size {
		if err := t.rank(r, size, int64(elemSize), gen); err != nil {
			return Counts{}, fmt.Errorf("model: rank %d: %w", r, err)
		}
	}
	return t.counts(size, elemSize)
}

func checkArgs(size, elemSize int, gen schedule.Generator) error {
	if size < 1 {
		return fmt.Errorf("%w: size %d", ErrArgument, size)
	}
	if elemSize < 1 {
		return fmt.Errorf("%w: element size %d", ErrArgument, elemSize)
	}
	if gen == nil {
		return fmt.Errorf("%w: nil generator", ErrArgument)
	}
	return nil
}

// tally accumulates the counts of the ranks.
type tally struct {
	steps           []step
	total, max, min RankCounts
	ranks           int
}

// counts returns the Counts of all ranks added.
func (t *tally) counts(size, elemSize int) (Counts, error) {
	c := Counts{Size: size, ElemSize: elemSize, Total: t.total, Max: t.max, Min: t.min}
	if c.Total.MsgsSent != c.Total.MsgsRecv || c.Total.BytesSent != c.Total.BytesRecv {
		return Counts{}, fmt.Errorf("%w: unmatched messages: %d sends of %d bytes, %d receives of %d bytes",
			ErrArgument, c.Total.MsgsSent, c.Total.BytesSent, c.Total.MsgsRecv, c.Total.BytesRecv)
	}
	c.Rounds = len(t.steps)
	for _, s := range t.steps {
		if s.comm {
			c.CommRounds++
		}
		c.CritMsgs += s.msgs
		c.CritBytes += s.bytes
		c.CritReduced += s.reduced
		c.CritCopied += s.copied
	}
	return c, nil
}

// load is what one rank does in one round.
type load struct{ ops, sent, recv, bsent, brecv, reduced, copied int64 }

// add counts op (of n bytes).
func (l *load) add(k schedule.Kind, n int64) {
	l.ops++
	switch k {
	case schedule.OpSend:
		l.sent++
		l.bsent += n
	case schedule.OpRecv:
		l.recv++
		l.brecv += n
	case schedule.OpRecvReduce:
		l.recv++
		l.brecv += n
		l.reduced += n
	case schedule.OpReduce:
		l.reduced += n
	case schedule.OpCopy:
		l.copied += n
	}
}

// round records l as round i of a rank whose counts are rc.
func (t *tally) round(i int, l load, rc *RankCounts) {
	rc.Rounds++
	rc.MsgsSent += l.sent
	rc.MsgsRecv += l.recv
	rc.BytesSent += l.bsent
	rc.BytesRecv += l.brecv
	rc.BytesReduced += l.reduced
	rc.BytesCopied += l.copied
	rc.RoundOps = max(rc.RoundOps, l.ops)
	if i == len(t.steps) {
		t.steps = append(t.steps, step{})
	}
	s := &t.steps[i]
	s.msgs = max(s.msgs, l.sent, l.recv)
	s.bytes = max(s.bytes, l.bsent, l.brecv)
	s.reduced = max(s.reduced, l.reduced)
	s.copied = max(s.copied, l.copied)
	s.comm = s.comm || l.sent+l.recv > 0
}

// rank counts rank r's schedule.
func (t *tally) rank(r, size int, es int64, gen schedule.Generator) error {
	var rc RankCounts
	i := 0
	b := schedule.NewStream(r, size, func(rd schedule.Round, _ int) bool {
		var l load
		for _, op := range rd {
			l.add(op.Kind, int64(op.Len())*es)
		}
		t.round(i, l, &rc)
		i++
		return true
	})
	gen(b)
	b.EndRound()
	if err := b.Err(); err != nil {
		return err
	}
	rc.Scratch = int64(b.ScratchLen()) * es
	t.add(rc)
	return nil
}

// add folds one rank's counts into t.
func (t *tally) add(rc RankCounts) {
	if t.ranks == 0 {
		t.max, t.min = rc, rc
	} else {
		t.max.fold(rc, max64)
		t.min.fold(rc, min64)
	}
	t.total.fold(rc, sum64)
	t.ranks++
}
