package schedule

import (
	"errors"
	"strings"
	"testing"
)

func TestBuilderKeepsFirstError(t *testing.T) {
	b := NewBuilder(0, 2)
	b.SetBounds(4, 4)
	b.Send(1, RecvBuf(3, 2)) // out of range: the first error
	b.Send(0, RecvBuf(0, 1)) // self-send: would be a second error
	b.Failf("third")
	b.Recv(1, RecvBuf(0, 1)) // ignored after the error
	b.EndRound()
	err := b.Err()
	if err == nil || !errors.Is(err, ErrBuild) || !strings.Contains(err.Error(), "out of range") {
		t.Fatalf("Err = %v, want the out-of-range error wrapping ErrBuild", err)
	}
	s, err2 := b.Schedule()
	if s != nil || err2 != err {
		t.Fatalf("Schedule = %v, %v; want nil and the first error", s, err2)
	}
	if b.Rounds() != 0 {
		t.Fatalf("%d rounds emitted after the error", b.Rounds())
	}
}

func TestBuilderErrors(t *testing.T) {
	cases := []struct {
		name  string
		build func(b *Builder)
		want  string
	}{
		{"recv overlaps send", func(b *Builder) {
			b.Send(1, RecvBuf(0, 4))
			b.Recv(1, RecvBuf(3, 2))
		}, "overlaps"},
		{"recv overlaps send, other order", func(b *Builder) {
			tmp := b.Alloc(4)
			b.Recv(1, tmp.Sub(2, 2))
			b.Send(1, tmp.Sub(0, 3))
		}, "overlaps"},
		{"two recvs overlap", func(b *Builder) {
			b.Recv(1, RecvBuf(0, 3))
			b.Recv(2, RecvBuf(2, 3))
		}, "overlaps"},
		{"send after local op", func(b *Builder) {
			b.Copy(RecvBuf(0, 1), SendBuf(0, 1))
			b.Send(1, RecvBuf(0, 1))
		}, "after a local operation"},
		{"self peer", func(b *Builder) { b.Send(0, RecvBuf(0, 1)) }, "peer 0"},
		{"peer out of range", func(b *Builder) { b.Recv(3, RecvBuf(0, 1)) }, "peer 3"},
		{"negative peer", func(b *Builder) { b.Recv(-1, RecvBuf(0, 1)) }, "peer -1"},
		{"write send buffer", func(b *Builder) { b.Recv(1, SendBuf(0, 1)) }, "read-only"},
		{"copy into send buffer", func(b *Builder) { b.Copy(SendBuf(0, 1), RecvBuf(0, 1)) }, "read-only"},
		{"negative offset", func(b *Builder) { b.Send(1, RecvBuf(-1, 1)) }, "bad region"},
		{"negative length", func(b *Builder) { b.Send(1, RecvBuf(0, -1)) }, "bad region"},
		{"bad space", func(b *Builder) { b.Send(1, Region{Space: numSpaces, Len: 1}) }, "bad space"},
		{"recv out of range", func(b *Builder) { b.Recv(1, RecvBuf(7, 2)) }, "out of range"},
		{"scratch not allocated", func(b *Builder) { b.Alloc(2); b.Recv(1, ScratchBuf(1, 2)) }, "out of range"},
		{"negative alloc", func(b *Builder) { b.Alloc(-1) }, "negative scratch"},
		{"length mismatch", func(b *Builder) { b.Reduce(RecvBuf(0, 2), SendBuf(0, 1)) }, "lengths differ"},
		{"overlapping reduce", func(b *Builder) { b.Reduce(RecvBuf(0, 2), RecvBuf(1, 2)) }, "overlapping"},
	}
	for _, c := range cases {
		b := NewBuilder(0, 3)
		b.SetBounds(4, 8)
		c.build(b)
		_, err := b.Schedule()
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if !errors.Is(err, ErrBuild) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrBuild mentioning %q", c.name, err, c.want)
		}
	}
}

func TestBuilderBadRank(t *testing.T) {
	for _, rs := range [][2]int{{0, 0}, {-1, 2}, {2, 2}} {
		if _, err := NewBuilder(rs[0], rs[1]).Schedule(); !errors.Is(err, ErrBuild) {
			t.Errorf("rank %d of %d: %v", rs[0], rs[1], err)
		}
	}
}

func TestBuilderDropsEmpty(t *testing.T) {
	b := NewBuilder(0, 2)
	b.Send(1, RecvBuf(0, 0))
	b.Recv(1, ScratchBuf(0, 0))
	b.Copy(RecvBuf(0, 0), SendBuf(0, 0))
	b.EndRound() // every op was empty: the round is dropped
	b.Copy(RecvBuf(0, 2), RecvBuf(0, 2))
	b.EndRound() // a copy onto itself is dropped too
	b.Send(1, RecvBuf(0, 1))
	b.Recv(1, RecvBuf(1, 0))
	s, err := b.Schedule()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Rounds) != 1 || len(s.Rounds[0]) != 1 || s.Rounds[0][0].Kind != OpSend {
		t.Fatalf("got\n%s\nwant one round with one send", s)
	}

	b = NewBuilder(0, 2)
	b.KeepEmpty()
	b.Send(1, RecvBuf(0, 0))
	b.Recv(1, RecvBuf(0, 0)) // empty regions never overlap
	b.Copy(RecvBuf(0, 0), SendBuf(0, 0))
	s, err = b.Schedule()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Rounds) != 1 || len(s.Rounds[0]) != 2 {
		t.Fatalf("KeepEmpty: got\n%s\nwant the two empty messages (and no empty copy)", s)
	}
}

func TestBuilderRoundOrder(t *testing.T) {
	b := NewBuilder(1, 3)
	tmp := b.Alloc(2)
	b.Exchange(0, RecvBuf(0, 2), tmp)
	b.Recv(2, RecvBuf(2, 2))
	b.Reduce(RecvBuf(0, 2), tmp)
	b.EndRound()
	b.EndRound() // empty: dropped
	b.Copy(RecvBuf(2, 2), tmp)
	s, err := b.Schedule()
	if err != nil {
		t.Fatal(err)
	}
	want := "rank 1 of 3, scratch 2\n" +
		"  0: send recv[0:2] -> 0 | recv tmp[0:2] <- 0 | recv recv[2:4] <- 2 ; reduce recv[0:2] (+)= tmp[0:2]\n" +
		"  1: copy recv[2:4] = tmp[0:2]\n"
	if got := s.String(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if s.Messages() != 1 || b.Rounds() != 2 || b.ScratchLen() != 2 {
		t.Fatalf("Messages %d, Rounds %d, ScratchLen %d", s.Messages(), b.Rounds(), b.ScratchLen())
	}
}

func TestStreamBuilder(t *testing.T) {
	var got []string
	var scratch []int
	b := NewStream(0, 2, func(r Round, s int) bool {
		got = append(got, RoundString(r))
		scratch = append(scratch, s)
		return true
	})
	b.Send(1, RecvBuf(0, 1))
	b.EndRound()
	tmp := b.Alloc(3)
	b.Recv(1, tmp)
	s, err := b.Schedule()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Rounds) != 0 || s.Scratch != 3 {
		t.Fatalf("streamed Schedule = %+v, want no rounds and scratch 3", s)
	}
	want := []string{"send recv[0:1] -> 1", "recv tmp[0:3] <- 1"}
	if strings.Join(got, "/") != strings.Join(want, "/") || scratch[0] != 0 || scratch[1] != 3 {
		t.Fatalf("yielded %q with scratch %v", got, scratch)
	}
}

func TestStreamBuilderStop(t *testing.T) {
	calls := 0
	b := NewStream(0, 2, func(Round, int) bool { calls++; return false })
	b.Send(1, RecvBuf(0, 1))
	b.EndRound()
	// Stopped: the rest is ignored quietly, even operations that would fail.
	b.Send(1, RecvBuf(0, 1))
	b.EndRound()
	b.Send(0, RecvBuf(0, 1))
	b.Copy(SendBuf(0, 1), RecvBuf(0, 1))
	b.EndRound()
	if calls != 1 || b.Rounds() != 1 {
		t.Fatalf("yield called %d times, %d rounds; want 1 and 1", calls, b.Rounds())
	}
	if _, err := b.Schedule(); err != nil {
		t.Fatalf("a stopped stream reports %v", err)
	}
}
