package schedule

import (
	"fmt"
	"slices"
	"strings"
)

// ival is the half-open rank interval [lo, hi).
type ival struct{ lo, hi int }

// seg is a run of n elements of a symbolic buffer.
//
// In data-movement collectives element j of a defined seg holds the input
// element with global label start+j (labels number all inputs of all ranks).
// In reductions element j holds, for input element index start+j, the
// combination of the contributions of the ranks in ranks, in that order.
type seg struct {
	n     int
	def   bool
	start int
	ranks []ival // reductions only; treated as immutable once built
}

func (s seg) sub(off, n int) seg {
	s.n = n
	if s.def {
		s.start += off
	}
	return s
}

func sameRanks(a, b []ival) bool { return slices.Equal(a, b) }

// joins reports whether b continues a.
func (a seg) joins(b seg) bool {
	if !a.def || !b.def {
		return !a.def && !b.def
	}
	return a.start+a.n == b.start && sameRanks(a.ranks, b.ranks)
}

func (s seg) String() string {
	if !s.def {
		return fmt.Sprintf("?x%d", s.n)
	}
	if s.ranks == nil {
		return fmt.Sprintf("L%d+%d", s.start, s.n)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "E%d+%d{", s.start, s.n)
	for i, iv := range s.ranks {
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

func segsString(ss []seg) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = s.String()
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// symbuf is a symbolic buffer: segs covering [0, n) in order.
type symbuf struct {
	segs []seg
	n    int
}

// grow extends the buffer with undefined elements up to length n.
func (b *symbuf) grow(n int) {
	if n <= b.n {
		return
	}
	b.append(seg{n: n - b.n})
	b.n = n
}

func (b *symbuf) append(s seg) {
	if s.n == 0 {
		return
	}
	if k := len(b.segs); k > 0 && b.segs[k-1].joins(s) {
		b.segs[k-1].n += s.n
		return
	}
	b.segs = append(b.segs, s)
}

// find returns the index of the seg holding element off and off's offset in it.
func (b *symbuf) find(off int) (int, int) {
	// A linear scan from the start: segs carry lengths, not offsets, and
	// buffers hold few segs except in alltoall-like collectives, whose
	// verification is therefore quadratic in P per rank.
	pos := 0
	for i, s := range b.segs {
		if off < pos+s.n {
			return i, off - pos
		}
		pos += s.n
	}
	return len(b.segs), 0
}

// read returns a copy of the segs covering [off, off+n).
func (b *symbuf) read(off, n int) []seg {
	var out []seg
	i, in := b.find(off)
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

// write replaces [off, off+len(src)) by src.
func (b *symbuf) write(off int, src []seg) {
	n := 0
	for _, s := range src {
		n += s.n
	}
	if n == 0 {
		return
	}
	if off+n > b.n {
		b.grow(off + n)
	}
	i, in := b.find(off)
	var head []seg
	head = append(head, b.segs[:i]...)
	nb := symbuf{segs: head}
	if in > 0 {
		nb.append(b.segs[i].sub(0, in))
	}
	for _, s := range src {
		nb.append(s)
	}
	// skip the overwritten elements
	end := off + n
	j, jn := b.find(end)
	if j < len(b.segs) {
		nb.append(b.segs[j].sub(jn, b.segs[j].n-jn))
		for _, s := range b.segs[j+1:] {
			nb.append(s)
		}
	}
	nb.n = b.n
	*b = nb
}

// combine returns the contribution list of left ⊕ right. Unless ordered, the
// result is sorted and merged, since order does not matter. It fails when a
// rank contributes twice.
func combine(left, right []ival, ordered bool) ([]ival, error) {
	all := make([]ival, 0, len(left)+len(right))
	all = append(all, left...)
	all = append(all, right...)
	sorted := slices.Clone(all)
	slices.SortFunc(sorted, func(a, b ival) int { return a.lo - b.lo })
	for i := 1; i < len(sorted); i++ {
		if sorted[i].lo < sorted[i-1].hi {
			return nil, fmt.Errorf("contribution of rank %d combined twice", sorted[i].lo)
		}
	}
	if !ordered {
		all = sorted
	}
	out := all[:0:0]
	for _, iv := range all {
		if k := len(out); k > 0 && out[k-1].hi == iv.lo {
			out[k-1].hi = iv.hi
			continue
		}
		out = append(out, iv)
	}
	return out, nil
}

// reduceSegs computes the symbolic dst ⊕ src (or src ⊕ dst when srcLeft).
// Undefined operands give undefined results.
func reduceSegs(dst, src []seg, srcLeft, ordered bool) ([]seg, error) {
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
			out = append(out, seg{n: k})
			continue
		}
		if x.ranks == nil || y.ranks == nil {
			return nil, fmt.Errorf("reduction of data that is not a reduction input")
		}
		if x.start != y.start {
			return nil, fmt.Errorf("element %d combined with element %d", x.start, y.start)
		}
		l, r := x.ranks, y.ranks
		if srcLeft {
			l, r = r, l
		}
		rk, err := combine(l, r, ordered)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", x.start, err)
		}
		out = append(out, seg{n: k, def: true, start: x.start, ranks: rk})
	}
	return out, nil
}
