package schedule

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// recorder is a replay consumer that completes both ends at a match
// (rendezvous) and records the events.
type recorder struct {
	e       *Replay
	matches [][2]Ref
	at      [][2]int // the round numbers of the matched ends
	starts  []int
	rounds  [][]Round
	failAt  int // rank whose Finish fails (-1: none)
	eager   bool
}

func (c *recorder) Start(r, index int, rd Round, _ int) error {
	c.starts = append(c.starts, r)
	if len(c.rounds[r]) != index {
		return errors.New("round numbers out of order")
	}
	c.rounds[r] = append(c.rounds[r], slices.Clone(rd))
	return nil
}

func (c *recorder) Match(send, recv Ref) error {
	c.matches = append(c.matches, [2]Ref{send, recv})
	_, rs, _ := c.e.Round(int(send.Rank))
	_, rr, _ := c.e.Round(int(recv.Rank))
	c.at = append(c.at, [2]int{rs, rr})
	if !c.eager {
		c.e.Complete(int(send.Rank))
	}
	c.e.Complete(int(recv.Rank))
	return nil
}

func (c *recorder) Finish(r int) error {
	if r == c.failAt {
		return errors.New("finish failed")
	}
	return nil
}

func replayOf(t *testing.T, size int, gen Generator, eager bool) (*recorder, error) {
	t.Helper()
	c := &recorder{rounds: make([][]Round, size), failAt: -1, eager: eager}
	c.e = NewReplay(size, gen, c, ReplayOptions{Eager: eager})
	defer c.e.Close()
	return c, c.e.Run()
}

// ringGen is a ring allgather-like schedule: each round rank r sends two
// messages to r+1 and receives two from r−1 (so that the order in which
// they meet matters); rank 0 has an extra local round first.
func ringGen(b *Builder) {
	r, p := b.Rank(), b.Size()
	tmp := b.Alloc(1)
	if r == 0 {
		b.Copy(RecvBuf(0, 1), SendBuf(0, 1))
		b.EndRound()
	}
	for k := range p - 1 {
		b.Send((r+1)%p, RecvBuf(k, 1))
		b.Send((r+1)%p, SendBuf(0, 1))
		b.Recv((r+p-1)%p, RecvBuf(k+1, 1))
		b.Recv((r+p-1)%p, tmp)
		b.EndRound()
	}
}

// TestReplayMatchesInIndexOrder runs a ring and checks that every match
// pairs a send and a receive of the same MessageIndex on the same pair of
// ranks, that every message is matched once, and that every rank ends.
func TestReplayMatchesInIndexOrder(t *testing.T) {
	const p = 7
	c, err := replayOf(t, p, ringGen, false)
	if err != nil {
		t.Fatal(err)
	}
	for r := range p {
		if !c.e.Done(r) {
			t.Errorf("rank %d not done", r)
		}
	}
	// The MessageIndex of each operation, by (round, operation).
	index := make([]map[[2]int]int64, p)
	for r := range p {
		idx := MessageIndex(c.rounds[r])
		index[r] = map[[2]int]int64{}
		k := 0
		for ri, rd := range c.rounds[r] {
			for oi, o := range rd {
				if o.Kind.IsComm() {
					index[r][[2]int{ri, oi}] = idx[k]
					k++
				}
			}
		}
	}
	if len(c.matches) != 2*p*(p-1) {
		t.Fatalf("%d matches, want %d", len(c.matches), 2*p*(p-1))
	}
	seen := map[[3]int]bool{}
	for i, m := range c.matches {
		s, d := m[0], m[1]
		so := c.rounds[s.Rank][c.at[i][0]][s.Op]
		do := c.rounds[d.Rank][c.at[i][1]][d.Op]
		if so.Kind != OpSend || !do.Kind.IsRecv() || so.Peer != int(d.Rank) || do.Peer != int(s.Rank) {
			t.Fatalf("match %d pairs %s of rank %d with %s of rank %d", i, so, s.Rank, do, d.Rank)
		}
		si := index[s.Rank][[2]int{c.at[i][0], int(s.Op)}]
		di := index[d.Rank][[2]int{c.at[i][1], int(d.Op)}]
		if si != di {
			t.Errorf("match %d: send index %d meets receive index %d", i, si, di)
		}
		k := [3]int{int(s.Rank), int(d.Rank), int(si)}
		if seen[k] {
			t.Errorf("message %v matched twice", k)
		}
		seen[k] = true
	}
}

// TestReplayEager checks that in an Eager replay sends are not queued:
// nothing matches until the consumer reports arrivals.
func TestReplayEager(t *testing.T) {
	gen := func(b *Builder) {
		if b.Rank() == 0 {
			b.Send(1, SendBuf(0, 1))
		} else {
			b.Recv(0, RecvBuf(0, 1))
		}
		b.EndRound()
	}
	c := &recorder{rounds: make([][]Round, 2), failAt: -1, eager: true}
	c.e = NewReplay(2, gen, c, ReplayOptions{Eager: true})
	defer c.e.Close()
	if err := c.e.Run(); err != nil {
		t.Fatal(err)
	}
	if len(c.matches) != 0 || c.e.Done(0) || c.e.Done(1) {
		t.Fatalf("eager replay matched %d messages before any arrival", len(c.matches))
	}
	if c.e.Pending(0) != 1 || c.e.Pending(1) != 1 {
		t.Fatalf("pending %d, %d; want 1, 1", c.e.Pending(0), c.e.Pending(1))
	}
	c.e.Complete(0) // the send's bytes have moved
	if err := c.e.Arrive(0, 1, Ref{Rank: 0, Op: 42}); err != nil {
		t.Fatal(err)
	}
	if err := c.e.Drain(); err != nil {
		t.Fatal(err)
	}
	if len(c.matches) != 1 || c.matches[0] != [2]Ref{{0, 42}, {1, 0}} {
		t.Fatalf("matches %v", c.matches)
	}
	if !c.e.Done(0) || !c.e.Done(1) {
		t.Fatal("ranks not done after the arrival")
	}
}

// holder is a recorder for Hold replays: its Finish lets a rank move on at
// once only after a round without messages (as a timed consumer whose
// computation is free would) and records the finished rounds.
type holder struct {
	recorder
	finished []int
}

func (h *holder) Finish(r int) error {
	h.finished = append(h.finished, r)
	rd, _, _ := h.e.Round(r)
	for _, o := range rd {
		if o.Kind.IsComm() {
			return nil
		}
	}
	return h.e.Advance(r)
}

// TestReplayHold checks that in a Hold replay a rank whose round has
// finished stays in it until Advance (called later, or from Finish), and
// that only a held rank can be advanced.
func TestReplayHold(t *testing.T) {
	gen := func(b *Builder) {
		if b.Rank() == 0 {
			b.Send(1, SendBuf(0, 1))
			b.EndRound()
			b.Copy(RecvBuf(0, 1), SendBuf(0, 1))
			b.EndRound()
			b.Send(1, SendBuf(0, 1))
		} else {
			b.Recv(0, RecvBuf(0, 1))
			b.EndRound()
			b.Recv(0, RecvBuf(1, 1))
		}
		b.EndRound()
	}
	h := &holder{recorder: recorder{rounds: make([][]Round, 2), failAt: -1}}
	h.e = NewReplay(2, gen, h, ReplayOptions{Hold: true})
	defer h.e.Close()
	at := func(r int) (int, bool) { _, i, posted := h.e.Round(r); return i, posted }
	if err := h.e.Run(); err != nil {
		t.Fatal(err)
	}
	// Both ranks have finished their first round and wait in it.
	if len(h.finished) != 2 || len(h.starts) != 2 {
		t.Fatalf("finished %v, started %v; want both ranks' first round only", h.finished, h.starts)
	}
	for r := range 2 {
		if i, posted := at(r); i != 0 || posted || h.e.Done(r) {
			t.Fatalf("rank %d: round %d posted %v done %v; want held in round 0", r, i, posted, h.e.Done(r))
		}
	}
	if err := h.e.Advance(2); err == nil {
		t.Error("advanced rank 2 of 2")
	}
	// Rank 0 moves on: its local round finishes and Finish advances it
	// at once, so it waits in its last round for rank 1.
	if err := h.e.Advance(0); err != nil {
		t.Fatal(err)
	}
	if err := h.e.Drain(); err != nil {
		t.Fatal(err)
	}
	if i, posted := at(0); i != 2 || !posted {
		t.Fatalf("rank 0 in round %d (posted %v), want waiting in round 2", i, posted)
	}
	if err := h.e.Advance(0); err == nil {
		t.Error("advanced rank 0 while its round waits for a message")
	}
	if err := h.e.Advance(1); err != nil {
		t.Fatal(err)
	}
	if err := h.e.Drain(); err != nil {
		t.Fatal(err)
	}
	if len(h.matches) != 2 || h.e.Done(0) || h.e.Done(1) {
		t.Fatalf("%d matches, done %v %v; want 2, both held", len(h.matches), h.e.Done(0), h.e.Done(1))
	}
	for r := range 2 {
		if err := h.e.Advance(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.e.Drain(); err != nil {
		t.Fatal(err)
	}
	if !h.e.Done(0) || !h.e.Done(1) {
		t.Fatal("ranks not done after their last Advance")
	}
}

// TestReplayDeadlockAndErrors: an unmatched receive leaves its rank not
// Done (the consumer reports it), a hook's error stops the replay, and a
// generator's error comes back with its rank.
func TestReplayDeadlockAndErrors(t *testing.T) {
	lonely := func(b *Builder) {
		if b.Rank() == 1 {
			b.Recv(0, RecvBuf(0, 1))
			b.EndRound()
		}
	}
	c, err := replayOf(t, 2, lonely, false)
	if err != nil {
		t.Fatal(err)
	}
	if !c.e.Done(0) || c.e.Done(1) {
		t.Fatalf("done: %v %v; want rank 1 stuck", c.e.Done(0), c.e.Done(1))
	}
	if rd, i, posted := c.e.Round(1); !posted || i != 0 || len(rd) != 1 {
		t.Fatalf("rank 1 waits in %v (round %d, posted %v)", rd, i, posted)
	}

	c = &recorder{rounds: make([][]Round, 4), failAt: 2}
	c.e = NewReplay(4, ringGen, c, ReplayOptions{})
	if err := c.e.Run(); err == nil || !strings.Contains(err.Error(), "finish failed") {
		t.Errorf("failing hook: %v", err)
	}
	c.e.Close()

	bad := func(b *Builder) {
		if b.Rank() == 3 {
			b.Failf("no such thing")
		}
	}
	if _, err := replayOf(t, 4, bad, false); err == nil || !errors.Is(err, ErrBuild) || !strings.HasPrefix(err.Error(), "rank 3: ") {
		t.Errorf("generator error: %v", err)
	}
	peer := func(b *Builder) {
		b.Recv(9, RecvBuf(0, 1))
		b.EndRound()
	}
	if _, err := replayOf(t, 2, peer, false); err == nil {
		t.Error("a receive from rank 9 of 2 was accepted")
	}
}

// TestMessageIndex numbers messages per peer and direction.
func TestMessageIndex(t *testing.T) {
	rounds := []Round{
		{{Kind: OpSend, Peer: 1}, {Kind: OpRecv, Peer: 1}, {Kind: OpSend, Peer: 2}},
		{{Kind: OpCopy}, {Kind: OpSend, Peer: 1}, {Kind: OpRecvReduce, Peer: 1}},
		{{Kind: OpRecv, Peer: 2}, {Kind: OpSend, Peer: 1}},
	}
	got := MessageIndex(rounds)
	want := []int64{0, 0, 0, 1, 1, 0, 2}
	if !slices.Equal(got, want) {
		t.Errorf("MessageIndex = %v, want %v", got, want)
	}
}
