package algorithms

import (
	"fmt"
	"math"

	"github.com/scoll/scoll/internal/errs"
)

// CheckRadixVector reports why ks cannot be radix-k's radix vector on size
// ranks (errs.InvalidArgument): an entry below 2 or a product other than
// size.
func CheckRadixVector(ks []int, size int) error {
	prod := 1
	for _, k := range ks {
		if k < 2 {
			return fmt.Errorf("%w: radix vector %v: entry %d (want ≥ 2)", errs.InvalidArgument, ks, k)
		}
		if prod > math.MaxInt/k {
			return fmt.Errorf("%w: radix vector %v: product overflows, want %d ranks", errs.InvalidArgument, ks, size)
		}
		prod *= k
	}
	if prod != size {
		return fmt.Errorf("%w: radix vector %v: product %d, want %d ranks", errs.InvalidArgument, ks, prod, size)
	}
	return nil
}
