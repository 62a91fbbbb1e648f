// Package names gives one wording, everywhere in scoll, to a name that is
// not among the valid ones (a collective, an algorithm, a flag, a format):
//
//	unknown algorithm "rign" for allreduce; did you mean "ring"? (valid: auto, binomial, ring, ...)
//
// The library and the command line both report unknown names through
// Unknown, so a user sees the same sentence whichever way they asked.
package names

import (
	"fmt"
	"slices"
	"strings"
)

// UnknownError is a name that is not among the valid ones.
type UnknownError struct {
	Kind  string   // what the name names: "algorithm", "collective", "flag", ...
	Name  string   // the name as given
	For   string   // optional: what it was for ("allreduce"), "" when nothing
	Valid []string // the valid names, in the order to list them
}

// Unknown returns the error for name, of kind, not among valid; for says
// what it was for ("" for nothing).
func Unknown(kind, name, forWhat string, valid []string) *UnknownError {
	return &UnknownError{Kind: kind, Name: name, For: forWhat, Valid: valid}
}

// Error reads: unknown KIND "NAME" for FOR; did you mean "X"? (valid: A, B, C).
func (e *UnknownError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "unknown %s %q", e.Kind, e.Name)
	if e.For != "" {
		b.WriteString(" for " + e.For)
	}
	if s := Suggest(e.Name, e.Valid); len(s) > 0 {
		b.WriteString("; did you mean ")
		for i, n := range s {
			if i > 0 {
				b.WriteString(" or ")
			}
			fmt.Fprintf(&b, "%q", n)
		}
		b.WriteString("?")
	}
	if len(e.Valid) > 0 {
		b.WriteString(" (valid: " + strings.Join(e.Valid, ", ") + ")")
	}
	return b.String()
}

// Suggest returns the valid names closest to name: those that differ from
// it by at most a third of its length in edits (at least 1, at most 3),
// closest first, then those it is a prefix of (at least 3 letters), case
// ignored; at most three, and none when name is valid but for its case.
func Suggest(name string, valid []string) []string {
	n := strings.ToLower(name)
	if n == "" {
		return nil
	}
	for _, v := range valid {
		if strings.ToLower(v) == n {
			return nil // the name is valid but for its case
		}
	}
	limit := min(max(len(n)/3, 1), 3)
	type cand struct {
		score int
		name  string
	}
	var cs []cand
	for _, v := range valid {
		lv := strings.ToLower(v)
		switch d := Distance(n, lv); {
		case d <= limit:
			cs = append(cs, cand{d, v})
		case len(n) >= 3 && strings.HasPrefix(lv, n):
			cs = append(cs, cand{limit + 1, v})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return a.score - b.score })
	out := make([]string, 0, 3)
	for _, c := range cs[:min(len(cs), 3)] {
		out = append(out, c.name)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Distance is the optimal-string-alignment edit distance between a and b:
// insertions, deletions, substitutions and swaps of two neighbours count 1.
func Distance(a, b string) int {
	x, y := []rune(a), []rune(b)
	prev2 := make([]int, len(y)+1)
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(y)]
}
