package algorithms

import (
	"errors"
	"flag"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"testing"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/schedule"

	"github.com/scoll/scoll/internal/sweep"
)

var largeGrids = flag.Bool("scoll.large", false, "verify the grid algorithms at 32,768 ranks too")

func TestTorusStages(t *testing.T) {
	S, ok := torusStages([]int{8, 8, 8})
	if want := []int{8, 5, 2, 7, 4, 1, 6, 3, 0}; !ok || !slices.Equal(S, want) {
		t.Fatalf("8×8×8: S = %v, want %v (Sack sec. 3.4.1)", S, want)
	}
	if _, ok := torusStages([]int{8, 6}); ok {
		t.Fatal("8×6 accepted")
	}
	// Unequal sizes: every bit once, and the hop distance of a stage (the
	// flipped bit's weight within its dimension) never grows.
	for _, dims := range [][]int{{8, 16, 32}, {2, 64}, {32, 4, 1, 8}, {1}, {16}} {
		S, ok := torusStages(dims)
		if !ok {
			t.Fatalf("%v rejected", dims)
		}
		total := 0
		for _, k := range dims {
			total += bits.Len(uint(k)) - 1
		}
		seen := make([]bool, total)
		prev := 1 << 30
		for _, bit := range S {
			if seen[bit] {
				t.Fatalf("%v: bit %d twice in %v", dims, bit, S)
			}
			seen[bit] = true
			off := 0
			for _, k := range dims {
				w := bits.Len(uint(k)) - 1
				if bit < off+w {
					hop := 1 << (bit - off)
					if hop > prev {
						t.Fatalf("%v: S = %v: hop distance grows to %d", dims, S, hop)
					}
					prev = hop
					break
				}
				off += w
			}
		}
		if len(S) != total {
			t.Fatalf("%v: S = %v, want %d stages", dims, S, total)
		}
	}
	// The largest dimension goes first: on 8×16×32 the first two stages
	// are in Z (5 bits, then 4 left ties with Y and the higher one wins).
	S, _ = torusStages([]int{8, 16, 32})
	if S[0] != 11 || S[1] != 10 || S[2] != 6 {
		t.Fatalf("8×16×32: S = %v, want 11, 10, 6 first", S)
	}
}

func TestDefaultGrid(t *testing.T) {
	for _, tc := range []struct {
		p, d int
		want []int
	}{
		{512, 3, []int{8, 8, 8}}, {128, 3, []int{4, 4, 8}}, {4096, 3, []int{16, 16, 16}},
		{12, 3, []int{2, 2, 3}}, {7, 3, []int{1, 1, 7}}, {1, 3, []int{1, 1, 1}},
		{0, 2, []int{1, 1}}, {36, 2, []int{6, 6}}, {30, 3, []int{2, 3, 5}}, {8, 0, []int{8}},
	} {
		if got := DefaultGrid(tc.p, tc.d); !slices.Equal(got, tc.want) {
			t.Errorf("DefaultGrid(%d, %d) = %v, want %v", tc.p, tc.d, got, tc.want)
		}
	}
	for p := 1; p <= 200; p++ {
		g := DefaultGrid(p, 3)
		if err := CheckGrid(g, p); err != nil {
			t.Fatalf("DefaultGrid(%d) = %v: %v", p, g, err)
		}
	}
}

func TestCheckGrid(t *testing.T) {
	for _, tc := range []struct {
		dims []int
		size int
		ok   bool
	}{
		{[]int{2, 3}, 6, true}, {[]int{6}, 6, true}, {[]int{1, 6, 1}, 6, true},
		{nil, 6, false}, {[]int{}, 6, false}, {[]int{2, 2}, 6, false}, {[]int{0, 6}, 6, false},
		{[]int{-2, -3}, 6, false}, {[]int{1 << 40, 1 << 40, 1 << 40}, 8, false},
	} {
		err := CheckGrid(tc.dims, tc.size)
		if (err == nil) != tc.ok {
			t.Errorf("CheckGrid(%v, %d) = %v, want ok=%v", tc.dims, tc.size, err, tc.ok)
		}
		if err != nil && !errors.Is(err, errs.InvalidArgument) {
			t.Errorf("CheckGrid(%v, %d) = %v, not InvalidArgument", tc.dims, tc.size, err)
		}
	}
	in, _ := Lookup(schedule.Allgather, "bucket6")
	p := Params{Spec: schedule.Spec{Coll: schedule.Allgather, Size: 8, Count: 1}, Grid: []int{2, 2}}
	if err := in.Check(&p); !errors.Is(err, errs.InvalidArgument) {
		t.Fatalf("Check with a 2×2 grid of 8 ranks: %v", err)
	}
}

func TestBucketOrders(t *testing.T) {
	dims := []int{2, 3, 4}
	for first := range dims {
		g := newGridOrder(dims, first)
		seen := make([]bool, 24)
		for r := range 24 {
			q := g.index(r)
			if g.rank(q) != r || seen[q] {
				t.Fatalf("order %d: rank %d → %d → %d", first, r, q, g.rank(q))
			}
			seen[q] = true
		}
	}
	// YZX numbering of 2×3×4: rank 1 (x=1, y=0, z=0) is at 12 (x has
	// stride 3·4 there).
	if q := newGridOrder(dims, 1).index(1); q != 12 {
		t.Fatalf("YZX index of rank 1 = %d, want 12", q)
	}
}

// sackAlgorithms are the algorithms of Sack's sec. 3.2.2 to 3.6.1 (sack.go).
var sackAlgorithms = slices.Concat(
	algsOf([]schedule.Collective{schedule.Allgather, schedule.Allgatherv},
		RDHalving, RDOptimal, Bucket, Bucket3, Bucket6, RDPath, RDPaths, RDHybrid),
	algsOf([]schedule.Collective{schedule.ReduceScatterBlock, schedule.ReduceScatter},
		RHDoubling, RHOptimal, Bucket, Bucket3, Bucket6, RHPath, RHPaths, RHHybrid),
	algsOf([]schedule.Collective{schedule.Allreduce},
		RDHalving, RDOptimal, Bucket, Bucket3, Bucket6, RDPath, RDPaths),
	algsOf([]schedule.Collective{schedule.Bcast}, ScatterRDHalving, ScatterRDOptimal,
		ScatterBucket, ScatterBucket3, ScatterBucket6, ScatterRDPath, ScatterRDPaths),
	algsOf([]schedule.Collective{schedule.Reduce}, RDHalvingGather, RDOptimalGather,
		BucketGather, Bucket3Gather, Bucket6Gather, RDPathGather, RDPathsGather),
)

// pathAlgorithms are the algorithms that take a Placement: Sack's
// algorithms along paths.
var pathAlgorithms = slices.DeleteFunc(slices.Clone(sackAlgorithms), func(a algRef) bool {
	return !strings.Contains(a.name, "-path")
})

// TestVerifyGrids proves Sack's algorithms on explicit grids, cubic or not,
// powers of two or not, with counts that do not divide into sections.
func TestVerifyGrids(t *testing.T) {
	grids := [][]int{{2, 2, 2}, {2, 2, 4}, {4, 4}, {2, 8}, {3, 5}, {2, 3, 4}, {1, 1, 7}, {4, 4, 4}, {3, 1, 3}, {2, 2, 2, 2}}
	eachAlg(t, sackAlgorithms, func(t *testing.T, in *Info) {
		for _, g := range grids {
			P := 1
			for _, k := range g {
				P *= k
			}
			for _, s := range specsFor(in.Coll, P) {
				if s.Count == 1 {
					for _, n := range []int{5, 6, 7} {
						verifyGrid(t, in, withCount(s, n, 3), g)
					}
				}
				verifyGrid(t, in, s, g)
			}
		}
	})
}

func verifyGrid(t *testing.T, in *Info, s schedule.Spec, grid []int) {
	t.Helper()
	verifyBoth(t, in, Params{Spec: s, ElemSize: 4, Grid: grid})
}

// TestVerifyGridsLarge proves them at 512 (8×8×8) ranks, with -tags long
// also at 4,096 (16×16×16 and 8×16×32), and with -scoll.large at 32,768
// (32×32×32). The linear
// ones (the bucket family: Θ(P^(1/3)) rounds of up to 12 messages) run at
// 512 ranks only by default, to keep the suite short. With -scoll.large
// everything runs and is proven exactly (go test ./algorithms -run
// VerifyGridsLarge -scoll.large -timeout 6h, the package before the flag go
// test does not know: about 6 minutes and 4.5 GB on 2 cores; reduce-scatter
// bucket6 at 32,768 ranks takes a minute and 3 GB of it), and the reducing
// bucket family at 32,768 ranks is proven a second time with
// Options.Fingerprint, which must accept what exact tracking accepts.
func TestVerifyGridsLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large grids skipped in -short mode")
	}
	grids := sweep.More([][]int{{8, 8, 8}}, []int{16, 16, 16}, []int{8, 16, 32})
	if *largeGrids {
		grids = append(grids, []int{32, 32, 32})
	}
	for _, a := range sackAlgorithms {
		if a.coll.Vector() {
			continue
		}
		in, _ := Lookup(a.coll, a.name)
		for _, g := range grids {
			if in.Linear && g[0]*g[1]*g[2] > 512 && !*largeGrids {
				continue
			}
			P := g[0] * g[1] * g[2]
			t.Run(fmt.Sprintf("%s/%s/%dx%dx%d", a.coll, a.name, g[0], g[1], g[2]), func(t *testing.T) {
				t.Parallel()
				// 7 elements: sections of 1 or 2 elements, some empty
				// for bucket6 (k = 6 sections of 7 elements is 2,1,1,1,1,1).
				s := schedule.Spec{Coll: a.coll, Size: P, Count: 7, Root: P / 2}
				verifyGrid(t, in, s, g)
				if P <= 4096 || !in.Linear || !a.coll.Reduces() {
					return
				}
				prm := Params{Spec: s, Commutative: true, ElemSize: 4, Grid: g}
				if err := in.Check(&prm); err != nil {
					t.Fatalf("Check: %v", err)
				}
				opt := schedule.Options{Fingerprint: true, Seed: uint64(P)}
				if err := schedule.Verify(&prm.Spec, in.Generator(prm), opt); err != nil {
					t.Fatalf("grid %v with fingerprints: %v", g, err)
				}
			})
		}
	}
}
