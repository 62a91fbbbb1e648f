//go:build linux

package scoll_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/matrix"
	"github.com/scoll/scoll/transport/mixed"
	"github.com/scoll/scoll/transport/shm"
	"github.com/scoll/scoll/transport/tcp"
)

// nodeComms returns the world communicators of a job of 4 ranks in this
// process that pretends to run on 2 hosts: ranks 0, 2 on one and 1, 3 on
// the other (interleaved), each host with its own segment, TCP between
// all, and the mixed endpoints told the hosts, as Init does.
func nodeComms(t *testing.T) []*scoll.Comm {
	t.Helper()
	nets, err := tcp.NewLocalGroup(context.Background(), 4, tcp.Config{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	nodes := []int{0, 1, 0, 1}
	eps := make([]*mixed.Transport, 4)
	for _, ranks := range [][]int{{0, 2}, {1, 3}} {
		hosts, err := shm.NewLocalGroup(2, shm.Config{Ranks: ranks, JobSize: 4})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range ranks {
			eps[r] = mixed.New(nets[r], hosts[i])
			eps[r].SetNodes(nodes)
		}
	}
	return matrix.WorldComms(t, eps)
}

// TestNodesChooseHier: with the hosts known, the default choice of an
// allreduce is the node-aware hier, on the world and on a communicator
// split from it, and its results are right; WithInner names the leaders'
// algorithm, and an unknown one fails on every rank.
func TestNodesChooseHier(t *testing.T) {
	comms := nodeComms(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(comms))
	for r, c := range comms {
		wg.Go(func() {
			errs[r] = func() error {
				send := []float64{float64(r), 1, 2, 3, 4, 5, 6, 7, 8, 9}
				recv := make([]float64, len(send))
				p, err := scoll.AllreduceInit(ctx, c, send, recv, scoll.Sum)
				if err != nil {
					return err
				}
				if p.Algorithm() != "hier" {
					t.Errorf("rank %d: default allreduce %q, want hier", r, p.Algorithm())
				}
				for _, inner := range []string{"", "ring", "recursive-doubling"} {
					if err := scoll.Allreduce(ctx, c, send, recv, scoll.Sum, scoll.WithInner(inner)); err != nil {
						return err
					}
					if recv[0] != 6 || recv[9] != 36 {
						t.Errorf("rank %d, inner %q: %v", r, inner, recv)
					}
				}
				if err := scoll.Allreduce(ctx, c, send, recv, scoll.Sum, scoll.WithInner("no-such")); !errors.Is(err, scoll.ErrInvalidArgument) {
					t.Errorf("rank %d: unknown inner algorithm: %v", r, err)
				}
				// Ranks 0..2 in a communicator: hosts {0, 2} and {1}.
				color := 0
				if r == 3 {
					color = -1
				}
				sub, err := c.Split(ctx, color, r)
				if err != nil || sub == nil {
					return err
				}
				defer sub.Close()
				q, err := scoll.AllreduceInit(ctx, sub, send, recv, scoll.Sum)
				if err != nil {
					return err
				}
				if q.Algorithm() != "hier" {
					t.Errorf("rank %d: sub-communicator's allreduce %q, want hier", r, q.Algorithm())
				}
				return nil
			}()
		})
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}
