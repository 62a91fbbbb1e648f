//go:build linux

package shm_test

import (
	"errors"
	"testing"
	"time"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/shm"
	"github.com/scoll/scoll/transport/transporttest"
)

func TestConformance(t *testing.T) {
	for name, cfg := range map[string]shm.Config{
		"default": {},
		// Rings of 1 KiB: every message of the suite's large tests is
		// chunked and fills the rings many times.
		"small-rings": {RingBytes: 1024},
		// Every message of a collective call by single copy.
		"single-copy": {CMAMin: 1},
	} {
		t.Run(name, func(t *testing.T) {
			transporttest.Run(t, func(t *testing.T, n int) []transport.Transport {
				eps, err := shm.NewLocalGroup(n, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if cfg.CMAMin > 0 {
					waitSingleCopy(t, eps)
				}
				out := make([]transport.Transport, n)
				for i, e := range eps {
					out[i] = e
				}
				return out
			})
		})
	}
}

// TestJobRanks places a segment's three ranks at ranks 4, 1 and 3 of a job
// of 5: the endpoints speak the job's ranks, and ranks off the segment are
// refused.
func TestJobRanks(t *testing.T) {
	eps, err := shm.NewLocalGroup(3, shm.Config{Ranks: []int{4, 1, 3}, JobSize: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, e := range eps {
			e.Close()
		}
	}()
	if eps[0].Rank() != 4 || eps[2].Rank() != 3 || eps[1].Size() != 5 || eps[0].Local(0) || !eps[0].Local(1) {
		t.Fatalf("ranks %d %d, size %d", eps[0].Rank(), eps[2].Rank(), eps[1].Size())
	}
	buf := make([]byte, 5)
	r := transporttest.Post(t, eps[2], false, 4, transport.Key{Comm: 1, Seq: 1}, buf)
	s := transporttest.Post(t, eps[0], true, 3, transport.Key{Comm: 1, Seq: 1}, []byte("hello"))
	transporttest.Wait(t, r, s)
	if r.Err != nil || s.Err != nil || string(buf) != "hello" {
		t.Fatalf("%v %v %q", r.Err, s.Err, buf)
	}
	if err := eps[0].Isend(&transport.Msg{Peer: 0, W: transport.NewWaiter(0)}); !errors.Is(err, errs.InvalidArgument) {
		t.Errorf("send off the segment: %v", err)
	}
	for _, cfg := range []shm.Config{{Ranks: []int{0, 0}, JobSize: 3}, {Ranks: []int{0, 5}, JobSize: 3}, {Ranks: []int{0}, JobSize: 3}} {
		if _, err := shm.NewLocalGroup(2, cfg); !errors.Is(err, errs.InvalidArgument) {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
}

// TestCountCPUs parses Linux CPU lists.
func TestCountCPUs(t *testing.T) {
	for list, want := range map[string]int{"0": 1, "0-1": 2, "0-3,6,8-9": 7, "": 0, "x": 0, "3-1": 0, "0-": 0} {
		if got := shm.CountCPUs(list); got != want {
			t.Errorf("%q: %d, want %d", list, got, want)
		}
	}
}

// waitSingleCopy waits until every endpoint of eps sends to every other
// by single copy.
func waitSingleCopy(t *testing.T, eps []*shm.Transport) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, e := range eps {
		for _, p := range eps {
			for p != e && !e.SingleCopy(p.Rank()) {
				if time.Now().After(deadline) {
					t.Fatalf("rank %d does not send to rank %d by single copy", e.Rank(), p.Rank())
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
}

// TestSingleCopyOff: with CMAMin negative, nothing goes by single copy.
func TestSingleCopyOff(t *testing.T) {
	eps, err := shm.NewLocalGroup(2, shm.Config{CMAMin: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer eps[0].Close()
	defer eps[1].Close()
	time.Sleep(50 * time.Millisecond)
	if eps[0].SingleCopy(1) || eps[1].SingleCopy(0) {
		t.Error("single copy despite CMAMin < 0")
	}
}
