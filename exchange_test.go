package scoll_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/internal/matrix"
)

// Exchanges run small blocking allreduce, reduce, bcast, allgather and barrier
// calls with the default algorithm when every rank has a CPU. The tests force
// them on (WithExchangesForTest) so that they also run where ranks outnumber
// the CPUs: there every wait parks, which tests the wake-ups.

// exchangeSizes are the rank counts the exchange tests use: 1 and 2, the
// default's limit (GOMAXPROCS), and sizes above it.
func exchangeSizes() []int {
	out := []int{1, 2}
	if c := runtime.GOMAXPROCS(0); c > 2 {
		out = append(out, c)
	}
	return append(out, 3, 5, 8)
}

var forceExchanges = scoll.WithExchangesForTest(true)

// exchangeMax returns, for p ranks with exchanges on, the largest input
// per rank in bytes of exchanges of coll.
func exchangeMax(t *testing.T, p int, coll string) int {
	t.Helper()
	n := -1
	if err := scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
		if c.Rank() == 0 {
			n = scoll.ExchangeMaxForTest(c, coll)
		}
		return nil
	}, forceExchanges); err != nil {
		t.Fatal(err)
	}
	if n < 8 {
		t.Fatalf("P=%d: %s exchanges up to %d bytes", p, coll, n)
	}
	return n
}

// TestExchangeDefault checks when exchanges are on without the test option.
func TestExchangeDefault(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	for _, tc := range []struct {
		p    int
		opts []scoll.Option
		on   bool
	}{
		{1, nil, true},
		{procs, nil, true},
		{procs + 1, nil, false},
		{procs, []scoll.Option{scoll.WithExchangesForTest(false)}, false},
		{procs + 1, []scoll.Option{forceExchanges}, true},
	} {
		limits := make([]int, tc.p)
		if err := scoll.Run(context.Background(), tc.p, func(ctx context.Context, c *scoll.Comm) error {
			limits[c.Rank()] = scoll.ExchangeLimitForTest(c)
			return nil
		}, tc.opts...); err != nil {
			t.Fatal(err)
		}
		for r, l := range limits {
			if (l >= 0) != tc.on || l != limits[0] {
				t.Errorf("P=%d opts=%d: rank %d has exchange limit %d (want on=%v, same on every rank)", tc.p, len(tc.opts), r, l, tc.on)
			}
		}
	}
}

// TestExchangeResults checks every collective of the exchange path against
// the naive reference, at counts up to the limit and just above it (a
// message schedule).
func TestExchangeResults(t *testing.T) {
	for _, p := range exchangeSizes() {
		t.Run(fmt.Sprintf("P=%d", p), func(t *testing.T) {
			t.Parallel()
			maxBytes := map[string]int{}
			for _, coll := range []string{"allreduce", "reduce", "bcast", "allgather"} {
				maxBytes[coll] = exchangeMax(t, p, coll)
			}
			exchangeResults[int32](t, p, maxBytes)
			exchangeResults[float64](t, p, maxBytes)
		})
	}
}

// exchangeResults checks exchanges of T on p ranks, at counts up to the
// largest that runs as an exchange (maxBytes[coll]) and one more.
func exchangeResults[T matrix.Num](t *testing.T, p int, maxBytes map[string]int) {
	es := int(unsafe.Sizeof(T(0)))
	counts := func(coll string) []int {
		m := maxBytes[coll] / es
		return []int{0, 1, 3, m, m + 1}
	}
	roots := []int{0, p - 1}
	if p > 2 {
		roots = append(roots, p/2)
	}
	for _, inPlace := range []bool{false, true} {
		for _, oc := range matrix.OpCases[T]() {
			for _, n := range counts("allreduce") {
				if err := matrix.RunCase("allreduce", "", p, n, 0, inPlace, oc, forceExchanges); err != nil {
					t.Fatalf("allreduce %T n=%d inplace=%v op=%s: %v", T(0), n, inPlace, oc.Name, err)
				}
			}
			for _, n := range counts("reduce") {
				for _, root := range roots {
					if err := matrix.RunCase("reduce", "", p, n, root, inPlace, oc, forceExchanges); err != nil {
						t.Fatalf("reduce %T n=%d root=%d inplace=%v op=%s: %v", T(0), n, root, inPlace, oc.Name, err)
					}
				}
			}
		}
		for _, n := range counts("allgather") {
			if err := matrix.RunCase("allgather", "", p, n, 0, inPlace, matrix.OpCase[T]{}, forceExchanges); err != nil {
				t.Fatalf("allgather %T n=%d inplace=%v: %v", T(0), n, inPlace, err)
			}
		}
	}
	for _, n := range counts("bcast") {
		for _, root := range roots {
			if err := matrix.RunCase("bcast", "", p, n, root, false, matrix.OpCase[T]{}, forceExchanges); err != nil {
				t.Fatalf("bcast %T n=%d root=%d: %v", T(0), n, root, err)
			}
		}
	}
	if err := matrix.RunCase("barrier", "", p, 0, 0, false, matrix.OpCase[T]{}, forceExchanges); err != nil {
		t.Fatalf("barrier: %v", err)
	}
}

// TestExchangeInterleaved runs many exchanges back to back, mixed with
// message schedules and non-blocking calls, with random delays, and checks
// every result: a rank that reused its slot too early would hand a slow
// peer the next call's input.
func TestExchangeInterleaved(t *testing.T) {
	bcastAlg := scoll.Algorithms("bcast")[0].Name
	// last keeps the right operand: a non-commutative operator whose
	// result shows the fold order.
	last := scoll.UserOp(func(inout, in []int64) {}, false)
	iters := 400
	if testing.Short() {
		iters = 100
	}
	for _, p := range []int{1, 2, 3, 5} {
		t.Run(fmt.Sprintf("P=%d", p), func(t *testing.T) {
			t.Parallel()
			err := scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
				r := c.Rank()
				rng := rand.New(rand.NewPCG(uint64(p), uint64(r)))
				pause := func() {
					switch rng.IntN(8) {
					case 0:
						runtime.Gosched()
					case 1:
						time.Sleep(time.Duration(rng.IntN(30)) * time.Microsecond)
					}
				}
				sumRanks := int64(p * (p - 1) / 2)
				for i := range iters {
					k := int64(i)
					// Allreduce (exchange).
					out := make([]int64, 3)
					if err := scoll.Allreduce(ctx, c, []int64{k, int64(r), k * int64(r)}, out, scoll.Sum); err != nil {
						return fmt.Errorf("call %d allreduce: %w", i, err)
					}
					if want := []int64{k * int64(p), sumRanks, k * sumRanks}; !equal(out, want) {
						return fmt.Errorf("call %d allreduce: %v, want %v", i, out, want)
					}
					pause()
					// Bcast through a message schedule.
					bc := make([]int32, 5)
					root := i % p
					if r == root {
						bc[4] = int32(i)
					}
					if err := scoll.Bcast(ctx, c, bc, root, scoll.WithAlgorithm(bcastAlg)); err != nil {
						return fmt.Errorf("call %d bcast: %w", i, err)
					}
					if bc[4] != int32(i) {
						return fmt.Errorf("call %d bcast: %v", i, bc)
					}
					// In-place allreduce with a non-commutative operator.
					io := []int64{k*100 + int64(r)}
					if err := scoll.Allreduce(ctx, c, nil, io, last); err != nil {
						return fmt.Errorf("call %d in-place allreduce: %w", i, err)
					}
					if io[0] != k*100+int64(p-1) {
						return fmt.Errorf("call %d in-place allreduce: %d, want %d", i, io[0], k*100+int64(p-1))
					}
					pause()
					// Non-blocking allreduce (message schedule).
					nb := make([]int64, 1)
					req, err := scoll.IAllreduce(ctx, c, []int64{k}, nb, scoll.Max)
					if err != nil {
						return err
					}
					if err := req.Wait(ctx); err != nil {
						return fmt.Errorf("call %d iallreduce: %w", i, err)
					}
					if nb[0] != k {
						return fmt.Errorf("call %d iallreduce: %d", i, nb[0])
					}
					// Bcast, reduce, allgather and barrier (exchanges).
					bb := []float64{-1, -1}
					if r == root {
						bb = []float64{float64(i), 0.5}
					}
					if err := scoll.Bcast(ctx, c, bb, root); err != nil {
						return fmt.Errorf("call %d bcast: %w", i, err)
					}
					if bb[0] != float64(i) || bb[1] != 0.5 {
						return fmt.Errorf("call %d bcast: %v", i, bb)
					}
					red := make([]int64, 1)
					if err := scoll.Reduce(ctx, c, []int64{k + int64(r)}, red, scoll.Sum, root); err != nil {
						return fmt.Errorf("call %d reduce: %w", i, err)
					}
					if r == root && red[0] != k*int64(p)+sumRanks {
						return fmt.Errorf("call %d reduce: %d", i, red[0])
					}
					pause()
					ag := make([]int32, 2*p)
					if err := scoll.Allgather(ctx, c, []int32{int32(i), int32(r)}, ag); err != nil {
						return fmt.Errorf("call %d allgather: %w", i, err)
					}
					for q := range p {
						if ag[2*q] != int32(i) || ag[2*q+1] != int32(q) {
							return fmt.Errorf("call %d allgather: %v", i, ag)
						}
					}
					if err := c.Barrier(ctx); err != nil {
						return fmt.Errorf("call %d barrier: %w", i, err)
					}
				}
				return nil
			}, forceExchanges)
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// runRanks runs fn on p ranks with exchanges on and returns Run's error and
// each rank's; it fails the test if Run hangs.
// pathOf returns the entry and path a call's error says it ran on (the
// debugging field of the library's errors; "" when none).
func pathOf(err error) string {
	var ce *errs.CallError
	if errors.As(err, &ce) {
		return ce.Path
	}
	return ""
}

func runRanks(t *testing.T, p int, fn func(ctx context.Context, c *scoll.Comm) error) (error, []error) {
	t.Helper()
	return runRanksWith(t, p, fn, forceExchanges)
}

// runRanksWith runs fn on p ranks with the options opts and returns Run's
// error and each rank's; it fails the test if Run hangs.
func runRanksWith(t *testing.T, p int, fn func(ctx context.Context, c *scoll.Comm) error, opts ...scoll.Option) (error, []error) {
	t.Helper()
	errs := make([]error, p)
	done := make(chan error, 1)
	go func() {
		done <- scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
			errs[c.Rank()] = fn(ctx, c)
			return errs[c.Rank()]
		}, opts...)
	}()
	select {
	case err := <-done:
		return err, errs
	case <-time.After(20 * time.Second):
		t.Fatal("hang: Run did not return")
	}
	return nil, nil
}

func TestExchangeMismatch(t *testing.T) {
	f64 := func(n int) []float64 { return make([]float64, n) }
	for _, tc := range []struct {
		name string
		// every: every rank must report the mismatch (exchanges on all of
		// them); otherwise at least one must.
		every bool
		call  func(ctx context.Context, c *scoll.Comm) error
	}{
		{"allreduce and bcast", true, func(ctx context.Context, c *scoll.Comm) error {
			if c.Rank() == 0 {
				return scoll.Allreduce(ctx, c, f64(2), f64(2), scoll.Sum)
			}
			return scoll.Bcast(ctx, c, f64(2), 0)
		}},
		{"counts differ", true, func(ctx context.Context, c *scoll.Comm) error {
			n := 2 + c.Rank()
			return scoll.Allreduce(ctx, c, f64(n), f64(n), scoll.Sum)
		}},
		{"ops differ", true, func(ctx context.Context, c *scoll.Comm) error {
			op := scoll.Sum
			if c.Rank() == 1 {
				op = scoll.Max
			}
			return scoll.Allreduce(ctx, c, f64(1), f64(1), op)
		}},
		{"blocking and non-blocking", false, func(ctx context.Context, c *scoll.Comm) error {
			if c.Rank() == 0 {
				return scoll.Allreduce(ctx, c, f64(2), f64(2), scoll.Sum)
			}
			req, err := scoll.IAllreduce(ctx, c, f64(2), f64(2), scoll.Sum)
			if err != nil {
				return err
			}
			return req.Wait(ctx)
		}},
		{"default and named algorithm", false, func(ctx context.Context, c *scoll.Comm) error {
			var opts []scoll.CallOption
			if c.Rank() == 1 {
				opts = append(opts, scoll.WithAlgorithm(scoll.Algorithms("allreduce")[0].Name))
			}
			return scoll.Allreduce(ctx, c, f64(2), f64(2), scoll.Sum, opts...)
		}},
		{"exchange and a large call", false, func(ctx context.Context, c *scoll.Comm) error {
			n := 2
			if c.Rank() == 1 {
				n = 1 << 12
			}
			return scoll.Allreduce(ctx, c, f64(n), f64(n), scoll.Sum)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err, errs := runRanks(t, 2, tc.call)
			if !errors.Is(err, scoll.ErrMismatch) {
				t.Errorf("Run returned %v (%v)", err, errs)
			}
			saw := false
			for r, e := range errs {
				switch {
				case errors.Is(e, scoll.ErrMismatch):
					saw = true
					if tc.every && !strings.HasPrefix(pathOf(e), "exchange/") {
						t.Errorf("rank %d: %v does not come from an exchange", r, e)
					}
				case tc.every || e == nil || !typed(e):
					t.Errorf("rank %d returned %v", r, e)
				}
			}
			if !saw {
				t.Errorf("no rank reported the mismatch: %v", errs)
			}
		})
	}
}

func TestExchangeCancel(t *testing.T) {
	t.Run("cancel while a rank is absent", func(t *testing.T) {
		t.Parallel()
		_, errs := runRanks(t, 2, func(ctx context.Context, c *scoll.Comm) error {
			if c.Rank() == 1 {
				return absent(ctx)
			}
			cctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(20*time.Millisecond, cancel)
			err := scoll.Allreduce(cctx, c, []int32{1}, []int32{0}, scoll.Sum)
			if !errors.Is(err, context.Canceled) || !errors.Is(err, scoll.ErrCanceled) || !strings.HasPrefix(pathOf(err), "exchange/") {
				return fmt.Errorf("%w: got %v", scoll.ErrInvalidArgument, err)
			}
			return err
		})
		if !errors.Is(errs[0], context.Canceled) {
			t.Errorf("rank 0: %v", errs[0])
		}
	})
	t.Run("deadline, then both ranks go on", func(t *testing.T) {
		t.Parallel()
		// Rank 0 gives up on call 1 while rank 1 is late; its input stays
		// published, so rank 1 completes call 1 with it, and call 2 works
		// on both (rank 0 first waits until rank 1 is done with its slot).
		err, errs := runRanks(t, 2, func(ctx context.Context, c *scoll.Comm) error {
			out := make([]int64, 2)
			in := []int64{int64(c.Rank()) + 1, 10}
			if c.Rank() == 0 {
				dctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
				err := scoll.Allreduce(dctx, c, in, out, scoll.Sum)
				cancel()
				if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, scoll.ErrCanceled) {
					return fmt.Errorf("call 1: %v", err)
				}
			} else {
				time.Sleep(60 * time.Millisecond)
				if err := scoll.Allreduce(ctx, c, in, out, scoll.Sum); err != nil {
					return fmt.Errorf("call 1: %w", err)
				}
				if out[0] != 3 || out[1] != 20 {
					return fmt.Errorf("call 1: %v", out)
				}
			}
			for i := range int64(50) {
				in := []int64{i * int64(c.Rank()+1), 1}
				if err := scoll.Allreduce(ctx, c, in, out, scoll.Sum); err != nil {
					return fmt.Errorf("call %d: %w", i+2, err)
				}
				if out[0] != 3*i || out[1] != 2 {
					return fmt.Errorf("call %d: %v", i+2, out)
				}
			}
			return nil
		})
		if err != nil {
			t.Errorf("Run: %v (%v)", err, errs)
		}
	})
	t.Run("peer exited", func(t *testing.T) {
		t.Parallel()
		_, errs := runRanks(t, 2, func(ctx context.Context, c *scoll.Comm) error {
			if c.Rank() == 1 {
				return nil // leaves without an error: nothing cancels rank 0
			}
			return scoll.Allreduce(ctx, c, []int32{1}, []int32{0}, scoll.Sum)
		})
		if !errors.Is(errs[0], scoll.ErrPeerFailed) {
			t.Errorf("rank 0: %v", errs[0])
		}
	})
}

// TestExchangeBadInput runs the mismatch and cancellation cases of
// TestBadInput with exchanges: on 2 ranks (by default, when GOMAXPROCS ≥ 2)
// and at their own sizes with exchanges forced on.
func TestExchangeBadInput(t *testing.T) {
	names := map[string]bool{
		"ranks call different collectives": true,
		"ranks pass different roots":       true,
		"cancelled context":                true,
		"deadline while a rank is absent":  true,
		"one rank leaves early":            true,
	}
	seen := 0
	for _, bc := range badCases() {
		if !names[bc.name] {
			continue
		}
		seen++
		t.Run(bc.name, func(t *testing.T) {
			t.Parallel()
			checkBadCase(t, bc, forceExchanges)
			bc.p = 2
			checkBadCase(t, bc)
			checkBadCase(t, bc, forceExchanges)
		})
	}
	if seen != len(names) {
		t.Fatalf("found %d of the %d cases", seen, len(names))
	}
}

// TestExchangeAllocs checks that blocking exchanges allocate nothing (on
// either rank: the count is the process's).
func TestExchangeAllocs(t *testing.T) {
	const runs = 1000
	var mallocs uint64
	err := scoll.Run(context.Background(), 2, func(ctx context.Context, c *scoll.Comm) error {
		send, recv := []float32{1, 2}, make([]float32, 2)
		buf := make([]int64, 3)
		for i := range runs + 1 {
			var m runtime.MemStats
			if i == 1 && c.Rank() == 0 {
				runtime.ReadMemStats(&m)
				mallocs = m.Mallocs
			}
			if err := scoll.Allreduce(ctx, c, send, recv, scoll.Sum); err != nil {
				return err
			}
			if err := scoll.Bcast(ctx, c, buf, 1); err != nil {
				return err
			}
			if i == runs && c.Rank() == 0 {
				runtime.ReadMemStats(&m)
				mallocs = m.Mallocs - mallocs
			}
		}
		return nil
	}, forceExchanges)
	if err != nil {
		t.Fatal(err)
	}
	if per := float64(mallocs) / runs; per >= 0.1 {
		t.Errorf("%.2f allocations per allreduce and bcast", per)
	}
}

// BenchmarkExchange measures the table behind exchangeReadBytes
// (shm.go): small collectives on 2 ranks with exchanges forced on and
// off (then message schedules run), named COLL/SIZE/{exchange,schedule};
// SIZE is the input per rank in bytes of float32.
func BenchmarkExchange(b *testing.B) {
	colls := []struct {
		name  string
		setup func(c *scoll.Comm, n int) func(context.Context) error
	}{
		{"allreduce", func(c *scoll.Comm, n int) func(context.Context) error {
			send, recv := make([]float32, n), make([]float32, n)
			return func(ctx context.Context) error { return scoll.Allreduce(ctx, c, send, recv, scoll.Sum) }
		}},
		{"bcast", func(c *scoll.Comm, n int) func(context.Context) error {
			buf := make([]float32, n)
			return func(ctx context.Context) error { return scoll.Bcast(ctx, c, buf, 0) }
		}},
		{"allgather", func(c *scoll.Comm, n int) func(context.Context) error {
			send, recv := make([]float32, n), make([]float32, n*c.Size())
			return func(ctx context.Context) error { return scoll.Allgather(ctx, c, send, recv) }
		}},
	}
	for _, coll := range colls {
		for _, size := range []int{8, 256, 1024} {
			for _, on := range []bool{true, false} {
				name := fmt.Sprintf("%s/%dB/%s", coll.name, size, map[bool]string{true: "exchange", false: "schedule"}[on])
				b.Run(name, func(b *testing.B) {
					b.SetBytes(int64(size))
					n := b.N
					err := scoll.Run(context.Background(), 2, func(ctx context.Context, c *scoll.Comm) error {
						call := coll.setup(c, size/4)
						if err := c.Barrier(ctx); err != nil {
							return err
						}
						if c.Rank() == 0 {
							b.ResetTimer()
						}
						for range n {
							if err := call(ctx); err != nil {
								return err
							}
						}
						if err := c.Barrier(ctx); err != nil {
							return err
						}
						if c.Rank() == 0 {
							b.StopTimer()
						}
						return nil
					}, scoll.WithExchangesForTest(on))
					if err != nil {
						b.Fatal(err)
					}
				})
			}
		}
	}
}
