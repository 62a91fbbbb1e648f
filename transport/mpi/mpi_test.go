//go:build mpi

package mpi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/transporttest"
)

// world is this process's rank when the test binary runs under mpirun.
var world *Transport

const howToRun = "go test -c -tags mpi -o /tmp/mpi.test ./transport/mpi && mpirun --allow-run-as-root --oversubscribe -np 4 /tmp/mpi.test -test.v"

func TestMain(m *testing.M) {
	if !Launched() {
		os.Exit(m.Run())
	}
	tr, err := Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mpi.Init:", err)
		os.Exit(2)
	}
	world = tr
	code := m.Run()
	// Operations nobody matches: Close fails them.
	left, right := (tr.Rank()+tr.Size()-1)%tr.Size(), (tr.Rank()+1)%tr.Size()
	dangling := []*transport.Msg{
		{Peer: left, Key: transport.Key{Comm: 1 << 40}, Buf: make([]byte, 10), W: transport.NewWaiter(0)},
		{Peer: right, Key: transport.Key{Comm: 1<<40 + 1}, Buf: make([]byte, 1<<20), W: transport.NewWaiter(0)},
	}
	for i, d := range dangling {
		d.W.Add(1)
		post := tr.Irecv
		if i == 1 {
			post = tr.Isend
		}
		if err := post(d); err != nil {
			fmt.Fprintln(os.Stderr, "posting before Close:", err)
			code = 1
		}
	}
	if err := tr.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "Close:", err)
		code = 1
	}
	for _, d := range dangling {
		if d.W.Pending() != 0 || !errors.Is(d.Err, errs.Closed) {
			fmt.Fprintf(os.Stderr, "rank %d: pending operation after Close: pending %d, err %v\n", tr.Rank(), d.W.Pending(), d.Err)
			code = 1
		}
	}
	if err := closedChecks(tr); err != nil {
		fmt.Fprintf(os.Stderr, "rank %d after Close: %v\n", tr.Rank(), err)
		code = 1
	}
	os.Exit(code)
}

// closedChecks checks a closed transport.
func closedChecks(tr *Transport) error {
	w := transport.NewWaiter(0)
	m := &transport.Msg{Peer: 0, Buf: []byte{1}, W: w}
	if err := tr.Isend(m); !errors.Is(err, errs.Closed) {
		return fmt.Errorf("Isend: %v, want errs.Closed", err)
	}
	if err := tr.Irecv(m); !errors.Is(err, errs.Closed) {
		return fmt.Errorf("Irecv: %v, want errs.Closed", err)
	}
	if err := tr.NativeBarrier(); !errors.Is(err, errs.Closed) {
		return fmt.Errorf("NativeBarrier: %v, want errs.Closed", err)
	}
	if err := tr.Close(); err != nil {
		return fmt.Errorf("second Close: %v", err)
	}
	tr.Poll()
	return nil
}

func needWorld(t *testing.T) *Transport {
	t.Helper()
	if world == nil {
		t.Skip("not started by an MPI launcher; run: " + howToRun)
	}
	if world.Size() < 2 {
		t.Skipf("needs 2 ranks, have %d", world.Size())
	}
	return world
}

func TestInfo(t *testing.T) {
	tr := needWorld(t)
	if tr.Rank() == 0 {
		t.Logf("%d ranks, MPI_TAG_UB %d, %s", tr.Size(), tr.tagMod-1, tr.Library())
	}
}

func TestWorld(t *testing.T) {
	transporttest.RunWorld(t, needWorld(t))
}

// TestWorldSmallLimits runs the suite with 64-byte inline payloads, 4 KiB
// chunks and payload tags that repeat every 3 messages, so that large
// messages take several requests and older payloads must be pulled before
// newer ones with the same tag. Every rank changes the limits at the same
// point (after the suite's last barrier).
func TestWorldSmallLimits(t *testing.T) {
	tr := needWorld(t)
	tr.mu.Lock()
	inline, chunk, mod := tr.inlineMax, tr.chunk, tr.tagMod
	tr.inlineMax, tr.chunk, tr.tagMod = 64, 4096, 3
	tr.mu.Unlock()
	defer func() {
		barrier(t, tr)
		tr.mu.Lock()
		tr.inlineMax, tr.chunk, tr.tagMod = inline, chunk, mod
		tr.mu.Unlock()
	}()
	transporttest.RunWorld(t, tr)
}

// barrier synchronises the ranks with MPI_Barrier.
func barrier(t *testing.T, tr *Transport) {
	t.Helper()
	if err := tr.NativeBarrier(); err != nil {
		t.Fatal(err)
	}
}

func post(t *testing.T, tr *Transport, send bool, peer int, key transport.Key, buf []byte) *transport.Msg {
	t.Helper()
	return transporttest.Post(t, tr, send, peer, key, buf)
}

// TestCancelLargeSend cancels a large send nobody has received: the send
// completes, and the receiver never sees the message.
func TestCancelLargeSend(t *testing.T) {
	tr := needWorld(t)
	barrier(t, tr)
	defer barrier(t, tr)
	key := transport.Key{Comm: 99, Seq: 1}
	right, left := (tr.Rank()+1)%tr.Size(), (tr.Rank()+tr.Size()-1)%tr.Size()
	s := post(t, tr, true, right, key, bytes.Repeat([]byte{1}, 1<<20))
	if tr.Cancel(s) {
		t.Fatal("a send reported cancelled")
	}
	// Let the receiver see the header and the cancellation.
	flush(t, tr)
	transporttest.Wait(t, s)
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	r := post(t, tr, false, left, key, make([]byte, 1<<20))
	s = post(t, tr, true, right, key, []byte("after"))
	transporttest.Wait(t, s, r)
	if r.Err != nil || string(r.Buf[:r.N]) != "after" {
		t.Fatalf("received %d bytes (%v), want \"after\"", r.N, r.Err)
	}
}

// flush exchanges a message with both neighbours: once it has arrived,
// everything a neighbour sent before has been seen.
func flush(t *testing.T, tr *Transport) {
	t.Helper()
	key := transport.Key{Comm: 98}
	right, left := (tr.Rank()+1)%tr.Size(), (tr.Rank()+tr.Size()-1)%tr.Size()
	s := post(t, tr, true, right, key, nil)
	r := post(t, tr, false, left, key, nil)
	transporttest.Wait(t, s, r)
}

func TestNative(t *testing.T) {
	tr := needWorld(t)
	P, me := tr.Size(), tr.Rank()
	send := []float64{float64(me), 1, float64(me * me)}
	recv := make([]float64, 3)
	if err := tr.NativeAllreduceSumFloat64(send, recv); err != nil {
		t.Fatal(err)
	}
	sq := 0
	for r := range P {
		sq += r * r
	}
	if want := []float64{float64(P * (P - 1) / 2), float64(P), float64(sq)}; fmt.Sprint(recv) != fmt.Sprint(want) {
		t.Errorf("allreduce: %v, want %v", recv, want)
	}
	if err := tr.NativeAllreduceSumFloat64(send, send); err != nil || send[1] != float64(P) {
		t.Errorf("in-place allreduce: %v, %v", send, err)
	}
	out := make([]byte, 2*P)
	if err := tr.NativeAllgather([]byte{byte(me), byte(me + 100)}, out); err != nil {
		t.Fatal(err)
	}
	for r := range P {
		if out[2*r] != byte(r) || out[2*r+1] != byte(r+100) {
			t.Fatalf("allgather: %v", out)
		}
	}
	buf := make([]byte, 100000)
	if me == P-1 {
		copy(buf, bytes.Repeat([]byte{42}, len(buf)))
	}
	if err := tr.NativeBcast(buf, P-1); err != nil {
		t.Fatal(err)
	}
	if buf[0] != 42 || buf[len(buf)-1] != 42 {
		t.Errorf("bcast: %d..%d", buf[0], buf[len(buf)-1])
	}
	if err := tr.NativeBarrier(); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		tr.NativeAllreduceSumFloat64(make([]float64, 2), make([]float64, 3)),
		tr.NativeAllgather(make([]byte, 2), make([]byte, 3)),
		tr.NativeBcast(nil, P),
	} {
		if !errors.Is(err, errs.InvalidArgument) {
			t.Errorf("bad arguments: %v, want errs.InvalidArgument", err)
		}
	}
}

// TestCombiningReceiveRefused: the transport does not combine.
func TestCombiningReceiveRefused(t *testing.T) {
	tr := needWorld(t)
	m := &transport.Msg{Peer: 0, Buf: make([]byte, 1), Combine: func(d, a, b []byte) {}, W: transport.NewWaiter(0)}
	if err := tr.Irecv(m); !errors.Is(err, errs.Unsupported) {
		t.Fatalf("combining receive: %v, want errs.Unsupported", err)
	}
}

// TestGoSignals checks that the Go runtime still owns SIGSEGV after MPI
// has started: a nil dereference is a recoverable panic, not a crash in
// the MPI library's handler.
func TestGoSignals(t *testing.T) {
	needWorld(t)
	defer func() {
		if recover() == nil {
			t.Fatal("nil dereference did not panic")
		}
	}()
	var p *int
	t.Log(*p)
}

// TestNativeWithTraffic runs native collectives while another goroutine
// of every rank exchanges messages over the transport.
func TestNativeWithTraffic(t *testing.T) {
	tr := needWorld(t)
	barrier(t, tr)
	defer barrier(t, tr)
	P, me := tr.Size(), tr.Rank()
	right, left := (me+1)%P, (me+P-1)%P
	done := make(chan error, 1)
	go func() {
		done <- func() error {
			for k := range 100 {
				n := 100
				if k%4 == 3 {
					n = 100000
				}
				w := transport.NewWaiter(tr.SpinHint())
				w.SetPoller(tr)
				key := transport.Key{Comm: 96, Seq: uint64(k + 1)}
				s := &transport.Msg{Peer: right, Key: key, Buf: bytes.Repeat([]byte{byte(me + k)}, n), W: w}
				r := &transport.Msg{Peer: left, Key: key, Buf: make([]byte, n), W: w}
				w.Add(2)
				if err := errors.Join(tr.Isend(s), tr.Irecv(r)); err != nil {
					return err
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				err := w.Wait(ctx)
				cancel()
				if err = errors.Join(err, s.Err, r.Err); err != nil {
					return err
				}
				if r.Buf[0] != byte(left+k) || r.Buf[n-1] != byte(left+k) {
					return fmt.Errorf("round %d: wrong data", k)
				}
			}
			return nil
		}()
	}()
	in, out := make([]float64, 1000), make([]float64, 1000)
	for i := range 50 {
		in[0] = float64(me + i)
		if err := tr.NativeAllreduceSumFloat64(in, out); err != nil {
			t.Fatal(err)
		}
		if want := float64(P*(P-1)/2 + P*i); out[0] != want {
			t.Fatalf("allreduce %d: %v, want %v", i, out[0], want)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestServeWhileIdle: a rank that serves requests and makes no call of its
// own — no operation in flight, no waiter — still answers them (its pump
// keeps testing for headers while a service is registered). Rank 0 serves
// and sleeps; the others ask it and must get their replies before it wakes.
func TestServeWhileIdle(t *testing.T) {
	tr := needWorld(t)
	const svc = 77<<32 | 3
	if tr.Rank() == 0 {
		answered := make(chan struct{}, tr.Size())
		tr.Serve(svc, func(src int, req []byte) []byte {
			answered <- struct{}{}
			return append([]byte{0}, req...)
		})
		barrier(t, tr)
		// Idle: only the pump can answer. The askers finish within the
		// window or fail the test on their side.
		deadline := time.After(20 * time.Second)
		for range tr.Size() - 1 {
			select {
			case <-answered:
			case <-deadline:
				t.Fatal("requests not answered while this rank made no call")
			}
		}
		barrier(t, tr)
		tr.Unserve(svc)
		return
	}
	barrier(t, tr)
	k := transport.Key{Comm: svc, Tag: int64(tr.Rank())}
	buf := make([]byte, 8)
	r := post(t, tr, false, 0, transport.ReplyKey(k), buf)
	s := &transport.Msg{Peer: 0, Key: k, Buf: []byte{byte(tr.Rank())}, Eager: true, W: transport.NewWaiter(0)}
	s.W.Add(1)
	if err := tr.Isend(s); err != nil {
		t.Fatal(err)
	}
	transporttest.Wait(t, s, r)
	if r.Err != nil || r.N != 2 || buf[1] != byte(tr.Rank()) {
		t.Errorf("reply %v (err %v)", buf[:r.N], r.Err)
	}
	barrier(t, tr)
}
