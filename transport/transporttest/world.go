package transporttest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// RunWorld runs the conformance checks that need no more than one endpoint:
// every rank of an already running group (at least 2 ranks), each in its
// own process or goroutine, calls it with its own endpoint, and the ranks
// run the checks in step. It is the suite for transports whose ranks cannot
// share a process, such as MPI; Run covers more for those that can.
//
// The ranks synchronise through tr itself, with barriers of zero-length
// messages on keys of their own. Each check uses its own communicator ids,
// so a check that fails on some rank leaves messages nobody matches but does
// not disturb the next check; the barrier between checks keeps the ranks in
// step whatever happened inside. RunWorld does not close tr.
func RunWorld(t *testing.T, tr transport.Transport) {
	if tr.Size() < 2 {
		t.Skipf("RunWorld needs at least 2 ranks, have %d", tr.Size())
	}
	if r := tr.Rank(); r < 0 || r >= tr.Size() {
		t.Fatalf("rank %d outside [0,%d)", r, tr.Size())
	}
	if err := barrier(tr, transport.Key{Comm: worldSync, Seq: 0}); err != nil {
		t.Fatalf("initial barrier: %v", err)
	}
	for i, c := range worldChecks {
		w := &worldCase{tr: tr, comm: worldBase + 2*uint64(i), me: tr.Rank(), size: tr.Size()}
		w.left, w.right = (w.me+w.size-1)%w.size, (w.me+1)%w.size
		t.Run(c.name, func(t *testing.T) { c.fn(t, w) })
		if err := barrier(tr, transport.Key{Comm: worldSync, Seq: uint64(i + 1)}); err != nil {
			t.Fatalf("barrier after %s: %v", c.name, err)
		}
	}
}

// Communicator ids RunWorld uses: worldSync for the barriers between
// checks, and from worldBase on two per check (data, then barriers).
const (
	worldSync = 0x5c0_11_7e57_0000
	worldBase = worldSync + 1
)

// worldCase is one rank's view of one check.
type worldCase struct {
	tr                    transport.Transport
	comm                  uint64
	me, size, left, right int
	syncs                 uint64
	wt                    *transport.Waiter // of the messages posted since the last wait
}

// key returns a key of the check's data communicator.
func (w *worldCase) key(seq uint64, tag int64) transport.Key {
	return transport.Key{Comm: w.comm, Seq: seq, Tag: tag}
}

// post posts a send or a receive. The messages a rank posts until its
// next wait share one waiter, as an executor's round does: on transports
// where the receiver's goroutine moves large messages, a send may complete
// only while its receiver waits.
func (w *worldCase) post(t *testing.T, send bool, peer int, key transport.Key, buf []byte) *transport.Msg {
	t.Helper()
	return w.postMsg(t, send, &transport.Msg{Peer: peer, Key: key, Buf: buf})
}

// postMsg is post for a message the caller has filled in but for W.
func (w *worldCase) postMsg(t *testing.T, send bool, m *transport.Msg) *transport.Msg {
	t.Helper()
	if w.wt == nil {
		w.wt = newWaiter(w.tr, 100)
	}
	m.W = w.wt
	if err := transport.Post(w.tr, m, send); err != nil {
		t.Fatalf("post: %v", err)
	}
	return m
}

// wait waits for everything posted since the last wait; ms are the
// messages the caller looks at, for documentation.
func (w *worldCase) wait(t *testing.T, ms ...*transport.Msg) {
	t.Helper()
	wt := w.wt
	w.wt = nil
	if wt == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := wt.Wait(ctx); err != nil {
		t.Fatalf("wait: %v (operation never completed)", err)
	}
}

// sync is a barrier of all ranks within the check.
func (w *worldCase) sync(t *testing.T) {
	t.Helper()
	w.syncs++
	if err := barrier(w.tr, transport.Key{Comm: w.comm + 1, Seq: w.syncs}); err != nil {
		t.Fatalf("barrier: %v", err)
	}
}

// barrier is a dissemination barrier of zero-length messages: in round i
// each rank sends to rank+2^i and receives from rank-2^i, on key with Tag i.
func barrier(tr transport.Transport, key transport.Key) error {
	P, me := tr.Size(), tr.Rank()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	for i, d := 0, 1; d < P; i, d = i+1, 2*d {
		key.Tag = int64(i)
		w := newWaiter(tr, 100)
		s := &transport.Msg{Peer: (me + d) % P, Key: key, W: w}
		r := &transport.Msg{Peer: (me - d + P) % P, Key: key, W: w}
		w.Add(2)
		if err := tr.Isend(s); err != nil {
			return err
		}
		if err := tr.Irecv(r); err != nil {
			if !tr.Cancel(s) {
				w.Done()
				w.WaitAll()
			}
			return err
		}
		if err := w.Wait(ctx); err != nil {
			return fmt.Errorf("round %d: %w", i, err)
		}
		if err := errors.Join(s.Err, r.Err); err != nil {
			return fmt.Errorf("round %d: %w", i, err)
		}
	}
	return nil
}

// pattern returns n bytes that depend on from, seed and the index.
func pattern(n, from, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + from*13 + seed)
	}
	return b
}

func checkRecv(t *testing.T, what string, r *transport.Msg, want []byte) {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("%s: %v", what, r.Err)
	}
	if r.N != len(want) || !bytes.Equal(r.Buf[:r.N], want) {
		t.Fatalf("%s: received %d bytes, want %d, data equal: %v", what, r.N, len(want), r.N <= len(r.Buf) && bytes.Equal(r.Buf[:min(r.N, len(want))], want[:min(r.N, len(want))]))
	}
}

var worldChecks = []struct {
	name string
	fn   func(*testing.T, *worldCase)
}{
	{"Responder", func(t *testing.T, w *worldCase) {
		rs := transport.CapsOf(w.tr).Responder
		ok := rs != nil
		if !ok {
			t.Skip("the transport has no responder")
		}
		// Each rank asks its right neighbour before serving itself, so
		// that requests arrive before Serve as well as after it. A
		// service withdrawn by an earlier run would answer early requests
		// empty: rank 0 draws this run's and passes it around the ring.
		nonce := make([]byte, 8)
		if w.me == 0 {
			rand.Read(nonce)
			w.post(t, true, w.right, w.key(9, 0), nonce)
			w.post(t, false, w.left, w.key(9, 0), make([]byte, 8))
			w.wait(t)
		} else {
			w.post(t, false, w.left, w.key(9, 0), nonce)
			w.wait(t)
			w.post(t, true, w.right, w.key(9, 0), nonce)
			w.wait(t)
		}
		svc := w.comm<<16 | binary.LittleEndian.Uint64(nonce)&0xffff
		echo := func(src int, req []byte) []byte { return append([]byte{byte(w.me), byte(src)}, req...) }
		ask := func(tag int64) (*transport.Msg, []byte) {
			k := transport.Key{Comm: svc, Tag: tag}
			buf := make([]byte, 16)
			r := w.post(t, false, w.right, transport.ReplyKey(k), buf)
			w.postMsg(t, true, &transport.Msg{Peer: w.right, Key: k, Buf: []byte{byte(w.me), 9}, Eager: true})
			return r, buf
		}
		r, buf := ask(1)
		rs.Serve(svc, echo)
		w.wait(t, r)
		if !bytes.Equal(buf[:r.N], []byte{byte(w.right), byte(w.me), byte(w.me), 9}) || r.Err != nil {
			t.Fatalf("reply %v (err %v)", buf[:r.N], r.Err)
		}
		w.sync(t)
		rs.Unserve(svc)
		w.sync(t)
		r, buf = ask(2)
		w.wait(t, r)
		if r.N != 0 || r.Err != nil {
			t.Fatalf("reply after Unserve: %v (err %v), want empty", buf[:r.N], r.Err)
		}
	}},
	{"SendFirst", func(t *testing.T, w *worldCase) {
		s := w.post(t, true, w.right, w.key(1, 0), []byte(fmt.Sprintf("hello from %d", w.me)))
		w.sync(t)
		r := w.post(t, false, w.left, w.key(1, 0), make([]byte, 32))
		w.wait(t, s, r)
		if s.Err != nil {
			t.Fatalf("send: %v", s.Err)
		}
		checkRecv(t, "receive", r, []byte(fmt.Sprintf("hello from %d", w.left)))
	}},
	{"RecvFirst", func(t *testing.T, w *worldCase) {
		r := w.post(t, false, w.left, w.key(1, 0), make([]byte, 32))
		w.sync(t)
		s := w.post(t, true, w.right, w.key(1, 0), []byte("abc"))
		w.wait(t, s, r)
		checkRecv(t, "receive", r, []byte("abc"))
	}},
	{"LargeBothOrders", func(t *testing.T, w *worldCase) {
		const n = 1 << 20
		for seq, sendFirst := range []bool{true, false} {
			k := w.key(uint64(seq+1), 0)
			buf := make([]byte, n)
			var s, r *transport.Msg
			if sendFirst {
				s = w.post(t, true, w.right, k, pattern(n, w.me, seq))
				w.sync(t)
				r = w.post(t, false, w.left, k, buf)
			} else {
				r = w.post(t, false, w.left, k, buf)
				w.sync(t)
				s = w.post(t, true, w.right, k, pattern(n, w.me, seq))
			}
			w.wait(t, r, s)
			if s.Err != nil {
				t.Fatalf("sendFirst=%v: send: %v", sendFirst, s.Err)
			}
			checkRecv(t, fmt.Sprintf("sendFirst=%v", sendFirst), r, pattern(n, w.left, seq))
		}
	}},
	{"ZeroLength", func(t *testing.T, w *worldCase) {
		for seq, sendFirst := range []bool{true, false} {
			k := w.key(uint64(seq+1), 0)
			var s, r *transport.Msg
			if sendFirst {
				s = w.post(t, true, w.right, k, nil)
				w.sync(t)
				r = w.post(t, false, w.left, k, make([]byte, 4))
			} else {
				r = w.post(t, false, w.left, k, nil)
				w.sync(t)
				s = w.post(t, true, w.right, k, []byte{})
			}
			w.wait(t, s, r)
			if r.N != 0 || r.Err != nil || s.Err != nil {
				t.Fatalf("sendFirst=%v: n=%d err=%v/%v", sendFirst, r.N, r.Err, s.Err)
			}
		}
	}},
	{"OrderSameKey", func(t *testing.T, w *worldCase) {
		// Small and large messages alternate, so that a transport with
		// several protocols keeps the order across them; with
		// point-to-point keys (Seq 0) and with a collective's (Seq 1).
		const n, large = 40, 40000
		size := func(i int) int {
			if i%3 == 1 {
				return large
			}
			return 1 + i
		}
		for phase, sendFirst := range []bool{true, false, true, false} {
			k := w.key(uint64(phase/2), int64(phase))
			var sends, recvs []*transport.Msg
			postSends := func() {
				for i := range n {
					sends = append(sends, w.post(t, true, w.right, k, pattern(size(i), w.me, i)))
				}
			}
			postRecvs := func() {
				for range n {
					recvs = append(recvs, w.post(t, false, w.left, k, make([]byte, large)))
				}
			}
			if sendFirst {
				postSends()
				w.sync(t)
				postRecvs()
			} else {
				postRecvs()
				w.sync(t)
				postSends()
			}
			w.wait(t, append(sends, recvs...)...)
			for i, r := range recvs {
				checkRecv(t, fmt.Sprintf("sendFirst=%v: message %d", sendFirst, i), r, pattern(size(i), w.left, i))
			}
		}
	}},
	{"MatchByKeyAndSource", func(t *testing.T, w *worldCase) {
		if w.size < 3 {
			t.Skip("needs 3 ranks")
		}
		var ms []*transport.Msg
		bufs := [][]byte{make([]byte, 1), make([]byte, 1), make([]byte, 1)}
		if w.me == 2 {
			ms = append(ms,
				w.post(t, false, 0, w.key(2, 1), bufs[0]),
				w.post(t, false, 1, w.key(2, 1), bufs[1]),
				w.post(t, false, 0, w.key(1, 1), bufs[2]))
		}
		w.sync(t)
		switch w.me {
		case 1:
			ms = append(ms, w.post(t, true, 2, w.key(2, 1), []byte{'b'}))
		case 0:
			ms = append(ms,
				w.post(t, true, 2, w.key(1, 1), []byte{'c'}),
				w.post(t, true, 2, w.key(2, 1), []byte{'a'}))
		}
		w.wait(t, ms...)
		if got := string(bytes.Join(bufs, nil)); w.me == 2 && got != "abc" {
			t.Fatalf("got %q, want \"abc\"", got)
		}
	}},
	{"KeyExtremes", func(t *testing.T, w *worldCase) {
		// Keys that differ in one high bit only: a transport must not
		// fold keys into a smaller space.
		keys := []transport.Key{
			{Comm: w.comm}, {Comm: w.comm ^ 1<<63}, {Comm: w.comm ^ 1<<32},
			{Comm: w.comm, Seq: 1 << 63}, {Comm: w.comm, Seq: 1 << 32}, {Comm: w.comm, Seq: math.MaxUint64},
			{Comm: w.comm, Tag: 1 << 62}, {Comm: w.comm, Tag: 1 << 31}, {Comm: w.comm, Tag: math.MaxInt64},
			{Comm: math.MaxUint64, Seq: math.MaxUint64, Tag: math.MaxInt64},
		}
		var recvs, sends []*transport.Msg
		for _, k := range keys {
			recvs = append(recvs, w.post(t, false, w.left, k, make([]byte, 8)))
		}
		w.sync(t)
		for i := len(keys) - 1; i >= 0; i-- {
			sends = append(sends, w.post(t, true, w.right, keys[i], pattern(1+i%8, w.me, i)))
		}
		w.wait(t, append(sends, recvs...)...)
		for i, r := range recvs {
			checkRecv(t, fmt.Sprintf("key %+v", keys[i]), r, pattern(1+i%8, w.left, i))
		}
	}},
	{"Truncation", func(t *testing.T, w *worldCase) {
		for seq, n := range []int{12, 100000} {
			k := w.key(uint64(seq+1), 0)
			const room, guard = 7, 16
			mem := bytes.Repeat([]byte{0xEE}, room+guard)
			r := w.post(t, false, w.left, k, mem[:room])
			w.sync(t)
			s := w.post(t, true, w.right, k, pattern(n, w.me, seq))
			w.wait(t, s, r)
			if !errors.Is(r.Err, errs.InvalidArgument) {
				t.Fatalf("%d bytes into %d: err=%v, want errs.InvalidArgument", n, room, r.Err)
			}
			if !bytes.Equal(mem[:room], pattern(n, w.left, seq)[:room]) {
				t.Fatalf("%d bytes into %d: the first bytes are not kept", n, room)
			}
			if !bytes.Equal(mem[room:], bytes.Repeat([]byte{0xEE}, guard)) {
				t.Fatalf("%d bytes into %d: written past the buffer", n, room)
			}
			// The key still works.
			r = w.post(t, false, w.left, k, make([]byte, n))
			s = w.post(t, true, w.right, k, pattern(n, w.me, seq+7))
			w.wait(t, s, r)
			checkRecv(t, "after truncation", r, pattern(n, w.left, seq+7))
		}
	}},
	{"SignatureMismatch", func(t *testing.T, w *worldCase) {
		for seq, n := range []int{5, 100000} {
			k := w.key(uint64(seq+1), 0)
			r := w.postMsg(t, false, &transport.Msg{Peer: w.left, Key: k, Buf: make([]byte, n), Sig: 1})
			w.sync(t)
			s := w.postMsg(t, true, &transport.Msg{Peer: w.right, Key: k, Buf: pattern(n, w.me, seq), Sig: 2})
			w.wait(t, s, r)
			if !errors.Is(r.Err, errs.Mismatch) {
				t.Fatalf("%d bytes: receive with another signature: err=%v, want errs.Mismatch", n, r.Err)
			}
		}
	}},
	{"CancelUnmatched", func(t *testing.T, w *worldCase) {
		r := Post(t, w.tr, false, w.left, w.key(1, 0), make([]byte, 2))
		if !w.tr.Cancel(r) {
			t.Fatal("unmatched receive not cancelled")
		}
		// A later send must not land in the cancelled receive.
		buf := make([]byte, 2)
		r2 := w.post(t, false, w.left, w.key(1, 0), buf)
		w.sync(t)
		s := w.post(t, true, w.right, w.key(1, 0), []byte("ok"))
		w.wait(t, s, r2)
		if string(buf) != "ok" || r.N != 0 || r.W.Pending() != 1 {
			t.Fatalf("got %q, cancelled receive n=%d pending=%d", buf, r.N, r.W.Pending())
		}
		if w.tr.Cancel(r2) {
			t.Fatal("completed receive reported cancelled")
		}
	}},
	{"BadPeer", func(t *testing.T, w *worldCase) {
		for _, peer := range []int{-1, w.size, w.size + 5} {
			m := &transport.Msg{Peer: peer, Key: w.key(1, 0), Buf: []byte{1}, W: newWaiter(w.tr, 0)}
			if err := w.tr.Isend(m); !errors.Is(err, errs.InvalidArgument) {
				t.Errorf("send to %d: %v", peer, err)
			}
			if err := w.tr.Irecv(m); !errors.Is(err, errs.InvalidArgument) {
				t.Errorf("recv from %d: %v", peer, err)
			}
			if w.tr.Cancel(m) {
				t.Errorf("cancel of a message to %d reported success", peer)
			}
		}
	}},
	{"AllPairsConcurrent", func(t *testing.T, w *worldCase) {
		// Several goroutines of each rank exchange with every other rank
		// at once, small and large messages.
		const goroutines, rounds = 3, 12
		var wg sync.WaitGroup
		errc := make(chan error, goroutines)
		for g := range goroutines {
			wg.Go(func() {
				if err := allPairs(w, g, rounds); err != nil {
					errc <- fmt.Errorf("goroutine %d: %w", g, err)
				}
			})
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			t.Error(err)
		}
	}},
}

func allPairs(w *worldCase, g, rounds int) error {
	for k := range rounds {
		n := 257
		if (k+g)%3 == 2 {
			n = 50000
		}
		wt := newWaiter(w.tr, 100)
		var ms []*transport.Msg
		bufs := make([][]byte, w.size)
		for q := range w.size {
			if q == w.me {
				continue
			}
			key := w.key(uint64(k+1), int64(g))
			bufs[q] = make([]byte, n)
			s := &transport.Msg{Peer: q, Key: key, Buf: pattern(n, w.me*w.size+q, k+g), W: wt}
			r := &transport.Msg{Peer: q, Key: key, Buf: bufs[q], W: wt}
			wt.Add(2)
			if err := w.tr.Isend(s); err != nil {
				return err
			}
			if err := w.tr.Irecv(r); err != nil {
				return err
			}
			ms = append(ms, s, r)
		}
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		err := wt.Wait(ctx)
		cancel()
		if err != nil {
			return fmt.Errorf("round %d: %w", k, err)
		}
		for _, m := range ms {
			if m.Err != nil {
				return fmt.Errorf("round %d: %w", k, m.Err)
			}
		}
		for q := range w.size {
			if q != w.me && !bytes.Equal(bufs[q], pattern(n, q*w.size+w.me, k+g)) {
				return fmt.Errorf("round %d: wrong data from rank %d", k, q)
			}
		}
	}
	return nil
}
