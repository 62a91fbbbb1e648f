package split

// (The first six imports are comm_bytes_test.go's too, by chance.)
import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/scoll/scoll/internal/errs"

	"github.com/scoll/scoll/internal/sweep"
)

// runItems runs a generalized split of items (Rank and Addr are filled in)
// on len(items) ranks of a memNet and returns each rank's result.
func runItems(t testing.TB, items []Item, o Options) ([]*Result, error) {
	t.Helper()
	n := len(items)
	sh := Shape{}
	for _, it := range items {
		sh.ColorLen, sh.KeyLen = max(sh.ColorLen, len(it.Color)), max(sh.KeyLen, len(it.Key))
	}
	table := make([]int32, n)
	for i := range table {
		table[i] = int32(1000 + i)
	}
	return runRanks(n, func(c *memConn) (*Result, error) {
		it := items[c.rank]
		it.Rank, it.Addr = int32(c.rank), table[c.rank]
		return RunItems(context.Background(), c, it, chainOf(c.rank, table), sh, o)
	})
}

// itemReference returns each rank's members (as addresses) in new-rank
// order, by the definition of the generalized split.
func itemReference(items []Item, o *Options) [][]int32 {
	or := newOrder(o)
	n := len(items)
	out := make([][]int32, n)
	for r := range n {
		a := items[r]
		a.Rank = int32(r)
		if !or.defined(&a) {
			continue
		}
		var mem []Item
		for q := range n {
			b := items[q]
			b.Rank = int32(q)
			if or.defined(&b) && or.sameColor(&a, &b) {
				mem = append(mem, b)
			}
		}
		slices.SortFunc(mem, func(x, y Item) int { return or.compare(&x, &y) })
		for _, m := range mem {
			out[r] = append(out[r], 1000+m.Rank)
		}
	}
	return out
}

// itemPatterns returns colors and keys of bytes of several shapes.
func itemPatterns(n int, rng *rand.Rand) map[string][]Item {
	mk := func(f func(r int) Item) []Item {
		s := make([]Item, n)
		for r := range s {
			s[r] = f(r)
		}
		return s
	}
	word := func(l int) []byte {
		b := make([]byte, l)
		for i := range b {
			b[i] = byte('a' + rng.IntN(3))
		}
		return b
	}
	return map[string][]Item{
		"random":   mk(func(int) Item { return Item{Color: IntBytes(rng.Int64N(4)), Key: IntBytes(rng.Int64N(7))} }),
		"mixed":    mk(func(int) Item { return Item{Color: word(rng.IntN(3)), Key: word(rng.IntN(4))} }),
		"undef":    mk(func(r int) Item { return Item{Color: []byte{"xy"[r%2]}[:r%3/2], Key: word(2)} }),
		"one":      mk(func(r int) Item { return Item{Color: []byte("host"), Key: IntBytes(int64(-r))} }),
		"unique":   mk(func(r int) Item { return Item{Color: []byte(fmt.Sprint(r)), Key: nil} }),
		"reversed": mk(func(r int) Item { return Item{Color: []byte{byte(r % 3)}, Key: IntBytes(int64(n - r))} }),
		"equal":    mk(func(r int) Item { return Item{Color: []byte{byte(r % 5)}, Key: []byte("k")} }),
		"long":     mk(func(r int) Item { return Item{Color: bytes.Repeat([]byte{byte(r % 2)}, 80), Key: word(5)} }),
	}
}

// TestItemAlgorithms checks every algorithm on colors and keys of bytes
// against the reference, in every mode, for many sizes.
func TestItemAlgorithms(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	sizes := sweep.More([]int{1, 2, 3, 5, 8, 13, 16, 33, 64, 100}, 257)
	modes := map[string]Options{"split+reorder": {}, "no-reorder": {NoReorder: true}, "no-split": {NoSplit: true}, "neither": {NoSplit: true, NoReorder: true}}
	for _, in := range List() {
		if in.Items == nil {
			continue
		}
		for _, n := range sizes {
			for pname, items := range itemPatterns(n, rng) {
				for mname, o := range modes {
					for _, chain := range []bool{false, true} {
						o := o
						o.Algorithm, o.Chain, o.GroupSize = in.Name, chain, 1
						refuse := intsOnly(in.Name, items, &o)
						t.Run(fmt.Sprintf("%s/n=%d/%s/%s/chain=%v", in.Name, n, pname, mname, chain), func(t *testing.T) {
							res, err := runItems(t, items, o)
							if refuse {
								if !errors.Is(err, errs.Unsupported) {
									t.Fatalf("integers only, on bytes: %v, want ErrUnsupported", err)
								}
								return
							}
							if err != nil {
								t.Fatal(err)
							}
							checkGroups(t, res, itemReference(items, &o))
						})
					}
				}
			}
		}
	}
}

// TestItemAlgorithms1024 runs every algorithm once at 1,024 ranks (the
// top of the sizes the generalized split is checked on): byte colors of
// mixed lengths, split and reorder, a chain result; the integer-only ones
// on integers.
func TestItemAlgorithms1024(t *testing.T) {
	if !sweep.Long {
		t.Skip("1,024 ranks: a long sweep (-tags long)")
	}
	const n = 1024
	rng := rand.New(rand.NewPCG(9, 10))
	pats := itemPatterns(n, rng)
	for _, in := range List() {
		items, o := pats["mixed"], Options{Algorithm: in.Name, Chain: true}
		if in.Items == nil || in.Name == "radix" {
			items, o.Ints = pats["random"], true
		}
		t.Run(in.Name, func(t *testing.T) {
			res, err := runItems(t, items, o)
			if err != nil {
				t.Fatal(err)
			}
			checkGroups(t, res, itemReference(items, &o))
		})
	}
}

// TestHashCollisions forces every color into one bin: hash must notice
// that its chains stop shrinking with several colors left and sort them.
func TestHashCollisions(t *testing.T) {
	HashHook = func([]byte, int) uint32 { return 7 }
	defer func() { HashHook = nil }()
	rng := rand.New(rand.NewPCG(7, 8))
	for _, alg := range []string{"hash", "hash64"} {
		for _, n := range []int{2, 7, 70, 130} {
			for _, noReorder := range []bool{false, true} {
				items := itemPatterns(n, rng)["random"]
				o := Options{Algorithm: alg, NoReorder: noReorder, Chain: true}
				res, err := runItems(t, items, o)
				if err != nil {
					t.Fatal(err)
				}
				checkGroups(t, res, itemReference(items, &o))
			}
		}
	}
}

// TestComparators: custom comparators order colors and keys; hash and
// hash64 refuse a custom color comparator on every rank.
func TestComparators(t *testing.T) {
	fold := func(a, b []byte) int { return bytes.Compare(bytes.ToLower(a), bytes.ToLower(b)) }
	rev := func(a, b []byte) int { return bytes.Compare(b, a) }
	rng := rand.New(rand.NewPCG(9, 10))
	n := 37
	items := make([]Item, n)
	for r := range items {
		items[r] = Item{Color: []byte{"aAbB"[rng.IntN(4)]}, Key: []byte{byte(rng.IntN(5))}}
	}
	for _, in := range List() {
		if in.Items == nil {
			continue
		}
		o := Options{Algorithm: in.Name, ColorCompare: fold, KeyCompare: rev}
		res, err := runItems(t, items, o)
		if in.Name == "hash" || in.Name == "hash64" || in.Name == "radix" {
			if !errors.Is(err, errs.Unsupported) {
				t.Fatalf("%s with custom comparators: %v, want ErrUnsupported", in.Name, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		want := itemReference(items, &o)
		if len(want[0]) < 2 {
			t.Fatalf("the folded colors should group several ranks: %v", want[0])
		}
		checkGroups(t, res, want)
	}
}
