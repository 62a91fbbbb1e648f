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
						for _, comm := range []bool{true, false} {
							if !comm && !c.Reduces() {
								continue
							}
							prm := Params{Spec: s, Commutative: comm, ElemSize: 4}
							if err := in.Check(&prm); err != nil {
								if !errors.Is(err, errs.Unsupported) {
									t.Fatalf("Check: %v", err)
								}
								continue
							}
							err := schedule.Verify(&prm.Spec, in.Generator(prm), schedule.Options{Ordered: !comm})
							if err != nil {
								t.Fatalf("P=%d n=%d root=%d inplace=%v commutative=%v: %v", p, s.Count, s.Root, s.InPlace, comm, err)
							}
						}
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
