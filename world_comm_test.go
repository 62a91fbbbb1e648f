package scoll_test

import (
	"context"
	"testing"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/matrix"
)

// TestSubCommWorld runs communicators derived from the world of a real job
// (under scoll run, mpirun or srun; skipped alone): every split algorithm
// with replicated and distributed tables, the algorithm matrix on a split
// half of the world, a duplicate running a collective concurrently with
// its parent, and SplitGrid's rows and columns. Under mpirun it must run in
// a process of its own (MPI is initialised once per process).
func TestSubCommWorld(t *testing.T) {
	ctx := context.Background()
	c := jobWorld(t)
	p, r := c.Size(), c.Rank()
	colors := make([]int, p)
	keys := make([]int, p)
	for q := range p {
		colors[q], keys[q] = q%2, -q
	}
	want := splitRef(colors, keys)
	var half *scoll.Comm
	for _, alg := range scoll.SplitAlgorithms() {
		for _, gs := range []int{1, 2} {
			sub, err := c.Split(ctx, colors[r], keys[r], scoll.WithSplitAlgorithm(alg.Name), scoll.WithDistributedGroup(gs))
			if err != nil {
				t.Fatalf("rank %d: %s P'=%d: %v", r, alg.Name, gs, err)
			}
			if gs == 1 {
				if err := checkSplit(c, sub, want[r]); err != nil {
					t.Fatalf("%s: %v", alg.Name, err)
				}
			}
			oc := matrix.OpCases[int32]()[0]
			if err := matrix.CheckCase(ctx, sub, nil, "allreduce", "", 7, 0, false, oc); err != nil {
				t.Fatalf("rank %d: %s P'=%d: allreduce: %v", r, alg.Name, gs, err)
			}
			if half == nil && gs == 1 {
				half = sub
			} else {
				sub.Close()
			}
		}
	}
	defer half.Close()
	// The matrix on one half of the world.
	for _, coll := range scoll.Collectives() {
		for _, alg := range scoll.Algorithms(coll) {
			if alg.PowerOfTwo && half.Size()&(half.Size()-1) != 0 {
				continue
			}
			err := matrix.ForCases(coll, alg, half.Size(), []int{0, 1, 1000}, func(n, root int, inPlace bool, oc matrix.OpCase[int32]) error {
				return matrix.CheckCase(ctx, half, nil, coll, alg.Name, n, root, inPlace, oc)
			})
			if err != nil {
				t.Fatalf("rank %d: %v", r, err)
			}
		}
	}
	// A duplicate and its parent run a collective at once.
	dup, err := half.Dup(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer dup.Close()
	a, b := []int64{int64(r)}, []int64{int64(10 * r)}
	ra, err := scoll.IAllreduce(ctx, half, nil, a, scoll.Sum)
	if err != nil {
		t.Fatal(err)
	}
	if err := scoll.Allreduce(ctx, dup, nil, b, scoll.Sum); err != nil {
		t.Fatal(err)
	}
	if err := ra.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, q := range want[r] {
		sum += int64(q)
	}
	if a[0] != sum || b[0] != 10*sum {
		t.Fatalf("rank %d: sums %d and %d, want %d and %d", r, a[0], b[0], sum, 10*sum)
	}
	// Rows and columns of a 2 × p/2 grid.
	if p%2 == 0 {
		for k, keep := range [][]bool{{false, true}, {true, false}} {
			g, err := c.SplitGrid(ctx, []int{2, p / 2}, keep)
			if err != nil {
				t.Fatal(err)
			}
			wantSize := []int{p / 2, 2}[k]
			v := []int32{1}
			if err := scoll.Allreduce(ctx, g, nil, v, scoll.Sum); err != nil || g.Size() != wantSize || v[0] != int32(wantSize) {
				t.Fatalf("rank %d: grid keep=%v: size %d sum %d err %v", r, keep, g.Size(), v[0], err)
			}
			g.Close()
		}
	}
	// Byte colors into chains (replies to contributors cross processes),
	// a collective along the chain and point-to-point across it.
	for _, alg := range []string{"bitonic", "hash64"} {
		ch, err := c.SplitBytes(ctx, []byte([]string{"even", "odd"}[r%2]), []byte{byte(p - r)}, scoll.WithSplitAlgorithm(alg), scoll.WithChainGroup())
		if err != nil {
			t.Fatalf("rank %d: %s: %v", r, alg, err)
		}
		if err := checkSplit(c, ch, bytesRef(colorsOf(p), keysOf(p), false, false)[r]); err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		v := []int32{int32(r)}
		if err := scoll.Allreduce(ctx, ch, nil, v, scoll.Min); err != nil || v[0] != int32(r%2) {
			t.Fatalf("rank %d: %s: min %d, %v", r, alg, v[0], err)
		}
		ch.Close()
	}
	node, err := c.SplitByNode(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v := []int32{1}
	if err := scoll.Allreduce(ctx, node, nil, v, scoll.Sum); err != nil || v[0] != int32(node.Size()) {
		t.Fatalf("rank %d: node of %d: sum %d, %v", r, node.Size(), v[0], err)
	}
	node.Close()
}

// colorsOf and keysOf are TestSubCommWorld's byte colors and keys.
func colorsOf(p int) [][]byte {
	out := make([][]byte, p)
	for q := range out {
		out[q] = []byte([]string{"even", "odd"}[q%2])
	}
	return out
}

func keysOf(p int) [][]byte {
	out := make([][]byte, p)
	for q := range out {
		out[q] = []byte{byte(p - q)}
	}
	return out
}
