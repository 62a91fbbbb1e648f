package algorithms

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/schedule"
)

// neighbours reports whether nodes a and b of the torus dims are one link
// apart and, if so, along which dimension.
func neighbours(dims []int, a, b int) (dim int, ok bool) {
	diff := -1
	for j, k := range dims {
		ca, cb := a%k, b%k
		a, b = a/k, b/k
		if ca == cb {
			continue
		}
		if diff >= 0 || (mod(ca+1, k) != cb && mod(cb+1, k) != ca) {
			return 0, false
		}
		diff = j
	}
	return diff, diff >= 0
}

func TestSnakePath(t *testing.T) {
	for _, dims := range [][]int{{5}, {3, 4}, {4, 3, 2}, {2, 2, 2, 2}, {1, 6, 1}, {3, 5, 7}} {
		n := 1
		for _, k := range dims {
			n *= k
		}
		at := make([]int, n)
		for i := range at {
			at[i] = -1
		}
		for v := range n {
			q := snakeIndex(dims, v)
			if q < 0 || q >= n || at[q] >= 0 {
				t.Fatalf("%v: node %d at position %d twice or out of range", dims, v, q)
			}
			at[q] = v
		}
		for q := 1; q < n; q++ {
			// A mesh link: coordinates differ by one, no wrap-around.
			a, b := at[q-1], at[q]
			d := 0
			for _, k := range dims {
				ca, cb := a%k, b%k
				a, b = a/k, b/k
				d += max(ca-cb, cb-ca)
			}
			if d != 1 {
				t.Fatalf("%v: positions %d and %d are %d hops apart", dims, q-1, q, d)
			}
		}
	}
}

// TestTorusCycles checks the decomposition: each cycle visits every node
// once, consecutive nodes (and last to first) are torus neighbours, and no
// link is used twice (a dimension of size 2 has two links between its two
// nodes).
func TestTorusCycles(t *testing.T) {
	for _, dims := range [][]int{{3, 3}, {4, 4}, {3, 5}, {8, 8}, {2, 2}, {3, 3, 3}, {4, 4, 4}, {2, 3, 4}, {4, 4, 8}, {8, 8, 8}, {2, 2, 2, 2}, {4, 1, 4}, {8, 16, 32}} {
		cycles := torusCycles(dims)
		if cycles == nil {
			t.Fatalf("%v: no decomposition found", dims)
		}
		n := 1
		for _, k := range dims {
			n *= k
		}
		active := 0
		for _, k := range dims {
			if k > 1 {
				active++
			}
		}
		if len(cycles) != active {
			t.Fatalf("%v: %d cycles, want %d", dims, len(cycles), active)
		}
		used := map[[2]int]int{}
		for c, idx := range cycles {
			at := make([]int, n)
			for i := range at {
				at[i] = -1
			}
			for v, q := range idx {
				if q < 0 || q >= n || at[q] >= 0 {
					t.Fatalf("%v cycle %d: position %d twice or out of range", dims, c, q)
				}
				at[q] = v
			}
			if at[0] != 0 {
				t.Fatalf("%v cycle %d does not start at node 0", dims, c)
			}
			for q := range n {
				a, b := at[q], at[(q+1)%n]
				if _, ok := neighbours(dims, a, b); !ok {
					t.Fatalf("%v cycle %d: nodes %d and %d are not neighbours", dims, c, a, b)
				}
				used[[2]int{min(a, b), max(a, b)}]++
			}
		}
		for e, k := range used {
			d, _ := neighbours(dims, e[0], e[1])
			limit := 1
			if dims[d] == 2 {
				limit = 2
			}
			if k > limit {
				t.Fatalf("%v: link %v used %d times", dims, e, k)
			}
		}
	}
}

// TestTorusCyclesFallback: where no decomposition is found, the paths are
// still Hamiltonian (rotated snakes).
func TestTorusCyclesFallback(t *testing.T) {
	for _, dims := range [][]int{{2, 4}, {2, 2, 2}, {7}} {
		n := 1
		for _, k := range dims {
			n *= k
		}
		for c := range 3 {
			idx := torusCycleIndex(dims, c)
			seen := make([]bool, n)
			for _, q := range idx {
				if q < 0 || q >= n || seen[q] {
					t.Fatalf("%v path %d is not a permutation: %v", dims, c, idx)
				}
				seen[q] = true
			}
		}
	}
}

// randomPlacement puts P ranks on distinct random nodes of machine.
func randomPlacement(rng *rand.Rand, machine []int, P int) *Placement {
	n := 1
	for _, k := range machine {
		n *= k
	}
	return &Placement{Machine: machine, Nodes: rng.Perm(n)[:P]}
}

// TestVerifyPlacements proves the path algorithms on irregular partitions:
// random subsets of tori and meshes, any P, counts 0, 1, 5, 7.
func TestVerifyPlacements(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 3))
	type pc struct {
		machine []int
		P       int
	}
	cases := []pc{{[]int{4, 4}, 5}, {[]int{4, 4}, 16}, {[]int{3, 5}, 7}, {[]int{2, 4}, 3},
		{[]int{4, 4, 4}, 17}, {[]int{4, 4, 4}, 33}, {[]int{8, 8, 8}, 100}, {[]int{2, 2, 2}, 6}, {[]int{6}, 4}}
	var placements []*Placement
	for _, c := range cases {
		placements = append(placements, randomPlacement(rng, c.machine, c.P))
	}
	eachAlg(t, pathAlgorithms, func(t *testing.T, in *Info) {
		for _, pm := range placements {
			for _, s := range specsFor(in.Coll, len(pm.Nodes)) {
				// Counts 0 on the calls without data, 1, 5 and 7 on the
				// one-element ones.
				ns := map[int][]int{0: {0}, 1: {1, 5, 7}}[s.Count]
				for _, n := range ns {
					s2 := withCount(s, n, 2)
					prm := Params{Spec: s2, Commutative: true, ElemSize: 4, Placement: pm}
					if err := in.Check(&prm); err != nil {
						t.Fatalf("Check: %v", err)
					}
					if err := schedule.Verify(&prm.Spec, in.Generator(prm), schedule.Options{}); err != nil {
						t.Fatalf("placement %v on %v n=%d counts=%v inplace=%v root=%d: %v", pm.Nodes, pm.Machine, n, s2.Counts, s2.InPlace, s2.Root, err)
					}
				}
			}
		}
	})
}

// TestPathOrder: rd-path's partners in its last stage are path neighbours,
// so on a contiguous 8×8 mesh every message of that stage crosses one link.
func TestPathOrder(t *testing.T) {
	in, _ := Lookup(schedule.Allgather, "rd-path")
	grid := []int{8, 8}
	for r := range 64 {
		prm := Params{Spec: schedule.Spec{Coll: schedule.Allgather, Size: 64, Count: 1}, Rank: r, ElemSize: 4, Grid: grid}
		s, err := in.Schedule(&prm)
		if err != nil {
			t.Fatal(err)
		}
		last := s.Rounds[len(s.Rounds)-1]
		for _, o := range last {
			if o.Kind != schedule.OpSend {
				continue
			}
			if _, ok := neighbours(grid, r, o.Peer); !ok {
				t.Fatalf("rank %d sends to %d in the last stage: not a neighbour", r, o.Peer)
			}
		}
	}
}

func TestCheckPlacement(t *testing.T) {
	for _, c := range []struct {
		pm   Placement
		size int
	}{
		{Placement{Machine: nil, Nodes: []int{0}}, 1},
		{Placement{Machine: []int{4, 0}, Nodes: []int{0}}, 1},
		{Placement{Machine: []int{4, 4}, Nodes: []int{0, 1}}, 3},
		{Placement{Machine: []int{4, 4}, Nodes: []int{0, 16}}, 2},
		{Placement{Machine: []int{4, 4}, Nodes: []int{3, 3}}, 2},
		{Placement{Machine: []int{4, 4}, Nodes: []int{-1, 3}}, 2},
		{Placement{Machine: []int{1 << 13, 1 << 13}, Nodes: []int{0}}, 1},
	} {
		err := CheckPlacement(&c.pm, c.size)
		if !errors.Is(err, errs.InvalidArgument) {
			t.Errorf("%v size %d: got %v, want InvalidArgument", c.pm, c.size, err)
		}
		in, _ := Lookup(schedule.Allgather, "rd-path")
		prm := Params{Spec: schedule.Spec{Coll: schedule.Allgather, Size: c.size, Count: 1}, Placement: &c.pm}
		if err := in.Check(&prm); !errors.Is(err, errs.InvalidArgument) {
			t.Errorf("Info.Check %v: got %v", c.pm, err)
		}
	}
	if err := CheckPlacement(&Placement{Machine: []int{4, 4}, Nodes: []int{15, 0, 7}}, 3); err != nil {
		t.Errorf("valid placement rejected: %v", err)
	}
}

func ExamplePlacement() {
	// Five ranks scattered over a 4×4 torus: rd-path orders them along the
	// snake path through all 16 nodes.
	pm := &Placement{Machine: []int{4, 4}, Nodes: []int{13, 2, 7, 8, 0}}
	in, _ := Lookup(schedule.Allgather, "rd-path")
	p := Params{Spec: schedule.Spec{Coll: schedule.Allgather, Size: 5, Count: 1}, Placement: pm}
	fmt.Println(in.Check(&p))
	line, _ := pathLine(0, pm.Machine, pm.Nodes, 5)
	fmt.Println("path order:", line)
	// Output:
	// <nil>
	// path order: [4 1 2 3 0]
}
