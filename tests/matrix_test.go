package tests

import (
	"testing"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/internal/matrix"
	"github.com/scoll/scoll/internal/sweep"
)

// TestMatrix runs every registered algorithm of every collective on every
// matrix size and count, several roots, in place and not, int32 and float64,
// and commutative and non-commutative operators, against the naive reference.
func TestMatrix(t *testing.T) {
	matrix.SkipShort(t, "matrix skipped in -short mode")
	matrix.EachAlgorithm(t, func(t *testing.T, coll string, alg scoll.AlgorithmInfo) {
		matrixOne[int32](t, coll, alg, matrix.Sizes)
		// The second element type changes kernels and byte counts, not
		// schedules: a few sizes unless -scoll.full.
		sizes := sweep.More([]int{2, 7}, 16, 33)
		if *matrix.Full {
			sizes = matrix.Sizes
		}
		matrixOne[float64](t, coll, alg, sizes)
	})
}

func matrixOne[T matrix.Num](t *testing.T, coll string, alg scoll.AlgorithmInfo, sizes []int) {
	for _, p := range sizes {
		if alg.PowerOfTwo && p&(p-1) != 0 {
			continue
		}
		err := matrix.ForCases(coll, alg, p, matrix.Counts(coll, p), func(n, root int, inPlace bool, oc matrix.OpCase[T]) error {
			return matrix.RunCase(coll, alg.Name, p, n, root, inPlace, oc)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
