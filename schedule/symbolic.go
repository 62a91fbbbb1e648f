package schedule

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// interval is the half-open rank interval [lo, hi).
type interval[T int | int32] struct{ lo, hi T }

// ival is a rank interval in ints, as the verifier computes with them.
type ival = interval[int]

// mergeSorted sorts l by lower end and merges, in place, the intervals that
// overlap or continue each other; it returns the merged prefix of l.
func mergeSorted[T int | int32](l []interval[T]) []interval[T] {
	slices.SortFunc(l, func(a, b interval[T]) int { return int(a.lo) - int(b.lo) })
	out := l[:0]
	for _, iv := range l {
		if k := len(out); k > 0 && iv.lo <= out[k-1].hi {
			out[k-1].hi = max(out[k-1].hi, iv.hi)
			continue
		}
		out = append(out, iv)
	}
	return out
}

// cid names a contribution set in a contribTable. The zero cid is no set:
// the seg is not reduction data.
type cid uint32

// seg is a run of n elements of a symbolic buffer.
//
// In data-movement collectives element j of a defined seg holds the input
// element with global label start+j (labels number all inputs of all ranks).
// In reductions element j holds, for input element index start+j, the
// combination of the contributions of the set set names (in its order when
// the table is ordered).
//
// A seg holds no pointers, so the garbage collector never scans buffers.
type seg struct {
	n     int
	start int
	set   cid // reductions only
	def   bool
}

func (s seg) sub(off, n int) seg {
	s.n = n
	if s.def {
		s.start += off
	}
	return s
}

// joins reports whether b continues a.
func (a seg) joins(b seg) bool {
	if !a.def || !b.def {
		return !a.def && !b.def
	}
	return a.start+a.n == b.start && a.set == b.set
}

// appendSeg appends s to ss, merging it into the last seg when it continues
// it, and drops empty segs.
func appendSeg(ss []seg, s seg) []seg {
	if s.n == 0 {
		return ss
	}
	if k := len(ss); k > 0 && ss[k-1].joins(s) {
		ss[k-1].n += s.n
		return ss
	}
	return append(ss, s)
}

func segString(s seg, t contribTable) string {
	switch {
	case !s.def:
		return fmt.Sprintf("?x%d", s.n)
	case s.set == 0:
		return fmt.Sprintf("L%d+%d", s.start, s.n)
	}
	return fmt.Sprintf("E%d+%d%s", s.start, s.n, t.format(s.set))
}

func segsString(ss []seg, t contribTable) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = segString(s, t)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func ivalsString(l []ival) string {
	var sb strings.Builder
	sb.WriteByte('{')
	for i, iv := range l {
		if i > 0 {
			sb.WriteByte(',')
		}
		if iv.hi == iv.lo+1 {
			fmt.Fprintf(&sb, "%d", iv.lo)
		} else {
			fmt.Fprintf(&sb, "%d..%d", iv.lo, iv.hi-1)
		}
	}
	sb.WriteByte('}')
	return sb.String()
}

// symbuf is a symbolic buffer: segs covering [0, n) in order.
//
// Invariant: offs[0] = 0, offs[i+1] = offs[i] + segs[i].n, the last seg
// ends at n, no seg is empty and no seg joins its successor. Writes replace
// runs of equal length, so offsets outside a write never move, and find is
// a binary search.
type symbuf struct {
	segs []seg
	offs []int
	n    int
}

// grow extends the buffer with undefined elements up to length n.
func (b *symbuf) grow(n int) {
	if n <= b.n {
		return
	}
	if k := len(b.segs); k > 0 && !b.segs[k-1].def {
		b.segs[k-1].n += n - b.n
	} else {
		b.segs = append(b.segs, seg{n: n - b.n})
		b.offs = append(b.offs, b.n)
	}
	b.n = n
}

// find returns the index of the seg holding element off (len(b.segs) when
// off >= b.n) and off's offset in it.
func (b *symbuf) find(off int) (int, int) {
	if off >= b.n {
		return len(b.segs), 0
	}
	i, ok := slices.BinarySearch(b.offs, off)
	if !ok {
		i--
	}
	return i, off - b.offs[i]
}

// read returns a copy of the segs covering [off, off+n).
func (b *symbuf) read(off, n int) []seg {
	if n <= 0 {
		return nil
	}
	i, in := b.find(off)
	j, _ := b.find(off + n - 1)
	out := make([]seg, 0, min(j, len(b.segs)-1)-i+1)
	for n > 0 && i < len(b.segs) {
		s := b.segs[i]
		take := min(s.n-in, n)
		out = append(out, s.sub(in, take))
		n -= take
		in = 0
		i++
	}
	return out
}

// write replaces [off, off+len(src)) by src, in place.
func (b *symbuf) write(off int, src []seg) {
	n := 0
	for _, s := range src {
		n += s.n
	}
	if n == 0 {
		return
	}
	b.grow(off + n)
	end := off + n
	i, in := b.find(off)
	j, jn := b.find(end)
	// The new segs of [lo, hi): the untouched head of seg i, src, the
	// untouched tail of seg j, merged with the neighbours they continue.
	lo, hi := i, j
	var replBuf [8]seg
	repl := replBuf[:0]
	if in > 0 {
		repl = append(repl, b.segs[i].sub(0, in))
	}
	for _, s := range src {
		repl = appendSeg(repl, s)
	}
	if jn > 0 {
		repl = appendSeg(repl, b.segs[j].sub(jn, b.segs[j].n-jn))
		hi = j + 1
	}
	if lo > 0 && b.segs[lo-1].joins(repl[0]) {
		lo--
		repl[0].n += b.segs[lo].n
		repl[0].start = b.segs[lo].start
	}
	if hi < len(b.segs) && repl[len(repl)-1].joins(b.segs[hi]) {
		repl[len(repl)-1].n += b.segs[hi].n
		hi++
	}
	var offsBuf [8]int
	offs, pos := offsBuf[:0], b.offs[lo]
	for _, s := range repl {
		offs = append(offs, pos)
		pos += s.n
	}
	b.segs = slices.Replace(b.segs, lo, hi, repl...)
	b.offs = slices.Replace(b.offs, lo, hi, offs...)
}

// contribTable interns the contribution sets of one reduction. Two sets
// get the same cid exactly when the table cannot tell them apart: equal
// lists for exactSets, equal fingerprints for fingerprints.
type contribTable interface {
	// of returns the set of the ranks of l, combined in l's order.
	of(l []ival) (cid, error)
	// combine returns the set of left ⊕ right, or an error when the table
	// can tell that a contribution is combined twice.
	combine(left, right cid) (cid, error)
	// format renders a set for error messages.
	format(id cid) string
}

// exactSets is the exact contribTable: each set is a list of rank
// intervals, sorted and merged unless ordered (then in combination order,
// merging only intervals that continue each other). Lists are hash-consed
// into a pointer-free arena, so ranks that compute the same partial result
// share one copy and equal sets have equal cids; combinations of long lists
// are memoised, so repeating one costs a map look-up.
//
// Ranks are stored in 32 bits: Verify refuses larger reductions.
type exactSets struct {
	ordered bool
	chunks  [][]span       // the arena; no list straddles two chunks
	sets    []exactSet     // by cid; sets[0] is unused
	index   map[uint64]cid // list hash (probed linearly) → cid
	memo    map[[2]cid]cid // (left, right) → left ⊕ right, for long lists
	buf     []span         // scratch for combine
	sorted  []span         // scratch for ordered overlap checks
}

// span is an ival in 32 bits, for the memory of long sets.
type span = interval[int32]

// exactSet locates a list in the arena.
type exactSet struct{ chunk, off, n uint32 }

const (
	// arenaChunk is the largest length of an arena chunk, in spans (they
	// double up to it). Longer lists get a chunk of their own.
	arenaChunk = 1 << 18
	// memoMin is the combined length from which combinations are memoised:
	// shorter ones cost less to redo than a look-up in a large memo.
	memoMin = 16
)

func newExactSets(ordered bool) *exactSets {
	return &exactSets{
		ordered: ordered,
		sets:    make([]exactSet, 1),
		index:   make(map[uint64]cid),
		memo:    make(map[[2]cid]cid),
	}
}

func (t *exactSets) list(id cid) []span {
	s := t.sets[id]
	return t.chunks[s.chunk][s.off : s.off+s.n : s.off+s.n]
}

func mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// errTooManySets reports a table that ran out of cids.
var errTooManySets = errors.New("more distinct contribution sets than the verifier can number")

func spansHash(l []span) uint64 {
	h := uint64(len(l))
	for _, sp := range l {
		h = mix64(h ^ uint64(uint32(sp.lo)) ^ uint64(sp.hi)<<32)
	}
	return h
}

// intern returns the cid of list l, adding a copy of it if it is new.
// Lists whose hashes collide take the next free hash value.
func (t *exactSets) intern(l []span) (cid, error) {
	h := spansHash(l)
	for ; ; h++ {
		id, ok := t.index[h]
		if !ok {
			break
		}
		if slices.Equal(t.list(id), l) {
			return id, nil
		}
	}
	if len(t.sets) > int(^cid(0)) {
		return 0, errTooManySets
	}
	k := len(t.chunks) - 1
	if k < 0 || len(t.chunks[k])+len(l) > cap(t.chunks[k]) {
		c := 64 // small reductions need small arenas
		if k >= 0 {
			c = min(2*cap(t.chunks[k]), arenaChunk)
		}
		t.chunks = append(t.chunks, make([]span, 0, max(c, len(l))))
		k++
	}
	id := cid(len(t.sets))
	t.sets = append(t.sets, exactSet{chunk: uint32(k), off: uint32(len(t.chunks[k])), n: uint32(len(l))})
	t.chunks[k] = append(t.chunks[k], l...)
	t.index[h] = id
	return id, nil
}

func (t *exactSets) of(l []ival) (cid, error) {
	var out []span
	for _, iv := range l {
		out = appendSpan(out, span{int32(iv.lo), int32(iv.hi)})
	}
	if !t.ordered {
		out = mergeSorted(out)
	}
	return t.intern(out)
}

// appendSpan appends sp, extending the last span when sp continues it.
func appendSpan(l []span, sp span) []span {
	if k := len(l); k > 0 && l[k-1].hi == sp.lo {
		l[k-1].hi = sp.hi
		return l
	}
	return append(l, sp)
}

func (t *exactSets) combine(left, right cid) (cid, error) {
	key := [2]cid{left, right}
	if !t.ordered && left > right {
		key = [2]cid{right, left}
	}
	a, b := t.list(key[0]), t.list(key[1])
	memo := len(a)+len(b) >= memoMin
	if memo {
		if id, ok := t.memo[key]; ok {
			return id, nil
		}
	}
	var err error
	if t.ordered {
		err = t.concat(a, b)
	} else {
		err = t.union(a, b)
	}
	if err != nil {
		return 0, err
	}
	id, err := t.intern(t.buf)
	if err == nil && memo {
		t.memo[key] = id
	}
	return id, err
}

// union leaves the union of the sorted lists a and b in t.buf, failing
// when they share a rank.
func (t *exactSets) union(a, b []span) error {
	out := t.buf[:0]
	for len(a) > 0 || len(b) > 0 {
		var sp span
		if len(b) == 0 || len(a) > 0 && a[0].lo < b[0].lo {
			sp, a = a[0], a[1:]
		} else {
			sp, b = b[0], b[1:]
		}
		if k := len(out); k > 0 && sp.lo < out[k-1].hi {
			t.buf = out
			return fmt.Errorf("contribution of rank %d combined twice", sp.lo)
		}
		out = appendSpan(out, sp)
	}
	t.buf = out
	return nil
}

// concat leaves a then b in t.buf, failing when they share a rank.
func (t *exactSets) concat(a, b []span) error {
	s := append(append(t.sorted[:0], a...), b...)
	slices.SortFunc(s, func(x, y span) int { return int(x.lo) - int(y.lo) })
	t.sorted = s
	for k := 1; k < len(s); k++ {
		if s[k].lo < s[k-1].hi {
			return fmt.Errorf("contribution of rank %d combined twice", s[k].lo)
		}
	}
	out := append(t.buf[:0], a...)
	for _, sp := range b {
		out = appendSpan(out, sp)
	}
	t.buf = out
	return nil
}

func (t *exactSets) format(id cid) string {
	l := t.list(id)
	ivs := make([]ival, len(l))
	for i, sp := range l {
		ivs[i] = ival{int(sp.lo), int(sp.hi)}
	}
	return ivalsString(ivs)
}

// mersenne61 is the prime 2^61 − 1, the modulus of fingerprint sums.
const mersenne61 = 1<<61 - 1

func addMod61(a, b uint64) uint64 {
	s := a + b // < 2^62: no overflow
	if s >= mersenne61 {
		s -= mersenne61
	}
	return s
}

// fingerprint is a multiset of ranks compressed to its size and two
// weighted sums: Σ m_r·w1_r and Σ m_r·w2_r mod 2^61 − 1, where m_r is
// rank r's multiplicity and w1, w2 are independent uniform weights.
type fingerprint struct{ n, s1, s2 uint64 }

// fingerprints is the randomized contribTable of Options.Fingerprint. It
// combines in O(1) and ignores order, so it serves commutative reductions
// only.
type fingerprints struct {
	p        int
	pre1     []uint64 // pre1[r] = Σ_{q<r} w1_q mod 2^61 − 1
	pre2     []uint64
	sets     []fingerprint // by cid; sets[0] is unused
	index    map[fingerprint]cid
	maxCount uint64
}

func newFingerprints(p int, seed uint64) *fingerprints {
	rng := rand.New(rand.NewPCG(seed, 0x5c011_f1a9e4))
	t := &fingerprints{
		p:     p,
		pre1:  make([]uint64, p+1),
		pre2:  make([]uint64, p+1),
		sets:  make([]fingerprint, 1),
		index: make(map[fingerprint]cid),
		// A valid set holds each of the p ranks at most once.
		maxCount: uint64(p),
	}
	for r := range p {
		t.pre1[r+1] = addMod61(t.pre1[r], rng.Uint64N(mersenne61))
		t.pre2[r+1] = addMod61(t.pre2[r], rng.Uint64N(mersenne61))
	}
	return t
}

func (t *fingerprints) intern(f fingerprint) (cid, error) {
	if id, ok := t.index[f]; ok {
		return id, nil
	}
	if len(t.sets) > int(^cid(0)) {
		return 0, errTooManySets
	}
	id := cid(len(t.sets))
	t.sets = append(t.sets, f)
	t.index[f] = id
	return id, nil
}

func (t *fingerprints) of(l []ival) (cid, error) {
	var f fingerprint
	for _, iv := range l {
		f.n += uint64(iv.hi - iv.lo)
		f.s1 = addMod61(f.s1, mersenne61-t.pre1[iv.lo]) // − pre[lo]
		f.s1 = addMod61(f.s1, t.pre1[iv.hi])
		f.s2 = addMod61(f.s2, mersenne61-t.pre2[iv.lo])
		f.s2 = addMod61(f.s2, t.pre2[iv.hi])
	}
	return t.intern(f)
}

func (t *fingerprints) combine(left, right cid) (cid, error) {
	a, b := t.sets[left], t.sets[right]
	f := fingerprint{n: a.n + b.n, s1: addMod61(a.s1, b.s1), s2: addMod61(a.s2, b.s2)}
	if f.n > t.maxCount {
		return 0, fmt.Errorf("%d contributions of %d ranks: some combined twice", f.n, t.p)
	}
	return t.intern(f)
}

func (t *fingerprints) format(id cid) string {
	f := t.sets[id]
	return fmt.Sprintf("{%d contributions, fingerprint %x:%x}", f.n, f.s1, f.s2)
}

// reduceSegs computes the symbolic dst ⊕ src (or src ⊕ dst when srcLeft).
// Undefined operands give undefined results.
func reduceSegs(dst, src []seg, srcLeft bool, t contribTable) ([]seg, error) {
	var out []seg
	i, j := 0, 0
	var a, b seg
	for {
		if a.n == 0 {
			if i == len(dst) {
				break
			}
			a, i = dst[i], i+1
		}
		if b.n == 0 {
			if j == len(src) {
				break
			}
			b, j = src[j], j+1
		}
		k := min(a.n, b.n)
		x, y := a.sub(0, k), b.sub(0, k)
		a, b = a.sub(k, a.n-k), b.sub(k, b.n-k)
		if !x.def || !y.def {
			out = appendSeg(out, seg{n: k})
			continue
		}
		if x.set == 0 || y.set == 0 {
			return nil, fmt.Errorf("reduction of data that is not a reduction input")
		}
		if x.start != y.start {
			return nil, fmt.Errorf("element %d combined with element %d", x.start, y.start)
		}
		l, r := x.set, y.set
		if srcLeft {
			l, r = r, l
		}
		id, err := t.combine(l, r)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", x.start, err)
		}
		out = appendSeg(out, seg{n: k, def: true, start: x.start, set: id})
	}
	return out, nil
}
