// Package matrix holds the correctness matrix the tests of package scoll
// and of package tests share: the naive reference of every collective
// (CheckCase), its cases (ForCases: counts, roots, in place, operators),
// and communicators over TCP and shared memory in one process.
package matrix

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/sweep"
	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/tcp"
)

// SkipShort skips t in -short mode with the message why.
func SkipShort(t *testing.T, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip(why)
	}
}

// Full (-scoll.full) runs the full correctness matrix: the largest count at
// every size, and the second element type at every size.
var Full = flag.Bool("scoll.full", false, "run the full correctness matrix (large counts at every size)")

// Sizes are the rank counts of the correctness matrix: powers of two,
// their neighbours and odd counts; 12, 32, 33 and 64 in the long sweeps
// (-tags long).
var Sizes = sweep.More([]int{1, 2, 3, 4, 5, 7, 8, 9, 16, 17}, 12, 32, 33, 64)

// Counts returns the counts tried at p ranks. The largest count runs at
// every size only with -scoll.full; by default only where the whole call
// moves at most a few million elements.
func Counts(coll string, p int) []int {
	out := []int{0, 1, 3, 1000}
	big := 65537
	elems := big * p
	if coll == "alltoall" || coll == "alltoallv" {
		elems *= p
	}
	if *Full || elems <= 1<<18 {
		out = append(out, big)
	}
	return out
}

// Num are the element types of the matrix.
type Num interface{ ~int32 | ~float64 }

// OpCase is an operator with its scalar reference.
type OpCase[T Num] struct {
	Name string
	Op   scoll.Op
	F    func(a, b T) T // a is the left (lower-rank) operand
}

// OpCases are the operators of the matrix: commutative (sum, max) and not
// (first, last).
func OpCases[T Num]() []OpCase[T] {
	first := scoll.UserOp(func(inout, in []T) { copy(inout, in) }, false)
	last := scoll.UserOp(func(inout, in []T) {}, false)
	return []OpCase[T]{
		{"sum", scoll.Sum, func(a, b T) T { return a + b }},
		{"max", scoll.Max, func(a, b T) T { return max(a, b) }},
		{"first", first, func(a, b T) T { return a }},
		{"last", last, func(a, b T) T { return b }},
	}
}

// Val is the input element i of contributor r: small integers, exact in
// every type.
func Val[T Num](r, i int) T { return T((r*7+i*13)%23 - 11) }

// Fold is the naive reduction of element i over contributors lo..hi-1, in
// rank order.
func Fold[T Num](f func(a, b T) T, lo, hi, i int) T {
	acc := Val[T](lo, i)
	for q := lo + 1; q < hi; q++ {
		acc = f(acc, Val[T](q, i))
	}
	return acc
}

// VCounts returns per-rank counts for v-variants: uneven, some zero.
func VCounts(p, n int) []int {
	c := make([]int, p)
	for i := range c {
		c[i] = (i*7 + n) % (n + 2)
	}
	return c
}

// GappedDispls places the blocks in reverse rank order with one-element gaps.
func GappedDispls(counts []int) ([]int, int) {
	d := make([]int, len(counts))
	off := 0
	for i := len(counts) - 1; i >= 0; i-- {
		d[i] = off
		off += counts[i] + 1
	}
	return d, off
}

// RunCase runs one collective call with the given algorithm on p ranks and
// checks every rank's result against the naive reference.
func RunCase[T Num](coll, alg string, p, n, root int, inPlace bool, oc OpCase[T], runOpts ...scoll.Option) error {
	return RunCaseWith(nil, coll, alg, p, n, root, inPlace, oc, runOpts...)
}

// RunCaseWith is RunCase with extra call options.
func RunCaseWith[T Num](callOpts []scoll.CallOption, coll, alg string, p, n, root int, inPlace bool, oc OpCase[T], runOpts ...scoll.Option) error {
	return scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
		return CheckCase(ctx, c, callOpts, coll, alg, n, root, inPlace, oc)
	}, runOpts...)
}

// CheckCase is one rank's part of a matrix case on communicator c: it runs
// the collective with inputs Val(rank, i) and checks the result against the
// naive reference.
func CheckCase[T Num](ctx context.Context, c *scoll.Comm, callOpts []scoll.CallOption, coll, alg string, n, root int, inPlace bool, oc OpCase[T]) error {
	opts := append([]scoll.CallOption{scoll.WithAlgorithm(alg)}, callOpts...)
	p := c.Size()
	{
		r := c.Rank()
		fail := func(got, want []T) error {
			for i := range want {
				if got[i] != want[i] {
					return fmt.Errorf("rank %d: element %d = %v, want %v", r, i, got[i], want[i])
				}
			}
			if len(got) != len(want) {
				return fmt.Errorf("rank %d: %d elements, want %d", r, len(got), len(want))
			}
			return nil
		}
		mk := func(n int, f func(i int) T) []T {
			s := make([]T, n)
			for i := range s {
				s[i] = f(i)
			}
			return s
		}
		mine := func(i int) T { return Val[T](r, i) }
		switch coll {
		case "bcast":
			buf := make([]T, n)
			if r == root {
				buf = mk(n, func(i int) T { return Val[T](root, i) })
			}
			if err := scoll.Bcast(ctx, c, buf, root, opts...); err != nil {
				return err
			}
			return fail(buf, mk(n, func(i int) T { return Val[T](root, i) }))
		case "reduce":
			send, recv := mk(n, mine), make([]T, n)
			if inPlace && r == root {
				send, recv = nil, mk(n, mine)
			}
			if err := scoll.Reduce(ctx, c, send, recv, oc.Op, root, opts...); err != nil {
				return err
			}
			if r != root {
				return nil
			}
			return fail(recv, mk(n, func(i int) T { return Fold(oc.F, 0, p, i) }))
		case "allreduce", "scan", "exscan":
			send, recv := mk(n, mine), mk(n, func(int) T { return 99 })
			if inPlace {
				send, recv = nil, mk(n, mine)
			}
			var err error
			var want []T
			switch coll {
			case "allreduce":
				err = scoll.Allreduce(ctx, c, send, recv, oc.Op, opts...)
				want = mk(n, func(i int) T { return Fold(oc.F, 0, p, i) })
			case "scan":
				err = scoll.Scan(ctx, c, send, recv, oc.Op, opts...)
				want = mk(n, func(i int) T { return Fold(oc.F, 0, r+1, i) })
			default:
				err = scoll.Exscan(ctx, c, send, recv, oc.Op, opts...)
				if r == 0 {
					return err // rank 0's result is undefined
				}
				want = mk(n, func(i int) T { return Fold(oc.F, 0, r, i) })
			}
			if err != nil {
				return err
			}
			return fail(recv, want)
		case "reducescatter":
			send, recv := mk(p*n, mine), make([]T, n)
			if inPlace {
				send, recv = nil, mk(p*n, mine)
			}
			if err := scoll.ReduceScatterBlock(ctx, c, send, recv, oc.Op, opts...); err != nil {
				return err
			}
			return fail(recv[:n], mk(n, func(i int) T { return Fold(oc.F, 0, p, r*n+i) }))
		case "reducescatterv":
			counts := VCounts(p, n)
			total, off := 0, 0
			for q, k := range counts {
				if q < r {
					off += k
				}
				total += k
			}
			send, recv := mk(total, mine), make([]T, counts[r])
			if inPlace {
				send, recv = nil, mk(total, mine)
			}
			if err := scoll.ReduceScatter(ctx, c, send, recv, counts, oc.Op, opts...); err != nil {
				return err
			}
			return fail(recv[:counts[r]], mk(counts[r], func(i int) T { return Fold(oc.F, 0, p, off+i) }))
		case "gather", "allgather":
			send, recv := mk(n, mine), make([]T, p*n)
			if inPlace && (coll == "allgather" || r == root) {
				send = nil
				copy(recv[r*n:], mk(n, mine))
			}
			want := mk(p*n, func(j int) T { return Val[T](j/max(n, 1), j%max(n, 1)) })
			if coll == "gather" {
				if err := scoll.Gather(ctx, c, send, recv, root, opts...); err != nil || r != root {
					return err
				}
			} else if err := scoll.Allgather(ctx, c, send, recv, opts...); err != nil {
				return err
			}
			return fail(recv, want)
		case "gatherv", "allgatherv":
			counts := VCounts(p, n)
			displs, ext := GappedDispls(counts)
			send, recv := mk(counts[r], mine), mk(ext, func(int) T { return -99 })
			if inPlace && (coll == "allgatherv" || r == root) {
				send = nil
				copy(recv[displs[r]:], mk(counts[r], mine))
			}
			want := slices.Repeat([]T{-99}, ext)
			for q := range p {
				for i := range counts[q] {
					want[displs[q]+i] = Val[T](q, i)
				}
			}
			if coll == "gatherv" {
				if err := scoll.Gatherv(ctx, c, send, recv, counts, displs, root, opts...); err != nil || r != root {
					return err
				}
			} else if err := scoll.Allgatherv(ctx, c, send, recv, counts, displs, opts...); err != nil {
				return err
			}
			return fail(recv, want)
		case "scatter":
			var send []T
			recv := make([]T, n)
			if r == root {
				send = mk(p*n, func(j int) T { return Val[T](j/max(n, 1), j%max(n, 1)) })
				if inPlace {
					recv = nil
				}
			}
			if err := scoll.Scatter(ctx, c, send, recv, root, opts...); err != nil || recv == nil {
				return err
			}
			return fail(recv, mk(n, mine))
		case "scatterv":
			counts := VCounts(p, n)
			displs, ext := GappedDispls(counts)
			var send []T
			recv := make([]T, counts[r])
			if r == root {
				send = make([]T, ext)
				for q := range p {
					for i := range counts[q] {
						send[displs[q]+i] = Val[T](q, i)
					}
				}
				if inPlace {
					recv = nil
				}
			}
			if err := scoll.Scatterv(ctx, c, send, recv, counts, displs, root, opts...); err != nil || recv == nil {
				return err
			}
			return fail(recv, mk(counts[r], mine))
		case "alltoall":
			send := mk(p*n, func(j int) T { return Val[T](r*p+j/max(n, 1), j%max(n, 1)) })
			recv := make([]T, p*n)
			if inPlace {
				send, recv = nil, send
			}
			if err := scoll.Alltoall(ctx, c, send, recv, opts...); err != nil {
				return err
			}
			return fail(recv, mk(p*n, func(j int) T { return Val[T]((j/max(n, 1))*p+r, j%max(n, 1)) }))
		case "alltoallv":
			cnt := func(s, d int) int { return (s + 2*d + n) % (n + 2) }
			sc, rc := make([]int, p), make([]int, p)
			for q := range p {
				sc[q], rc[q] = cnt(r, q), cnt(q, r)
			}
			sd, sext := GappedDispls(sc)
			rd, rext := GappedDispls(rc)
			send := make([]T, sext)
			for q := range p {
				for i := range sc[q] {
					send[sd[q]+i] = Val[T](r*p+q, i)
				}
			}
			recv := slices.Repeat([]T{-99}, rext)
			want := slices.Repeat([]T{-99}, rext)
			for q := range p {
				for i := range rc[q] {
					want[rd[q]+i] = Val[T](q*p+r, i)
				}
			}
			if err := scoll.Alltoallv(ctx, c, send, sc, sd, recv, rc, rd, opts...); err != nil {
				return err
			}
			return fail(recv, want)
		case "barrier":
			return scoll.Barrier(ctx, c, opts...)
		}
		return fmt.Errorf("unknown collective %s", coll)
	}
}

// EachAlgorithm runs fn as a parallel subtest COLL/ALG for every
// registered algorithm of every collective.
func EachAlgorithm(t *testing.T, fn func(t *testing.T, coll string, alg scoll.AlgorithmInfo)) {
	for _, coll := range scoll.Collectives() {
		for _, alg := range scoll.Algorithms(coll) {
			t.Run(coll+"/"+alg.Name, func(t *testing.T) {
				t.Parallel()
				fn(t, coll, alg)
			})
		}
	}
}

// ForCases calls run for every case of the matrix at p ranks: each count,
// several roots, in place and not, and for reductions commutative and
// non-commutative operators. It returns the first error, described.
func ForCases[T Num](coll string, alg scoll.AlgorithmInfo, p int, counts []int, run func(n, root int, inPlace bool, oc OpCase[T]) error) error {
	reduces := map[string]bool{"reduce": true, "allreduce": true, "reducescatter": true, "reducescatterv": true, "scan": true, "exscan": true}[coll]
	rooted := map[string]bool{"bcast": true, "reduce": true, "gather": true, "gatherv": true, "scatter": true, "scatterv": true}[coll]
	ops := []OpCase[T]{{Name: "none"}}
	if reduces {
		ops = OpCases[T]()
	}
	roots := []int{0}
	if rooted && p > 1 {
		roots = []int{0, p - 1, p / 2}
	}
	for _, n := range counts {
		if coll == "barrier" && n > 0 {
			continue
		}
		for _, root := range roots {
			for _, inPlace := range []bool{false, true} {
				if coll == "alltoallv" && inPlace || coll == "bcast" && inPlace || coll == "barrier" && inPlace {
					continue
				}
				for k, oc := range ops {
					// Big counts and extra roots with the first operator only.
					if k > 0 && (n > 1000 || root != roots[0]) {
						continue
					}
					err := run(n, root, inPlace, oc)
					if errors.Is(err, scoll.ErrUnsupported) && alg.Commutative && !oc.Op.Commutative() {
						continue
					}
					if err != nil {
						var z T
						return fmt.Errorf("%s/%s %T P=%d n=%d root=%d inplace=%v op=%s: %w", coll, alg.Name, z, p, n, root, inPlace, oc.Name, err)
					}
				}
			}
		}
	}
	return nil
}

// TCPComms returns the world communicators of a job of p ranks in this
// process, connected over loopback TCP.
func TCPComms(t testing.TB, p int, cfg tcp.Config) []*scoll.Comm {
	t.Helper()
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second // loaded CI machines
	}
	eps, err := tcp.NewLocalGroup(context.Background(), p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return WorldComms(t, eps)
}

// WorldComms returns the world communicators over endpoints eps, closed
// when the test ends.
func WorldComms[T transport.Transport](t testing.TB, eps []T, opts ...scoll.Option) []*scoll.Comm {
	comms := make([]*scoll.Comm, len(eps))
	for r, ep := range eps {
		comms[r] = scoll.NewComm(ep, opts...)
	}
	t.Cleanup(func() {
		for _, c := range comms {
			c.Close()
		}
	})
	return comms
}

// OnAll runs fn on every rank of comms at once and joins their errors.
func OnAll(comms []*scoll.Comm, fn func(ctx context.Context, c *scoll.Comm) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	errs := make([]error, len(comms))
	var wg sync.WaitGroup
	for r, c := range comms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = fn(ctx, c)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
