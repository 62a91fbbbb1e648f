package comm

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/exec"
	"github.com/scoll/scoll/internal/kernels"
	"github.com/scoll/scoll/internal/plan"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/transport/inproc"
)

// world returns rank 0's communicator of an in-process world of p ranks.
func world(t *testing.T, p int, opts ...inproc.Option) *Comm {
	w := inproc.NewWorld(p, opts...)
	t.Cleanup(w.Close)
	return New(w.Endpoint(0), Config{Spin: -1, Settings: &Settings{}})
}

// prepared prepares, on rank 0 of c, an allreduce of n float64s with
// options o, blocking or not.
func prepared(t *testing.T, c *Comm, n int, blocking bool, o plan.Options) *Call {
	t.Helper()
	buf := make([]float64, n)
	a := plan.Args{Coll: schedule.Allreduce, Send: plan.Buf{Len: n}, Recv: plan.Buf{Len: n}}
	f := kernels.Get(kernels.KindOf[float64](), kernels.Sum)
	op := Op{Kernel: exec.Kernel{ElemSize: 8, Reduce: f, ReduceLeft: f}, ID: uint64(kernels.Sum), Commutative: true}
	var cl Call
	if err := Prepare(&cl, context.Background(), c, &a, kernels.Bytes(buf), kernels.Bytes(buf), 8, &op, &o, blocking); err != nil {
		t.Fatal(err)
	}
	return &cl
}

// TestPaths: the path a call runs on is the planner's, from the
// capabilities of the transport, the communicator and the call's form.
func TestPaths(t *testing.T) {
	cpus := runtime.GOMAXPROCS(0)
	exch := world(t, 2, inproc.Exchanges(true))
	exch3 := world(t, 3, inproc.Exchanges(true))
	many := world(t, cpus+1, inproc.Exchanges(false))
	slot := exch3.ExchangeLimit() / 8 // float64s a slot holds
	for _, tc := range []struct {
		name     string
		c        *Comm
		n        int
		blocking bool
		o        plan.Options
		path     algorithms.Path
		alg      string // "" for any message schedule but the native entries'
	}{
		{"small blocking call: exchange", exch, 1, true, plan.Options{}, algorithms.ExchangePath, algorithms.Exchange},
		{"non-blocking: messages", exch, 1, false, plan.Options{}, algorithms.Messages, ""},
		{"excluded: messages", exch, 1, true, plan.Options{Exclude: []string{algorithms.Exchange}}, algorithms.Messages, ""},
		{"named, non-blocking: its stand-in", exch, 1, false, plan.Options{Alg: algorithms.Exchange}, algorithms.Messages, algorithms.Exchange},
		{"over the byte bound: messages", exch, 512, true, plan.Options{}, algorithms.Messages, ""},
		{"over the byte bound, in the slots: messages", exch3, slot, true, plan.Options{Exclude: []string{algorithms.Meet}}, algorithms.Messages, ""},
		{"named over the byte bound, in the slots: native", exch3, slot, true, plan.Options{Alg: algorithms.Exchange}, algorithms.ExchangePath, algorithms.Exchange},
		{"named, over the slots: its stand-in", exch3, slot + 1, true, plan.Options{Alg: algorithms.Exchange}, algorithms.Messages, algorithms.Exchange},
		{"more ranks than CPUs: meeting", many, 1, true, plan.Options{}, algorithms.MeetPath, algorithms.Meet},
		{"more ranks than CPUs, non-blocking: meeting", many, 1, false, plan.Options{}, algorithms.MeetPath, algorithms.Meet},
		{"chain named, blocking: the chain", exch, 4, true, plan.Options{Alg: algorithms.Chain}, algorithms.ChainPath, algorithms.Chain},
		{"chain named, non-blocking: its stand-in", exch, 4, false, plan.Options{Alg: algorithms.Chain}, algorithms.Messages, algorithms.Chain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := prepared(t, tc.c, tc.n, tc.blocking, tc.o)
			if cl.Path() != tc.path {
				t.Errorf("path %s, want %s", cl.Path(), tc.path)
			}
			switch alg := cl.Algorithm(); {
			case tc.alg != "" && alg != tc.alg:
				t.Errorf("algorithm %s, want %s", alg, tc.alg)
			case tc.alg == "" && (alg == algorithms.Exchange || alg == algorithms.Meet || alg == algorithms.Chain):
				t.Errorf("algorithm %s, want a message schedule", alg)
			}
			if (cl.plan != nil) != (cl.Path() == algorithms.Messages) {
				t.Errorf("plan %v on path %s: a schedule runs on the messages path only", cl.plan != nil, cl.Path())
			}
		})
	}
}

// TestPathSignatures: a call run natively and the same entry's stand-in
// (a blocking call on one rank, a non-blocking one on another) carry
// different signatures, so ranks that take different paths find out.
func TestPathSignatures(t *testing.T) {
	c := world(t, 2, inproc.Exchanges(true))
	o := plan.Options{Alg: algorithms.Exchange}
	native, standIn := prepared(t, c, 1, true, o), prepared(t, c, 1, false, o)
	if native.Path() != algorithms.ExchangePath || standIn.Path() != algorithms.Messages {
		t.Fatalf("paths %s and %s", native.Path(), standIn.Path())
	}
	if native.sig == standIn.sig {
		t.Error("the native exchange and its stand-in have one signature")
	}
}

// TestCaps: the capabilities a call sees.
func TestCaps(t *testing.T) {
	exch := world(t, 2, inproc.Exchanges(true))
	want := algorithms.Caps{Has: algorithms.CapExchange | algorithms.CapMeet | algorithms.CapBlocking, ExchangeBytes: exch.ExchangeLimit()}
	if runtime.GOMAXPROCS(0) < 2 {
		want.Has |= algorithms.CapOversubscribed
	}
	if got := exch.Caps(true); got != want || exch.ExchangeLimit() <= 0 {
		t.Errorf("in-process pair: %s, want %s", got, want)
	}
	if got := exch.Caps(false); got.Has&algorithms.CapBlocking != 0 {
		t.Errorf("a non-blocking call offers %s", got)
	}
	many := world(t, runtime.GOMAXPROCS(0)+1, inproc.Exchanges(false))
	if got := many.Caps(true).String(); got != "meet,oversubscribed,blocking" {
		t.Errorf("more ranks than CPUs: %s", got)
	}
}

// TestInRounds: predicted arrival times become whole rounds, so that
// predictions that differ within a round share a plan.
func TestInRounds(t *testing.T) {
	const d = 10
	got := inRounds([]time.Duration{0, 1, 10, 11, 29}, d)
	want := []time.Duration{0, 10, 10, 20, 30}
	if !slices.Equal(got, want) {
		t.Errorf("inRounds = %v, want %v", got, want)
	}
	if got := inRounds([]time.Duration{5}, 0); got[0] != 0 {
		t.Errorf("no round time: %v", got)
	}
}
