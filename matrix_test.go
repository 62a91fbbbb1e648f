package scoll_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"testing"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/sweep"
)

var fullMatrix = flag.Bool("scoll.full", false, "run the full correctness matrix (large counts at every size)")

// matrixSizes are the rank counts of the correctness matrix: powers of two,
// their neighbours and odd counts; 12, 32, 33 and 64 in the long sweeps
// (-tags long).
var matrixSizes = sweep.More([]int{1, 2, 3, 4, 5, 7, 8, 9, 16, 17}, 12, 32, 33, 64)

// matrixCounts returns the counts tried at p ranks. The largest count runs at
// every size only with -scoll.full; by default only where the whole call
// moves at most a few million elements.
func matrixCounts(coll string, p int) []int {
	out := []int{0, 1, 3, 1000}
	big := 65537
	elems := big * p
	if coll == "alltoall" || coll == "alltoallv" {
		elems *= p
	}
	if *fullMatrix || elems <= 1<<18 {
		out = append(out, big)
	}
	return out
}

type num interface{ ~int32 | ~float64 }

// opCase is an operator with its scalar reference.
type opCase[T num] struct {
	name string
	op   scoll.Op
	f    func(a, b T) T // a is the left (lower-rank) operand
}

func opCases[T num]() []opCase[T] {
	first := scoll.UserOp(func(inout, in []T) { copy(inout, in) }, false)
	last := scoll.UserOp(func(inout, in []T) {}, false)
	return []opCase[T]{
		{"sum", scoll.Sum, func(a, b T) T { return a + b }},
		{"max", scoll.Max, func(a, b T) T { return max(a, b) }},
		{"first", first, func(a, b T) T { return a }},
		{"last", last, func(a, b T) T { return b }},
	}
}

// val is the input element i of contributor r: small integers, exact in
// every type.
func val[T num](r, i int) T { return T((r*7+i*13)%23 - 11) }

func fold[T num](f func(a, b T) T, lo, hi, i int) T {
	acc := val[T](lo, i)
	for q := lo + 1; q < hi; q++ {
		acc = f(acc, val[T](q, i))
	}
	return acc
}

// vCounts returns per-rank counts for v-variants: uneven, some zero.
func vCounts(p, n int) []int {
	c := make([]int, p)
	for i := range c {
		c[i] = (i*7 + n) % (n + 2)
	}
	return c
}

// gappedDispls places the blocks in reverse rank order with one-element gaps.
func gappedDispls(counts []int) ([]int, int) {
	d := make([]int, len(counts))
	off := 0
	for i := len(counts) - 1; i >= 0; i-- {
		d[i] = off
		off += counts[i] + 1
	}
	return d, off
}

// runCase runs one collective call with the given algorithm on p ranks and
// checks every rank's result against the naive reference.
func runCase[T num](coll, alg string, p, n, root int, inPlace bool, oc opCase[T], runOpts ...scoll.Option) error {
	return runCaseWith(nil, coll, alg, p, n, root, inPlace, oc, runOpts...)
}

// runCaseWith is runCase with extra call options.
func runCaseWith[T num](callOpts []scoll.CallOption, coll, alg string, p, n, root int, inPlace bool, oc opCase[T], runOpts ...scoll.Option) error {
	return scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
		return checkCase(ctx, c, callOpts, coll, alg, n, root, inPlace, oc)
	}, runOpts...)
}

// checkCase is one rank's part of a matrix case on communicator c: it runs
// the collective with inputs val(rank, i) and checks the result against the
// naive reference.
func checkCase[T num](ctx context.Context, c *scoll.Comm, callOpts []scoll.CallOption, coll, alg string, n, root int, inPlace bool, oc opCase[T]) error {
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
		mine := func(i int) T { return val[T](r, i) }
		switch coll {
		case "bcast":
			buf := make([]T, n)
			if r == root {
				buf = mk(n, func(i int) T { return val[T](root, i) })
			}
			if err := scoll.Bcast(ctx, c, buf, root, opts...); err != nil {
				return err
			}
			return fail(buf, mk(n, func(i int) T { return val[T](root, i) }))
		case "reduce":
			send, recv := mk(n, mine), make([]T, n)
			if inPlace && r == root {
				send, recv = nil, mk(n, mine)
			}
			if err := scoll.Reduce(ctx, c, send, recv, oc.op, root, opts...); err != nil {
				return err
			}
			if r != root {
				return nil
			}
			return fail(recv, mk(n, func(i int) T { return fold(oc.f, 0, p, i) }))
		case "allreduce", "scan", "exscan":
			send, recv := mk(n, mine), mk(n, func(int) T { return 99 })
			if inPlace {
				send, recv = nil, mk(n, mine)
			}
			var err error
			var want []T
			switch coll {
			case "allreduce":
				err = scoll.Allreduce(ctx, c, send, recv, oc.op, opts...)
				want = mk(n, func(i int) T { return fold(oc.f, 0, p, i) })
			case "scan":
				err = scoll.Scan(ctx, c, send, recv, oc.op, opts...)
				want = mk(n, func(i int) T { return fold(oc.f, 0, r+1, i) })
			default:
				err = scoll.Exscan(ctx, c, send, recv, oc.op, opts...)
				if r == 0 {
					return err // rank 0's result is undefined
				}
				want = mk(n, func(i int) T { return fold(oc.f, 0, r, i) })
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
			if err := scoll.ReduceScatterBlock(ctx, c, send, recv, oc.op, opts...); err != nil {
				return err
			}
			return fail(recv[:n], mk(n, func(i int) T { return fold(oc.f, 0, p, r*n+i) }))
		case "reducescatterv":
			counts := vCounts(p, n)
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
			if err := scoll.ReduceScatter(ctx, c, send, recv, counts, oc.op, opts...); err != nil {
				return err
			}
			return fail(recv[:counts[r]], mk(counts[r], func(i int) T { return fold(oc.f, 0, p, off+i) }))
		case "gather", "allgather":
			send, recv := mk(n, mine), make([]T, p*n)
			if inPlace && (coll == "allgather" || r == root) {
				send = nil
				copy(recv[r*n:], mk(n, mine))
			}
			want := mk(p*n, func(j int) T { return val[T](j/max(n, 1), j%max(n, 1)) })
			if coll == "gather" {
				if err := scoll.Gather(ctx, c, send, recv, root, opts...); err != nil || r != root {
					return err
				}
			} else if err := scoll.Allgather(ctx, c, send, recv, opts...); err != nil {
				return err
			}
			return fail(recv, want)
		case "gatherv", "allgatherv":
			counts := vCounts(p, n)
			displs, ext := gappedDispls(counts)
			send, recv := mk(counts[r], mine), mk(ext, func(int) T { return -99 })
			if inPlace && (coll == "allgatherv" || r == root) {
				send = nil
				copy(recv[displs[r]:], mk(counts[r], mine))
			}
			want := slices.Repeat([]T{-99}, ext)
			for q := range p {
				for i := range counts[q] {
					want[displs[q]+i] = val[T](q, i)
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
				send = mk(p*n, func(j int) T { return val[T](j/max(n, 1), j%max(n, 1)) })
				if inPlace {
					recv = nil
				}
			}
			if err := scoll.Scatter(ctx, c, send, recv, root, opts...); err != nil || recv == nil {
				return err
			}
			return fail(recv, mk(n, mine))
		case "scatterv":
			counts := vCounts(p, n)
			displs, ext := gappedDispls(counts)
			var send []T
			recv := make([]T, counts[r])
			if r == root {
				send = make([]T, ext)
				for q := range p {
					for i := range counts[q] {
						send[displs[q]+i] = val[T](q, i)
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
			send := mk(p*n, func(j int) T { return val[T](r*p+j/max(n, 1), j%max(n, 1)) })
			recv := make([]T, p*n)
			if inPlace {
				send, recv = nil, send
			}
			if err := scoll.Alltoall(ctx, c, send, recv, opts...); err != nil {
				return err
			}
			return fail(recv, mk(p*n, func(j int) T { return val[T]((j/max(n, 1))*p+r, j%max(n, 1)) }))
		case "alltoallv":
			cnt := func(s, d int) int { return (s + 2*d + n) % (n + 2) }
			sc, rc := make([]int, p), make([]int, p)
			for q := range p {
				sc[q], rc[q] = cnt(r, q), cnt(q, r)
			}
			sd, sext := gappedDispls(sc)
			rd, rext := gappedDispls(rc)
			send := make([]T, sext)
			for q := range p {
				for i := range sc[q] {
					send[sd[q]+i] = val[T](r*p+q, i)
				}
			}
			recv := slices.Repeat([]T{-99}, rext)
			want := slices.Repeat([]T{-99}, rext)
			for q := range p {
				for i := range rc[q] {
					want[rd[q]+i] = val[T](q*p+r, i)
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

// TestMatrixTransportPaths runs every algorithm with the in-process
// transport's lanes forced on and off, at sizes where the default would
// pick the other path; the exchange algorithm also with the transport's
// exchanges forced on and off (its native path and its messages).
func TestMatrixTransportPaths(t *testing.T) {
	skipShort(t, "skipped in -short mode")
	eachAlgorithm(t, func(t *testing.T, coll string, alg scoll.AlgorithmInfo) {
		exchanges := []bool{true}
		if alg.Name == "exchange" {
			exchanges = []bool{true, false}
		}
		for _, exch := range exchanges {
			for _, lanes := range []bool{true, false} {
				for _, p := range []int{2, 3, 8, 17} {
					if alg.PowerOfTwo && p&(p-1) != 0 {
						continue
					}
					for _, n := range []int{0, 1, 3, 1000} {
						if coll == "barrier" && n > 0 {
							continue
						}
						oc := opCases[int32]()[0]
						if err := runCase(coll, alg.Name, p, n, p-1, false, oc, scoll.WithLanesForTest(lanes), scoll.WithExchangesForTest(exch)); err != nil {
							t.Fatalf("exchanges=%v lanes=%v P=%d n=%d: %v", exch, lanes, p, n, err)
						}
					}
				}
			}
		}
	})
}

// eachAlgorithm runs fn as a parallel subtest COLL/ALG for every
// registered algorithm of every collective.
func eachAlgorithm(t *testing.T, fn func(t *testing.T, coll string, alg scoll.AlgorithmInfo)) {
	for _, coll := range scoll.Collectives() {
		for _, alg := range scoll.Algorithms(coll) {
			t.Run(coll+"/"+alg.Name, func(t *testing.T) {
				t.Parallel()
				fn(t, coll, alg)
			})
		}
	}
}

// TestMatrix runs every registered algorithm of every collective on every
// matrix size and count, several roots, in place and not, int32 and float64,
// and commutative and non-commutative operators, against the naive reference.
func TestMatrix(t *testing.T) {
	skipShort(t, "matrix skipped in -short mode")
	eachAlgorithm(t, func(t *testing.T, coll string, alg scoll.AlgorithmInfo) {
		matrixOne[int32](t, coll, alg, matrixSizes)
		// The second element type changes kernels and byte counts, not
		// schedules: a few sizes unless -scoll.full.
		sizes := sweep.More([]int{2, 7}, 16, 33)
		if *fullMatrix {
			sizes = matrixSizes
		}
		matrixOne[float64](t, coll, alg, sizes)
	})
}

func matrixOne[T num](t *testing.T, coll string, alg scoll.AlgorithmInfo, sizes []int) {
	for _, p := range sizes {
		if alg.PowerOfTwo && p&(p-1) != 0 {
			continue
		}
		err := forCases(coll, alg, p, matrixCounts(coll, p), func(n, root int, inPlace bool, oc opCase[T]) error {
			return runCase(coll, alg.Name, p, n, root, inPlace, oc)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// forCases calls run for every case of the matrix at p ranks: each count,
// several roots, in place and not, and for reductions commutative and
// non-commutative operators. It returns the first error, described.
func forCases[T num](coll string, alg scoll.AlgorithmInfo, p int, counts []int, run func(n, root int, inPlace bool, oc opCase[T]) error) error {
	reduces := map[string]bool{"reduce": true, "allreduce": true, "reducescatter": true, "reducescatterv": true, "scan": true, "exscan": true}[coll]
	rooted := map[string]bool{"bcast": true, "reduce": true, "gather": true, "gatherv": true, "scatter": true, "scatterv": true}[coll]
	ops := []opCase[T]{{name: "none"}}
	if reduces {
		ops = opCases[T]()
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
					if errors.Is(err, scoll.ErrUnsupported) && alg.Commutative && !oc.op.Commutative() {
						continue
					}
					if err != nil {
						var z T
						return fmt.Errorf("%s/%s %T P=%d n=%d root=%d inplace=%v op=%s: %w", coll, alg.Name, z, p, n, root, inPlace, oc.name, err)
					}
				}
			}
		}
	}
	return nil
}

// TestIntUint runs a reduction and a data-movement collective on int and
// uint elements, whose size is the platform's.
func TestIntUint(t *testing.T) {
	ctx := context.Background()
	err := scoll.Run(ctx, 5, func(ctx context.Context, c *scoll.Comm) error {
		r := c.Rank()
		ints := []int{r, -r, 1 << 30}
		sum := make([]int, 3)
		if err := scoll.Allreduce(ctx, c, ints, sum, scoll.Sum); err != nil {
			return err
		}
		if sum[0] != 10 || sum[1] != -10 || sum[2] != 5<<30 {
			return fmt.Errorf("int allreduce: %v", sum)
		}
		uints := make([]uint, 5)
		if err := scoll.Allgather(ctx, c, []uint{uint(r) << 29}, uints); err != nil {
			return err
		}
		for q, v := range uints {
			if v != uint(q)<<29 {
				return fmt.Errorf("uint allgather: %v", uints)
			}
		}
		band := []uint{^uint(0)}
		if err := scoll.Allreduce(ctx, c, []uint{^uint(1 << r)}, band, scoll.Band); err != nil {
			return err
		}
		if band[0] != ^uint(31) {
			return fmt.Errorf("uint band: %x", band[0])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
