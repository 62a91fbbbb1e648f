//go:build linux

package shm_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/sys/unix"

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
		// Idle progress goroutines sleep on their doorbell sockets (a
		// name of its own per group, set below).
		"socket-bell": {BellSocket: "-"},
	} {
		t.Run(name, func(t *testing.T) {
			transporttest.Run(t, func(t *testing.T, n int) []transport.Transport {
				if cfg.BellSocket != "" {
					cfg.BellSocket = shm.UniqueBell()
				}
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

// TestSingleCopyOff: with CMAMin negative, nothing goes by single copy,
// while with the default the ranks of a process can read each other by
// the time 5 Poll have passed (probes run in the progress goroutines). The
// endpoints run in a testing/synctest bubble: the 5 Poll are the bubble's
// time, which passes only once the progress goroutines wait on their
// timers, so they have had their chance to probe.
func TestSingleCopyOff(t *testing.T) {
	for _, cma := range []int{-1, 0} {
		synctest.Test(t, func(t *testing.T) {
			eps, err := shm.NewLocalGroup(2, shm.Config{CMAMin: cma})
			if err != nil {
				t.Fatal(err)
			}
			defer eps[0].Close()
			defer eps[1].Close()
			time.Sleep(50 * time.Millisecond)
			want := cma >= 0
			if eps[0].SingleCopy(1) != want || eps[1].SingleCopy(0) != want {
				t.Errorf("CMAMin %d: single copy %v and %v, want %v", cma, eps[0].SingleCopy(1), eps[1].SingleCopy(0), want)
			}
		})
	}
}

// TestSingleCopyFallback: a rank that cannot read its peer's memory (here:
// the peer's published probe value is wrong, as when process_vm_readv is
// refused) gets the peer's large messages through the ring, while the
// other direction goes by single copy; both arrive whole.
func TestSingleCopyFallback(t *testing.T) {
	const rb = 64 << 10
	size := shm.SegmentSize(2, rb)
	seg0, err := shm.CreateSegment("fallback", size)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Dup(seg0.FD())
	if err != nil {
		t.Fatal(err)
	}
	seg1, err := shm.AttachSegment(fd, size)
	if err != nil {
		t.Fatal(err)
	}
	ep1, err := shm.New(seg1, 1, 2, shm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ep1.Close()
	// Rank 1's slot: pid, state, bell, probe address, probe value.
	binary.LittleEndian.PutUint64(seg0.Bytes()[64+24:], 0xbad)
	ep0, err := shm.New(seg0, 0, 2, shm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ep0.Close()
	waitSingleCopyTo(t, ep0, 1) // rank 1 reads rank 0
	time.Sleep(50 * time.Millisecond)
	if ep1.SingleCopy(0) {
		t.Fatal("rank 0 reads rank 1 despite the wrong probe value")
	}
	big := func(seed byte) []byte {
		b := make([]byte, 1<<20)
		for i := range b {
			b[i] = byte(i) ^ seed
		}
		return b
	}
	for _, dir := range []struct {
		from, to *shm.Transport
		seed     byte
	}{{ep0, ep1, 1}, {ep1, ep0, 2}} {
		key := transport.Key{Comm: 1, Seq: uint64(dir.seed)}
		buf := make([]byte, 1<<20)
		r := transporttest.Post(t, dir.to, false, dir.from.Rank(), key, buf)
		s := transporttest.Post(t, dir.from, true, dir.to.Rank(), key, big(dir.seed))
		transporttest.Wait(t, r, s)
		if r.Err != nil || s.Err != nil || !bytes.Equal(buf, big(dir.seed)) {
			t.Fatalf("rank %d to rank %d: %v %v", dir.from.Rank(), dir.to.Rank(), r.Err, s.Err)
		}
	}
}
