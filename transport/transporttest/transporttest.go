// Package transporttest is the conformance suite every scoll transport must
// pass. A transport's test calls Run with a factory for groups of endpoints.
package transporttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// Factory returns the endpoints of a new group of size ranks, indexed by rank.
// The suite closes them.
type Factory func(t *testing.T, size int) []transport.Transport

const waitLimit = 10 * time.Second

// Post posts a send (send true) or a receive of buf with peer and key on tr,
// with a waiter of its own that polls tr when tr progresses by polling, and
// fails the test if tr refuses it.
func Post(t testing.TB, tr transport.Transport, send bool, peer int, key transport.Key, buf []byte) *transport.Msg {
	t.Helper()
	m := &transport.Msg{Peer: peer, Key: key, Buf: buf, W: newWaiter(tr, 0)}
	if err := transport.Post(tr, m, send); err != nil {
		t.Fatalf("post: %v", err)
	}
	return m
}

// newWaiter returns a waiter that polls tr when tr progresses by polling.
func newWaiter(tr transport.Transport, spin int) *transport.Waiter {
	w := transport.NewWaiter(spin)
	if p := transport.CapsOf(tr).Poller; p != nil {
		w.SetPoller(p)
	}
	return w
}

// BenchExchange runs b.N exchanges between ranks 0 and 1 of a group,
// endpoints ep0 and ep1, one goroutine a rank: each posts a send and a receive of n bytes to the other,
// then waits for both (a step of a two-rank recursive doubling). The
// waiters spin as the endpoint hints (transport.SpinHinter) and poll it when
// it progresses by polling. The first error fails the benchmark.
func BenchExchange(b *testing.B, n int, ep0, ep1 transport.Transport) {
	eps := [2]transport.Transport{ep0, ep1}
	b.ResetTimer()
	var wg sync.WaitGroup
	errc := make(chan error, 2)
	for r := range 2 {
		wg.Go(func() {
			ep := eps[r]
			spin := 0
			if h := transport.CapsOf(ep).SpinHinter; h != nil {
				spin = h.SpinHint()
			}
			out, in := make([]byte, n), make([]byte, n)
			w := newWaiter(ep, spin)
			var s, rc transport.Msg
			for i := range b.N {
				k := transport.Key{Comm: 1, Seq: uint64(i + 1)}
				s = transport.Msg{Peer: 1 - r, Key: k, Buf: out, W: w}
				rc = transport.Msg{Peer: 1 - r, Key: k, Buf: in, W: w}
				w.Add(2)
				ep.Isend(&s)
				ep.Irecv(&rc)
				if err := w.Wait(context.Background()); err != nil {
					errc <- err
					return
				}
				if s.Err != nil || rc.Err != nil {
					errc <- fmt.Errorf("rank %d: send %v, receive %v", r, s.Err, rc.Err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		b.Fatal(err)
	}
}

// Wait waits up to 10 s for each of ms to complete and fails the test if
// one does not.
func Wait(t testing.TB, ms ...*transport.Msg) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	for _, m := range ms {
		if err := m.W.Wait(ctx); err != nil {
			t.Fatalf("wait: %v (operation never completed)", err)
		}
	}
}

func key(seq uint64, tag int64) transport.Key { return transport.Key{Comm: 7, Seq: seq, Tag: tag} }

// Run runs the conformance suite.
func Run(t *testing.T, mk Factory) {
	group := func(t *testing.T, n int) []transport.Transport {
		eps := mk(t, n)
		if len(eps) != n {
			t.Fatalf("factory made %d endpoints, want %d", len(eps), n)
		}
		t.Cleanup(func() {
			for _, e := range eps {
				e.Close()
			}
		})
		for r, e := range eps {
			if e.Rank() != r || e.Size() != n {
				t.Fatalf("endpoint %d reports rank %d size %d", r, e.Rank(), e.Size())
			}
		}
		return eps
	}

	t.Run("Responder", func(t *testing.T) {
		eps := group(t, 3)
		if transport.CapsOf(eps[0]).Responder == nil {
			t.Skip("the transport has no responder")
		}
		RunResponder(t, eps)
	})

	t.Run("SendFirst", func(t *testing.T) {
		eps := group(t, 2)
		s := Post(t, eps[0], true, 1, key(1, 0), []byte("hello"))
		buf := make([]byte, 5)
		r := Post(t, eps[1], false, 0, key(1, 0), buf)
		Wait(t, s, r)
		if r.N != 5 || string(buf) != "hello" || r.Err != nil || s.Err != nil {
			t.Fatalf("got %q n=%d err=%v/%v", buf, r.N, r.Err, s.Err)
		}
	})

	t.Run("RecvFirst", func(t *testing.T) {
		eps := group(t, 2)
		buf := make([]byte, 8)
		r := Post(t, eps[1], false, 0, key(1, 0), buf)
		s := Post(t, eps[0], true, 1, key(1, 0), []byte("abc"))
		Wait(t, s, r)
		if r.N != 3 || string(buf[:3]) != "abc" {
			t.Fatalf("got %q n=%d", buf, r.N)
		}
	})

	t.Run("LargeBothOrders", func(t *testing.T) {
		eps := group(t, 2)
		const n = 3<<19 + 7 // more than one 1 MiB chunk of the TCP transport, odd
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i * 7)
		}
		for _, sendFirst := range []bool{true, false} {
			buf := make([]byte, n)
			var s, r *transport.Msg
			if sendFirst {
				s = Post(t, eps[0], true, 1, key(3, 0), data)
				r = Post(t, eps[1], false, 0, key(3, 0), buf)
			} else {
				r = Post(t, eps[1], false, 0, key(3, 0), buf)
				s = Post(t, eps[0], true, 1, key(3, 0), data)
			}
			Wait(t, r, s)
			if !bytes.Equal(buf, data) || r.N != n {
				t.Fatalf("sendFirst=%v: data differs (n=%d)", sendFirst, r.N)
			}
		}
	})

	t.Run("CombiningReceive", func(t *testing.T) {
		eps := group(t, 2)
		if c := transport.CapsOf(eps[1]).Combiner; c == nil || !c.CanCombine() {
			t.Skip("transport does not combine")
		}
		add := func(d, a, b []byte) {
			for i := range d {
				d[i] = a[i]*2 + b[i] // not commutative: checks operand order
			}
		}
		for _, n := range []int{3, 100000} {
			local := bytes.Repeat([]byte{1}, n)
			buf := make([]byte, n)
			r := &transport.Msg{Peer: 0, Key: key(4, 0), Buf: buf, W: newWaiter(eps[1], 0), Combine: add, Local: local, LocalLeft: true}
			r.W.Add(1)
			if err := eps[1].Irecv(r); err != nil {
				t.Fatal(err)
			}
			s := Post(t, eps[0], true, 1, key(4, 0), bytes.Repeat([]byte{5}, n))
			Wait(t, r, s)
			if r.Err != nil || buf[0] != 7 || buf[n-1] != 7 {
				t.Fatalf("n=%d: got %d..%d err=%v, want 7 (local left)", n, buf[0], buf[n-1], r.Err)
			}
		}
	})

	t.Run("ZeroLength", func(t *testing.T) {
		eps := group(t, 2)
		r := Post(t, eps[1], false, 0, key(1, 0), nil)
		s := Post(t, eps[0], true, 1, key(1, 0), nil)
		Wait(t, s, r)
		if r.N != 0 || r.Err != nil {
			t.Fatalf("n=%d err=%v", r.N, r.Err)
		}
	})

	t.Run("OrderSameKey", func(t *testing.T) {
		eps := group(t, 2)
		const n = 50
		var sends, recvs []*transport.Msg
		bufs := make([][]byte, n)
		for i := range n {
			sends = append(sends, Post(t, eps[0], true, 1, key(1, 0), []byte{byte(i)}))
		}
		for i := range n {
			bufs[i] = make([]byte, 1)
			recvs = append(recvs, Post(t, eps[1], false, 0, key(1, 0), bufs[i]))
		}
		Wait(t, append(sends, recvs...)...)
		for i := range n {
			if bufs[i][0] != byte(i) {
				t.Fatalf("message %d holds %d: order not kept", i, bufs[i][0])
			}
		}
	})

	t.Run("OrderSameKeyMixedSizes", func(t *testing.T) {
		// Small and large messages with one collective key (Seq ≠ 0),
		// receives posted before or after: they match in posting order.
		eps := group(t, 2)
		var sizes []int // more than a small ring of slots holds
		for i := range 40 {
			sizes = append(sizes, []int{1 + i, 40000, 3, 300000}[i%4])
		}
		var recvs, sends []*transport.Msg
		bufs := make([][]byte, len(sizes))
		for _, recvFirst := range []bool{true, false} {
			recvs, sends = nil, nil
			postRecvs := func() {
				for i, n := range sizes {
					bufs[i] = make([]byte, n)
					recvs = append(recvs, Post(t, eps[1], false, 0, key(9, 2), bufs[i]))
				}
			}
			if recvFirst {
				postRecvs()
			}
			for i, n := range sizes {
				sends = append(sends, Post(t, eps[0], true, 1, key(9, 2), bytes.Repeat([]byte{byte(i + 1)}, n)))
			}
			if !recvFirst {
				postRecvs()
			}
			Wait(t, append(recvs, sends...)...) // receivers copy long messages
			for i, n := range sizes {
				if recvs[i].Err != nil || recvs[i].N != n || bufs[i][0] != byte(i+1) || bufs[i][n-1] != byte(i+1) {
					t.Fatalf("receives first %v: receive %d (%d bytes): n=%d err=%v first=%d: order not kept", recvFirst, i, n, recvs[i].N, recvs[i].Err, bufs[i][0])
				}
			}
		}
	})

	t.Run("MatchByKeyAndSource", func(t *testing.T) {
		eps := group(t, 3)
		b1, b2, b3 := make([]byte, 1), make([]byte, 1), make([]byte, 1)
		r1 := Post(t, eps[2], false, 0, key(2, 1), b1)
		r2 := Post(t, eps[2], false, 1, key(2, 1), b2)
		r3 := Post(t, eps[2], false, 0, key(1, 1), b3)
		s1 := Post(t, eps[1], true, 2, key(2, 1), []byte{'b'})
		s2 := Post(t, eps[0], true, 2, key(1, 1), []byte{'c'})
		s3 := Post(t, eps[0], true, 2, key(2, 1), []byte{'a'})
		Wait(t, r1, r2, r3, s1, s2, s3)
		if string(b1)+string(b2)+string(b3) != "abc" {
			t.Fatalf("got %q %q %q", b1, b2, b3)
		}
	})

	t.Run("Truncation", func(t *testing.T) {
		eps := group(t, 2)
		r := Post(t, eps[1], false, 0, key(1, 0), make([]byte, 2))
		s := Post(t, eps[0], true, 1, key(1, 0), []byte("long message"))
		Wait(t, s, r)
		if !errors.Is(r.Err, errs.InvalidArgument) {
			t.Fatalf("truncated receive: err=%v", r.Err)
		}
	})

	t.Run("CancelUnmatched", func(t *testing.T) {
		eps := group(t, 2)
		r := Post(t, eps[1], false, 0, key(1, 0), make([]byte, 2))
		if !eps[1].Cancel(r) {
			t.Fatal("unmatched receive not cancelled")
		}
		// A later send must not land in the cancelled receive.
		buf := make([]byte, 2)
		r2 := Post(t, eps[1], false, 0, key(1, 0), buf)
		s := Post(t, eps[0], true, 1, key(1, 0), []byte("ok"))
		Wait(t, s, r2)
		if string(buf) != "ok" || r.N != 0 {
			t.Fatalf("got %q, cancelled n=%d", buf, r.N)
		}
		if eps[1].Cancel(r2) {
			t.Fatal("completed receive reported cancelled")
		}
	})

	t.Run("BadPeer", func(t *testing.T) {
		eps := group(t, 2)
		for _, peer := range []int{-1, 2} {
			m := &transport.Msg{Peer: peer, W: newWaiter(eps[0], 0)}
			if err := eps[0].Isend(m); !errors.Is(err, errs.InvalidArgument) {
				t.Errorf("send to %d: %v", peer, err)
			}
			if err := eps[0].Irecv(m); !errors.Is(err, errs.InvalidArgument) {
				t.Errorf("recv from %d: %v", peer, err)
			}
		}
	})

	t.Run("PeerClosed", func(t *testing.T) {
		eps := group(t, 2)
		r := Post(t, eps[1], false, 0, key(1, 0), make([]byte, 1))
		eps[0].Close()
		Wait(t, r)
		if !errors.Is(r.Err, errs.PeerFailed) && !errors.Is(r.Err, errs.Closed) {
			t.Fatalf("receive from closed peer: %v", r.Err)
		}
	})

	t.Run("AllPairsConcurrent", func(t *testing.T) {
		const n, rounds, size = 6, 20, 257
		eps := group(t, n)
		var wg sync.WaitGroup
		errc := make(chan error, n)
		for r := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tr := eps[r]
				for k := range rounds {
					var ms []*transport.Msg
					bufs := make([][]byte, n)
					w := newWaiter(tr, 100)
					for q := range n {
						if q == r {
							continue
						}
						out := bytes.Repeat([]byte{byte(r*31 + q + k)}, size)
						s := &transport.Msg{Peer: q, Key: key(uint64(k+1), 0), Buf: out, W: w}
						bufs[q] = make([]byte, size)
						rc := &transport.Msg{Peer: q, Key: key(uint64(k+1), 0), Buf: bufs[q], W: w}
						w.Add(2)
						if err := tr.Isend(s); err != nil {
							errc <- err
							return
						}
						if err := tr.Irecv(rc); err != nil {
							errc <- err
							return
						}
						ms = append(ms, s, rc)
					}
					ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
					err := w.Wait(ctx)
					cancel()
					if err != nil {
						errc <- err
						return
					}
					for q := range n {
						if q != r && !bytes.Equal(bufs[q], bytes.Repeat([]byte{byte(q*31 + r + k)}, size)) {
							errc <- fmt.Errorf("rank %d round %d: wrong data from %d", r, k, q)
							return
						}
					}
					for _, m := range ms {
						if m.Err != nil {
							errc <- m.Err
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			t.Fatal(err)
		}
	})
}

// RunResponder checks a transport's transport.Responder on the endpoints
// of one group of at least 2 ranks (all in this process): requests that
// arrive before Serve, after it, to self, crossing requests between two
// servers, and empty replies after Unserve.
func RunResponder(t *testing.T, eps []transport.Transport) {
	t.Helper()
	const svc = 99<<32 | 5
	ask := func(from, to int, tag int64, req []byte) (*transport.Msg, []byte) {
		k := transport.Key{Comm: svc, Tag: tag}
		buf := make([]byte, 64)
		r := Post(t, eps[from], false, to, transport.ReplyKey(k), buf)
		s := &transport.Msg{Peer: to, Key: k, Buf: req, Eager: true, W: newWaiter(eps[from], 0)}
		s.W.Add(1)
		if err := eps[from].Isend(s); err != nil {
			t.Fatalf("request: %v", err)
		}
		Wait(t, s)
		return r, buf
	}
	echo := func(me int) func(int, []byte) []byte {
		return func(src int, req []byte) []byte { return append([]byte{byte(me), byte(src)}, req...) }
	}
	check := func(r *transport.Msg, buf []byte, want ...byte) {
		t.Helper()
		Wait(t, r)
		if r.Err != nil || !bytes.Equal(buf[:r.N], want) {
			t.Fatalf("reply %v (err %v), want %v", buf[:r.N], r.Err, want)
		}
	}
	last := len(eps) - 1
	early, eb := ask(last, 0, 1, []byte{7, 8})
	transport.CapsOf(eps[0]).Responder.Serve(svc, echo(0))
	check(early, eb, 0, byte(last), 7, 8)
	late, lb := ask(1, 0, 2, []byte{9})
	self, sb := ask(0, 0, 3, nil)
	check(late, lb, 0, 1, 9)
	check(self, sb, 0, 0)
	// Two servers asking each other at once: replies are not requests.
	transport.CapsOf(eps[1]).Responder.Serve(svc, echo(1))
	a, ab := ask(0, 1, 4, []byte{1})
	b, bb := ask(1, 0, 4, []byte{2})
	check(a, ab, 1, 0, 1)
	check(b, bb, 0, 1, 2)
	transport.CapsOf(eps[0]).Responder.Unserve(svc)
	gone, gb := ask(1, 0, 5, []byte{3})
	check(gone, gb)
	transport.CapsOf(eps[1]).Responder.Unserve(svc)
}
