//go:build mpi

package mpi

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// exchange runs an exchange of payload for call seq (communicator 55) with
// signature sig and returns its error and a copy of the data.
func exchange(tr *Transport, seq, sig uint64, payload []byte) ([][]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	x := &transport.Exchange{Comm: 55, Seq: seq, Sig: sig, Payload: payload}
	err := tr.Exchange(ctx, x)
	var out [][]byte
	for _, d := range x.Data {
		out = append(out, append([]byte(nil), d...))
	}
	return out, err
}

// TestExchange: every rank gets every rank's payload (of any length up to
// the limit, empty too); a payload over the limit is refused; ranks whose
// signatures differ all fail with errs.Mismatch, and the next exchange
// works.
func TestExchange(t *testing.T) {
	tr := needWorld(t)
	me := tr.Rank()
	payload := func(r, seq int) []byte { return bytes.Repeat([]byte{byte(r + seq)}, (r*7+seq)%(exchLimit+1)) }
	for seq := 1; seq <= 200; seq++ {
		data, err := exchange(tr, uint64(seq), 9, payload(me, seq))
		if err != nil {
			t.Fatalf("exchange %d: %v", seq, err)
		}
		for r := range tr.Size() {
			if !bytes.Equal(data[r], payload(r, seq)) {
				t.Fatalf("exchange %d: rank %d's payload % x, want % x", seq, r, data[r], payload(r, seq))
			}
		}
	}
	if err := tr.Exchange(context.Background(), &transport.Exchange{Comm: 55, Seq: 999, Payload: make([]byte, exchLimit+1)}); !errors.Is(err, errs.InvalidArgument) {
		t.Fatalf("oversized payload: %v", err)
	}
	sig := uint64(9)
	if me == tr.Size()-1 {
		sig = 10
	}
	if _, err := exchange(tr, 201, sig, []byte{1}); !errors.Is(err, errs.Mismatch) {
		t.Fatalf("signatures differ: %v, want a mismatch", err)
	}
	if _, err := exchange(tr, 202, 9, []byte{1}); err != nil {
		t.Fatalf("exchange after a mismatch: %v", err)
	}
	barrier(t, tr)
}

// needPair returns this rank's transport and rank, skipping the test
// unless there are at least 2 ranks.
func needPair(t *testing.T) (*Transport, int) {
	tr := needWorld(t)
	if tr.Size() < 2 {
		t.Skip("needs 2 ranks")
	}
	return tr, tr.Rank()
}

// TestExchangeMixed: when rank 0 runs a call as an exchange and the others
// run it with messages, every rank fails the call with errs.Mismatch
// instead of waiting: rank 0 because a peer's message or ready word
// arrives, the others because rank 0 aborts the call. Twice in a row (the
// second time rank 0 still waits for its first allgather). The next
// exchange then fails on every rank (rank 0's allgather of the first mixed
// call is still posted and pairs with the others'), and the one after
// works.
func TestExchangeMixed(t *testing.T) {
	tr, me := needPair(t)
	const seq = 300
	mixed := func(seq uint64) {
		t.Helper()
		if me == 0 {
			if _, err := exchange(tr, seq, 9, []byte{1}); !errors.Is(err, errs.Mismatch) {
				t.Fatalf("rank 0, exchange of mixed call %d: %v, want a mismatch", seq, err)
			}
			return
		}
		// Rank 1 sends rank 0 a message of the call; the others wait for
		// one from rank 0 (announced, so rank 0 hears of them).
		key := transport.Key{Comm: 55, Seq: seq}
		w := transport.NewWaiter(0)
		w.SetPoller(tr)
		var ms []*transport.Msg
		if me == 1 {
			ms = append(ms, &transport.Msg{Peer: 0, Key: key, Buf: []byte{1}, Sig: 9, W: w})
		}
		r := &transport.Msg{Peer: 0, Key: key, Buf: make([]byte, 1), Sig: 9, Announce: true, W: w}
		ms = append(ms, r)
		for i, m := range ms {
			if err := transport.Post(tr, m, i == 0 && me == 1); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := w.Wait(ctx); err != nil {
			t.Fatalf("rank %d: mixed call %d never ended: %v", me, seq, err)
		}
		if !errors.Is(r.Err, errs.Mismatch) {
			t.Fatalf("rank %d: receive of mixed call %d: %v, want a mismatch", me, seq, r.Err)
		}
	}
	mixed(seq)
	mixed(seq + 1)
	if _, err := exchange(tr, seq+2, 9, []byte{2}); !errors.Is(err, errs.Mismatch) {
		t.Fatalf("rank %d: exchange after the mixed calls: %v, want a mismatch", me, err)
	}
	data, err := exchange(tr, seq+3, 9, []byte{byte(me)})
	if err != nil {
		t.Fatalf("rank %d: second exchange after the mixed calls: %v", me, err)
	}
	for r := range tr.Size() {
		if !bytes.Equal(data[r], []byte{byte(r)}) {
			t.Fatalf("rank %d: second exchange after the mixed calls: rank %d's payload % x", me, r, data[r])
		}
	}
	barrier(t, tr)
}

// TestExchangeLate: a rank whose context ends while the others have not
// joined returns the context's error; the late ranks complete the call
// with its payload, and the next exchange works on every rank.
func TestExchangeLate(t *testing.T) {
	tr, me := needPair(t)
	const seq = 400
	if me == 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		err := tr.Exchange(ctx, &transport.Exchange{Comm: 55, Seq: seq, Sig: 9, Payload: []byte{7}})
		cancel()
		if !errors.Is(err, errs.Canceled) {
			t.Fatalf("rank 0, abandoned exchange: %v, want canceled", err)
		}
	} else {
		time.Sleep(200 * time.Millisecond)
		data, err := exchange(tr, seq, 9, []byte{7})
		if err != nil || !bytes.Equal(data[0], []byte{7}) {
			t.Fatalf("rank %d, late exchange: %v, %v", me, err, data)
		}
	}
	data, err := exchange(tr, seq+1, 9, []byte{byte(me)})
	if err != nil || !bytes.Equal(data[tr.Size()-1], []byte{byte(tr.Size() - 1)}) {
		t.Fatalf("rank %d: exchange after an abandoned one: %v, %v", me, err, data)
	}
	barrier(t, tr)
}

// TestMeasureExchange compares 8-byte exchanges with MPI_Allgather and
// MPI_Allreduce of 8 bytes; it reports, asserts nothing.
//
//	mpirun --allow-run-as-root -np 2 /tmp/mpi.test -test.run TestMeasureExchange -mpi.measure -test.v
func TestMeasureExchange(t *testing.T) {
	tr := needWorld(t)
	if !*measure {
		t.Skip("enable with -mpi.measure")
	}
	iters := max(100, int(100000**measureScale))
	in, out := []float64{1}, make([]float64, 1)
	all := make([]byte, 8*tr.Size())
	x := &transport.Exchange{Comm: 56, Payload: make([]byte, 8)}
	ctx := context.Background()
	res := [3]time.Duration{time.Hour, time.Hour, time.Hour}
	seq := uint64(0)
	for range 5 {
		barrier(t, tr)
		start := time.Now()
		for range iters {
			seq++
			x.Seq = seq
			if err := tr.Exchange(ctx, x); err != nil {
				t.Fatal(err)
			}
		}
		res[0] = min(res[0], time.Since(start))
		barrier(t, tr)
		start = time.Now()
		for range iters {
			if err := tr.NativeAllgather(x.Payload, all); err != nil {
				t.Fatal(err)
			}
		}
		res[1] = min(res[1], time.Since(start))
		barrier(t, tr)
		start = time.Now()
		for range iters {
			if err := tr.NativeAllreduceSumFloat64(in, out); err != nil {
				t.Fatal(err)
			}
		}
		res[2] = min(res[2], time.Since(start))
	}
	if tr.Rank() == 0 {
		t.Logf("8 B per call, best of 5: exchange %v, MPI_Allgather %v, MPI_Allreduce %v",
			res[0]/time.Duration(iters), res[1]/time.Duration(iters), res[2]/time.Duration(iters))
	}
	barrier(t, tr)
}
