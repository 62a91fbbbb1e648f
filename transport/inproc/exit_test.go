package inproc

// (Its imports end as transport/tcp/security_test.go's do: both are
// internal tests that use the conformance suite's helpers.)
import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/transporttest"
)

// checkWaiting fails the test unless every mailbox's index of receives from
// its rank matches the receives the mailboxes hold (the invariant on
// mailbox). The world must be quiet.
func checkWaiting(t *testing.T, w *World) {
	t.Helper()
	want := make([]map[int32]int32, w.size)
	for d := range w.boxes {
		b := &w.boxes[d]
		b.mu.Lock()
		for _, m := range b.recvs {
			if want[m.Peer] == nil {
				want[m.Peer] = map[int32]int32{}
			}
			want[m.Peer][int32(d)]++
		}
		b.mu.Unlock()
	}
	for s := range w.boxes {
		f := &w.boxes[s]
		f.wmu.Lock()
		got := f.waiting
		f.wmu.Unlock()
		if len(got) != len(want[s]) {
			t.Fatalf("rank %d: index %v, mailboxes hold %v", s, got, want[s])
		}
		for d, n := range want[s] {
			if got[d] != n {
				t.Fatalf("rank %d: index %v, mailboxes hold %v", s, got, want[s])
			}
		}
	}
}

func pending(m *transport.Msg) bool { return m.W.Pending() != 0 }

// TestExitLocks checks that ranks nobody waits for exit without looking at
// other ranks' mailboxes: a world of P ranks ends with exactly P mailbox
// locks taken by Exit (each rank's own), not P² as when every exit searched
// every mailbox.
func TestExitLocks(t *testing.T) {
	const P = 4096
	w := NewWorld(P, Lanes(false), Exchanges(false))
	var wg sync.WaitGroup
	for r := range P {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.Exit(r)
		}()
	}
	wg.Wait()
	w.Close()
	if n := w.exitLocks.Load(); n != P {
		t.Fatalf("%d ranks exited taking %d mailbox locks, want %d", P, n, P)
	}
}

// TestExitFindsReceives checks that an exit visits exactly the mailboxes
// holding receives from the exiting rank, fails those receives and the
// sends to it, and leaves everything else alone.
func TestExitFindsReceives(t *testing.T) {
	const P = 64
	w := NewWorld(P, Lanes(false))
	defer w.Close()
	k := transport.Key{Comm: 1, Tag: 3}
	r1 := transporttest.Post(t, w.Endpoint(1), false, 9, k, make([]byte, 1))
	r2 := transporttest.Post(t, w.Endpoint(2), false, 9, k, make([]byte, 1))
	r2b := transporttest.Post(t, w.Endpoint(2), false, 9, transport.Key{Comm: 1, Tag: 4}, make([]byte, 1))
	other := transporttest.Post(t, w.Endpoint(3), false, 8, k, make([]byte, 1))
	mine := transporttest.Post(t, w.Endpoint(9), false, 4, k, make([]byte, 1)) // posted by 9
	to9 := transporttest.Post(t, w.Endpoint(5), true, 9, k, []byte{1})         // rendezvous send to 9
	checkWaiting(t, w)

	before := w.exitLocks.Load()
	w.Exit(9)
	if n := w.exitLocks.Load() - before; n != 4 {
		t.Errorf("Exit took %d mailbox locks, want 4 (mailboxes 1 and 2, its own to look and to empty it)", n)
	}
	transporttest.Wait(t, r1, r2, r2b, mine, to9)
	for _, m := range []*transport.Msg{r1, r2, r2b, mine, to9} {
		if !errors.Is(m.Err, errs.PeerFailed) || m.Err.Error() != fmt.Sprintf("%v: rank 9 has exited", errs.PeerFailed) {
			t.Errorf("got %v, want %q", m.Err, "rank 9 has exited")
		}
	}
	if !pending(other) {
		t.Fatal("a receive from another rank completed")
	}
	checkWaiting(t, w)

	// Later operations to and from 9 fail at once.
	m := &transport.Msg{Peer: 9, Key: k, Buf: make([]byte, 1), W: transport.NewWaiter(0)}
	if err := w.Endpoint(6).Irecv(m); !errors.Is(err, errs.PeerFailed) {
		t.Errorf("receive from an exited rank: %v", err)
	}
	if err := w.Endpoint(6).Isend(m); !errors.Is(err, errs.PeerFailed) {
		t.Errorf("send to an exited rank: %v", err)
	}
	m.Peer = 6
	if err := w.Endpoint(9).Irecv(m); !errors.Is(err, errs.PeerFailed) {
		t.Errorf("receive by an exited rank: %v", err)
	}
	checkWaiting(t, w)

	// The receive from 8 still matches, and the index forgets it.
	s := transporttest.Post(t, w.Endpoint(8), true, 3, k, []byte{7})
	transporttest.Wait(t, other, s)
	if other.Err != nil || s.Err != nil {
		t.Fatal(other.Err, s.Err)
	}
	checkWaiting(t, w)
}

// TestExitSendBeforeExit checks that a send a rank posted before it exited
// still reaches a receive posted after.
func TestExitSendBeforeExit(t *testing.T) {
	w := NewWorld(3, Lanes(false))
	defer w.Close()
	k := transport.Key{Comm: 1, Tag: 1}
	s := transporttest.Post(t, w.Endpoint(0), true, 1, k, []byte{5})
	w.Exit(0)
	buf := make([]byte, 1)
	r := transporttest.Post(t, w.Endpoint(1), false, 0, k, buf)
	transporttest.Wait(t, r, s)
	if r.Err != nil || s.Err != nil || buf[0] != 5 {
		t.Fatalf("receive of a send posted before the exit: %v, %v, %v", r.Err, s.Err, buf)
	}
	checkWaiting(t, w)
}

// TestExitConcurrent posts, matches and cancels receives on every rank
// while ranks exit, then checks that every operation completed and that the
// index of waiting receives is exact.
func TestExitConcurrent(t *testing.T) {
	const P, ops = 16, 400
	for _, lanes := range []bool{false, true} {
		t.Run(fmt.Sprintf("lanes=%v", lanes), func(t *testing.T) {
			w := NewWorld(P, Lanes(lanes))
			var (
				mu  sync.Mutex
				all []*transport.Msg
				wg  sync.WaitGroup
			)
			for r := range P {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(r), 1))
					e := w.Endpoint(r)
					for i := range ops {
						if r%4 == 3 && i == ops/2 {
							w.Exit(r)
						}
						peer := rng.IntN(P)
						k := transport.Key{Comm: 1, Seq: uint64(rng.IntN(3)), Tag: int64(rng.IntN(3))}
						m := &transport.Msg{Peer: peer, Key: k, Buf: make([]byte, 1+rng.IntN(100)), W: transport.NewWaiter(0)}
						m.W.Add(1)
						var err error
						if rng.IntN(2) == 0 {
							err = e.Isend(m)
						} else {
							err = e.Irecv(m)
						}
						if err != nil {
							continue
						}
						if rng.IntN(3) == 0 && e.Cancel(m) {
							continue
						}
						mu.Lock()
						all = append(all, m)
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			w.Close()
			transporttest.Wait(t, all...)
			checkWaiting(t, w)
			for d := range w.boxes {
				if n := len(w.boxes[d].recvs); n != 0 {
					t.Fatalf("mailbox %d holds %d receives after Close", d, n)
				}
			}
		})
	}
}

// TestExitLanes checks that an exit fails the lane receives from the rank
// and the long lane sends to it that it did not take.
func TestExitLanes(t *testing.T) {
	w := NewWorld(4, Lanes(true))
	defer w.Close()
	k := transport.Key{Comm: 1, Seq: 1}
	r := transporttest.Post(t, w.Endpoint(0), false, 2, k, make([]byte, 8))
	long := transporttest.Post(t, w.Endpoint(1), true, 2, k, make([]byte, 4*laneBytes))
	other := transporttest.Post(t, w.Endpoint(0), false, 3, k, make([]byte, 8))
	w.Exit(2)
	transporttest.Wait(t, r, long)
	if !errors.Is(r.Err, errs.PeerFailed) || !errors.Is(long.Err, errs.PeerFailed) {
		t.Fatalf("receive: %v, long send: %v", r.Err, long.Err)
	}
	if !pending(other) {
		t.Fatal("a lane receive from another rank completed")
	}
	m := &transport.Msg{Peer: 2, Key: k, Buf: make([]byte, 8), W: transport.NewWaiter(0)}
	if err := w.Endpoint(1).Irecv(m); !errors.Is(err, errs.PeerFailed) {
		t.Errorf("lane receive from an exited rank: %v", err)
	}
}

// TestMeetAfterExit checks that a meeting made after a member exited
// fails (its creator looks), and that one open when a member exits fails.
func TestMeetAfterExit(t *testing.T) {
	ctx := context.Background()
	noop := func([]any) error { return nil }
	t.Run("created after", func(t *testing.T) {
		w := NewWorld(3)
		defer w.Close()
		w.Exit(2)
		errc := make(chan error, 2)
		for r := range 2 {
			go func() {
				errc <- w.Endpoint(r).Meet(ctx, transport.Key{Comm: 1, Seq: 1}, 0, nil, noop)
			}()
		}
		for range 2 {
			if err := <-errc; !errors.Is(err, errs.PeerFailed) {
				t.Fatalf("meeting with an exited member: %v", err)
			}
		}
	})
	t.Run("open", func(t *testing.T) {
		w := NewWorld(3)
		defer w.Close()
		errc := make(chan error, 1)
		go func() { errc <- w.Endpoint(0).Meet(ctx, transport.Key{Comm: 1, Seq: 1}, 0, nil, noop) }()
		for {
			if _, ok := w.meets.Load(meetKey{1, 1}); ok {
				break
			}
			time.Sleep(time.Millisecond)
		}
		w.Exit(1)
		if err := <-errc; !errors.Is(err, errs.PeerFailed) {
			t.Fatalf("meeting whose member exited: %v", err)
		}
	})
	t.Run("derived", func(t *testing.T) {
		w := NewWorld(8)
		defer w.Close()
		members := []int32{6, 1, 4}
		g := transport.Group{Comm: 99, Size: 3, Members: members}
		errc := make(chan error, 1)
		go func() {
			g := g
			g.Rank = 2
			v := w.Endpoint(4).Join(g).(*View)
			errc <- v.Meet(ctx, transport.Key{Comm: 99, Seq: 1}, 0, nil, noop)
		}()
		for {
			if _, ok := w.meets.Load(meetKey{99, 1}); ok {
				break
			}
			time.Sleep(time.Millisecond)
		}
		w.Exit(5) // not a member
		w.Exit(0)
		select {
		case err := <-errc:
			t.Fatalf("meeting failed when a non-member exited: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
		w.Exit(1) // rank 1 of the group
		if err := <-errc; !errors.Is(err, errs.PeerFailed) {
			t.Fatalf("meeting whose member exited: %v", err)
		}
	})
}

// TestRankOf checks the communicator's reverse lookup.
func TestRankOf(t *testing.T) {
	cs := &commState{size: 4, members: []int32{7, 0, 12, 3}, known: true}
	for wr, want := range map[int]int{7: 0, 0: 1, 12: 2, 3: 3, 1: -1, 13: -1, -1: -1, 1 << 40: -1} {
		if got := cs.rankOf(wr); got != want {
			t.Errorf("rankOf(%d) = %d, want %d", wr, got, want)
		}
	}
	world := &commState{size: 4, known: true}
	if world.rankOf(3) != 3 || world.rankOf(4) != -1 {
		t.Error("world communicator's rankOf")
	}
}
