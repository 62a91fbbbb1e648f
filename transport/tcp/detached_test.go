package tcp_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/tcp"
	"github.com/scoll/scoll/transport/transporttest"
)

// post posts a send or receive of a collective call (Seq ≠ 0) with
// signature sig and a waiter of its own.
func post(t *testing.T, tr transport.Transport, send bool, peer int, seq, sig uint64, buf []byte) *transport.Msg {
	t.Helper()
	m := &transport.Msg{Peer: peer, Key: transport.Key{Comm: 3, Seq: seq}, Buf: buf, Sig: sig, W: transport.NewWaiter(0)}
	if err := transport.Post(tr, m, send); err != nil {
		t.Fatalf("post: %v", err)
	}
	return m
}

// done reports whether m completes within d.
func done(m *transport.Msg, d time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return m.W.Wait(ctx) == nil
}

// settleWithin runs Settle on tr for (comm 3, seq) with a deadline of d.
func settleWithin(tr *tcp.Transport, seq uint64, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return tr.Settle(ctx, 3, seq)
}

// TestEagerLedger: with DetachedSends, small sends of collective calls (up
// to 4 KiB) complete without their receives, but Settle for a later call
// waits until the receiver took them; the receiver gets every message
// whole and in order; larger sends wait for their receives.
func TestEagerLedger(t *testing.T) {
	eps := group(t, 2, tcp.Config{DetachedSends: true})
	defer closeGroup(eps)
	const n = 100
	payload := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 1+i%13) }
	var sends []*transport.Msg
	for i := range n {
		sends = append(sends, post(t, eps[0], true, 1, uint64(i+1), 9, payload(i)))
	}
	transporttest.Wait(t, sends...)
	for _, m := range sends {
		if m.Err != nil {
			t.Fatalf("eager send: %v", m.Err)
		}
	}
	if err := eps[0].Settle(context.Background(), 3, 1); err != nil {
		t.Fatalf("settle before the first call: %v", err)
	}
	if err := settleWithin(eps[0], 2, 50*time.Millisecond); !errors.Is(err, errs.Canceled) {
		t.Fatalf("settle with call 1 not taken: %v, want it to wait", err)
	}
	for i := range n {
		r := post(t, eps[1], false, 0, uint64(i+1), 9, make([]byte, 16))
		transporttest.Wait(t, r)
		if r.Err != nil || !bytes.Equal(r.Buf[:r.N], payload(i)) {
			t.Fatalf("receive %d: %v, % x", i, r.Err, r.Buf[:r.N])
		}
	}
	if err := settleWithin(eps[0], ^uint64(0), 5*time.Second); err != nil {
		t.Fatalf("settle after every receive: %v", err)
	}

	// Larger messages wait for their acks.
	big := post(t, eps[0], true, 1, 1000, 9, make([]byte, 4<<10+1))
	if done(big, 50*time.Millisecond) {
		t.Fatal("a send over 4 KiB completed without its receive")
	}
	transporttest.Wait(t, post(t, eps[1], false, 0, 1000, 9, make([]byte, 4<<10+1)), big)
}

// TestDetachedMismatch: a receiver refuses a message of another call
// (another signature) with errs.Mismatch either way; the sender's send
// fails too by default, and completes when eager, and then Settle for the
// next call fails once with an *tcp.EagerError naming the call.
func TestDetachedMismatch(t *testing.T) {
	for _, detached := range []bool{false, true} {
		eps := group(t, 2, tcp.Config{DetachedSends: detached})
		s := post(t, eps[0], true, 1, 1, 5, []byte{1, 2, 3})
		r := post(t, eps[1], false, 0, 1, 6, make([]byte, 3))
		transporttest.Wait(t, s, r)
		if !errors.Is(r.Err, errs.Mismatch) {
			t.Errorf("detached %v: receive: %v, want a mismatch", detached, r.Err)
		}
		if detached && s.Err != nil {
			t.Errorf("detached send: %v, want it complete", s.Err)
		}
		if !detached && !errors.Is(s.Err, errs.Mismatch) {
			t.Errorf("acknowledged send: %v, want a mismatch", s.Err)
		}
		err := settleWithin(eps[0], 2, 5*time.Second)
		var ee *tcp.EagerError
		switch {
		case !detached && err != nil:
			t.Errorf("acknowledged: settle: %v", err)
		case detached && (!errors.Is(err, errs.Mismatch) || !errors.As(err, &ee) || ee.Seq != 1 || ee.Peer != 1):
			t.Errorf("eager: settle: %v, want the mismatch of call 1 at rank 1", err)
		}
		if err := settleWithin(eps[0], 2, 5*time.Second); err != nil {
			t.Errorf("detached %v: second settle: %v, want nil (reported once)", detached, err)
		}
		closeGroup(eps)
	}
}

func closeGroup(eps []*tcp.Transport) {
	for _, e := range eps {
		e.Close()
	}
}

// TestAnnounce: an announced receive tells its sender at once that this
// rank joined the call: a sender that started the call with another
// signature finds the mismatch before it sends anything, and one in the
// same call completes its send of the call once written.
func TestAnnounce(t *testing.T) {
	eps := group(t, 2, tcp.Config{})
	defer closeGroup(eps)
	eps[0].RecordCall(3, 1, 5)
	r := &transport.Msg{Peer: 0, Key: transport.Key{Comm: 3, Seq: 1}, Buf: make([]byte, 4), Sig: 6, Announce: true, W: transport.NewWaiter(0)}
	if err := transport.Post(eps[1], r, false); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		if err := eps[0].CheckCall(3, 1, 5, true); errors.Is(err, errs.Mismatch) {
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatal("the sender did not learn of the receiver's other call")
		}
	}
	transporttest.Wait(t, r)
	if !errors.Is(r.Err, errs.Mismatch) {
		t.Fatalf("receive: %v, want a mismatch", r.Err)
	}

	// Same call: the send needs no ack (the receive is withdrawn before
	// the message arrives, yet the send completes).
	eps[0].RecordCall(3, 2, 5)
	r = &transport.Msg{Peer: 0, Key: transport.Key{Comm: 3, Seq: 2}, Buf: make([]byte, 4), Sig: 5, Announce: true, W: transport.NewWaiter(0)}
	if err := transport.Post(eps[1], r, false); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // the ready arrives
	if !eps[1].Cancel(r) {
		t.Fatal("cancel of an unmatched receive failed")
	}
	s := post(t, eps[0], true, 1, 2, 5, []byte{1, 2, 3, 4})
	if !done(s, 5*time.Second) || s.Err != nil {
		t.Fatalf("send after the ready: %v", s.Err)
	}
}

// TestEagerAfterAbort: eager messages of a call that fails at their
// receiver before it takes them make Settle fail, and a peer that closes
// with eager sends untaken fails them too.
func TestEagerAfterAbort(t *testing.T) {
	eps := group(t, 2, tcp.Config{DetachedSends: true})
	defer closeGroup(eps)
	var sends []*transport.Msg
	for range 64 {
		sends = append(sends, post(t, eps[0], true, 1, 1, 9, []byte{1}))
	}
	transporttest.Wait(t, sends...)
	eps[1].AbortCall(3, 1, errs.Mismatch)
	if err := settleWithin(eps[0], 2, 5*time.Second); !errors.Is(err, errs.Mismatch) {
		t.Fatalf("settle after the receiver aborted call 1: %v, want a mismatch", err)
	}
	transporttest.Wait(t, post(t, eps[0], true, 1, 2, 9, []byte{2}))
	eps[1].Close()
	if err := settleWithin(eps[0], 3, 5*time.Second); !errors.Is(err, errs.PeerFailed) && !errors.Is(err, errs.Closed) {
		t.Fatalf("settle after the receiver closed: %v, want a peer failure", err)
	}
}

// TestAnnounceOrder: a ready goes out after the messages queued before it,
// so the peer never takes an earlier call's message for the latest word
// of this rank (which once left a send of the announced call waiting for
// an ack that never came).
func TestAnnounceOrder(t *testing.T) {
	eps := group(t, 2, tcp.Config{})
	defer closeGroup(eps)
	big := make([]byte, 4<<20)
	rz := post(t, eps[0], false, 1, 1, 9, make([]byte, len(big)))
	sz := post(t, eps[1], true, 0, 1, 9, big)
	time.Sleep(time.Millisecond) // the long message is being written
	sb := post(t, eps[1], true, 0, 2, 9, []byte{2})
	ra := &transport.Msg{Peer: 0, Key: transport.Key{Comm: 3, Seq: 3}, Buf: make([]byte, 1), Sig: 9, Announce: true, W: transport.NewWaiter(0)}
	if err := transport.Post(eps[1], ra, false); err != nil {
		t.Fatal(err)
	}
	rb := post(t, eps[0], false, 1, 2, 9, make([]byte, 1))
	transporttest.Wait(t, rz, rb)
	sa := post(t, eps[0], true, 1, 3, 9, []byte{3})
	transporttest.Wait(t, sa, ra, sz, sb)
	for _, m := range []*transport.Msg{rz, sz, sb, rb, sa, ra} {
		if m.Err != nil {
			t.Fatal(m.Err)
		}
	}
}
