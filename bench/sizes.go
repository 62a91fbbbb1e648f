package bench

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// ErrSize is wrapped by every error of ParseSize and ParseSizes.
var ErrSize = errors.New("bench: invalid size")

// MaxSize is the largest message size ParseSize accepts: 1 TiB.
const MaxSize = 1 << 40

// DefaultSizes is the default size list: 8 B to 16 MiB, each four times the
// previous one, and 16 MiB itself (8, 32, 128, ..., 2M, 8M, 16M).
const DefaultSizes = "8:16M:x4"

// units maps a case-folded suffix to its multiplier. K, M and G are binary
// (K = KiB = 1024), as in the OSU micro-benchmarks.
var units = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
}

// ParseSize parses one size in bytes: a non-negative integer with an optional
// unit B, K, KB, KiB, M, MB, MiB, G, GB or GiB (case-insensitive; all
// multiples are powers of 1024). Examples: "8", "1K", "64KiB", "16M".
func ParseSize(s string) (int, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("%w: %q: want a number of bytes with an optional unit (8, 1K, 64KiB, 16M)", ErrSize, s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q: %v", ErrSize, s, err)
	}
	mul, ok := units[strings.ToLower(strings.TrimSpace(t[i:]))]
	if !ok {
		return 0, fmt.Errorf("%w: %q: unknown unit %q (use B, K, KiB, M, MiB, G or GiB)", ErrSize, s, t[i:])
	}
	hi, v := bits.Mul64(uint64(n), uint64(mul))
	if hi != 0 || v > MaxSize {
		return 0, fmt.Errorf("%w: %q is larger than %s", ErrSize, s, FormatSize(MaxSize))
	}
	return int(v), nil
}

// ParseSizes parses a comma-separated list of sizes and ranges and returns
// them sorted, without duplicates. A range is start:end[:step]: start, then
// each size the step reaches below end, then end itself (even when the step
// does not reach it exactly, so "8:16M:x4" ends with 8M, 16M). The step is xF
// (or *F) to multiply by F ≥ 2, or +N to add N > 0 bytes; the default step
// is x2. Examples: "8,1K,64KiB,16M", "8:16M:x4", "0:64:+16".
func ParseSizes(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%w: empty size list", ErrSize)
	}
	seen := map[int]bool{}
	var out []int
	add := func(v int) error {
		if !seen[v] {
			if len(seen) >= 1<<16 {
				return fmt.Errorf("%w: %q gives more than %d sizes", ErrSize, s, 1<<16)
			}
			seen[v] = true
			out = append(out, v)
		}
		return nil
	}
	for item := range strings.SplitSeq(s, ",") {
		parts := strings.Split(item, ":")
		switch len(parts) {
		case 1:
			v, err := ParseSize(parts[0])
			if err != nil {
				return nil, err
			}
			if err := add(v); err != nil {
				return nil, err
			}
		case 2, 3:
			vals, err := parseRange(item, parts)
			if err != nil {
				return nil, err
			}
			for _, v := range vals {
				if err := add(v); err != nil {
					return nil, err
				}
			}
		default:
			return nil, fmt.Errorf("%w: %q: a range is start:end[:step]", ErrSize, item)
		}
	}
	slices.Sort(out)
	return out, nil
}

func parseRange(item string, parts []string) ([]int, error) {
	lo, err := ParseSize(parts[0])
	if err != nil {
		return nil, err
	}
	hi, err := ParseSize(parts[1])
	if err != nil {
		return nil, err
	}
	if lo > hi {
		return nil, fmt.Errorf("%w: range %q: start %d > end %d", ErrSize, item, lo, hi)
	}
	step := "x2"
	if len(parts) == 3 {
		step = strings.ToLower(strings.TrimSpace(parts[2]))
	}
	if step == "" {
		return nil, fmt.Errorf("%w: range %q: empty step (use xF or +N)", ErrSize, item)
	}
	var out []int
	switch step[0] {
	case 'x', '*':
		f, err := strconv.Atoi(step[1:])
		if err != nil || f < 2 {
			return nil, fmt.Errorf("%w: range %q: step %q: want a factor ≥ 2, as in x4", ErrSize, item, parts[2])
		}
		if lo == 0 {
			return nil, fmt.Errorf("%w: range %q: a multiplying range cannot start at 0", ErrSize, item)
		}
		for v := lo; v < hi; {
			out = append(out, v)
			if v > math.MaxInt/f {
				break
			}
			v *= f
		}
		out = append(out, hi)
	case '+':
		d, err := ParseSize(step[1:])
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%w: range %q: step %q: want an increment > 0, as in +1K", ErrSize, item, parts[2])
		}
		if (hi-lo)/d >= 1<<16 {
			return nil, fmt.Errorf("%w: range %q gives more than %d sizes", ErrSize, item, 1<<16)
		}
		for v := lo; v < hi; v += d {
			out = append(out, v)
		}
		out = append(out, hi)
	default:
		return nil, fmt.Errorf("%w: range %q: step %q: use xF to multiply or +N to add", ErrSize, item, parts[2])
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
