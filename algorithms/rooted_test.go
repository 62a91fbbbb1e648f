package algorithms

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/schedule"

	"github.com/scoll/scoll/internal/sweep"
)

// rootedAlgs are the rooted algorithms of bcast_*.go, gather_*.go,
// scatter_*.go and reduce_*.go (Sack's composites aside).
var rootedAlgs = map[schedule.Collective][]string{
	schedule.Bcast: {"linear", "binomial", "k-nomial", "binary", "split-binary", "pipeline",
		"scatter-allgather", "scatter-ring-allgather", "two-tree", "optimal"},
	schedule.Gather:   {"linear", "binomial"},
	schedule.Gatherv:  {"linear"},
	schedule.Scatter:  {"linear", "binomial"},
	schedule.Scatterv: {"linear"},
	schedule.Reduce: {"linear", "binomial", "k-nomial", "pipeline", "in-order-binary", "rabenseifner",
		"radix-k", "two-tree", "linear-pipeline"},
}

// rootedVerify verifies in on one call; reductions with a non-commutative
// operator and Options{Ordered: true}.
func rootedVerify(t *testing.T, in *Info, prm Params) {
	t.Helper()
	if in.Coll.Reduces() {
		prm.Commutative = false
	}
	if err := in.Check(&prm); err != nil {
		t.Fatalf("%s/%s: Check: %v", in.Coll, in.Name, err)
	}
	err := schedule.Verify(&prm.Spec, in.Generator(prm), schedule.Options{Ordered: in.Coll.Reduces()})
	if err != nil {
		t.Fatalf("%s/%s P=%d n=%d root=%d inplace=%v seg=%d radix=%d: %v", in.Coll, in.Name,
			prm.Size, prm.Count, prm.Root, prm.InPlace, prm.Segment, prm.Radix, err)
	}
}

// rootedRoots returns the roots to try with P ranks.
func rootedRoots(P int) []int {
	roots := []int{0}
	for _, r := range []int{P - 1, P / 2, 1, P - 2} {
		if r > 0 && r < P && !slices.Contains(roots, r) {
			roots = append(roots, r)
		}
	}
	return roots
}

// TestRootedSegmented exercises the pipelined algorithms with many segments
// (TestVerifyAll's counts fit in one default segment), including segments
// that do not divide the count.
func TestRootedSegmented(t *testing.T) {
	algs := []algRef{
		{schedule.Bcast, Pipeline}, {schedule.Bcast, Binary}, {schedule.Bcast, SplitBinary},
		{schedule.Bcast, TwoTree}, {schedule.Bcast, Optimal}, {schedule.Reduce, Pipeline}, {schedule.Reduce, InOrderBinary},
		{schedule.Reduce, TwoTree}, {schedule.Reduce, LinearPipeline},
	}
	eachAlg(t, algs, func(t *testing.T, in *Info) {
		for _, P := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 31} {
			for _, n := range []int{1, 5, 13, 2*P + 1} {
				for _, seg := range []int{1, 2, 3, 7} {
					for _, root := range rootedRoots(P) {
						for _, inPlace := range []bool{false, true} {
							spec := schedule.Spec{Coll: in.Coll, Size: P, Root: root, Count: n, InPlace: inPlace}
							rootedVerify(t, in, Params{Spec: spec, Segment: seg, ElemSize: 4})
						}
					}
				}
			}
		}
	})
}

// TestRootedSegmentCount checks that a pipelined schedule really is cut into
// segments.
func TestRootedSegmentCount(t *testing.T) {
	for _, c := range []schedule.Collective{schedule.Bcast, schedule.Reduce} {
		in := mustLookup(t, c, "pipeline")
		prm := Params{Spec: schedule.Spec{Coll: c, Size: 4, Root: 1, Count: 10}, Segment: 3, ElemSize: 4}
		prm.Rank = 2
		s, err := in.Schedule(&prm)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Messages(); got != 4 {
			t.Errorf("%s/pipeline: rank 2 sends %d messages, want 4 segments of 3,3,3,1:\n%s", c, got, s)
		}
	}
}

// TestRootedRadix runs the k-nomial algorithms with several radices.
func TestRootedRadix(t *testing.T) {
	for _, c := range []schedule.Collective{schedule.Bcast, schedule.Reduce} {
		in := mustLookup(t, c, "k-nomial")
		t.Run(c.String(), func(t *testing.T) {
			t.Parallel()
			for _, k := range []int{2, 3, 5, 8, 16} {
				for _, P := range []int{1, 2, 3, 5, 8, 9, 10, 26, 27, 28, 64, 65} {
					for _, n := range []int{0, 1, 7} {
						for _, root := range rootedRoots(P) {
							for _, inPlace := range []bool{false, true} {
								spec := schedule.Spec{Coll: c, Size: P, Root: root, Count: n, InPlace: inPlace}
								rootedVerify(t, in, Params{Spec: spec, Radix: k, ElemSize: 4})
							}
						}
					}
				}
			}
		})
	}
}

// TestRootedLarge proves the logarithmic algorithms at P = 4096 and 4097
// with small counts (two of the four cases without -tags long).
func TestRootedLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large P")
	}
	for c, names := range rootedAlgs {
		for _, name := range names {
			in := mustLookup(t, c, name)
			if in.Linear {
				continue
			}
			t.Run(c.String()+"/"+name, func(t *testing.T) {
				t.Parallel()
				type spec struct{ P, n, root int }
				for _, s := range sweep.More([]spec{{4096, 3, 0}, {4097, 1, 1234}}, spec{4096, 1, 1234}, spec{4097, 3, 4096}) {
					spec := schedule.Spec{Coll: c, Size: s.P, Root: s.root, Count: s.n, InPlace: s.root == 1234}
					rootedVerify(t, in, Params{Spec: spec, ElemSize: 4})
				}
			})
		}
	}
}

// TestRootedCommutative checks that Info.Check refuses every NeedsCommutative
// algorithm for a non-commutative operator, and that the rooted algorithms,
// which all keep rank order, accept one.
func TestRootedCommutative(t *testing.T) {
	spec := schedule.Spec{Size: 8, Root: 2, Count: 5}
	for c := range schedule.NumCollectives {
		for _, in := range List(c) {
			prm := Params{Spec: spec}
			prm.Coll = c
			if in.Requires&NeedsCommutative == 0 || !c.Reduces() {
				continue
			}
			if err := in.Check(&prm); !errors.Is(err, errs.Unsupported) {
				t.Errorf("%s/%s needs a commutative operator but Check(non-commutative) = %v", c, in.Name, err)
			}
			prm.Commutative = true
			if err := in.Check(&prm); err != nil {
				t.Errorf("%s/%s: Check(commutative, P=8) = %v", c, in.Name, err)
			}
		}
	}
	for c, names := range rootedAlgs {
		for _, name := range names {
			in := mustLookup(t, c, name)
			if in.Requires != 0 {
				t.Errorf("%s/%s declares %v; it should work for any P and operator", c, name, in.Requires)
			}
			prm := Params{Spec: spec}
			prm.Coll = c
			if err := in.Check(&prm); err != nil {
				t.Errorf("%s/%s: Check(non-commutative) = %v", c, name, err)
			}
		}
	}
}

// TestRootedWrappedTreeLosesOrder shows why reduce uses two-sided trees: a
// binomial tree over ranks relative to a non-zero root combines a subtree
// that wraps around rank P−1 out of rank order, and the verifier notices.
func TestRootedWrappedTreeLosesOrder(t *testing.T) {
	spec := schedule.Spec{Coll: schedule.Reduce, Size: 6, Root: 3, Count: 4}
	gen := func(b *schedule.Builder) {
		prm := Params{Spec: spec, Rank: b.Rank()}
		rtReduce(b, &prm, rtRelative(spec.Size, spec.Size, spec.Root, 2, b.Rank()), spec.Count)
	}
	if err := schedule.Verify(&spec, gen, schedule.Options{}); err != nil {
		t.Fatalf("commutative: %v", err)
	}
	if err := schedule.Verify(&spec, gen, schedule.Options{Ordered: true}); !errors.Is(err, schedule.ErrVerify) {
		t.Fatalf("ordered: got %v, want a verification failure", err)
	}
}

// TestRootedTwoSidedDepth checks the claims of rtTwoSided: with k = 2 no
// rank is more than ⌈lg P⌉ hops from the root, every subtree is the
// contiguous range its parent lists, and children are sorted by level.
func TestRootedTwoSidedDepth(t *testing.T) {
	for P := 1; P <= 130; P++ {
		for root := range P {
			nodes := make([]rtNode, P)
			for r := range P {
				nodes[r] = rtTwoSided(P, root, 2, r)
			}
			for r := range P {
				d := 0
				for x := r; x != root; x = nodes[x].parent {
					if d++; d > P {
						t.Fatalf("P=%d root=%d: rank %d does not reach the root", P, root, r)
					}
				}
				if d > ceilLog2(P) {
					t.Errorf("P=%d root=%d: rank %d is %d hops deep, want ≤ %d", P, root, r, d, ceilLog2(P))
				}
				n := nodes[r]
				if r < n.lo || r >= n.hi {
					t.Errorf("P=%d root=%d: rank %d outside its range [%d,%d)", P, root, r, n.lo, n.hi)
				}
				size := 1
				for i, c := range n.kids {
					k := nodes[c.rank]
					if k.parent != r || k.lo != c.lo || k.hi != c.hi || k.level != c.level {
						t.Errorf("P=%d root=%d: kid %+v of %d disagrees with its node %+v", P, root, c, r, k)
					}
					if i > 0 && c.level < n.kids[i-1].level {
						t.Errorf("P=%d root=%d: kids of %d not sorted by level", P, root, r)
					}
					if c.level >= n.level {
						t.Errorf("P=%d root=%d: kid %d's level %d not below %d's %d", P, root, c.rank, c.level, r, n.level)
					}
					size += c.hi - c.lo
				}
				if size != n.hi-n.lo {
					t.Errorf("P=%d root=%d: rank %d's range [%d,%d) but subtree size %d", P, root, r, n.lo, n.hi, size)
				}
			}
		}
	}
}

// TestRootedTwoTree checks the double binary tree: both trees span all
// positions, and every position is interior in at most one of them.
func TestRootedTwoTree(t *testing.T) {
	for m := 1; m <= 300; m++ {
		sig := func(j int) int { return m + 1 - j }
		if m%2 == 1 {
			sig = func(j int) int { return j%m + 1 }
		}
		interior := make([]int, m+1)
		for tree, s := range []func(int) int{func(j int) int { return j }, sig} {
			edges := 0
			for j := 1; j <= m; j++ {
				kids := rtIoKids(j, m)
				if len(kids) > 0 {
					interior[s(j)]++
				}
				for _, c := range kids {
					if c < 1 || c > m || rtIoParent(c, m) != j {
						t.Fatalf("m=%d tree %d: kid %d of %d has parent %d", m, tree, c, j, rtIoParent(c, m))
					}
					edges++
				}
				if d := rtIoDepth(j, m); d > ceilLog2(m+1) {
					t.Errorf("m=%d: position %d at depth %d", m, j, d)
				}
			}
			if edges != m-1 {
				t.Fatalf("m=%d tree %d: %d edges, want %d", m, tree, edges, m-1)
			}
		}
		for x := 1; x <= m; x++ {
			if interior[x] > 1 {
				t.Errorf("m=%d: rank %d is interior in both trees", m, x)
			}
		}
	}
}

// TestRootedRounds checks the round counts of the binomial algorithms: no
// rank takes more than ⌈lg P⌉ rounds.
func TestRootedRounds(t *testing.T) {
	for _, c := range []schedule.Collective{schedule.Bcast, schedule.Gather, schedule.Scatter, schedule.Reduce} {
		in := mustLookup(t, c, "binomial")
		for _, P := range []int{2, 3, 5, 8, 13, 16, 33} {
			for _, root := range rootedRoots(P) {
				for r := range P {
					prm := Params{Spec: schedule.Spec{Coll: c, Size: P, Root: root, Count: 3, InPlace: true}, Rank: r, ElemSize: 4}
					s, err := in.Schedule(&prm)
					if err != nil {
						t.Fatal(err)
					}
					if len(s.Rounds) > ceilLog2(P) {
						t.Errorf("%s/binomial P=%d root=%d rank %d: %d rounds, want ≤ %d:\n%s", c, P, root, r, len(s.Rounds), ceilLog2(P), s)
					}
				}
			}
		}
	}
}

// TestRootedCosts checks that the cost formulas are finite, non-negative and
// charge something whenever there is something to do.
func TestRootedCosts(t *testing.T) {
	for c, names := range rootedAlgs {
		for _, name := range names {
			in := mustLookup(t, c, name)
			for _, P := range []int{1, 2, 7, 64, 1000} {
				for _, n := range []int{0, 1, 1 << 20} {
					prm := Params{Spec: schedule.Spec{Coll: c, Size: P, Root: P / 3, Count: n}, ElemSize: 8}
					if c.Vector() {
						prm.Counts = make([]int, P)
						for i := range prm.Counts {
							prm.Counts[i] = n
						}
					}
					k := in.Cost(&prm)
					for _, v := range []float64{k.Alpha, k.Beta, k.Gamma} {
						if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
							t.Fatalf("%s/%s P=%d n=%d: cost %+v", c, name, P, n, k)
						}
					}
					if P > 1 && n > 0 && (k.Alpha == 0 || k.Beta == 0) {
						t.Errorf("%s/%s P=%d n=%d: cost %+v charges nothing", c, name, P, n, k)
					}
					if P > 1 && n > 0 && (k.Gamma > 0) != c.Reduces() {
						t.Errorf("%s/%s P=%d n=%d: γ term %v", c, name, P, n, k.Gamma)
					}
				}
			}
		}
	}
}
