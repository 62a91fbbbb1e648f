//go:build linux

package shm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/shm"
)

// exchangePair returns two endpoints that offer exchanges, or skips.
func exchangePair(t *testing.T) []*shm.Transport { return exchangeGroup(t, 2) }

// exchangeGroup returns n endpoints of one segment that offer exchanges,
// closed when the test ends, or skips.
func exchangeGroup(t *testing.T, n int) []*shm.Transport {
	t.Helper()
	eps, err := shm.NewLocalGroup(n, shm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, e := range eps {
			e.Close()
		}
	})
	if eps[0].ExchangeLimit() < 0 {
		t.Skip("exchanges are off: fewer cores than ranks")
	}
	return eps
}

// TestExchange runs many exchanges of every payload size between two
// endpoints: each sees both payloads of the same exchange.
func TestExchange(t *testing.T) {
	eps := exchangePair(t)
	limit := eps[0].ExchangeLimit()
	payload := func(r, i int) []byte {
		p := make([]byte, i%(limit+1))
		for j := range p {
			p[j] = byte(r*31 + i + j)
		}
		return p
	}
	const n = 3000
	var wg sync.WaitGroup
	for r, ep := range eps {
		wg.Go(func() {
			x := &transport.Exchange{Comm: 1, Spin: 1000}
			for i := range n {
				x.Seq, x.Sig, x.Payload = uint64(i+1), uint64(i*7), payload(r, i)
				if err := ep.Exchange(context.Background(), x); err != nil {
					t.Errorf("rank %d, exchange %d: %v", r, i, err)
					return
				}
				for q := range 2 {
					if !bytes.Equal(x.Data[q], payload(q, i)) {
						t.Errorf("rank %d, exchange %d: rank %d's payload %v", r, i, q, x.Data[q][:min(8, len(x.Data[q]))])
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// TestExchangeErrors: a signature mismatch fails both ranks; an exchange
// whose peer stays away fails with its context and the next one works;
// a payload over the limit and a second communicator are refused; a
// closed peer fails the exchange with errs.PeerFailed.
//
// It runs in real time: a waiting exchange sleeps on its doorbell, a futex
// in the kernel's time, which would hold a testing/synctest bubble's time
// still; the context of the peer that stays away is short (30 ms).
func TestExchangeErrors(t *testing.T) {
	eps := exchangePair(t)
	both := func(sig func(r int) uint64, seq uint64) [2]error {
		var out [2]error
		var wg sync.WaitGroup
		for r, ep := range eps {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				out[r] = ep.Exchange(ctx, &transport.Exchange{Comm: 1, Seq: seq, Sig: sig(r), Spin: 100})
			})
		}
		wg.Wait()
		return out
	}
	if errs2 := both(func(r int) uint64 { return uint64(r) }, 1); !errors.Is(errs2[0], errs.Mismatch) || !errors.Is(errs2[1], errs.Mismatch) {
		t.Errorf("mismatched signatures: %v", errs2)
	}
	// Rank 1 does not come to exchange 2 in time.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := eps[0].Exchange(ctx, &transport.Exchange{Comm: 1, Seq: 2, Spin: 100}); !errors.Is(err, errs.Canceled) {
		t.Errorf("exchange without the peer: %v", err)
	}
	// Rank 1 comes late: its exchange 2 completes with rank 0's
	// publication; then both go on.
	if err := eps[1].Exchange(context.Background(), &transport.Exchange{Comm: 1, Seq: 2, Spin: 100}); err != nil {
		t.Errorf("late exchange: %v", err)
	}
	if errs2 := both(func(int) uint64 { return 5 }, 3); errs2[0] != nil || errs2[1] != nil {
		t.Errorf("exchange after a failed one: %v", errs2)
	}
	big := make([]byte, eps[0].ExchangeLimit()+1)
	if err := eps[0].Exchange(context.Background(), &transport.Exchange{Comm: 1, Seq: 4, Payload: big}); !errors.Is(err, errs.InvalidArgument) {
		t.Errorf("payload over the limit: %v", err)
	}
	if err := eps[0].Exchange(context.Background(), &transport.Exchange{Comm: 2, Seq: 4}); !errors.Is(err, errs.Unsupported) {
		t.Errorf("another communicator: %v", err)
	}
	eps[1].Close()
	done := make(chan error, 1)
	go func() {
		done <- eps[0].Exchange(context.Background(), &transport.Exchange{Comm: 1, Seq: 4, Spin: 100})
	}()
	select {
	case err := <-done:
		if !errors.Is(err, errs.PeerFailed) {
			t.Errorf("exchange with a closed peer: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("exchange with a closed peer hangs")
	}
}

// BenchmarkExchangeCall measures an 8-byte exchange between two endpoints.
func BenchmarkExchangeCall(b *testing.B) {
	eps, err := shm.NewLocalGroup(2, shm.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer eps[0].Close()
	defer eps[1].Close()
	if eps[0].ExchangeLimit() < 0 {
		b.Skip("exchanges are off")
	}
	var wg sync.WaitGroup
	for r, ep := range eps {
		wg.Go(func() {
			x := &transport.Exchange{Comm: 1, Spin: 1 << 20, Payload: []byte(fmt.Sprint(r))}
			for i := range b.N {
				x.Seq = uint64(i + 1)
				if err := ep.Exchange(context.Background(), x); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestExchangeFlows runs a random mix of exchanges of every flow between
// three endpoints (the same mix on every rank): a bcast's root and a
// reduce's leaves run ahead of their peers, and still every rank reads the
// payloads it needs, whole and of the same exchange, and none is
// overwritten while a peer may read it.
func TestExchangeFlows(t *testing.T) {
	eps := exchangeGroup(t, 3)
	const n = 3000
	flows := make([]transport.Flow, n)
	roots := make([]int, n)
	for i := range flows {
		flows[i] = transport.Flow((i * 7 / 3) % 3)
		roots[i] = (i * 5) % 3
	}
	payload := func(r, i int) []byte {
		p := make([]byte, 1+(i*13+r)%200)
		for j := range p {
			p[j] = byte(r*31 + i + j)
		}
		return p
	}
	var wg sync.WaitGroup
	for r, ep := range eps {
		wg.Go(func() {
			x := &transport.Exchange{Comm: 1, Spin: 100}
			for i := range n {
				x.Seq, x.Sig, x.Payload, x.Flow, x.Root = uint64(i+1), uint64(i*7), payload(r, i), flows[i], roots[i]
				if err := ep.Exchange(context.Background(), x); err != nil {
					t.Errorf("rank %d, exchange %d: %v", r, i, err)
					return
				}
				for q := range 3 {
					needed := q == r || flows[i] == transport.FlowAll ||
						flows[i] == transport.FlowFromRoot && q == roots[i] ||
						flows[i] == transport.FlowToRoot && r == roots[i]
					if needed && !bytes.Equal(x.Data[q], payload(q, i)) {
						t.Errorf("rank %d, exchange %d (flow %d, root %d): rank %d's payload %v", r, i, flows[i], roots[i], q, x.Data[q][:min(8, len(x.Data[q]))])
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// TestExchangeFlowMismatch: a bcast exchange (FlowFromRoot) whose leaf
// made another call fails at the leaf; the root, which waits for no one,
// completes it and learns of the mismatch no later than its next call:
// the next exchange, or Settle (its next call on another path, or Close),
// fails with errs.Mismatch naming the earlier call, once.
func TestExchangeFlowMismatch(t *testing.T) {
	for _, next := range []string{"exchange", "settle"} {
		t.Run(next, func(t *testing.T) {
			eps := exchangePair(t)
			var wg sync.WaitGroup
			errs2 := make([][2]error, 2)
			for r, ep := range eps {
				wg.Go(func() {
					x := &transport.Exchange{Comm: 1, Seq: 1, Sig: uint64(10 + r), Spin: 100, Flow: transport.FlowFromRoot, Root: 0, Payload: []byte{1}}
					errs2[r][0] = ep.Exchange(context.Background(), x)
					if r == 1 {
						return // the leaf stops after its failed call
					}
					if next == "exchange" {
						x = &transport.Exchange{Comm: 1, Seq: 2, Sig: 20, Spin: 100, Flow: transport.FlowFromRoot, Root: 0, Payload: []byte{2}}
						errs2[r][1] = ep.Exchange(context.Background(), x)
					} else {
						errs2[r][1] = ep.Settle(context.Background(), 1, ^uint64(0))
					}
				})
			}
			wg.Wait()
			if !errors.Is(errs2[1][0], errs.Mismatch) {
				t.Errorf("leaf: %v, want a mismatch", errs2[1][0])
			}
			if errs2[0][0] != nil {
				t.Errorf("root's mismatched call: %v, want it complete", errs2[0][0])
			}
			if err := errs2[0][1]; !errors.Is(err, errs.Mismatch) || !strings.Contains(err.Error(), "earlier collective (#1)") {
				t.Errorf("root's %s after the mismatch: %v, want a mismatch naming call 1", next, err)
			}
			if next == "settle" {
				if err := eps[0].Settle(context.Background(), 1, ^uint64(0)); err != nil {
					t.Errorf("a second settle: %v, want nil (reported once)", err)
				}
			}
		})
	}
}
