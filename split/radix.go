package split

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"time"

	"github.com/scoll/scoll/internal/errs"
)

func init() {
	Register(Info{
		Name:   "radix",
		Doc:    "integer colors and keys only: split the parent chain by the next 4 bits of the color, most significant first, then each color's chain by the next 4 bits of the key (double scans of per-bin tables; data never moves, ranks are relinked), bins also carrying their least and greatest key so that every sub-chain knows its sorted neighbours: O(1) memory, O(lg n) rounds per 4 bits that differ (Moody's Radix)",
		Source: "Moody, Ahn, de Supinski 2011, sec. 3.2",
		Phases: []string{"bounds", "color", "key", "build"},
		Items:  runRadix,
	})
}

// radixBits is how many bits of a color or key one pass reads (r): 2^r
// bins per table.
const radixBits = 4

// Radix is Moody et al.'s divide-and-conquer radix sort on chains, for
// integer colors and keys (Options.Ints: IntBytes encodings, whose 64
// bits read as an unsigned big-endian number order as the integers).
// Nothing moves but links:
//
//	bounds  one double scan of the parent chain: the least and greatest
//	        defined color and key, and how many ranks are undefined.
//	        Bits above the first one where least and greatest differ are
//	        common to every rank and need no pass.
//	color   passes of hashSplit over the remaining color bits, r at a
//	        time from the most significant: bin = the next r bits; the
//	        first pass has one more bin for the undefined ranks, which
//	        leave. A double scan keeps parent order, so after the last
//	        pass every chain is one color in parent order: the result
//	        when not reordering.
//	key     the same passes over each color's chain by the key bits; a
//	        sub-chain is then the members of one key prefix, a contiguous
//	        range of the color's sorted order (by key, then parent rank).
//
// Rejoining, top down: each key pass's tables carry per bin, besides the
// nearest member and the count, the member with the least and the one
// with the greatest (key, parent rank): the sorted first and last of the
// bin's sub-chain. A member then knows, for its new sub-chain Q_b of its
// old one Q,
//
//	off(Q_b)   = off(Q) + Σ_{x<b} |Q_x|          (sorted offset in the color)
//	before(Q_b) = greatest of the last non-empty Q_x, x < b, else before(Q)
//	after(Q_b)  = least of the first non-empty Q_x, x > b, else after(Q)
//
// with before and after None for the whole color chain, whose least
// member (known to all after the first key pass) is every member's First.
// Members of a last sub-chain have equal keys, so its parent order is
// its sorted order: new rank = off + rank in it, size = the color chain's,
// left = its left neighbour or, for its first member, before; right
// likewise with after. Every member holds a constant amount of state (no
// stack of levels, no rejoining pass afterwards). For example, keys of
// two bits read one at a time (r = 1), one color chain a b c d:
//
//	keys          a=11 b=01 c=10 d=01
//	bit 1         Q0 = b d  off 0, before −, after c (least of Q1)
//	              Q1 = a c  off 2, before d (greatest of Q0), after −
//	bit 0 of Q0   Q01 = b d (no shrink: off, before, after kept)
//	bit 0 of Q1   Q10 = c   off 2, before d, after a
//	              Q11 = a   off 3, before c, after −
//	result        b d c a: b 0 (−, d), d 1 (b, c), c 2 (d, a), a 3 (c, −)
//
// A pass that leaves a chain whole (every member in one bin) returns the
// same links; bits common to the whole parent are skipped by the bounds
// instead, with no allreduce per pass. Ties of keys go by parent rank:
// the parent chain must be in parent-rank order (Item.Rank), as Job's is.
//
// Cost: 1 + ⌈c/r⌉ + ⌈k/r⌉ double scans of ⌈lg n⌉ rounds each, c and k
// the color and key bits below the common prefixes (at most 64 each; a
// first color pass runs also with c = 0 when some ranks are undefined).
// Each round sends two messages of 2^r·12 (color) or 2^r·44 bytes (key):
// about (1 + ⌈c/r⌉ + ⌈k/r⌉)·⌈lg n⌉·(α + 2^r·44·β), O(1) memory per rank.
func runRadix(ctx context.Context, c Conn, j *Job, st *Stats) (*Sorted, error) {
	o := j.Options
	if !o.Ints {
		return nil, fmt.Errorf("%w: radix sorts integer colors and keys (Options.Ints) only", errs.Unsupported)
	}
	if o.ColorCompare != nil || o.KeyCompare != nil {
		return nil, fmt.Errorf("%w: radix sorts by the integers' bits and cannot follow a custom comparator", errs.Unsupported)
	}
	t := time.Now()
	or := &j.order
	splitting, reordering := !o.NoSplit, !o.NoReorder
	def := or.defined(&j.Me)
	// A rank whose item is malformed runs every pass (with zeros) so that
	// the others do not wait for it, and reports at the end.
	var bad error
	var color, key uint64
	if def && splitting {
		var ok bool
		if color, ok = radixWord(j.Me.Color); !ok {
			bad = fmt.Errorf("%w: radix: color of %d bytes is no integer", errs.InvalidArgument, len(j.Me.Color))
		}
	}
	if def && reordering {
		var ok bool
		if key, ok = radixWord(j.Me.Key); !ok && bad == nil {
			bad = fmt.Errorf("%w: radix: key of %d bytes is no integer", errs.InvalidArgument, len(j.Me.Key))
		}
	}
	b, err := radixBounds(ctx, c, st, j.Parent, def, color, key)
	if err != nil {
		return nil, err
	}
	st.phase("bounds", &t)
	done := func(l *Links) (*Sorted, error) {
		if bad != nil {
			return nil, bad
		}
		if l == nil {
			return nil, nil
		}
		return &Sorted{Rank: l.Rank, Size: l.Size, links: l}, nil
	}
	if b.defined == 0 {
		return done(nil)
	}
	cur := j.Parent
	if splitting {
		from := bits.LeadingZeros64(b.cmin ^ b.cmax)
		for pass, s := 0, from; s < 64 || (pass == 0 && b.undefined > 0); pass++ {
			w := min(radixBits, 64-s)
			bins, bin := 1<<w, radixChunk(color, s, w)
			if pass == 0 {
				// One more bin: the undefined ranks leave.
				bins++
				if !def {
					bin = bins - 1
				}
			}
			if cur, err = hashSplit(ctx, c, st, cur, tagRadix+(1+pass)*scanTags, bins, bin); err != nil {
				return nil, err
			}
			if !def {
				st.phase("color", &t)
				return done(nil)
			}
			s += w
		}
		st.phase("color", &t)
	}
	from := bits.LeadingZeros64(b.kmin ^ b.kmax)
	if !reordering || from == 64 {
		// One color in parent order, or every key equal: sorted already.
		return done(&cur)
	}
	// Invariant: cur is this rank's sub-chain Q of its color chain,
	// holding the sorted positions [off, off+|Q|); before and after are
	// the addresses at off−1 and off+|Q| (None past the ends).
	size, first := cur.Size, None
	off, before, after := 0, None, None
	for pass, s := 0, from; s < 64; pass, s = pass+1, s+radixBits {
		w := min(radixBits, 64-s)
		bin := radixChunk(key, s, w)
		q, err := keySplit(ctx, c, st, cur, tagRadix+(radixColorPasses+1+pass)*scanTags, 1<<w, bin, radixItem{key, j.Me.Rank, cur.Self})
		if err != nil {
			return nil, err
		}
		off += q.below
		if q.before != None {
			before = q.before
		}
		if q.after != None {
			after = q.after
		}
		if pass == 0 {
			first = q.least
		}
		cur = q.links
	}
	st.phase("key", &t)
	res := Links{Rank: off + cur.Rank, Size: size, Self: cur.Self, Left: cur.Left, Right: cur.Right, First: first}
	if cur.Rank == 0 {
		res.Left = before
	}
	if cur.Rank == cur.Size-1 {
		res.Right = after
	}
	return done(&res)
}

// radixColorPasses bounds the color passes (⌈64/r⌉, and one more when
// the undefined ranks need a pass of their own): key passes take their
// tags after them.
const radixColorPasses = 64/radixBits + 1

// radixWord reads an IntBytes encoding as the unsigned number whose order
// is the integers' order.
func radixWord(b []byte) (uint64, bool) {
	if len(b) != 8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(b), true
}

// radixChunk returns bits [s, s+w) of v, counted from the most
// significant (w = 0: none).
func radixChunk(v uint64, s, w int) int {
	if w == 0 {
		return 0
	}
	return int(v << s >> (64 - w))
}

// bounds is the reduction of the bounds phase: how many ranks are
// defined and undefined, and the least and greatest defined color and key.
type bounds struct {
	defined, undefined     uint32
	cmin, cmax, kmin, kmax uint64
}

const boundsWidth = 8 + 4*8

func (b *bounds) bytes() []byte {
	out := binary.LittleEndian.AppendUint32(make([]byte, 0, boundsWidth), b.defined)
	out = binary.LittleEndian.AppendUint32(out, b.undefined)
	for _, v := range []uint64{b.cmin, b.cmax, b.kmin, b.kmax} {
		out = binary.LittleEndian.AppendUint64(out, v)
	}
	return out
}

func boundsOf(p []byte) bounds {
	u := func(i int) uint64 { return binary.LittleEndian.Uint64(p[8+8*i:]) }
	return bounds{
		defined: binary.LittleEndian.Uint32(p), undefined: binary.LittleEndian.Uint32(p[4:]),
		cmin: u(0), cmax: u(1), kmin: u(2), kmax: u(3),
	}
}

// merge combines two bounds (commutative).
func (b bounds) merge(o bounds) bounds {
	switch {
	case o.defined == 0:
		b.undefined += o.undefined
		return b
	case b.defined == 0:
		o.undefined += b.undefined
		return o
	}
	return bounds{
		defined: b.defined + o.defined, undefined: b.undefined + o.undefined,
		cmin: min(b.cmin, o.cmin), cmax: max(b.cmax, o.cmax),
		kmin: min(b.kmin, o.kmin), kmax: max(b.kmax, o.kmax),
	}
}

// radixBounds reduces every rank's color and key along the chain l (one
// double scan); every rank gets the same bounds.
func radixBounds(ctx context.Context, c Conn, st *Stats, l Links, def bool, color, key uint64) (bounds, error) {
	mine := bounds{undefined: 1}
	if def {
		mine = bounds{defined: 1, cmin: color, cmax: color, kmin: key, kmax: key}
	}
	op := func(a, b []byte) []byte { m := boundsOf(a).merge(boundsOf(b)); return m.bytes() }
	all, err := chainAllreduce(ctx, c, st, l, tagRadix, mine.bytes(), op)
	if err != nil {
		return bounds{}, err
	}
	return boundsOf(all), nil
}

// radixItem is a member of a key pass: its key and parent rank, which
// order it within its color, and its address.
type radixItem struct {
	key  uint64
	rank int32
	addr int32
}

func (a radixItem) less(b radixItem) bool {
	return a.key < b.key || (a.key == b.key && a.rank < b.rank)
}

// keyBin is a bin of a key pass's table: hashSplit's nearest member,
// count and first member (in chain order), and the bin's least and
// greatest members in sorted order (meaningful when count > 0).
type keyBin struct {
	addr, count, first int32
	lo, hi             radixItem
}

const keyBinWidth = 12 + 2*16

func putKeyBin(b []byte, e *keyBin) {
	for i, v := range []int32{e.addr, e.count, e.first, e.lo.rank, e.lo.addr, e.hi.rank, e.hi.addr} {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	binary.LittleEndian.PutUint64(b[28:], e.lo.key)
	binary.LittleEndian.PutUint64(b[36:], e.hi.key)
}

func keyBinAt(b []byte, i int) keyBin {
	p := b[i*keyBinWidth:]
	v := func(k int) int32 { return int32(binary.LittleEndian.Uint32(p[4*k:])) }
	return keyBin{
		addr: v(0), count: v(1), first: v(2),
		lo: radixItem{binary.LittleEndian.Uint64(p[28:]), v(3), v(4)},
		hi: radixItem{binary.LittleEndian.Uint64(p[36:]), v(5), v(6)},
	}
}

// joinKeyBins combines bins x and y (x left of y): hashSplit's
// combination (binsCombine) plus the least and greatest member.
func joinKeyBins(x, y keyBin, nearL bool) keyBin {
	switch {
	case x.count == 0:
		return y
	case y.count == 0:
		return x
	}
	z := keyBin{addr: x.addr, count: x.count + y.count, first: x.first, lo: x.lo, hi: x.hi}
	if nearL {
		z.addr = y.addr
	}
	if y.lo.less(z.lo) {
		z.lo = y.lo
	}
	if z.hi.less(y.hi) {
		z.hi = y.hi
	}
	return z
}

func keyBinsCombine(nearL bool) func(a, b []byte) []byte {
	return func(a, b []byte) []byte {
		out := make([]byte, len(a))
		for i := range len(a) / keyBinWidth {
			z := joinKeyBins(keyBinAt(a, i), keyBinAt(b, i), nearL)
			putKeyBin(out[i*keyBinWidth:], &z)
		}
		return out
	}
}

// keyPass is what one key pass tells a member about its new sub-chain.
type keyPass struct {
	links Links
	// below counts the members of the old chain in lower bins.
	below int
	// before is the greatest member of the nearest non-empty lower bin,
	// after the least of the nearest non-empty higher bin (None: none).
	before, after int32
	// least is the old chain's least member.
	least int32
}

// keySplit splits the chain l by bin as hashSplit does, and also reduces
// every bin's count and least and greatest member (one double scan).
func keySplit(ctx context.Context, c Conn, st *Stats, l Links, tag, bins, bin int, me radixItem) (keyPass, error) {
	mine := make([]byte, bins*keyBinWidth)
	own := keyBin{addr: l.Self, count: 1, first: l.Self, lo: me, hi: me}
	for x := range bins {
		if x == bin {
			putKeyBin(mine[x*keyBinWidth:], &own)
		} else {
			putKeyBin(mine[x*keyBinWidth:], &keyBin{addr: None, first: None})
		}
	}
	exL, exR, _, err := DoubleScan(ctx, c, st, l, tag, len(mine), mine, mine, keyBinsCombine(true), keyBinsCombine(false))
	if err != nil {
		return keyPass{}, err
	}
	q := keyPass{links: Links{Size: 1, Self: l.Self, Left: None, Right: None, First: l.Self}, before: None, after: None, least: None}
	for x := range bins {
		var left, right keyBin
		if exL != nil {
			left = keyBinAt(exL, x)
		}
		if exR != nil {
			right = keyBinAt(exR, x)
		}
		if x == bin {
			if left.count > 0 {
				q.links.Rank, q.links.Left, q.links.First = int(left.count), left.addr, left.first
			}
			if right.count > 0 {
				q.links.Right = right.addr
				q.links.Size += int(right.count)
			}
			q.links.Size += q.links.Rank
			left = joinKeyBins(left, own, true)
		}
		all := joinKeyBins(left, right, true)
		if all.count == 0 {
			continue
		}
		if q.least == None {
			q.least = all.lo.addr
		}
		switch {
		case x < bin:
			q.below += int(all.count)
			q.before = all.hi.addr
		case x > bin && q.after == None:
			q.after = all.lo.addr
		}
	}
	return q, nil
}
