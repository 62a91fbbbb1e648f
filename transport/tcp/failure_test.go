package tcp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/transporttest"
)

// crash drops every connection of t without a goodbye, as a process that
// dies does, then releases the rest.
func (t *Transport) crash() {
	for _, p := range t.peers {
		p.mu.Lock()
		if p.conn != nil {
			p.conn.Close()
		}
		p.mu.Unlock()
	}
	t.ln.Close()
	t.Close()
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// quietGroup starts n endpoints over loopback TCP; the test closes them.
func quietGroup(t *testing.T, n int) []*Transport {
	t.Helper()
	eps, err := NewLocalGroup(context.Background(), n, Config{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	return eps
}

func post(t *testing.T, tr *Transport, send bool, peer int, k transport.Key, buf []byte) *transport.Msg {
	t.Helper()
	return transporttest.Post(t, tr, send, peer, k, buf)
}

func tag(k transport.Key, tag int64) transport.Key { k.Tag = tag; return k }

// overBothNetworks runs a test over loopback TCP (the real path) and, in a
// synctest bubble, over memNet (where time is fake and a test that
// waits for the transport's timeouts takes no time).
func overBothNetworks(t *testing.T, test func(t *testing.T, group func(n int) []*Transport)) {
	t.Run("tcp", func(t *testing.T) {
		test(t, func(n int) []*Transport { return quietGroup(t, n) })
	})
	t.Run("mem", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			test(t, func(n int) []*Transport { return memGroup(t, n, Config{Logger: quiet()}) })
		})
	})
}

// TestPeerCrashAbortsCall: rank 2 dies while rank 0 waits for it and rank 1
// waits for rank 0 in the same call. Rank 0's receive fails with
// ErrPeerFailed, and so does rank 1's (the call is aborted everywhere), as
// do later operations of that call; other calls between survivors work.
func TestPeerCrashAbortsCall(t *testing.T) {
	overBothNetworks(t, func(t *testing.T, group func(int) []*Transport) {
		eps := group(3)
		defer closeAll(eps)
		call := transport.Key{Comm: 1, Seq: 5}
		r0 := post(t, eps[0], false, 2, call, make([]byte, 4))
		long := post(t, eps[0], true, 1, tag(call, 1), make([]byte, 2<<20)) // rendezvous send, never received
		r1 := post(t, eps[1], false, 0, tag(call, 2), make([]byte, 4))
		eps[2].crash()
		for name, m := range map[string]*transport.Msg{"rank 0 receive": r0, "rank 0 long send": long, "rank 1 receive": r1} {
			transporttest.Wait(t, m)
			if !errors.Is(m.Err, errs.PeerFailed) {
				t.Errorf("%s: %v, want PeerFailed", name, m.Err)
			}
		}
		late := post(t, eps[1], true, 0, call, []byte("x"))
		transporttest.Wait(t, late)
		if !errors.Is(late.Err, errs.PeerFailed) {
			t.Errorf("operation of the aborted call posted later: %v", late.Err)
		}
		next := transport.Key{Comm: 1, Seq: 6}
		s := post(t, eps[1], true, 0, next, []byte("ok"))
		buf := make([]byte, 2)
		r := post(t, eps[0], false, 1, next, buf)
		transporttest.Wait(t, s)
		transporttest.Wait(t, r)
		if r.Err != nil || string(buf) != "ok" {
			t.Fatalf("next call: %v %q", r.Err, buf)
		}
		dead := post(t, eps[0], true, 2, next, []byte("x"))
		transporttest.Wait(t, dead)
		if !errors.Is(dead.Err, errs.PeerFailed) {
			t.Fatalf("send to the dead rank: %v", dead.Err)
		}
	})
}

// TestMismatchAbortsEverywhere: a receive that finds a message of another
// call (different signature) fails with ErrMismatch, and the sender's call
// is aborted with ErrMismatch too.
func TestMismatchAbortsEverywhere(t *testing.T) {
	overBothNetworks(t, func(t *testing.T, group func(int) []*Transport) {
		eps := group(2)
		defer closeAll(eps)
		call := transport.Key{Comm: 1, Seq: 1}
		s := &transport.Msg{Peer: 1, Key: call, Buf: make([]byte, 2<<20), Sig: 1, W: transport.NewWaiter(0)}
		s.W.Add(1)
		eps[0].Isend(s)
		waiting := post(t, eps[0], false, 1, call, make([]byte, 8)) // rank 0 also waits for rank 1
		r := &transport.Msg{Peer: 0, Key: call, Buf: make([]byte, 2<<20), Sig: 2, W: transport.NewWaiter(0)}
		r.W.Add(1)
		eps[1].Irecv(r)
		for name, m := range map[string]*transport.Msg{"receiver": r, "sender": s, "sender's receive": waiting} {
			transporttest.Wait(t, m)
			if !errors.Is(m.Err, errs.Mismatch) {
				t.Errorf("%s: %v, want Mismatch", name, m.Err)
			}
		}
	})
}

// TestCloseLeavesNoGoroutines: a group that moved messages and closed
// leaves no goroutine behind, and a peer that answers the goodbye lets
// Close return at once (it waits up to Timeout only for one that does
// not: TestCloseWaitsForSilentPeer). The synctest bubble fails the test
// when a goroutine started in it outlives the test function (counting
// the process's goroutines instead would count other tests' exiting ones).
func TestCloseLeavesNoGoroutines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eps := memGroup(t, 4, Config{Logger: quiet()})
		k := transport.Key{Comm: 1, Seq: 1}
		var ms []*transport.Msg
		for r := 1; r < 4; r++ {
			ms = append(ms, post(t, eps[r], true, 0, k, make([]byte, 3<<20)), post(t, eps[0], false, r, k, make([]byte, 3<<20)))
		}
		for _, m := range ms {
			transporttest.Wait(t, m)
		}
		pending := post(t, eps[1], false, 2, k, make([]byte, 1)) // outstanding at Close
		start := time.Now()
		for _, e := range eps {
			e.Close()
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("Close took %v of fake time with every peer answering", d)
		}
		transporttest.Wait(t, pending)
		if !errors.Is(pending.Err, errs.Closed) {
			t.Fatalf("receive outstanding at Close: %v", pending.Err)
		}
	})
}
