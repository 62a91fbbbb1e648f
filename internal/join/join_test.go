//go:build linux

package join

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/mixed"
	"github.com/scoll/scoll/transport/shm"
	"github.com/scoll/scoll/transport/tcp"
)

// testHooks replace how a segment is made, how a rank joins it and a
// rank's host (nil: the real ones).
type testHooks struct {
	create func(string, int) (*shm.Segment, error)
	join   func(*shm.Segment, int, int, shm.Config) (*shm.Transport, error)
	key    func(int) ([32]byte, error)
}

// joinAll runs joinHost on every rank of a job of n ranks in this process
// (one host), over loopback TCP, and returns each rank's endpoint or error.
func joinAll(t *testing.T, n int, required bool, hooks testHooks) ([]transport.Transport, []error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nets, err := tcp.NewLocalGroup(ctx, n, tcp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	eps := make([]transport.Transport, n)
	errs := make([]error, n)
	secret := []byte("a secret of sixteen bytes or more")
	job := fmt.Sprintf("join-%d", time.Now().UnixNano())
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() {
			eps[r], errs[r] = Host(ctx, nets[r], Config{Secret: secret, Job: job, Required: required, CreateSegment: hooks.create, NewEndpoint: hooks.join, HostKey: hooks.key})
		})
	}
	wg.Wait()
	t.Cleanup(func() {
		for r, e := range eps {
			if e != nil {
				e.Close()
			} else {
				nets[r].Close()
			}
		}
	})
	return eps, errs
}

// TestJoinHostUneven: ranks 0 and 2 on one host, rank 1 alone on another.
// The pair shares a segment, the single rank keeps TCP, and every rank
// reports the same hosts, so that they all choose alike.
func TestJoinHostUneven(t *testing.T) {
	key := func(r int) ([32]byte, error) { return [32]byte{byte(r % 2)}, nil }
	eps, errs := joinAll(t, 3, true, testHooks{key: key})
	for r, ep := range eps {
		mt, ok := ep.(*mixed.Transport)
		if errs[r] != nil || !ok {
			t.Fatalf("rank %d: %T, %v", r, ep, errs[r])
		}
		if got := fmt.Sprint(mt.Nodes()); got != "[0 1 0]" {
			t.Errorf("rank %d: hosts %s, want [0 1 0]", r, got)
		}
		if mt.SharesMemory() != (r != 1) {
			t.Errorf("rank %d: shares memory %v", r, mt.SharesMemory())
		}
	}
}

// TestJoinHostFallback: the ranks of a host share a segment; when the
// segment cannot be made, or one rank cannot join it, they all keep TCP by
// default and all fail with SCOLL_TRANSPORT=shm.
func TestJoinHostFallback(t *testing.T) {
	t.Setenv(HostnameEnv, "one-host")
	broken := errors.New("injected failure")
	for _, tc := range []struct {
		name   string
		create func(string, int) (*shm.Segment, error)
		join   func(*shm.Segment, int, int, shm.Config) (*shm.Transport, error)
		shared bool
	}{
		{"ok", shm.CreateSegment, shm.New, true},
		{"no segment", func(string, int) (*shm.Segment, error) { return nil, broken }, shm.New, false},
		{"one rank cannot join", shm.CreateSegment, func(s *shm.Segment, r, n int, c shm.Config) (*shm.Transport, error) {
			if r == 2 {
				return nil, broken
			}
			return shm.New(s, r, n, c)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, required := range []bool{false, true} {
				eps, errs := joinAll(t, 3, required, testHooks{create: tc.create, join: tc.join})
				for r := range eps {
					mt, isMixed := eps[r].(*mixed.Transport)
					if errs[r] == nil && (!isMixed || len(mt.Nodes()) != 3) {
						t.Errorf("required=%v rank %d: %T reports no hosts", required, r, eps[r])
					}
					isMixed = isMixed && mt.SharesMemory()
					switch {
					case tc.shared && (errs[r] != nil || !isMixed):
						t.Errorf("required=%v rank %d: %T, %v; want the segment", required, r, eps[r], errs[r])
					case !tc.shared && required && errs[r] == nil:
						t.Errorf("required rank %d: %T, no error", r, eps[r])
					case !tc.shared && !required && (errs[r] != nil || isMixed):
						t.Errorf("rank %d: %T, %v; want TCP", r, eps[r], errs[r])
					}
				}
			}
		})
	}
}

// TestJoinHostMachine: ranks pretending to be on two hosts (one machine)
// tell their segments how many ranks share the machine's CPUs, and, since
// some of their peers are on the other host, to sleep on a doorbell socket
// (the network's readers must run meanwhile); ranks of one host need no
// socket.
func TestJoinHostMachine(t *testing.T) {
	for _, tc := range []struct {
		hosts  int
		socket bool
	}{{2, true}, {1, false}} {
		var mu sync.Mutex
		var cfgs []shm.Config
		join := func(seg *shm.Segment, rank, size int, c shm.Config) (*shm.Transport, error) {
			mu.Lock()
			cfgs = append(cfgs, c)
			mu.Unlock()
			return shm.New(seg, rank, size, c)
		}
		key := func(r int) ([32]byte, error) { return [32]byte{byte(r % tc.hosts)}, nil }
		_, errs := joinAll(t, 4, true, testHooks{key: key, join: join})
		for r, err := range errs {
			if err != nil {
				t.Fatalf("%d hosts: rank %d: %v", tc.hosts, r, err)
			}
		}
		if len(cfgs) != 4 {
			t.Fatalf("%d hosts: %d endpoints joined, want 4", tc.hosts, len(cfgs))
		}
		for _, c := range cfgs {
			if c.MachineRanks != 4 || (c.BellSocket != "") != tc.socket {
				t.Errorf("%d hosts: machine ranks %d, bell socket %q", tc.hosts, c.MachineRanks, c.BellSocket)
			}
		}
	}
}
