package scoll_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/matrix"
	"github.com/scoll/scoll/transport/tcp"
)

// chainOf makes, on a world of n+2 ranks, a chain communicator of n of
// them: two world ranks stay out, the others are ordered by a permutation
// drawn from seed (the same on every rank), so that chain order, world
// order and transport addresses all differ. The ranks left out get nil.
func chainOf(ctx context.Context, c *scoll.Comm, n int, seed uint64) (*scoll.Comm, error) {
	perm := rand.New(rand.NewPCG(seed, 0)).Perm(n + 2)
	out1, out2 := perm[0]%(n+2), (perm[0]+1+perm[1]%(n+1))%(n+2)
	color := []byte("chain")
	if c.Rank() == out1 || c.Rank() == out2 {
		color = nil
	}
	key := []byte{byte(perm[c.Rank()] >> 8), byte(perm[c.Rank()])}
	return c.SplitBytes(ctx, color, key, scoll.WithChainGroup())
}

// lg is ⌈lg n⌉ (0 for n = 1).
func lg(n int) int { return bits.Len(uint(n - 1)) }

// rootedRounds is the rounds of the rooted chain collectives:
// max(⌈lg(r+1)⌉, ⌈lg(n−r)⌉) ≤ ⌈lg n⌉.
func rootedRounds(n, root int) int { return max(bits.Len(uint(root)), bits.Len(uint(n-1-root))) }

// chainCase is an operator with its naive reference.
type chainCase[T int32 | float64] struct {
	name  string
	op    scoll.Op
	count int
	comb  func(a, b []T) []T // a ⊕ b, a from the lower ranks
	input func(rank, call int) []T
}

func sumCase[T int32 | float64]() chainCase[T] {
	return chainCase[T]{
		name: fmt.Sprintf("sum-%T", T(0)), op: scoll.Sum, count: 5,
		comb: func(a, b []T) []T {
			out := slices.Clone(a)
			for i := range out {
				out[i] += b[i]
			}
			return out
		},
		input: func(r, call int) []T {
			v := make([]T, 5)
			for i := range v {
				v[i] = T(r*1000 + call*7 + i)
			}
			return v
		},
	}
}

// matmul multiplies the 2×2 matrices (row-major, four elements each) of a
// and b: not commutative. Entries of 0 and 1 keep float64 products of 40
// matrices exact (< 2^40).
func matmul[T int32 | float64](a, b []T) []T {
	out := make([]T, len(a))
	for i := 0; i+4 <= len(a); i += 4 {
		x, y := a[i:i+4], b[i:i+4]
		out[i] = x[0]*y[0] + x[1]*y[2]
		out[i+1] = x[0]*y[1] + x[1]*y[3]
		out[i+2] = x[2]*y[0] + x[3]*y[2]
		out[i+3] = x[2]*y[1] + x[3]*y[3]
	}
	return out
}

func matCase[T int32 | float64]() chainCase[T] {
	return chainCase[T]{
		name: fmt.Sprintf("matmul-%T", T(0)), count: 8,
		op: scoll.UserOp[T](func(inout, in []T) {
			copy(inout, matmul(in, inout)) // in holds the lower ranks
		}, false),
		comb: matmul[T],
		input: func(r, call int) []T {
			v := make([]T, 8)
			for i := range v {
				if (r*31+i*17+call*7)%5 < 2 || i%4 == 0 {
					v[i] = 1
				}
			}
			return v
		},
	}
}

// fold is the reference x_lo ⊕ … ⊕ x_hi.
func (cs chainCase[T]) fold(lo, hi, call int) []T {
	acc := cs.input(lo, call)
	for q := lo + 1; q <= hi; q++ {
		acc = cs.comb(acc, cs.input(q, call))
	}
	return acc
}

// recorder runs a call and keeps the rounds it took on this rank (counted
// by the split hook: chain calls run on c's split connection) and the
// bound the call must reach on some rank and exceed on none.
type recorder struct {
	rounds, bounds []int
	cnt            int
}

func (rc *recorder) run(bound int, f func() error) error {
	rc.cnt = 0
	err := f()
	rc.rounds, rc.bounds = append(rc.rounds, rc.cnt), append(rc.bounds, bound)
	return err
}

func mismatch[T int32 | float64](what string, got, want []T) error {
	if slices.Equal(got, want) {
		return nil
	}
	return fmt.Errorf("%s: got %v, want %v", what, got, want)
}

// checkReductions runs every reducing chain collective with cs on c.
func checkReductions[T int32 | float64](ctx context.Context, c *scoll.Comm, cs chainCase[T], rc *recorder) error {
	n, r, m := c.Size(), c.Rank(), cs.count
	call := 0
	next := func() int { call++; return call }
	sentinel := func() []T {
		v := make([]T, m)
		for i := range v {
			v[i] = -7
		}
		return v
	}
	// Scan, out of place and in place.
	k := next()
	recv := make([]T, m)
	if err := rc.run(lg(n), func() error { return scoll.Scan(ctx, c, cs.input(r, k), recv, cs.op) }); err != nil {
		return fmt.Errorf("scan: %w", err)
	}
	if err := mismatch("scan", recv, cs.fold(0, r, k)); err != nil {
		return err
	}
	k = next()
	recv = cs.input(r, k)
	if err := rc.run(lg(n), func() error { return scoll.Scan(ctx, c, nil, recv, cs.op) }); err != nil {
		return fmt.Errorf("scan in place: %w", err)
	}
	if err := mismatch("scan in place", recv, cs.fold(0, r, k)); err != nil {
		return err
	}
	// Exscan: rank 0's recv untouched.
	k = next()
	recv = sentinel()
	if err := rc.run(lg(n), func() error { return scoll.Exscan(ctx, c, cs.input(r, k), recv, cs.op) }); err != nil {
		return fmt.Errorf("exscan: %w", err)
	}
	want := sentinel()
	if r > 0 {
		want = cs.fold(0, r-1, k)
	}
	if err := mismatch("exscan", recv, want); err != nil {
		return err
	}
	// Allreduce, out of place and in place: on floating point, a reduce
	// to rank 0 and a broadcast, so that every rank gets the same bits.
	arBound := lg(n)
	if _, fl := any(T(0)).(float64); fl {
		arBound = 2 * rootedRounds(n, 0)
	}
	k = next()
	recv = make([]T, m)
	if err := rc.run(arBound, func() error { return scoll.Allreduce(ctx, c, cs.input(r, k), recv, cs.op) }); err != nil {
		return fmt.Errorf("allreduce: %w", err)
	}
	if err := mismatch("allreduce", recv, cs.fold(0, n-1, k)); err != nil {
		return err
	}
	k = next()
	recv = cs.input(r, k)
	if err := rc.run(arBound, func() error { return scoll.Allreduce(ctx, c, nil, recv, cs.op) }); err != nil {
		return fmt.Errorf("allreduce in place: %w", err)
	}
	if err := mismatch("allreduce in place", recv, cs.fold(0, n-1, k)); err != nil {
		return err
	}
	if err := checkDoubleScans(ctx, c, cs, next(), rc); err != nil {
		return err
	}
	// Reduce to every root, out of place and (at the root) in place.
	for root := range n {
		k = next()
		inPlace := root%2 == 1
		send, recv := cs.input(r, k), []T(nil)
		if r == root {
			recv = sentinel()
			if inPlace {
				send, recv = nil, cs.input(r, k)
			}
		}
		if err := rc.run(rootedRounds(n, root), func() error { return scoll.Reduce(ctx, c, send, recv, cs.op, root) }); err != nil {
			return fmt.Errorf("reduce to %d: %w", root, err)
		}
		if r == root {
			if err := mismatch(fmt.Sprintf("reduce to %d (in place %v)", root, inPlace), recv, cs.fold(0, n-1, k)); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkDoubleScans runs DoubleScan and DoubleExscan with cs on c.
func checkDoubleScans[T int32 | float64](ctx context.Context, c *scoll.Comm, cs chainCase[T], k int, rc *recorder) error {
	n, r, m := c.Size(), c.Rank(), cs.count
	left, right := make([]T, m), make([]T, m)
	if err := rc.run(lg(n), func() error { return scoll.DoubleScan(ctx, c, cs.input(r, k), left, right, cs.op) }); err != nil {
		return fmt.Errorf("double scan: %w", err)
	}
	if err := mismatch("double scan from the left", left, cs.fold(0, r, k)); err != nil {
		return err
	}
	if err := mismatch("double scan from the right", right, cs.fold(r, n-1, k)); err != nil {
		return err
	}
	// In place (send is fromRight), exclusive: the ends keep their values.
	left, right = make([]T, m), cs.input(r, k)
	for i := range left {
		left[i] = -3
	}
	if err := rc.run(lg(n), func() error { return scoll.DoubleExscan(ctx, c, right, left, right, cs.op) }); err != nil {
		return fmt.Errorf("double exscan: %w", err)
	}
	wantL, wantR := slices.Repeat([]T{-3}, m), cs.input(r, k)
	if r > 0 {
		wantL = cs.fold(0, r-1, k)
	}
	if r < n-1 {
		wantR = cs.fold(r+1, n-1, k)
	}
	if err := mismatch("double exscan from the left", left, wantL); err != nil {
		return err
	}
	return mismatch("double exscan from the right", right, wantR)
}

// checkData runs Bcast, Gather and Scatter from and to every root.
func checkData[T int32 | float64](ctx context.Context, c *scoll.Comm, m int, rc *recorder) error {
	n, r := c.Size(), c.Rank()
	block := func(q, root int) []T {
		v := make([]T, m)
		for i := range v {
			v[i] = T(q*100 + root*10 + i)
		}
		return v
	}
	for root := range n {
		inPlace := root%2 == 0
		bound := rootedRounds(n, root)
		buf := make([]T, m)
		if r == root {
			buf = block(root, root)
		}
		if err := rc.run(bound, func() error { return scoll.Bcast(ctx, c, buf, root) }); err != nil {
			return fmt.Errorf("bcast from %d: %w", root, err)
		}
		if err := mismatch(fmt.Sprintf("bcast from %d", root), buf, block(root, root)); err != nil {
			return err
		}
		// Gather.
		var all []T
		for q := range n {
			all = append(all, block(q, root)...)
		}
		send, recv := block(r, root), []T(nil)
		if r == root {
			recv = make([]T, n*m)
			if inPlace {
				copy(recv[r*m:], send)
				send = nil
			}
		}
		if err := rc.run(bound, func() error { return scoll.Gather(ctx, c, send, recv, root) }); err != nil {
			return fmt.Errorf("gather to %d: %w", root, err)
		}
		if r == root {
			if err := mismatch(fmt.Sprintf("gather to %d (in place %v)", root, inPlace), recv, all); err != nil {
				return err
			}
		}
		// Scatter.
		send, recv = nil, make([]T, m)
		if r == root {
			send = slices.Clone(all)
			if inPlace {
				recv = nil
			}
		}
		if err := rc.run(bound, func() error { return scoll.Scatter(ctx, c, send, recv, root) }); err != nil {
			return fmt.Errorf("scatter from %d: %w", root, err)
		}
		if r == root && inPlace {
			recv = send[r*m : (r+1)*m]
		}
		if err := mismatch(fmt.Sprintf("scatter from %d (in place %v)", root, inPlace), recv, block(r, root)); err != nil {
			return err
		}
	}
	return nil
}

// chainSizes is 1..40, fewer in -short mode (for -race).
func chainSizes() []int {
	if testing.Short() {
		return []int{1, 2, 3, 5, 8, 13, 16, 17, 33}
	}
	var out []int
	for n := 1; n <= 40; n++ {
		out = append(out, n)
	}
	return out
}

// TestChainCollectives: on chain communicators of every size, every chain
// collective against the naive reference for int32 and float64 sums and a
// non-commutative user operator (2×2 matrix products), from and to every
// root; each takes at most its bound of rounds (⌈lg n⌉, or
// max(⌈lg(r+1)⌉, ⌈lg(n−r)⌉) for root r) and some rank takes exactly that
// many; the chain never learns its members. Then a collective the chain
// algorithms do not serve learns them, and the next Bcast runs the usual
// schedule.
func TestChainCollectives(t *testing.T) {
	t.Parallel()
	for _, n := range chainSizes() {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			recs := make([]*recorder, n)
			err := scoll.Run(ctx, n+2, func(ctx context.Context, w *scoll.Comm) error {
				c, err := chainOf(ctx, w, n, uint64(n))
				if err != nil || c == nil {
					return err
				}
				defer c.Close()
				if c.Size() != n {
					return fmt.Errorf("chain of %d ranks, want %d", c.Size(), n)
				}
				if chain, learnt := scoll.ChainStateForTest(c); !chain || learnt {
					return fmt.Errorf("chain %v, learnt %v after the split", chain, learnt)
				}
				rc := &recorder{}
				recs[c.Rank()] = rc
				scoll.SetSplitHookForTest(c, func(int) { rc.cnt++ })
				steps := []func() error{
					func() error { return checkReductions(ctx, c, sumCase[int32](), rc) },
					func() error { return checkReductions(ctx, c, sumCase[float64](), rc) },
					func() error { return checkReductions(ctx, c, matCase[int32](), rc) },
					func() error { return checkReductions(ctx, c, matCase[float64](), rc) },
					func() error { return checkData[int32](ctx, c, 3, rc) },
					func() error { return checkData[float64](ctx, c, 0, rc) },
					func() error {
						cs := sumCase[int32]()
						cs.count = 0
						cs.input = func(int, int) []int32 { return []int32{} }
						return checkReductions(ctx, c, cs, rc)
					},
				}
				for _, f := range steps {
					if err := f(); err != nil {
						return fmt.Errorf("chain rank %d of %d: %w", c.Rank(), n, err)
					}
				}
				if _, learnt := scoll.ChainStateForTest(c); learnt {
					return fmt.Errorf("chain rank %d: the chain collectives learnt the members", c.Rank())
				}
				// Allgather has no chain algorithm: it learns the members.
				all := make([]int32, n)
				if err := scoll.Allgather(ctx, c, []int32{int32(c.Rank())}, all); err != nil {
					return err
				}
				if _, learnt := scoll.ChainStateForTest(c); !learnt {
					return fmt.Errorf("chain rank %d: allgather did not learn the members", c.Rank())
				}
				for i, v := range all {
					if v != int32(i) {
						return fmt.Errorf("allgather on a chain: %v", all)
					}
				}
				rc.cnt = 0
				buf := []int32{int32(c.Rank())}
				if err := scoll.Bcast(ctx, c, buf, n-1); err != nil {
					return err
				}
				if buf[0] != int32(n-1) || rc.cnt != 0 {
					return fmt.Errorf("bcast after learning: got %d, %d chain rounds", buf[0], rc.cnt)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			checkRounds(t, recs)
		})
	}
}

// checkRounds checks that no rank took more rounds than a call's bound
// and some rank took exactly that many.
func checkRounds(t *testing.T, recs []*recorder) {
	t.Helper()
	calls := len(recs[0].bounds)
	for i := range calls {
		most := 0
		for r, rc := range recs {
			if len(rc.rounds) != calls {
				t.Fatalf("rank %d recorded %d calls, rank 0 %d", r, len(rc.rounds), calls)
			}
			if rc.rounds[i] > rc.bounds[i] {
				t.Fatalf("call %d: rank %d took %d rounds, bound %d", i, r, rc.rounds[i], rc.bounds[i])
			}
			most = max(most, rc.rounds[i])
		}
		if most != recs[0].bounds[i] {
			t.Fatalf("call %d: at most %d rounds on any rank, want %d", i, most, recs[0].bounds[i])
		}
	}
}

// TestChainAlgorithmOption: WithAlgorithm(ChainAlgorithm) runs the chain
// algorithms on the world and on a chain that has learnt its members.
func TestChainAlgorithmOption(t *testing.T) {
	chain := scoll.WithAlgorithm(scoll.ChainAlgorithm)
	for _, n := range []int{1, 2, 7, 16, 17} {
		err := scoll.Run(context.Background(), n, func(ctx context.Context, w *scoll.Comm) error {
			rc := &recorder{}
			scoll.SetSplitHookForTest(w, func(int) { rc.cnt++ })
			cs := matCase[int32]()
			r := w.Rank()
			recv := make([]int32, cs.count)
			if err := rc.run(lg(n), func() error { return scoll.Allreduce(ctx, w, cs.input(r, 1), recv, cs.op, chain) }); err != nil {
				return err
			}
			if err := mismatch("allreduce", recv, cs.fold(0, n-1, 1)); err != nil {
				return err
			}
			if err := rc.run(lg(n), func() error { return scoll.Exscan(ctx, w, cs.input(r, 2), recv, cs.op, chain) }); err != nil {
				return err
			}
			if r > 0 {
				if err := mismatch("exscan", recv, cs.fold(0, r-1, 2)); err != nil {
					return err
				}
			}
			buf := []float64{float64(r)}
			if err := rc.run(rootedRounds(n, n/2), func() error { return scoll.Bcast(ctx, w, buf, n/2, chain) }); err != nil {
				return err
			}
			if buf[0] != float64(n/2) {
				return fmt.Errorf("bcast: %v", buf)
			}
			if n > 1 && slices.Max(rc.rounds) == 0 {
				return errors.New("WithAlgorithm(chain) did not run the chain algorithms")
			}
			// A chain that has learnt its members runs them when asked.
			c, err := w.SplitBytes(ctx, []byte{1}, []byte{byte(n - r)}, scoll.WithChainGroup())
			if err != nil {
				return err
			}
			defer c.Close()
			if err := scoll.Barrier(ctx, c); err != nil { // learns
				return err
			}
			rc = &recorder{}
			scoll.SetSplitHookForTest(c, func(int) { rc.cnt++ })
			sum := []int64{int64(c.Rank())}
			if err := rc.run(lg(n), func() error { return scoll.Scan(ctx, c, nil, sum, scoll.Sum, chain) }); err != nil {
				return err
			}
			q := int64(c.Rank())
			if sum[0] != q*(q+1)/2 || (n > 1 && rc.rounds[0] == 0) {
				return fmt.Errorf("scan on a learnt chain: %d, %d rounds", sum[0], rc.rounds[0])
			}
			if _, learnt := scoll.ChainStateForTest(c); !learnt {
				return errors.New("barrier did not learn the members")
			}
			return nil
		})
		if err != nil {
			t.Fatalf("P=%d: %v", n, err)
		}
	}
}

// TestDoubleScanComms: DoubleScan and DoubleExscan on the world, on a
// table communicator and on a chain, with built-in and non-commutative
// operators, for P = 1..17, 32, 33.
func TestDoubleScanComms(t *testing.T) {
	sizes := []int{32, 33}
	for n := 1; n <= 17; n++ {
		sizes = append(sizes, n)
	}
	for _, n := range sizes {
		err := scoll.Run(context.Background(), n, func(ctx context.Context, w *scoll.Comm) error {
			table, err := w.Split(ctx, 0, -w.Rank())
			if err != nil {
				return err
			}
			defer table.Close()
			chain, err := w.SplitBytes(ctx, []byte{0}, []byte{byte(w.Rank() * 7 % n)}, scoll.WithChainGroup())
			if err != nil {
				return err
			}
			defer chain.Close()
			for _, c := range []*scoll.Comm{w, table, chain} {
				rc := &recorder{}
				if err := checkDoubleScans(ctx, c, matCase[float64](), 3, rc); err != nil {
					return err
				}
				if err := checkDoubleScans(ctx, c, sumCase[int32](), 4, rc); err != nil {
					return err
				}
			}
			if _, learnt := scoll.ChainStateForTest(chain); learnt {
				return errors.New("the double scans learnt the chain's members")
			}
			return nil
		})
		if err != nil {
			t.Fatalf("P=%d: %v", n, err)
		}
	}
}

// TestChainBadInput: bad arguments fail on chain communicators with the
// errors the usual path gives on a communicator of the same size.
func TestChainBadInput(t *testing.T) {
	const n = 5
	type call func(ctx context.Context, c *scoll.Comm) error
	cases := []struct {
		name string
		f    call
	}{
		{"root -1", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Bcast(ctx, c, []int32{1}, -1)
		}},
		{"root n", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Reduce(ctx, c, []int32{1}, []int32{1}, scoll.Sum, n)
		}},
		{"reduce lengths at root", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Reduce(ctx, c, []int32{1}, make([]int32, 2), scoll.Sum, 0)
		}},
		{"allreduce lengths", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Allreduce(ctx, c, []int32{1}, make([]int32, 2), scoll.Sum)
		}},
		{"scan with a float bitwise op", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Scan(ctx, c, []float64{1}, []float64{1}, scoll.Bxor)
		}},
		{"exscan with the zero op", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Exscan(ctx, c, []int64{1}, []int64{1}, scoll.Op{})
		}},
		{"gather lengths at root", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Gather(ctx, c, []int32{1}, make([]int32, 3), 2)
		}},
		{"gather in place not a multiple", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Gather(ctx, c, nil, make([]int32, 7), 0)
		}},
		{"scatter lengths at root", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Scatter(ctx, c, make([]int32, 4), []int32{0}, 4)
		}},
		{"negative segment size", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Allreduce(ctx, c, nil, []int32{1}, scoll.Sum, scoll.WithSegmentSize(-1))
		}},
		{"radix 1", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Bcast(ctx, c, []int32{1}, 0, scoll.WithRadix(1))
		}},
		{"bad grid", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Scatter(ctx, c, make([]int32, n), []int32{0}, 0, scoll.WithGrid(2, 2))
		}},
	}
	// errsOf runs f on every rank of a chain of n ranks (chain) or of the
	// world of n ranks, and returns the errors of the ranks that reported
	// their own (the first to fail cancels the others).
	errsOf := func(f call, chain bool) []error {
		var mu sync.Mutex
		var errs []error
		p := n
		if chain {
			p = n + 2
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		scoll.Run(ctx, p, func(ctx context.Context, w *scoll.Comm) error {
			c := w
			if chain {
				var err error
				if c, err = chainOf(ctx, w, n, 9); err != nil || c == nil {
					return err
				}
				defer c.Close()
			}
			err := f(ctx, c)
			if err != nil && !errors.Is(err, scoll.ErrCanceled) && !errors.Is(err, scoll.ErrPeerFailed) {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
			return err
		})
		if ctx.Err() != nil {
			t.Fatalf("timed out")
		}
		return errs
	}
	for _, tc := range cases {
		got, want := errsOf(tc.f, true), errsOf(tc.f, false)
		if len(got) == 0 || len(want) == 0 {
			t.Errorf("%s: chain errors %v, usual %v", tc.name, got, want)
			continue
		}
		// The same error but for the rank it names first.
		rankless := func(err error) string { _, s, _ := strings.Cut(err.Error(), ": "); return s }
		for _, err := range append(got, want...) {
			if !errors.Is(err, scoll.ErrInvalidArgument) || rankless(err) != rankless(want[0]) {
				t.Errorf("%s: error %v, usual %v", tc.name, err, want[0])
			}
		}
	}
	// The double scans.
	if err := scoll.DoubleScan(context.Background(), nil, []int32{1}, []int32{0}, []int32{0}, scoll.Sum); !errors.Is(err, scoll.ErrInvalidArgument) {
		t.Errorf("DoubleScan on a nil communicator: %v", err)
	}
	for _, tc := range []struct {
		name string
		f    call
	}{
		{"lengths", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.DoubleScan(ctx, c, []int32{1, 2}, []int32{0}, []int32{0, 0}, scoll.Sum)
		}},
		{"exclusive lengths", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.DoubleExscan(ctx, c, []int32{1}, []int32{0}, nil, scoll.Max)
		}},
		{"algorithm", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.DoubleScan(ctx, c, []int32{1}, []int32{0}, []int32{0}, scoll.Sum, scoll.WithAlgorithm("ring"))
		}},
		{"float op", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.DoubleExscan(ctx, c, []float32{1}, []float32{0}, []float32{0}, scoll.Land)
		}},
	} {
		for _, chain := range []bool{false, true} {
			errs := errsOf(tc.f, chain)
			if len(errs) == 0 {
				t.Errorf("%s (chain %v): no rank failed", tc.name, chain)
			}
			for _, err := range errs {
				if !errors.Is(err, scoll.ErrInvalidArgument) || !strings.Contains(err.Error(), ": Double") {
					t.Errorf("%s (chain %v): %v", tc.name, chain, err)
				}
			}
		}
	}
}

// TestChainMismatch: ranks that call different collectives on a chain
// fail (at least one with ErrMismatch) instead of hanging; so do ranks
// whose counts differ.
func TestChainMismatch(t *testing.T) {
	const n = 6
	for _, tc := range []struct {
		name string
		f    func(ctx context.Context, c *scoll.Comm) error
	}{
		{"bcast and reduce", func(ctx context.Context, c *scoll.Comm) error {
			if c.Rank() == 2 {
				return scoll.Bcast(ctx, c, []int32{1}, 0)
			}
			return scoll.Reduce(ctx, c, []int32{1}, []int32{0}, scoll.Sum, 0)
		}},
		{"roots", func(ctx context.Context, c *scoll.Comm) error {
			// Chain ranks 1 and 2 both send to each other first and
			// neither receives: only the Checker sees the mismatch.
			root := 0
			if c.Rank() == 2 {
				root = 3
			}
			return scoll.Reduce(ctx, c, []int32{1}, []int32{0}, scoll.Sum, root)
		}},
		{"counts", func(ctx context.Context, c *scoll.Comm) error {
			return scoll.Allreduce(ctx, c, nil, make([]int32, 1+c.Rank()%2), scoll.Sum)
		}},
		{"chain and learning", func(ctx context.Context, c *scoll.Comm) error {
			if c.Rank() == 1 {
				return scoll.Scan(ctx, c, nil, []int32{1}, scoll.Sum, scoll.WithAlgorithm("recursive-doubling"))
			}
			return scoll.Scan(ctx, c, nil, []int32{1}, scoll.Sum)
		}},
	} {
		var mu sync.Mutex
		var errs []error
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		scoll.Run(ctx, n+2, func(ctx context.Context, w *scoll.Comm) error {
			c, err := chainOf(ctx, w, n, 3)
			if err != nil || c == nil {
				return err
			}
			defer c.Close()
			err = tc.f(ctx, c)
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
			return err
		})
		if ctx.Err() != nil {
			t.Fatalf("%s: timed out", tc.name)
		}
		cancel()
		named := false
		for _, err := range errs {
			named = named || errors.Is(err, scoll.ErrMismatch)
		}
		if !named {
			t.Errorf("%s: no rank reports a mismatch: %v", tc.name, errs)
		}
	}
}

// TestChainTCP runs the chain collectives over the TCP transport, where
// ranks cannot see each other: a bad argument at the root alone and
// mismatched roots fail instead of leaving the others waiting (the call
// is aborted everywhere), and the chain keeps working after.
func TestChainTCP(t *testing.T) {
	matrix.SkipShort(t, "skipped in -short mode")
	const n = 9
	comms := matrix.TCPComms(t, n+2, tcp.Config{})
	err := matrix.OnAll(comms, func(ctx context.Context, w *scoll.Comm) error {
		c, err := chainOf(ctx, w, n, 11)
		if err != nil || c == nil {
			return err
		}
		defer c.Close()
		r := c.Rank()
		rc := &recorder{}
		if err := checkReductions(ctx, c, matCase[int32](), rc); err != nil {
			return fmt.Errorf("chain rank %d: %w", r, err)
		}
		if err := checkData[float64](ctx, c, 2, rc); err != nil {
			return fmt.Errorf("chain rank %d: %w", r, err)
		}
		// The root's receive buffer is too short: it fails, and the
		// others do not wait for it (those whose part needs nothing from
		// the root may succeed).
		err = scoll.Gather(ctx, c, []int32{1}, make([]int32, 1), 4)
		if r == 4 && !errors.Is(err, scoll.ErrInvalidArgument) {
			return fmt.Errorf("chain rank %d: gather with a bad buffer at the root: %v", r, err)
		}
		root := 0
		if r == 2 {
			root = 3
		}
		// A rank whose part is done before it hears of the mismatch may
		// succeed; the others fail instead of waiting.
		if err := scoll.Reduce(ctx, c, []int32{1}, []int32{0}, scoll.Sum, root); err == nil && (r == 2 || r == 3) {
			return fmt.Errorf("chain rank %d: reduce to different roots succeeded", r)
		}
		sum := []int32{int32(r)}
		if err := scoll.Allreduce(ctx, c, nil, sum, scoll.Sum); err != nil || sum[0] != n*(n-1)/2 {
			return fmt.Errorf("chain rank %d: allreduce after the failures: %d, %v", r, sum[0], err)
		}
		if _, learnt := scoll.ChainStateForTest(c); learnt {
			return fmt.Errorf("chain rank %d: learnt the members", r)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestChainAllreduceSameBits: a floating-point sum on a chain gives every
// rank the same bits, even where the grouping of the terms matters.
func TestChainAllreduceSameBits(t *testing.T) {
	const n = 13
	got := make([]float64, n)
	err := scoll.Run(context.Background(), n, func(ctx context.Context, w *scoll.Comm) error {
		c, err := w.SplitBytes(ctx, []byte("all"), []byte{byte(n - w.Rank())}, scoll.WithChainGroup())
		if err != nil {
			return err
		}
		defer c.Close()
		v := []float64{[]float64{1e16, 1, -1e16, 3.3, 1e-7}[c.Rank()%5] * float64(1+c.Rank())}
		if err := scoll.Allreduce(ctx, c, nil, v, scoll.Sum); err != nil {
			return err
		}
		got[c.Rank()] = v[0]
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for r, v := range got {
		if math.Float64bits(v) != math.Float64bits(got[0]) {
			t.Fatalf("rank %d: %v, rank 0: %v", r, v, got[0])
		}
	}
}

// TestChainEveryOperator: the chain collectives agree with the table
// algorithms (the same communicator after it has learnt its members) for
// every built-in operator on integers and floats.
func TestChainEveryOperator(t *testing.T) {
	ops := []scoll.Op{scoll.Sum, scoll.Prod, scoll.Min, scoll.Max, scoll.Land, scoll.Lor, scoll.Band, scoll.Bor, scoll.Bxor}
	for _, n := range []int{1, 6, 11} {
		err := scoll.Run(context.Background(), n, func(ctx context.Context, w *scoll.Comm) error {
			chain, err := w.SplitBytes(ctx, []byte("c"), []byte{byte(3 * w.Rank() % n)}, scoll.WithChainGroup())
			if err != nil {
				return err
			}
			defer chain.Close()
			table, err := w.SplitBytes(ctx, []byte("c"), []byte{byte(3 * w.Rank() % n)})
			if err != nil {
				return err
			}
			defer table.Close()
			r := chain.Rank()
			for _, op := range ops {
				in := []int64{int64(r%4 + 1), int64(-r), int64(r * r % 7)}
				for _, coll := range []string{"allreduce", "scan", "exscan", "reduce"} {
					run := func(c *scoll.Comm) ([]int64, error) {
						out := []int64{-9, -9, -9}
						switch coll {
						case "allreduce":
							return out, scoll.Allreduce(ctx, c, in, out, op)
						case "scan":
							return out, scoll.Scan(ctx, c, in, out, op)
						case "exscan":
							return out, scoll.Exscan(ctx, c, in, out, op)
						}
						return out, scoll.Reduce(ctx, c, in, out, op, n/2)
					}
					got, err := run(chain)
					if err != nil {
						return fmt.Errorf("%s %s on the chain: %w", coll, op, err)
					}
					want, err := run(table)
					if err != nil {
						return fmt.Errorf("%s %s on the table: %w", coll, op, err)
					}
					if !slices.Equal(got, want) {
						return fmt.Errorf("rank %d: %s %s: chain %v, table %v", r, coll, op, got, want)
					}
				}
				if op.String() == "land" || op.String() == "lor" || op.String() == "band" || op.String() == "bor" || op.String() == "bxor" {
					continue // integers only
				}
				fin := []float64{float64(r) + 0.5, -float64(r % 3)}
				fout, fwant := make([]float64, 2), make([]float64, 2)
				if err := scoll.Allreduce(ctx, chain, fin, fout, op); err != nil {
					return err
				}
				if err := scoll.Allreduce(ctx, table, fin, fwant, op); err != nil {
					return err
				}
				if !slices.Equal(fout, fwant) {
					return fmt.Errorf("rank %d: float allreduce %s: chain %v, table %v", r, op, fout, fwant)
				}
			}
			if _, learnt := scoll.ChainStateForTest(chain); learnt {
				return fmt.Errorf("the chain learnt its members")
			}
			return nil
		})
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
	}
}

// TestChainIsAnAlgorithm: on a chain communicator the chain is the default
// choice of a blocking call (the chain stays unlearnt), WithoutAlgorithm
// declines it (the call learns the members and runs a message schedule)
// and a non-blocking call named chain runs its stand-in schedule; every
// result is right.
func TestChainIsAnAlgorithm(t *testing.T) {
	const n = 6
	err := scoll.Run(context.Background(), n+2, func(ctx context.Context, w *scoll.Comm) error {
		c, err := chainOf(ctx, w, n, 7)
		if err != nil || c == nil {
			return err
		}
		defer c.Close()
		want := int64(n * (n - 1) / 2)
		check := func(what string, learnt bool, call func(recv []int64) error) error {
			recv := make([]int64, 1)
			if err := call(recv); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			if recv[0] != want {
				return fmt.Errorf("%s: %d, want %d", what, recv[0], want)
			}
			if _, l := scoll.ChainStateForTest(c); l != learnt {
				return fmt.Errorf("%s: learnt %v, want %v", what, l, learnt)
			}
			return nil
		}
		in := []int64{int64(c.Rank())}
		if err := check("default", false, func(recv []int64) error {
			return scoll.Allreduce(ctx, c, in, recv, scoll.Sum)
		}); err != nil {
			return err
		}
		if err := check("non-blocking, named", true, func(recv []int64) error {
			r, err := scoll.IAllreduce(ctx, c, in, recv, scoll.Sum, scoll.WithAlgorithm(scoll.ChainAlgorithm))
			if err != nil {
				return err
			}
			return r.Wait(ctx)
		}); err != nil {
			return err
		}
		return check("declined", true, func(recv []int64) error {
			return scoll.Allreduce(ctx, c, in, recv, scoll.Sum, scoll.WithoutAlgorithm(scoll.ChainAlgorithm))
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestChainDeclined: WithoutAlgorithm(ChainAlgorithm) on a chain that has
// not learnt its members makes the call learn them.
func TestChainDeclined(t *testing.T) {
	const n = 5
	err := scoll.Run(context.Background(), n+2, func(ctx context.Context, w *scoll.Comm) error {
		c, err := chainOf(ctx, w, n, 3)
		if err != nil || c == nil {
			return err
		}
		defer c.Close()
		buf := []int32{int32(c.Rank())}
		if err := scoll.Bcast(ctx, c, buf, 2, scoll.WithoutAlgorithm(scoll.ChainAlgorithm)); err != nil {
			return err
		}
		if _, learnt := scoll.ChainStateForTest(c); !learnt || buf[0] != 2 {
			return fmt.Errorf("learnt %v, got %d", learnt, buf[0])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
