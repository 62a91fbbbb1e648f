//go:build mpi

package mpi

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/scoll/scoll/transport"
)

var (
	measure      = flag.Bool("mpi.measure", false, "measure ping-pong latency and bandwidth between ranks 0 and 1")
	measureScale = flag.Float64("mpi.scale", 1, "multiply the measurement's iteration counts by this")
)

// TestMeasure compares ping-pong between ranks 0 and 1 over the transport
// (waiters that spin and poll, and waiters that park at once and leave the
// polling to the pump) with blocking MPI_Send/MPI_Recv in a C loop. It
// reports one-way time and bandwidth; it asserts nothing about them.
// Benchmarks do not fit: each rank would pick its own b.N.
//
//	mpirun --allow-run-as-root -np 2 /tmp/mpi.test -test.run TestMeasure -mpi.measure -test.v
func TestMeasure(t *testing.T) {
	tr := needWorld(t)
	if !*measure {
		t.Skip("enable with -mpi.measure")
	}
	for _, c := range []struct{ size, iters int }{
		{8, 10000}, {1 << 10, 10000}, {64 << 10, 1000}, {1 << 20, 100}, {16 << 20, 10},
	} {
		c.iters = max(10, int(float64(c.iters)**measureScale))
		buf := make([]byte, c.size)
		// The best of several runs: the ranks share the machine's CPUs
		// with whatever else runs.
		res := [3]time.Duration{time.Hour, time.Hour, time.Hour}
		for range 5 {
			for i, spin := range []int{tr.SpinHint(), 0} {
				barrier(t, tr)
				pingPongTransport(t, tr, buf, c.iters/10, spin) // warm up
				start := time.Now()
				pingPongTransport(t, tr, buf, c.iters, spin)
				res[i] = min(res[i], time.Since(start))
			}
			barrier(t, tr)
			if err := tr.pingPong(buf, c.iters/10); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if err := tr.pingPong(buf, c.iters); err != nil {
				t.Fatal(err)
			}
			res[2] = min(res[2], time.Since(start))
		}
		barrier(t, tr)
		if tr.Rank() != 0 {
			continue
		}
		line := ""
		for _, d := range res {
			oneWay := d / time.Duration(2*c.iters)
			line += "  " + oneWay.String()
			if c.size >= 64<<10 {
				line += " (" + mbps(c.size, oneWay) + ")"
			}
		}
		t.Logf("%9d B one-way:%s", c.size, line)
	}
	if tr.Rank() == 0 {
		t.Logf("columns: transport with spinning waiters, transport with parking waiters (pump), MPI_Send/MPI_Recv")
		t.Logf("library: %s", tr.Library())
	}
}

func mbps(n int, d time.Duration) string {
	return fmt.Sprintf("%.0f MB/s", float64(n)/d.Seconds()/1e6)
}

// pingPongTransport runs iters round trips of buf between ranks 0 and 1.
func pingPongTransport(t *testing.T, tr *Transport, buf []byte, iters, spin int) {
	t.Helper()
	if tr.Rank() > 1 {
		return
	}
	peer := 1 - tr.Rank()
	key := transport.Key{Comm: 97}
	w := transport.NewWaiter(spin)
	w.SetPoller(tr)
	ctx := context.Background()
	var m transport.Msg
	step := func(send bool) {
		m = transport.Msg{Peer: peer, Key: key, Buf: buf, W: w}
		w.Add(1)
		var err error
		if send {
			err = tr.Isend(&m)
		} else {
			err = tr.Irecv(&m)
		}
		if err == nil {
			err = w.Wait(ctx)
		}
		if err == nil {
			err = m.Err
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for range iters {
		step(tr.Rank() == 0)
		step(tr.Rank() != 0)
	}
}
