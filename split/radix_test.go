package split

// (Its standard-library imports match topology/topology_test.go's: two
// property tests with the same needs, nothing to share.)
import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/scoll/scoll/internal/errs"

	"github.com/scoll/scoll/internal/sweep"
)

// intsOnly prepares the options of algorithm name for a split of items in
// the generic item tests: radix runs only on integers, so it gets
// Options.Ints when every color and key the mode reads is an IntBytes
// encoding (or nil color), and otherwise must refuse (true). Splits that
// neither split nor reorder never reach an algorithm.
func intsOnly(name string, items []Item, o *Options) (refuse bool) {
	if name != "radix" || (o.NoSplit && o.NoReorder) {
		return false
	}
	for _, it := range items {
		if (!o.NoSplit && it.Color != nil && len(it.Color) != 8) || (!o.NoReorder && len(it.Key) != 8) {
			return true
		}
	}
	o.Ints = true
	return false
}

// intItems returns items of the given integer colors (nil: undefined) and
// keys.
func intItems(colors []*int64, keys []int64) []Item {
	items := make([]Item, len(keys))
	for r := range items {
		items[r].Key = IntBytes(keys[r])
		if colors[r] != nil {
			items[r].Color = IntBytes(*colors[r])
		}
	}
	return items
}

// intReference is the split of integer colors and keys by its definition
// on the integers themselves (not their encodings): each rank's members
// as addresses in new-rank order.
func intReference(colors []*int64, keys []int64, o *Options) [][]int32 {
	n := len(keys)
	out := make([][]int32, n)
	for r := range n {
		if !o.NoSplit && colors[r] == nil {
			continue
		}
		var mem []int
		for q := range n {
			if o.NoSplit || (colors[q] != nil && *colors[q] == *colors[r]) {
				mem = append(mem, q)
			}
		}
		if !o.NoReorder {
			slices.SortStableFunc(mem, func(a, b int) int { return cmp.Compare(keys[a], keys[b]) })
		}
		for _, q := range mem {
			out[r] = append(out[r], int32(1000+q))
		}
	}
	return out
}

// TestRadixExtremes splits integers at the ends of int64's range, negative
// ones and neighbours of powers of two (which differ in a single low bit
// or in every bit), against the reference on the integers.
func TestRadixExtremes(t *testing.T) {
	// cheng with chain results (its sorters post each contributor its
	// links, no table anywhere) runs on the same integers.
	rng := rand.New(rand.NewPCG(11, 12))
	vals := []int64{math.MinInt64, math.MinInt64 + 1, -1 << 32, -17, -1, 0, 1, 15, 16, 1 << 32, math.MaxInt64 - 1, math.MaxInt64}
	pick := func() int64 { return vals[rng.IntN(len(vals))] }
	ptr := func(v int64) *int64 { return &v }
	pats := map[string]func(r, n int) (*int64, int64){
		"extremes":  func(int, int) (*int64, int64) { return ptr(pick()), pick() },
		"undef":     func(r, _ int) (*int64, int64) { c := ptr(pick()); return []*int64{c, nil}[r%2], pick() },
		"one":       func(r, n int) (*int64, int64) { return ptr(math.MinInt64), int64(n - r) },
		"negative":  func(r, n int) (*int64, int64) { return ptr(-int64(r % 3)), -int64(r * 1_000_003) },
		"all-undef": func(int, int) (*int64, int64) { return nil, pick() },
		"unique":    func(r, _ int) (*int64, int64) { return ptr(rng.Int64() - rng.Int64()), rng.Int64() },
		"ties":      func(r, _ int) (*int64, int64) { return ptr(int64(r % 2)), math.MaxInt64 },
	}
	modes := map[string]Options{"split+reorder": {}, "no-reorder": {NoReorder: true}, "no-split": {NoSplit: true}}
	for _, n := range []int{1, 2, 3, 7, 16, 31, 100} {
		for pname, f := range pats {
			colors, keys := make([]*int64, n), make([]int64, n)
			for r := range n {
				colors[r], keys[r] = f(r, n)
			}
			items := intItems(colors, keys)
			for mname, o := range modes {
				for _, chain := range []bool{false, true} {
					for _, alg := range []struct {
						name    string
						sorters int
					}{{"radix", 0}, {"cheng", 1}, {"cheng", 3}, {"cheng", 7}, {"cheng-128", 0}} {
						if alg.name != "radix" && (alg.sorters > n || !chain || negative(colors)) {
							// The table algorithms take Split's colors:
							// a negative one is undefined.
							continue
						}
						o := o
						o.Algorithm, o.Sorters, o.Ints, o.Chain, o.GroupSize = alg.name, alg.sorters, true, chain, 1
						t.Run(fmt.Sprintf("%s/p=%d/n=%d/%s/%s/chain=%v", alg.name, alg.sorters, n, pname, mname, chain), func(t *testing.T) {
							res, err := runItems(t, items, o)
							if err != nil {
								t.Fatal(err)
							}
							checkGroups(t, res, intReference(colors, keys, &o))
						})
					}
				}
			}
		}
	}
}

// TestRadixRefuses: radix refuses colors and keys of bytes and custom
// comparators on every rank (ErrUnsupported), and a rank whose color is
// not an integer fails without leaving the others waiting.
func TestRadixRefuses(t *testing.T) {
	items := make([]Item, 9)
	for r := range items {
		items[r] = Item{Color: IntBytes(int64(r % 2)), Key: IntBytes(int64(-r))}
	}
	cmpr := func(a, b []byte) int { return cmp.Compare(len(a), len(b)) }
	for name, o := range map[string]Options{
		"bytes":         {},
		"color compare": {Ints: true, ColorCompare: cmpr},
		"key compare":   {Ints: true, KeyCompare: cmpr},
	} {
		o.Algorithm = "radix"
		_, err := runItems(t, items, o)
		if !errors.Is(err, errs.Unsupported) {
			t.Fatalf("%s: %v, want ErrUnsupported", name, err)
		}
		if n := strings.Count(err.Error(), "radix"); n != len(items) {
			t.Fatalf("%s: only some ranks refused: %v", name, err)
		}
	}
	bad := slices.Clone(items)
	bad[4].Color = []byte{1, 2, 3}
	_, err := runItems(t, bad, Options{Algorithm: "radix", Ints: true})
	if !errors.Is(err, errs.InvalidArgument) || errors.Is(err, errs.Unsupported) {
		t.Fatalf("a 3-byte color: %v, want ErrInvalidArgument", err)
	}
}

// TestRadixPasses: bits that every rank shares cost no pass. Colors of 0
// to 3 and keys of 0 to 15 differ only in their last 2 and 4 bits, so a
// split takes the bounds scan and one pass each: 3 double scans.
func TestRadixPasses(t *testing.T) {
	for _, n := range []int{2, 16, 33} {
		items := make([]Item, n)
		for r := range items {
			items[r] = Item{Color: IntBytes(int64(r % 4)), Key: IntBytes(int64(15 - r%16))}
		}
		o := Options{Algorithm: "radix", Ints: true, Chain: true}
		res, err := runItems(t, items, o)
		if err != nil {
			t.Fatal(err)
		}
		checkGroups(t, res, itemReference(items, &o))
		in, _ := Lookup("radix")
		for r, rs := range res {
			// A double scan sends at most 2 messages per round.
			if max := int64(3 * 2 * ceilLog2(n)); rs.Stats.Messages > max {
				t.Fatalf("n=%d rank %d: %d messages, want at most %d", n, r, rs.Stats.Messages, max)
			}
			checkPhases(t, rs.Stats.Phases, in.Phases)
		}
	}
}

// checkPhases checks that the phases a rank reports are among the
// algorithm's, in order.
func checkPhases(t *testing.T, got []Phase, names []string) {
	t.Helper()
	i := 0
	for _, p := range got {
		for i < len(names) && names[i] != p.Name {
			i++
		}
		if i == len(names) {
			t.Fatalf("phases %v: %q is not among %v in order", got, p.Name, names)
		}
	}
}

// TestGatherScatter runs gather-scatter at every size up to 300 (binomial
// trees of every shape), colors and keys of bytes of several lengths, each
// size in one mode: every rank sends one message up and one down the tree
// (2(n−1) in all) and reports its phases.
func TestGatherScatter(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	names := []string{"random", "mixed", "undef", "one", "unique", "reversed", "equal", "long"}
	modes := []Options{{}, {NoReorder: true}, {NoSplit: true}}
	in, _ := Lookup("gather-scatter")
	top := 150
	if sweep.Long {
		top = 300
	}
	if testing.Short() {
		top = 70
	}
	for n := 1; n <= top; n++ {
		pname := names[n%len(names)]
		items := itemPatterns(n, rng)[pname]
		o := modes[n%len(modes)]
		o.Algorithm, o.Chain, o.GroupSize = "gather-scatter", n%2 == 0, 1
		t.Run(fmt.Sprintf("n=%d/%s/%+v", n, pname, o), func(t *testing.T) {
			res, err := runItems(t, items, o)
			if err != nil {
				t.Fatal(err)
			}
			checkGroups(t, res, itemReference(items, &o))
			if !o.Chain {
				return
			}
			var msgs int64
			for _, rs := range res {
				msgs += rs.Stats.Messages
				checkPhases(t, rs.Stats.Phases, in.Phases)
			}
			if msgs != int64(2*(n-1)) {
				t.Fatalf("%d messages, want %d", msgs, 2*(n-1))
			}
		})
	}
}

// negative reports whether a defined color is below 0.
func negative(colors []*int64) bool {
	return slices.ContainsFunc(colors, func(c *int64) bool { return c != nil && *c < 0 })
}
