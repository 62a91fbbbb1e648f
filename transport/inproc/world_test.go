package inproc_test

import (
	"fmt"
	"testing"

	"github.com/scoll/scoll/transport/inproc"
	"github.com/scoll/scoll/transport/transporttest"
)

// TestWorld runs the per-rank conformance suite with one goroutine per rank
// (which also checks the suite itself, with no MPI: package mpi runs it
// under mpirun).
func TestWorld(t *testing.T) {
	for _, c := range []struct {
		p     int
		lanes bool
	}{{2, false}, {2, true}, {3, false}, {3, true}, {5, false}} {
		t.Run(fmt.Sprintf("P=%d,lanes=%v", c.p, c.lanes), func(t *testing.T) {
			w := inproc.NewWorld(c.p, inproc.Lanes(c.lanes))
			defer w.Close()
			done := make(chan struct{})
			for r := range c.p {
				go func() {
					defer func() { done <- struct{}{} }()
					t.Run(fmt.Sprintf("rank%d", r), func(t *testing.T) { transporttest.RunWorld(t, w.Endpoint(r)) })
				}()
			}
			for range c.p {
				<-done
			}
		})
	}
}
