// Package sizes is the one grammar of scoll for numbers of bytes and rank
// counts, on the command line and in the library's string settings:
//
//	value  := number [unit]              8, 1.5K, 64KiB, 16M
//	number := digits ["." digits]        the value must come out whole: 1.5K = 1536
//	unit   := B | K | KB | KiB | M | MB | MiB | G | GB | GiB | T | TB | TiB
//	          (any case; every multiple is a power of 1024, as in the OSU benchmarks)
//	list   := item {"," item}
//	item   := value
//	        | value ".." value           both ends and the powers of two between: 8..64 = 8,16,32,64; 3..20 = 3,4,8,16,20
//	        | value ":" value [":" step] from the start, each step, then the end: 8:16M:x4 = 8,32,...,8M,16M
//	step   := "x" factor | "*" factor | "+" value   (default x2; factor a whole number ≥ 2)
//
// Errors name the offending text first and say why in plain words:
// `"12Q": unknown unit "Q" (valid: B, K, KiB, ...)`, `"1e30": too large
// (at most 1T)`; the caller puts the flag or setting in front.
package sizes

import (
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// MaxItems is the most values a list may give.
const MaxItems = 1 << 16

// units maps a case-folded unit to its multiplier.
var units = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
}

// Units lists the units as the errors name them.
const Units = "B, K, KiB, M, MiB, G, GiB, T, TiB; K = KB = KiB = 1024"

// One parses one value, a whole number from 0 to max.
func One(s string, max int) (int, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.TrimSpace(t[i:])
	if t == "" {
		return 0, fmt.Errorf("%q: empty, want a number like 8, 1.5K or 16M", s)
	}
	if num == "" || num == "." || strings.Count(num, ".") > 1 {
		return 0, fmt.Errorf("%q: not a number, want one like 8, 1.5K or 16M", s)
	}
	mul, ok := units[strings.ToLower(unit)]
	if !ok {
		return 0, fmt.Errorf("%q: unknown unit %q (valid: %s)", s, unit, Units)
	}
	v, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, fmt.Errorf("%q: not a number, want one like 8, 1.5K or 16M", s)
	}
	v.Mul(v, new(big.Rat).SetInt64(mul))
	if v.Cmp(new(big.Rat).SetInt64(int64(max))) > 0 {
		return 0, fmt.Errorf("%q: too large (at most %s)", s, limit(max))
	}
	if !v.IsInt() {
		return 0, fmt.Errorf("%q: not a whole number (%s)", s, v.FloatString(2))
	}
	return int(v.Num().Int64()), nil
}

// limit writes max with a unit when it is a large exact multiple.
func limit(max int) string {
	for _, u := range []struct {
		name  string
		shift uint
	}{{"T", 40}, {"G", 30}} {
		if max >= 1<<u.shift && max%(1<<u.shift) == 0 {
			return strconv.Itoa(max>>u.shift) + u.name
		}
	}
	return strconv.Itoa(max)
}

// List parses a comma-separated list of values and ranges, each value from
// 0 to max, and returns the values sorted, without duplicates.
func List(s string, max int) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%q: empty, want a list like 8,1K,64K or a range like 8..1M", s)
	}
	seen := map[int]bool{}
	var out []int
	for item := range strings.SplitSeq(s, ",") {
		vals, err := parseItem(item, max)
		if err != nil {
			return nil, err
		}
		for _, v := range vals {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
		if len(out) > MaxItems {
			return nil, fmt.Errorf("%q: more than %d values", s, MaxItems)
		}
	}
	slices.Sort(out)
	return out, nil
}

// parseItem parses one item of a list: a value or a range.
func parseItem(item string, max int) ([]int, error) {
	if lo, hi, ok := strings.Cut(item, ".."); ok {
		a, b, err := ends(item, lo, hi, max)
		if err != nil {
			return nil, err
		}
		out := []int{a}
		for p := 1; p < b; p *= 2 {
			if p > a {
				out = append(out, p)
			}
		}
		if b > a {
			out = append(out, b)
		}
		return out, nil
	}
	parts := strings.Split(item, ":")
	switch len(parts) {
	case 1:
		v, err := One(item, max)
		return []int{v}, err
	case 2, 3:
	default:
		return nil, fmt.Errorf("%q: a range is start..end or start:end[:step]", item)
	}
	a, b, err := ends(item, parts[0], parts[1], max)
	if err != nil {
		return nil, err
	}
	step := "x2"
	if len(parts) == 3 {
		step = strings.ToLower(strings.TrimSpace(parts[2]))
	}
	var out []int
	switch {
	case strings.HasPrefix(step, "x") || strings.HasPrefix(step, "*"):
		f, err := strconv.Atoi(step[1:])
		if err != nil || f < 2 {
			return nil, fmt.Errorf("%q: step %q: want a whole factor of at least 2, as in x4", item, parts[2])
		}
		if a == 0 {
			return nil, fmt.Errorf("%q: a multiplying range cannot start at 0", item)
		}
		for v := a; v < b; v *= f {
			out = append(out, v)
			if v > b/f {
				break
			}
		}
	case strings.HasPrefix(step, "+"):
		d, err := One(step[1:], max)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%q: step %q: want an increment above 0, as in +1K", item, parts[2])
		}
		if (b-a)/d >= MaxItems {
			return nil, fmt.Errorf("%q: more than %d values", item, MaxItems)
		}
		for v := a; v < b; v += d {
			out = append(out, v)
		}
	default:
		return nil, fmt.Errorf("%q: step %q: use xF to multiply or +N to add", item, parts[len(parts)-1])
	}
	return append(out, b), nil
}

// ends parses the two ends of a range.
func ends(item, lo, hi string, max int) (int, int, error) {
	a, err := One(lo, max)
	if err != nil {
		return 0, 0, err
	}
	b, err := One(hi, max)
	if err != nil {
		return 0, 0, err
	}
	if a > b {
		return 0, 0, fmt.Errorf("%q: the start is above the end", item)
	}
	return a, b, nil
}
