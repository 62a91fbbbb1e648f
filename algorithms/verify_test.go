package algorithms

import (
	"errors"
	"fmt"
	"testing"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/schedule"
)

// testSizes are the rank counts every algorithm is verified on.
var testSizes = []int{1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 32, 33, 64}

// specsFor returns the calls to verify for collective c with p ranks.
func specsFor(c schedule.Collective, p int) []schedule.Spec {
	var out []schedule.Spec
	roots := []int{0}
	if c.Rooted() && p > 1 {
		roots = append(roots, p-1)
		if p > 2 {
			roots = append(roots, p/2)
		}
	}
	for _, n := range []int{0, 1, 3, 2*p + 1} {
		for _, root := range roots {
			for _, inPlace := range []bool{false, true} {
				if c == schedule.Barrier && (n > 0 || inPlace) || c == schedule.Alltoallv && inPlace {
					continue
				}
				s := schedule.Spec{Coll: c, Size: p, Root: root, Count: n, InPlace: inPlace}
				switch c {
				case schedule.Gatherv, schedule.Scatterv, schedule.Allgatherv, schedule.ReduceScatter:
					s.Counts = make([]int, p)
					for i := range s.Counts {
						s.Counts[i] = (i*7 + n) % (n + 2) // some zero, uneven
					}
					if c != schedule.ReduceScatter && n == 3 {
						// gaps and reversed order in the gathered buffer
						s.Displs = make([]int, p)
						off := 0
						for i := p - 1; i >= 0; i-- {
							s.Displs[i] = off
							off += s.Counts[i] + 1
						}
					}
				case schedule.Alltoallv:
					s.Matrix = make([][]int, p)
					for i := range s.Matrix {
						s.Matrix[i] = make([]int, p)
						for j := range s.Matrix[i] {
							s.Matrix[i][j] = (i + 2*j + n) % (n + 2)
						}
					}
				}
				out = append(out, s)
			}
		}
	}
	return out
}

// TestVerifyAll proves every registered algorithm correct by symbolic
// execution on every test size, count, root and in-place mode, with
// commutative and (where supported) non-commutative operators.
func TestVerifyAll(t *testing.T) {
	for c := range schedule.NumCollectives {
		for _, in := range List(c) {
			t.Run(c.String()+"/"+in.Name, func(t *testing.T) {
				t.Parallel()
				for _, p := range testSizes {
					for _, s := range specsFor(c, p) {
						verifyBoth(t, in, Params{Spec: s, ElemSize: 4})
					}
				}
			})
		}
	}
}

// TestRegistryComplete checks the names the public contract promises.
func TestRegistryComplete(t *testing.T) {
	want := map[schedule.Collective][]string{
		schedule.Allgather:          {"ring", "recursive-doubling", "bruck", "linear", "neighbor-exchange"},
		schedule.Allreduce:          {"ring", "recursive-doubling", "rabenseifner", "reduce-bcast", "allgather-reduce"},
		schedule.Bcast:              {"binomial", "scatter-allgather", "linear", "k-nomial", "binary", "split-binary", "pipeline", "scatter-ring-allgather", "two-tree"},
		schedule.ReduceScatterBlock: {"ring", "recursive-halving", "pairwise", "reduce-scatter"},
		schedule.Reduce:             {"linear", "binomial", "k-nomial", "pipeline", "in-order-binary", "rabenseifner"},
		schedule.Alltoall:           {"direct", "pairwise", "bruck"},
		schedule.Gather:             {"linear", "binomial"},
		schedule.Scatter:            {"linear", "binomial"},
		schedule.Scan:               {"linear", "recursive-doubling", "butterfly"},
		schedule.Exscan:             {"linear", "recursive-doubling", "butterfly"},
		schedule.Barrier:            {"dissemination", "recursive-doubling", "tree"},
	}
	for c, names := range want {
		for _, n := range names {
			if _, ok := Lookup(c, n); !ok {
				t.Errorf("%s/%s not registered", c, n)
			}
		}
	}
	for c := range schedule.NumCollectives {
		if len(List(c)) == 0 {
			t.Errorf("%s has no algorithm", c)
		}
	}
}

func ExampleList() {
	for _, in := range List(schedule.Allgatherv) {
		fmt.Println(in.Name)
	}
	// Output:
	// bruck
	// bucket
	// bucket3
	// bucket6
	// linear
	// neighbor-exchange
	// rd-halving
	// rd-hybrid
	// rd-optimal
	// rd-path
	// rd-paths
	// recursive-doubling
	// ring
}

// verifyBoth proves in on the call base describes with a commutative
// operator and, for reductions, with a non-commutative one and rank order
// checked; a combination the algorithm does not support is skipped.
func verifyBoth(t *testing.T, in *Info, base Params) {
	t.Helper()
	for _, comm := range []bool{true, false} {
		if !comm && !base.Coll.Reduces() {
			continue
		}
		prm := base
		prm.Commutative = comm
		if err := in.Check(&prm); err != nil {
			if !errors.Is(err, errs.Unsupported) {
				t.Fatalf("Check: %v", err)
			}
			continue
		}
		if err := schedule.Verify(&prm.Spec, in.Generator(prm), schedule.Options{Ordered: !comm}); err != nil {
			t.Fatalf("P=%d n=%d counts=%v root=%d inplace=%v grid=%v commutative=%v: %v",
				prm.Size, prm.Count, prm.Counts, prm.Root, prm.InPlace, prm.Grid, comm, err)
		}
	}
}

// algRef names a registered algorithm.
type algRef struct {
	coll schedule.Collective
	name string
}

// algsOf returns the algorithms called names of every collective of colls.
func algsOf(colls []schedule.Collective, names ...string) []algRef {
	var out []algRef
	for _, c := range colls {
		for _, n := range names {
			out = append(out, algRef{c, n})
		}
	}
	return out
}

// mustLookup returns the algorithm c/name; the test fails when there is none.
func mustLookup(t *testing.T, c schedule.Collective, name string) *Info {
	t.Helper()
	in, ok := Lookup(c, name)
	if !ok {
		t.Fatalf("%s/%s not registered", c, name)
	}
	return in
}

// eachAlg runs f in a parallel subtest per algorithm of algs.
func eachAlg(t *testing.T, algs []algRef, f func(t *testing.T, in *Info)) {
	for _, a := range algs {
		in := mustLookup(t, a.coll, a.name)
		t.Run(a.coll.String()+"/"+a.name, func(t *testing.T) {
			t.Parallel()
			f(t, in)
		})
	}
}

// withCount returns s with n elements per block and, for the v-variants,
// the uneven counts (5i + n) mod (n + m) and packed displacements.
func withCount(s schedule.Spec, n, m int) schedule.Spec {
	s.Count = n
	if s.Counts != nil {
		s.Counts = make([]int, s.Size)
		for i := range s.Counts {
			s.Counts[i] = (i*5 + n) % (n + m)
		}
		s.Displs = nil
	}
	return s
}
