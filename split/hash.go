package split

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/scoll/scoll/internal/errs"
)

func init() {
	Register(Info{
		Name:   "hash",
		Doc:    "split the parent chain by hashing colors into bins (a double exclusive scan of per-bin address and count tables), again with other hashes until every chain holds one color; bitonic sort when reordering: O(1) memory and O(lg n) time when only splitting",
		Source: "Moody, Ahn, de Supinski 2011, sec. 3.3",
		Phases: []string{"hash", "sort", "finish", "build"},
		Items: func(ctx context.Context, c Conn, j *Job, st *Stats) (*Sorted, error) {
			return runHash(ctx, c, j, st, 0)
		},
		Refuse: refuseColorCompare("hash"),
	})
	Register(Info{
		Name:   "hash64",
		Doc:    "hash, but a chain shorter than 64 ranks finishes with an allgather along it (Moody's Hash64)",
		Source: "Moody, Ahn, de Supinski 2011, sec. 3.3",
		Phases: []string{"hash", "gather", "sort", "finish", "build"},
		Items: func(ctx context.Context, c Conn, j *Job, st *Stats) (*Sorted, error) {
			return runHash(ctx, c, j, st, 64)
		},
		Refuse: refuseColorCompare("hash64"),
	})
}

// Hash bins: each iteration maps colors to hashBins bins (and the first
// iteration the undefined color to one more).
const (
	hashBins = 16
	binWidth = 12 // address of the nearest member, count, first member
	// hashStall is how many iterations in a row may leave a chain of
	// several colors whole before it is sorted instead (only colliding
	// hashes, such as a test's, get there).
	hashStall = 8
)

// HashHook, when set, replaces the hash of a color in iteration iter (for
// tests that force collisions).
var HashHook func(color []byte, iter int) uint32

// oneAtATime is Jenkins' one-at-a-time hash of b rotated left by rot bytes.
func oneAtATime(b []byte, rot int) uint32 {
	var h uint32
	n := len(b)
	for i := range n {
		h += uint32(b[(i+rot)%n])
		h += h << 10
		h ^= h >> 6
	}
	h += h << 3
	h ^= h >> 11
	h += h << 15
	return h
}

// binOf returns the bin of a color in iteration iter: a different rotation
// of its bytes and a different 4-bit region of the hash each time.
func binOf(color []byte, iter int) int {
	var h uint32
	if HashHook != nil {
		h = HashHook(color, iter)
	} else {
		rot := 0
		if len(color) > 0 {
			rot = iter % len(color)
		}
		h = oneAtATime(color, rot)
	}
	return int(h>>(4*(iter%8))) % hashBins
}

// binTable is a rank's contribution to an iteration's double scan: its own
// bin holds its address, a count of one and itself as the first member.
func binTable(bins, bin int, self int32) []byte {
	b := make([]byte, bins*binWidth)
	for i := range bins {
		e := b[i*binWidth:]
		binary.LittleEndian.PutUint32(e, noAddr)
		binary.LittleEndian.PutUint32(e[8:], noAddr)
	}
	e := b[bin*binWidth:]
	binary.LittleEndian.PutUint32(e, uint32(self))
	binary.LittleEndian.PutUint32(e[4:], 1)
	binary.LittleEndian.PutUint32(e[8:], uint32(self))
	return b
}

type binEntry struct{ addr, count, first int32 }

func binAt(b []byte, i int) binEntry {
	e := b[i*binWidth:]
	return binEntry{int32(binary.LittleEndian.Uint32(e)), int32(binary.LittleEndian.Uint32(e[4:])), int32(binary.LittleEndian.Uint32(e[8:]))}
}

// binsCombine combines per-bin tables a and b (a left of b): counts add,
// the nearest member is the one closest to the own side (nearL: b's, the
// rightmost, for the scan from the left), the first is the leftmost.
func binsCombine(nearL bool) func(a, b []byte) []byte {
	return func(a, b []byte) []byte {
		out := make([]byte, len(a))
		for i := range len(a) / binWidth {
			x, y := binAt(a, i), binAt(b, i)
			z := binEntry{addr: x.addr, count: x.count + y.count, first: x.first}
			if (nearL && y.count > 0) || x.count == 0 {
				z.addr = y.addr
			}
			if x.count == 0 {
				z.first = y.first
			}
			e := out[i*binWidth:]
			binary.LittleEndian.PutUint32(e, uint32(z.addr))
			binary.LittleEndian.PutUint32(e[4:], uint32(z.count))
			binary.LittleEndian.PutUint32(e[8:], uint32(z.first))
		}
		return out
	}
}

// hashSplit splits the chain l into the chains of the bins of this rank's
// color (bin) among bins: a double exclusive scan of the tables, then the
// own bin's entries give the new neighbours, rank and size.
func hashSplit(ctx context.Context, c Conn, st *Stats, l Links, tag, bins, bin int) (Links, error) {
	mine := binTable(bins, bin, l.Self)
	exL, exR, _, err := DoubleScan(ctx, c, st, l, tag, len(mine), mine, mine, binsCombine(true), binsCombine(false))
	if err != nil {
		return l, err
	}
	out := Links{Size: 1, Self: l.Self, Left: None, Right: None, First: l.Self}
	if exL != nil {
		if e := binAt(exL, bin); e.count > 0 {
			out.Rank, out.Left, out.First = int(e.count), e.addr, e.first
		}
	}
	if exR != nil {
		if e := binAt(exR, bin); e.count > 0 {
			out.Right = e.addr
			out.Size += int(e.count)
		}
	}
	out.Size += out.Rank
	return out, nil
}

// oneColor reports whether every rank of the chain l has the color of
// this rank (an allreduce of the least and greatest color along it).
func oneColor(ctx context.Context, c Conn, st *Stats, l Links, tag int, sh Shape, color []byte) (bool, error) {
	w := 4 + sh.ColorLen
	enc := func(col []byte) []byte {
		b := binary.LittleEndian.AppendUint32(make([]byte, 0, 2*w), uint32(len(col)))
		return append(b, make([]byte, w-4)...)
	}
	mine := enc(color)
	copy(mine[4:], color)
	mine = append(mine, mine...)
	get := func(b []byte) []byte { return b[4 : 4+binary.LittleEndian.Uint32(b)] }
	op := func(a, b []byte) []byte {
		out := make([]byte, 2*w)
		lo, hi := a[:w], a[w:]
		if bytes.Compare(get(b[:w]), get(lo)) < 0 {
			lo = b[:w]
		}
		if bytes.Compare(get(b[w:]), get(hi)) > 0 {
			hi = b[w:]
		}
		copy(out, lo)
		copy(out[w:], hi)
		return out
	}
	all, err := chainAllreduce(ctx, c, st, l, tag, mine, op)
	if err != nil {
		return false, err
	}
	return bytes.Equal(get(all[:w]), get(all[w:])), nil
}

// runHash is Moody's hash split: iterations of hashSplit with new hashes
// until a chain stops shrinking and holds one color; limit > 0 makes
// chains shorter than limit finish with an allgather along them
// (Hash64). With reordering, the chains are then sorted by bitonic.
func runHash(ctx context.Context, c Conn, j *Job, st *Stats, limit int) (*Sorted, error) {
	t := time.Now()
	or := &j.order
	cur := j.Parent
	me := j.Me
	if or.noSplit {
		// One group: only the order is asked for.
		return sortChain(ctx, c, j, st, cur, &t)
	}
	// The first iteration also separates the undefined ranks (bin
	// hashBins), which leave at once.
	bin := hashBins
	if me.Color != nil {
		bin = binOf(me.Color, 0)
	}
	var err error
	if cur, err = hashSplit(ctx, c, st, cur, tagHash, hashBins+1, bin); err != nil {
		return nil, err
	}
	if me.Color == nil {
		st.phase("hash", &t)
		return nil, nil
	}
	stall := 0
	for iter := 1; cur.Size > 1; iter++ {
		if limit > 0 && cur.Size < limit {
			st.phase("hash", &t)
			return gatherGroup(ctx, c, j, st, cur, &t)
		}
		tag := tagHash + iter*2*scanTags
		next, err := hashSplit(ctx, c, st, cur, tag, hashBins, binOf(me.Color, iter))
		if err != nil {
			return nil, err
		}
		if next.Size < cur.Size {
			cur, stall = next, 0
			continue
		}
		one, err := oneColor(ctx, c, st, cur, tag+scanTags, j.Shape, me.Color)
		if err != nil {
			return nil, err
		}
		if one {
			break
		}
		if stall++; stall >= hashStall {
			// The hashes keep colliding: sorting splits the chain.
			st.phase("hash", &t)
			return sortChain(ctx, c, j, st, cur, &t)
		}
	}
	st.phase("hash", &t)
	if or.noReorder || cur.Size == 1 {
		return &Sorted{Rank: cur.Rank, Size: cur.Size, links: &cur}, nil
	}
	return sortChain(ctx, c, j, st, cur, &t)
}

// sortChain sorts the items of the chain l by bitonic and finishes on it.
func sortChain(ctx context.Context, c Conn, j *Job, st *Stats, l Links, t *time.Time) (*Sorted, error) {
	if _, err := poster(c, j.Options.Algorithm); err != nil {
		return nil, err
	}
	it, err := bitonicSort(ctx, c, st, l, &j.order, j.Shape, j.Me, tagBitonic, t)
	if err != nil {
		return nil, err
	}
	res, err := finish(ctx, c, st, l, &j.order, j.Shape, &it, tagFinish)
	st.phase("finish", t)
	if err != nil || res == nil {
		return nil, err
	}
	return &Sorted{Rank: res.Rank, Size: res.Size, links: res}, nil
}

// noAddr is None on the wire.
const noAddr = ^uint32(0)

// refuseColorCompare refuses a custom color comparator: colors it calls
// equal may hash apart.
func refuseColorCompare(name string) func(o *Options) error {
	return func(o *Options) error {
		if o.ColorCompare != nil && !o.NoSplit {
			return fmt.Errorf("%w: %s cannot respect a custom color comparator (colors it calls equal may hash apart)", errs.Unsupported, name)
		}
		return nil
	}
}
