package bench

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/scoll/scoll/internal/sizes"
)

// ErrSize is wrapped by every error of ParseSize and ParseSizes.
var ErrSize = errors.New("bench: invalid size")

// MaxSize is the largest message size ParseSize accepts: 1 TiB.
const MaxSize = 1 << 40

// DefaultSizes is the default size list: 8 B to 16 MiB, each four times the
// previous one, and 16 MiB itself (8, 32, 128, ..., 2M, 8M, 16M).
const DefaultSizes = "8:16M:x4"

// ParseSize parses one size in bytes in scoll's grammar of sizes (package
// internal/sizes): a non-negative number with an optional unit B, K, KB,
// KiB, M, MB, MiB, G, GB, GiB, T, TB or TiB (case-insensitive; all
// multiples are powers of 1024) that comes out a whole number of bytes, at
// most MaxSize. Examples: "8", "1K", "1.5K", "64KiB", "16M".
func ParseSize(s string) (int, error) {
	n, err := sizes.One(s, MaxSize)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrSize, err)
	}
	return n, nil
}

// ParseSizes parses a comma-separated list of sizes and ranges and returns
// them sorted, without duplicates. A range is start..end (both ends and the
// powers of two between) or start:end[:step]: start, then each size the
// step reaches below end, then end itself (even when the step does not
// reach it exactly, so "8:16M:x4" ends with 8M, 16M). The step is xF (or
// *F) to multiply by F ≥ 2, or +N to add N > 0 bytes; the default step is
// x2. Examples: "8,1K,64KiB,16M", "64..1M", "8:16M:x4", "0:64:+16".
func ParseSizes(s string) ([]int, error) {
	out, err := sizes.List(s, MaxSize)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSize, err)
	}
	return out, nil
}

// FormatSize formats a byte count compactly with a binary unit when it is an
// exact multiple: 8 → "8", 1024 → "1K", 16777216 → "16M". ParseSize accepts
// every string it returns.
func FormatSize(n int) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.Itoa(n>>30) + "G"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "M"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "K"
	}
	return strconv.Itoa(n)
}
