package scoll_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/scoll/scoll"
)

// splitRef returns, for each rank of a communicator of len(colors) ranks,
// the ranks of its new communicator in order (nil for a negative color):
// the naive reference of Split.
func splitRef(colors, keys []int) [][]int {
	out := make([][]int, len(colors))
	for r, col := range colors {
		if col < 0 {
			continue
		}
		var mem []int
		for q, c2 := range colors {
			if c2 == col {
				mem = append(mem, q)
			}
		}
		slices.SortStableFunc(mem, func(a, b int) int {
			if c := cmp.Compare(keys[a], keys[b]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		out[r] = mem
	}
	return out
}

// checkSplit checks rank r's new communicator sub of c against want, the
// ranks of c it must hold in order.
func checkSplit(c, sub *scoll.Comm, want []int) error {
	r := c.Rank()
	if want == nil {
		if sub != nil {
			return fmt.Errorf("rank %d: undefined color got a communicator of %d", r, sub.Size())
		}
		return nil
	}
	if sub == nil {
		return fmt.Errorf("rank %d: no communicator, want %d members", r, len(want))
	}
	if sub.Size() != len(want) {
		return fmt.Errorf("rank %d: size %d, want %d", r, sub.Size(), len(want))
	}
	if want[sub.Rank()] != r {
		return fmt.Errorf("rank %d: new rank %d holds parent rank %d", r, sub.Rank(), want[sub.Rank()])
	}
	all := make([]int, sub.Size())
	for i := range all {
		all[i] = i
	}
	got, err := sub.TranslateRanks(all, c)
	if err != nil {
		return err
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("rank %d: members %v, want %v", r, got, want)
	}
	return nil
}

// splitPatterns returns named color and key patterns for p ranks.
func splitPatterns(p int, rng *rand.Rand) []struct {
	name         string
	colors, keys []int
} {
	type pat = struct {
		name         string
		colors, keys []int
	}
	mk := func(f func(r int) int) []int {
		s := make([]int, p)
		for r := range s {
			s[r] = f(r)
		}
		return s
	}
	rc := mk(func(int) int { return rng.IntN(4) - 1 })
	rk := mk(func(int) int { return rng.IntN(5) })
	return []pat{
		{"random", rc, rk},
		{"one-color-reverse", mk(func(int) int { return 7 }), mk(func(r int) int { return -r })},
		{"equal-keys", mk(func(r int) int { return r % 3 }), mk(func(int) int { return 0 })},
		{"unique", mk(func(r int) int { return r }), mk(func(r int) int { return r })},
		{"all-undefined", mk(func(int) int { return scoll.Undefined }), mk(func(r int) int { return r })},
		{"big-colors", mk(func(r int) int { return (r % 2) << 40 }), mk(func(r int) int { return -(r % 5) << 50 })},
	}
}

func TestSplitReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33, 64, 100}
	for _, alg := range scoll.SplitAlgorithms() {
		for _, p := range sizes {
			for _, pt := range splitPatterns(p, rng) {
				want := splitRef(pt.colors, pt.keys)
				err := scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
					sub, err := c.Split(ctx, pt.colors[c.Rank()], pt.keys[c.Rank()], scoll.WithSplitAlgorithm(alg.Name))
					if err != nil {
						return err
					}
					return checkSplit(c, sub, want[c.Rank()])
				})
				if err != nil {
					t.Fatalf("%s P=%d %s: %v", alg.Name, p, pt.name, err)
				}
			}
		}
	}
}

func TestSubCommCollectives(t *testing.T) {
	for _, p := range []int{2, 5, 8, 13} {
		err := scoll.Run(context.Background(), p, func(ctx context.Context, c *scoll.Comm) error {
			sub, err := c.Split(ctx, c.Rank()%2, -c.Rank())
			if err != nil {
				return err
			}
			oc := opCases[int32]()[0]
			for _, coll := range []string{"allreduce", "bcast", "allgather", "alltoall", "reduce", "scan", "barrier"} {
				for _, alg := range scoll.Algorithms(coll) {
					if alg.PowerOfTwo && sub.Size()&(sub.Size()-1) != 0 {
						continue
					}
					for _, n := range []int{0, 3, 1000} {
						if coll == "barrier" && n > 0 {
							continue
						}
						if err := checkCase(ctx, sub, nil, coll, alg.Name, n, sub.Size()-1, false, oc); err != nil {
							return fmt.Errorf("%s/%s n=%d: %w", coll, alg.Name, n, err)
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("P=%d: %v", p, err)
		}
	}
}
