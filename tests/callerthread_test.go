package tests

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/matrix"
	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/inproc"
)

// goid returns the calling goroutine's id (from its stack header: tests
// only).
func goid() uint64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	f := bytes.Fields(buf)
	id, _ := strconv.ParseUint(string(f[1]), 10, 64)
	return id
}

// plainEP is a transport with messages only (no exchange, meeting or
// other optional interface) that records which goroutines call it: the
// shape of a transport over an MPI library whose thread level lets only
// the application's calling thread call MPI.
type plainEP struct {
	t      transport.Transport
	mu     sync.Mutex
	owner  uint64 // the goroutine allowed to call, 0 for any
	others []string
}

func (e *plainEP) note(what string) {
	if id := goid(); e.owner != 0 && id != e.owner {
		e.mu.Lock()
		if len(e.others) < 5 {
			buf := make([]byte, 2048)
			e.others = append(e.others, fmt.Sprintf("%s from goroutine %d:\n%s", what, id, buf[:runtime.Stack(buf, false)]))
		}
		e.mu.Unlock()
	}
}

func (e *plainEP) Rank() int                    { return e.t.Rank() }
func (e *plainEP) Size() int                    { return e.t.Size() }
func (e *plainEP) Isend(m *transport.Msg) error { e.note("Isend"); return e.t.Isend(m) }
func (e *plainEP) Irecv(m *transport.Msg) error { e.note("Irecv"); return e.t.Irecv(m) }
func (e *plainEP) Cancel(m *transport.Msg) bool { e.note("Cancel"); return e.t.Cancel(m) }
func (e *plainEP) Close() error                 { return e.t.Close() }

// TestCallerGoroutineOnly: on a transport with messages only, a rank's
// blocking collectives (every algorithm of every collective the message
// schedules run), Split and Dup, and collectives on the communicators they
// make call the transport from the rank's own goroutine only,
// never from a helper goroutine: what a drop-in library in front of an
// MPI initialised with MPI_THREAD_SINGLE needs (all MPI calls on the
// application's calling thread).
func TestCallerGoroutineOnly(t *testing.T) {
	matrix.SkipShort(t, "skipped in -short mode")
	const p = 4
	w := inproc.NewWorld(p)
	eps := make([]*plainEP, p)
	comms := make([]*scoll.Comm, p)
	for r := range eps {
		eps[r] = &plainEP{t: w.Endpoint(r)}
		comms[r] = scoll.NewComm(eps[r])
	}
	defer func() {
		for _, c := range comms {
			c.Close()
		}
	}()
	err := matrix.OnAll(comms, func(ctx context.Context, c *scoll.Comm) error {
		ep := eps[c.Rank()]
		ep.owner = goid()
		for _, coll := range scoll.Collectives() {
			for _, alg := range scoll.Algorithms(coll) {
				if alg.PowerOfTwo && p&(p-1) != 0 {
					continue
				}
				oc := matrix.OpCases[int32]()[0]
				for _, n := range []int{1, 1000} {
					if err := matrix.CheckCase(ctx, c, nil, coll, alg.Name, n, p-1, false, oc); err != nil {
						return fmt.Errorf("%s/%s n=%d: %w", coll, alg.Name, n, err)
					}
				}
			}
		}
		// The communicator constructors, and a collective on what they make.
		sub, err := c.Split(ctx, c.Rank()%2, -c.Rank())
		if err != nil {
			return err
		}
		defer sub.Close()
		dup, err := c.Dup(ctx)
		if err != nil {
			return err
		}
		defer dup.Close()
		for _, d := range []*scoll.Comm{sub, dup} {
			if err := matrix.CheckCase(ctx, d, nil, "allreduce", "ring", 1000, 0, false, matrix.OpCases[int32]()[0]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for r, ep := range eps {
		for _, o := range ep.others {
			t.Errorf("rank %d: transport called off the rank's goroutine: %s", r, o)
		}
	}
}
