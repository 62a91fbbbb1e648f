package scoll_test

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"testing"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/matrix"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/transport/shm"
	"github.com/scoll/scoll/transport/tcp"
	"github.com/scoll/scoll/workload"
)

// choices is a slog.Handler that keeps the algorithm of every planned call
// ("scoll: algorithm" records), by collective and rank.
type choices struct {
	mu  sync.Mutex
	got map[string]string // "coll/rank" → algorithm
}

func (h *choices) Enabled(context.Context, slog.Level) bool { return true }
func (h *choices) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *choices) WithGroup(string) slog.Handler            { return h }
func (h *choices) Handle(_ context.Context, r slog.Record) error {
	var coll, alg string
	var rank int64
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "collective":
			coll = a.Value.String()
		case "algorithm":
			alg = a.Value.String()
		case "rank":
			rank = a.Value.Int64()
		}
		return true
	})
	h.mu.Lock()
	h.got[fmt.Sprintf("%s/%d", coll, rank)] = alg
	h.mu.Unlock()
	return nil
}

// TestDefaultChoiceAgrees: the default choice that scoll sim and scoll
// model name for a call (workload.Default, given the capabilities as
// --caps takes them) is the algorithm a real run of the same call chooses,
// on every transport: in-process ranks with a CPU each and more ranks than
// CPUs, TCP and shared memory between processes.
func TestDefaultChoiceAgrees(t *testing.T) {
	type runner func(t *testing.T, h *choices, fn func(ctx context.Context, c *scoll.Comm) error) error
	logged := func(h *choices) scoll.Option { return scoll.WithLogger(slog.New(h)) }
	inproc := func(p int) runner {
		return func(t *testing.T, h *choices, fn func(ctx context.Context, c *scoll.Comm) error) error {
			return scoll.Run(context.Background(), p, fn, logged(h))
		}
	}
	over := func(comms func(t *testing.T, h *choices) []*scoll.Comm) runner {
		var cs []*scoll.Comm
		return func(t *testing.T, h *choices, fn func(ctx context.Context, c *scoll.Comm) error) error {
			if cs == nil {
				cs = comms(t, h)
			}
			return matrix.OnAll(cs, fn)
		}
	}
	many := 2*runtime.GOMAXPROCS(0) + 1
	jobs := []struct {
		name string
		run  runner
	}{
		{"inproc/2", inproc(2)},
		{fmt.Sprintf("inproc/%d", many), inproc(many)},
		{"tcp/3", over(func(t *testing.T, h *choices) []*scoll.Comm {
			eps, err := tcp.NewLocalGroup(context.Background(), 3, tcp.Config{})
			if err != nil {
				t.Fatal(err)
			}
			return matrix.WorldComms(t, eps, logged(h))
		})},
		{"shm/3", over(func(t *testing.T, h *choices) []*scoll.Comm {
			eps, err := shm.NewLocalGroup(3, shm.Config{})
			if err != nil {
				t.Skip(err)
			}
			return matrix.WorldComms(t, eps, logged(h))
		})},
	}
	for _, j := range jobs {
		t.Run(j.name, func(t *testing.T) {
			h := &choices{got: map[string]string{}}
			for _, n := range []int{8, 1024, 65536} {
				for _, coll := range []schedule.Collective{schedule.Allreduce, schedule.Bcast, schedule.Allgather, schedule.Reduce, schedule.Barrier} {
					// A call whose plan is cached logs nothing: the
					// record of the same call before stands.
					var capStr string
					var machine algorithms.Machine
					size := 0
					err := j.run(t, h, func(ctx context.Context, c *scoll.Comm) error {
						if c.Rank() == 0 {
							capStr, machine, size = scoll.CapsForTest(c, true), scoll.MachineForTest(c), c.Size()
						}
						return callDefault(ctx, c, coll, n/8)
					})
					if err != nil {
						t.Fatal(err)
					}
					caps, err := algorithms.ParseCaps(capStr)
					if err != nil {
						t.Fatal(err)
					}
					bytes := n
					if coll == schedule.Barrier {
						bytes = 0
					}
					want, err := workload.Default(workload.Workload{Coll: coll, Size: size, Bytes: bytes, Elem: 8, Machine: machine}, caps)
					if err != nil {
						t.Fatal(err)
					}
					for r := range size {
						if got := h.got[fmt.Sprintf("%s/%d", coll, r)]; got != want.Name {
							t.Errorf("%s of %d B, caps %s: rank %d ran %q, scoll sim and model name %q", coll, n, caps, r, got, want.Name)
						}
					}
				}
			}
		})
	}
}

// callDefault makes one blocking call of coll with count float64s per
// rank and the default choice.
func callDefault(ctx context.Context, c *scoll.Comm, coll schedule.Collective, count int) error {
	send, all := make([]float64, count), make([]float64, count*c.Size())
	switch coll {
	case schedule.Allreduce:
		return scoll.Allreduce(ctx, c, send, make([]float64, count), scoll.Sum)
	case schedule.Bcast:
		return scoll.Bcast(ctx, c, send, 0)
	case schedule.Allgather:
		return scoll.Allgather(ctx, c, send, all)
	case schedule.Reduce:
		return scoll.Reduce(ctx, c, send, make([]float64, count), scoll.Sum, 0)
	}
	return scoll.Barrier(ctx, c)
}
