package schedule

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// symbufInvariant checks symbuf's documented invariant.
func symbufInvariant(t *testing.T, b *symbuf) {
	t.Helper()
	if len(b.segs) != len(b.offs) {
		t.Fatalf("%d segs, %d offsets", len(b.segs), len(b.offs))
	}
	pos := 0
	for i, s := range b.segs {
		if b.offs[i] != pos || s.n <= 0 {
			t.Fatalf("seg %d at %d (want %d), length %d", i, b.offs[i], pos, s.n)
		}
		if i > 0 && b.segs[i-1].joins(s) {
			t.Fatalf("seg %d continues seg %d", i, i-1)
		}
		pos += s.n
	}
	if pos != b.n {
		t.Fatalf("segs cover %d of %d elements", pos, b.n)
	}
}

// TestSymbufAgainstElements checks symbuf against a buffer of one label per
// element under random writes and reads.
func TestSymbufAgainstElements(t *testing.T) {
	// elem is one element: undefined (set < 0) or label start with set.
	type elem struct {
		start int
		set   cid
		def   bool
	}
	expand := func(ss []seg) []elem {
		var out []elem
		for _, s := range ss {
			for j := range s.n {
				e := elem{def: s.def}
				if s.def {
					e.start, e.set = s.start+j, s.set
				}
				out = append(out, e)
			}
		}
		return out
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		var b symbuf
		var ref []elem
		for range 60 {
			switch rng.IntN(4) {
			case 0: // grow
				n := b.n + rng.IntN(5)
				b.grow(n)
				for len(ref) < n {
					ref = append(ref, elem{})
				}
			case 1, 2: // write a few segs, some continuing each other
				off := rng.IntN(b.n + 3)
				var src []seg
				start := rng.IntN(50)
				for range 1 + rng.IntN(3) {
					s := seg{n: rng.IntN(4), def: rng.IntN(4) > 0}
					if s.def {
						s.start, s.set = start, cid(rng.IntN(2))
						start += s.n + rng.IntN(2)
					}
					src = append(src, s)
				}
				b.write(off, src)
				data := expand(src)
				for len(data) > 0 && len(ref) < off+len(data) {
					ref = append(ref, elem{})
				}
				if len(data) > 0 {
					copy(ref[off:], data)
				}
			case 3: // read
				if b.n == 0 {
					continue
				}
				off := rng.IntN(b.n)
				n := rng.IntN(b.n - off + 1)
				got := b.read(off, n)
				if !slices.Equal(expand(got), ref[off:off+n]) {
					t.Fatalf("trial %d: read(%d, %d) = %v, want %v", trial, off, n, got, ref[off:off+n])
				}
				for i := 1; i < len(got); i++ {
					if got[i-1].joins(got[i]) {
						t.Fatalf("trial %d: read returns joinable segs %v", trial, got)
					}
				}
			}
			symbufInvariant(t, &b)
			if b.n != len(ref) || !slices.Equal(expand(b.segs), ref) {
				t.Fatalf("trial %d: buffer %v, want %v", trial, b.segs, ref)
			}
		}
	}
}

// unionOf checks that tab combines {0,1,5} and {2..4} into {0..5} in
// either order; it returns tab's set-of function and the ids of the two
// operands and the union.
func unionOf(t *testing.T, tab contribTable) (of func(l ...ival) cid, a, b, ab cid) {
	t.Helper()
	of = func(l ...ival) cid {
		id, err := tab.of(l)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	a, b = of(ival{0, 2}, ival{5, 6}), of(ival{2, 5})
	ab, err := tab.combine(a, b)
	if err != nil || ab != of(ival{0, 6}) {
		t.Fatalf("{0,1,5} ⊕ {2..4} = %s, %v", tab.format(ab), err)
	}
	if ba, _ := tab.combine(b, a); ba != ab {
		t.Fatal("the union depends on operand order")
	}
	return of, a, b, ab
}

func TestExactSets(t *testing.T) {
	tab := newExactSets(false)
	of, a, b, ab := unionOf(t, tab)
	if id := of(ival{5, 6}, ival{0, 1}, ival{1, 2}); id != a {
		t.Fatalf("unsorted list not canonical: %s", tab.format(id))
	}
	if _, err := tab.combine(ab, of(ival{4, 7})); err == nil || !strings.Contains(err.Error(), "rank 4 combined twice") {
		t.Fatalf("overlap: %v", err)
	}
	// Long lists go through the memo: the same answers, twice.
	var even, odd []ival
	for r := 0; r < 4*memoMin; r += 2 {
		even = append(even, ival{r, r + 1})
		odd = append(odd, ival{r + 1, r + 2})
	}
	e, o, all := of(even...), of(odd...), of(ival{0, 4 * memoMin})
	e1 := of(even[1:]...)
	for range 2 {
		if id, err := tab.combine(o, e); err != nil || id != all {
			t.Fatalf("even ⊕ odd = %s, %v", tab.format(id), err)
		}
		if id, err := tab.combine(o, e1); err != nil || id != of(ival{1, 4 * memoMin}) {
			t.Fatalf("even without 0 ⊕ odd = %s, %v", tab.format(id), err)
		}
		if _, err := tab.combine(e, all); err == nil {
			t.Fatal("overlap of long lists accepted")
		}
	}
	// A hash collision: another list already sits at {3}'s hash value.
	h := spansHash([]span{{3, 4}})
	tab.index[h], tab.index[h+1] = a, b
	three := of(ival{3, 4})
	if three == a || three == b || tab.format(three) != "{3}" || of(ival{3, 4}) != three {
		t.Fatalf("colliding list interned as %s", tab.format(three))
	}
	// Ordered: order is kept, and only continuations merge.
	ord := newExactSets(true)
	x, _ := ord.of([]ival{{2, 3}})
	y, _ := ord.of([]ival{{0, 2}})
	xy, err := ord.combine(x, y)
	if err != nil || ord.format(xy) != "{2,0..1}" {
		t.Fatalf("ordered {2} ⊕ {0,1} = %s, %v", ord.format(xy), err)
	}
	yx, _ := ord.combine(y, x)
	if want, _ := ord.of([]ival{{0, 3}}); yx != want {
		t.Fatalf("ordered {0,1} ⊕ {2} = %s", ord.format(yx))
	}
	if _, err := ord.combine(xy, x); err == nil {
		t.Fatal("ordered overlap accepted")
	}
}

func TestFingerprints(t *testing.T) {
	const p = 64
	tab := newFingerprints(p, 7)
	of, _, _, _ := unionOf(t, tab)
	// Same size, different multisets: {0,1,1} against {0,1,2}, and
	// every single swap of one rank for another.
	one := of(ival{1, 2})
	dup, _ := tab.combine(of(ival{0, 2}), one)
	if dup == of(ival{0, 3}) {
		t.Fatal("duplicate not told from the set")
	}
	for r := range p {
		for q := range p {
			if r != q && of(ival{r, r + 1}) == of(ival{q, q + 1}) {
				t.Fatalf("ranks %d and %d share a fingerprint", r, q)
			}
		}
	}
	// More contributions than ranks fail at once.
	full := of(ival{0, p})
	if _, err := tab.combine(full, one); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("%d+1 contributions: %v", p, err)
	}
	// Another seed gives other weights.
	other := newFingerprints(p, 8)
	id, _ := other.of([]ival{{0, 1}})
	if other.sets[id] == tab.sets[of(ival{0, 1})] {
		t.Fatal("seed ignored")
	}
}
