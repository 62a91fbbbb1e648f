package scoll_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/matrix"
	"github.com/scoll/scoll/transport/tcp"
)

// arrivalsFor returns an arrival vector of p ranks: some late, by up to
// late.
func arrivalsFor(rng *rand.Rand, p int, late time.Duration) []time.Duration {
	a := make([]time.Duration, p)
	for r := range a {
		if rng.IntN(3) == 0 {
			a[r] = time.Duration(rng.Int64N(int64(late)))
		}
	}
	return a
}

// TestClairvoyantReduce checks the clairvoyant reduce against the naive
// reduction in process, for every P from 1 to 130 (a random count,
// segment count — sometimes above the count — root and arrival vector
// each), and for every operator case and both element types on a few P.
func TestClairvoyantReduce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	sum := matrix.OpCases[int32]()[0]
	maxP := 130
	if testing.Short() {
		maxP = 40
	}
	for p := 1; p <= maxP; p++ {
		n := rng.IntN(50)
		segs := 1 + rng.IntN(12)
		opts := []scoll.CallOption{scoll.WithSegments(segs), scoll.WithArrivals(arrivalsFor(rng, p, 20*time.Microsecond)),
			scoll.WithRoundTime(time.Microsecond)}
		if p%4 == 0 {
			opts = opts[:1] // predicted (balanced) arrivals, default round time
		}
		root := rng.IntN(p)
		if err := matrix.RunCaseWith(opts, "reduce", "clairvoyant", p, n, root, p%3 == 0, sum); err != nil {
			t.Fatalf("P=%d n=%d N=%d root=%d: %v", p, n, segs, root, err)
		}
	}
	for _, p := range []int{2, 5, 16} {
		for _, n := range []int{0, 1, 7, 1000} {
			opts := []scoll.CallOption{scoll.WithArrivals(arrivalsFor(rng, p, 50*time.Microsecond))}
			for _, oc := range matrix.OpCases[int32]() {
				err := matrix.RunCaseWith(opts, "reduce", "clairvoyant", p, n, p-1, false, oc)
				if oc.Op.Commutative() && err != nil {
					t.Fatalf("int32 %s P=%d n=%d: %v", oc.Name, p, n, err)
				}
				if !oc.Op.Commutative() && !errors.Is(err, scoll.ErrUnsupported) {
					t.Fatalf("int32 %s (not commutative) P=%d: %v, want ErrUnsupported", oc.Name, p, err)
				}
			}
			for _, oc := range matrix.OpCases[float64]()[:2] {
				if err := matrix.RunCaseWith(opts, "reduce", "clairvoyant", p, n, 0, true, oc); err != nil {
					t.Fatalf("float64 %s P=%d n=%d: %v", oc.Name, p, n, err)
				}
			}
		}
	}
}

// TestClairvoyantAllreduce: the clairvoyant reduce then a broadcast.
func TestClairvoyantAllreduce(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	for _, p := range []int{1, 2, 3, 7, 16, 33} {
		for _, n := range []int{0, 1, 5, 100} {
			opts := []scoll.CallOption{scoll.WithArrivals(arrivalsFor(rng, p, 30*time.Microsecond)), scoll.WithSegments(1 + rng.IntN(8))}
			if err := matrix.RunCaseWith(opts, "allreduce", "clairvoyant", p, n, 0, n%2 == 1, matrix.OpCases[int32]()[1]); err != nil {
				t.Fatalf("P=%d n=%d: %v", p, n, err)
			}
		}
	}
}

// TestClairvoyantReduceTCP runs it over loopback TCP, P = 1 … 17 (a job of
// P ranks in one process holds P² connections: 130 would be 16,900).
func TestClairvoyantReduceTCP(t *testing.T) {
	matrix.SkipShort(t, "TCP case skipped in -short mode")
	rng := rand.New(rand.NewPCG(9, 9))
	for _, p := range []int{1, 2, 3, 5, 8, 13, 17} {
		comms := matrix.TCPComms(t, p, tcp.Config{EagerLimit: 256})
		for _, n := range []int{0, 5, 4097} {
			a := arrivalsFor(rng, p, 200*time.Microsecond)
			err := matrix.OnAll(comms, func(ctx context.Context, c *scoll.Comm) error {
				return matrix.CheckCase(ctx, c, []scoll.CallOption{scoll.WithArrivals(a), scoll.WithSegments(6)}, "reduce", "clairvoyant", n, p/2, false, matrix.OpCases[int32]()[0])
			})
			if err != nil {
				t.Fatalf("P=%d n=%d: %v", p, n, err)
			}
		}
	}
}

// TestClairvoyantBadInput: every rank gets the error, none hangs
// (checkBadCase, as the bad-input matrix).
func TestClairvoyantBadInput(t *testing.T) {
	const p = 4
	alg := scoll.WithAlgorithm("clairvoyant")
	cases := []struct {
		name string
		opts func(r int) []scoll.CallOption
		want error
	}{
		{"short arrival vector", func(int) []scoll.CallOption {
			return []scoll.CallOption{scoll.WithArrivals(make([]time.Duration, p-1))}
		}, scoll.ErrInvalidArgument},
		{"negative arrival", func(int) []scoll.CallOption {
			return []scoll.CallOption{scoll.WithArrivals([]time.Duration{0, -time.Millisecond, 0, 0})}
		}, scoll.ErrInvalidArgument},
		{"no segments", func(int) []scoll.CallOption { return []scoll.CallOption{scoll.WithSegments(0)} }, scoll.ErrInvalidArgument},
		{"segments and segment size", func(int) []scoll.CallOption {
			return []scoll.CallOption{scoll.WithSegments(2), scoll.WithSegmentSize(64)}
		}, scoll.ErrInvalidArgument},
		{"zero round time", func(int) []scoll.CallOption { return []scoll.CallOption{scoll.WithRoundTime(0)} }, scoll.ErrInvalidArgument},
		{"arrivals differ between ranks", func(r int) []scoll.CallOption {
			return []scoll.CallOption{scoll.WithArrivals([]time.Duration{0, 0, 0, time.Duration(r) * time.Millisecond})}
		}, scoll.ErrMismatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkBadCase(t, badCase{tc.name, p, all, tc.want, func(ctx context.Context, c *scoll.Comm) error {
				send, recv := make([]int32, 16), make([]int32, 16)
				return scoll.Reduce(ctx, c, send, recv, scoll.Sum, 0, append(tc.opts(c.Rank()), alg)...)
			}})
		})
	}
}

func ExampleWithArrivals() {
	// Rank 3 reaches the reduction 1 ms after the others: the clairvoyant
	// reduce lets ranks 0-2 combine their data meanwhile.
	arrivals := []time.Duration{0, 0, 0, time.Millisecond}
	scoll.Run(context.Background(), 4, func(ctx context.Context, c *scoll.Comm) error {
		if c.Rank() == 3 {
			time.Sleep(time.Millisecond) // its late work
		}
		send := []int32{int32(c.Rank()), 1, 2, 3, 4, 5, 6, 7}
		recv := make([]int32, len(send))
		err := scoll.Reduce(ctx, c, send, recv, scoll.Sum, 0, scoll.WithAlgorithm("clairvoyant"),
			scoll.WithArrivals(arrivals), scoll.WithSegments(4), scoll.WithRoundTime(100*time.Microsecond))
		if err == nil && c.Rank() == 0 {
			fmt.Println(recv)
		}
		return err
	})
	// Output: [6 4 8 12 16 20 24 28]
}

// clairvoyantOps checks every built-in operator that T has, against a
// reduction by hand, with a few late ranks.
func clairvoyantOps[T scoll.Number](t *testing.T, ops map[string]scoll.Op, f map[string]func(a, b T) T) {
	t.Helper()
	for _, p := range []int{3, 7} {
		for name, op := range ops {
			const n = 11
			a := make([]time.Duration, p)
			a[p-1] = 50 * time.Microsecond
			err := scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
				in := func(r, i int) T { return T((r*3 + i*5) % 7) }
				send, recv := make([]T, n), make([]T, n)
				for i := range send {
					send[i] = in(c.Rank(), i)
				}
				err := scoll.Reduce(ctx, c, send, recv, op, 1, scoll.WithAlgorithm("clairvoyant"), scoll.WithArrivals(a), scoll.WithSegments(3))
				if err != nil || c.Rank() != 1 {
					return err
				}
				for i := range recv {
					want := in(0, i)
					for r := 1; r < p; r++ {
						want = f[name](want, in(r, i))
					}
					if recv[i] != want {
						return fmt.Errorf("%s: element %d = %v, want %v", name, i, recv[i], want)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatalf("%T P=%d: %v", *new(T), p, err)
			}
		}
	}
}

// TestClairvoyantTypesOps: every element type with every built-in operator
// defined on it.
func TestClairvoyantTypesOps(t *testing.T) {
	arith := map[string]scoll.Op{"sum": scoll.Sum, "prod": scoll.Prod, "min": scoll.Min, "max": scoll.Max}
	bitwise := map[string]scoll.Op{"sum": scoll.Sum, "prod": scoll.Prod, "min": scoll.Min, "max": scoll.Max,
		"band": scoll.Band, "bor": scoll.Bor, "bxor": scoll.Bxor, "land": scoll.Land, "lor": scoll.Lor}
	b2i := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	intOps := func() map[string]func(a, b int64) int64 {
		return map[string]func(a, b int64) int64{
			"sum": func(a, b int64) int64 { return a + b }, "prod": func(a, b int64) int64 { return a * b },
			"min": func(a, b int64) int64 { return min(a, b) }, "max": func(a, b int64) int64 { return max(a, b) },
			"band": func(a, b int64) int64 { return a & b }, "bor": func(a, b int64) int64 { return a | b },
			"bxor": func(a, b int64) int64 { return a ^ b },
			"land": func(a, b int64) int64 { return int64(b2i(a != 0 && b != 0)) },
			"lor":  func(a, b int64) int64 { return int64(b2i(a != 0 || b != 0)) },
		}
	}
	clairvoyantOps(t, bitwise, intFuncs[int8](intOps()))
	clairvoyantOps(t, bitwise, intFuncs[uint16](intOps()))
	clairvoyantOps(t, bitwise, intFuncs[int32](intOps()))
	clairvoyantOps(t, bitwise, intFuncs[uint64](intOps()))
	floats := map[string]func(a, b float32) float32{"sum": func(a, b float32) float32 { return a + b },
		"prod": func(a, b float32) float32 { return a * b }, "min": func(a, b float32) float32 { return min(a, b) },
		"max": func(a, b float32) float32 { return max(a, b) }}
	clairvoyantOps(t, arith, floats)
}

// intFuncs converts int64 reference operators to T, wrapping as T does.
func intFuncs[T scoll.Number](f map[string]func(a, b int64) int64) map[string]func(a, b T) T {
	out := map[string]func(a, b T) T{}
	for name, g := range f {
		out[name] = func(a, b T) T { return T(g(int64(a), int64(b))) }
	}
	return out
}

// TestClairvoyantRoundModelAgreed gives every rank its own round model (as
// processes on different hosts measure different γ or read different
// parameters files): the segment count and the round time then differ
// between ranks unless they agree on rank 0's model, which they must for
// the schedules to match. The sum must come out right, without and with
// arrival times, and on a derived communicator too.
func TestClairvoyantRoundModelAgreed(t *testing.T) {
	const p, n = 5, 65537
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	arrivals := []time.Duration{0, 40 * time.Microsecond, 0, 90 * time.Microsecond, 10 * time.Microsecond}
	err := scoll.Run(ctx, p, func(ctx context.Context, c *scoll.Comm) error {
		d, err := c.Dup(ctx)
		if err != nil {
			return err
		}
		defer d.Close()
		for _, cm := range []*scoll.Comm{c, d} {
			scoll.SetModelHookForTest(cm, func(r int) (algorithms.Machine, *algorithms.LogP) {
				return algorithms.Machine{Alpha: 1e-6 * float64(r+1), Beta: 1e-10, Gamma: 1e-10 * float64(3*r+1)}, nil
			})
			for _, opts := range [][]scoll.CallOption{nil, {scoll.WithArrivals(arrivals)}} {
				send := make([]int64, n)
				for i := range send {
					send[i] = int64(i%97 + c.Rank())
				}
				recv := make([]int64, n)
				opts = append(opts, scoll.WithAlgorithm("clairvoyant"))
				if err := scoll.Reduce(ctx, cm, send, recv, scoll.Sum, 0, opts...); err != nil {
					return err
				}
				if cm.Rank() != 0 {
					continue
				}
				for i, v := range recv {
					if want := int64(p*(i%97) + p*(p-1)/2); v != want {
						return fmt.Errorf("element %d = %d, want %d", i, v, want)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The same when the environment names the clairvoyant reduce
// (SCOLL_ALGORITHM_REDUCE, as MPI programs under the drop-in library name
// it): the choice is the override's, and the ranks must still agree on
// the model before they plan.
func TestClairvoyantEnvModelAgreed(t *testing.T) {
	t.Setenv(scoll.EnvAlgorithmPrefix+"REDUCE", "clairvoyant")
	const p, n = 4, 40000
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := scoll.Run(ctx, p, func(ctx context.Context, c *scoll.Comm) error {
		scoll.SetModelHookForTest(c, func(r int) (algorithms.Machine, *algorithms.LogP) {
			return algorithms.Machine{Alpha: 1e-6 * float64(r+1), Beta: 1e-10, Gamma: 1e-10 * float64(3*r+1)}, nil
		})
		send, recv := make([]int64, n), make([]int64, n)
		for i := range send {
			send[i] = int64(i%89 + c.Rank())
		}
		var alg string
		if err := scoll.Reduce(ctx, c, send, recv, scoll.Sum, 0, scoll.WithChosen(&alg)); err != nil {
			return err
		}
		if alg != "clairvoyant" {
			return fmt.Errorf("rank %d ran %q", c.Rank(), alg)
		}
		for i, v := range recv {
			if want := int64(p*(i%89) + p*(p-1)/2); c.Rank() == 0 && v != want {
				return fmt.Errorf("element %d = %d, want %d", i, v, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
