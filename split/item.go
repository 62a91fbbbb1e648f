package split

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"

	"github.com/scoll/scoll/internal/errs"
)

// Item is one rank's contribution to a generalized split (Moody, Ahn and
// de Supinski 2011): a color and a key of any length, compared by the
// split's comparators, with the rank's place in the parent.
type Item struct {
	// Color selects the new communicator; nil means none (undefined).
	Color []byte
	// Key orders the members of a new communicator; ties keep parent order.
	Key []byte
	// Rank is the rank in the parent communicator.
	Rank int32
	// Addr is the rank's transport address.
	Addr int32
}

// IntBytes encodes v so that bytes.Compare orders the encodings as the
// integers (big-endian with the sign bit flipped): Split's integer colors
// and keys travel the generalized algorithms in this form, and radix reads
// them back (IntOf).
func IntBytes(v int64) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(v)^1<<63)
}

// IntOf decodes IntBytes; ok is false when b is not 8 bytes long.
func IntOf(b []byte) (v int64, ok bool) {
	if len(b) != 8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(b) ^ 1<<63), true
}

// ItemOf returns the item of an integer split's entry.
func ItemOf(e Entry) Item {
	it := Item{Key: IntBytes(e.Key), Rank: e.Rank, Addr: e.Addr}
	if e.Color >= 0 {
		it.Color = IntBytes(e.Color)
	}
	return it
}

// order compares items as a split must: undefined colors last, then by
// color (unless the split keeps one group), key (unless it keeps the
// parent's order) and parent rank.
type order struct {
	color, key         func(a, b []byte) int
	noSplit, noReorder bool
}

func newOrder(o *Options) order {
	or := order{color: o.ColorCompare, key: o.KeyCompare, noSplit: o.NoSplit, noReorder: o.NoReorder}
	if or.color == nil {
		or.color = bytes.Compare
	}
	if or.key == nil {
		or.key = bytes.Compare
	}
	return or
}

// defined reports whether an item joins a new communicator.
func (or *order) defined(it *Item) bool { return or.noSplit || it.Color != nil }

// sameColor reports whether two defined items join the same communicator.
func (or *order) sameColor(a, b *Item) bool {
	return or.noSplit || or.color(a.Color, b.Color) == 0
}

// compare orders two items.
func (or *order) compare(a, b *Item) int {
	da, db := or.defined(a), or.defined(b)
	switch {
	case da && !db:
		return -1
	case !da && db:
		return 1
	case !da:
		return cmp.Compare(a.Rank, b.Rank)
	}
	if !or.noSplit {
		if c := or.color(a.Color, b.Color); c != 0 {
			return c
		}
	}
	if !or.noReorder {
		if c := or.key(a.Key, b.Key); c != 0 {
			return c
		}
	}
	return cmp.Compare(a.Rank, b.Rank)
}

// Shape is the fixed size every item of one split travels in: the longest
// color and key of any rank (agreed before the split runs), so that every
// message of an algorithm has a size its receiver knows.
type Shape struct {
	// ColorLen and KeyLen are the longest color and key of the split.
	ColorLen, KeyLen int
}

// Len returns the size of one encoded item.
func (s Shape) Len() int { return 4 + s.ColorLen + 4 + s.KeyLen + 8 }

// put encodes it into b (len s.Len()).
func (s Shape) put(b []byte, it *Item) {
	cl := int32(-1)
	if it.Color != nil {
		cl = int32(len(it.Color))
	}
	binary.LittleEndian.PutUint32(b, uint32(cl))
	copy(b[4:4+s.ColorLen], it.Color)
	k := b[4+s.ColorLen:]
	binary.LittleEndian.PutUint32(k, uint32(len(it.Key)))
	copy(k[4:4+s.KeyLen], it.Key)
	t := k[4+s.KeyLen:]
	binary.LittleEndian.PutUint32(t, uint32(it.Rank))
	binary.LittleEndian.PutUint32(t[4:], uint32(it.Addr))
}

// get decodes b into it; the color and key alias b.
func (s Shape) get(b []byte, it *Item) error {
	if len(b) < s.Len() {
		return fmt.Errorf("%w: item of %d bytes, expected %d", errs.Mismatch, len(b), s.Len())
	}
	cl := int32(binary.LittleEndian.Uint32(b))
	k := b[4+s.ColorLen:]
	kl := int(binary.LittleEndian.Uint32(k))
	if cl > int32(s.ColorLen) || kl > s.KeyLen || cl < -1 {
		return fmt.Errorf("%w: item with a color of %d and a key of %d bytes in a split of %d and %d", errs.Mismatch, cl, kl, s.ColorLen, s.KeyLen)
	}
	it.Color = nil
	if cl >= 0 {
		it.Color = b[4 : 4+cl : 4+cl]
	}
	it.Key = k[4 : 4+kl : 4+kl]
	t := k[4+s.KeyLen:]
	it.Rank = int32(binary.LittleEndian.Uint32(t))
	it.Addr = int32(binary.LittleEndian.Uint32(t[4:]))
	return nil
}

// encode returns the encoding of it.
func (s Shape) encode(it *Item) []byte {
	b := make([]byte, s.Len())
	s.put(b, it)
	return b
}

// decodeAll decodes the items packed in b.
func (s Shape) decodeAll(b []byte) ([]Item, error) {
	l := s.Len()
	if len(b)%l != 0 {
		return nil, fmt.Errorf("%w: %d bytes of items of %d", errs.Mismatch, len(b), l)
	}
	out := make([]Item, len(b)/l)
	for i := range out {
		if err := s.get(b[i*l:(i+1)*l], &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Check validates an item against the split's shape: its color and key
// must fit (a rank's own item always does once the shape is agreed).
func (s Shape) Check(it *Item) error {
	if len(it.Color) > s.ColorLen || len(it.Key) > s.KeyLen {
		return fmt.Errorf("%w: color of %d and key of %d bytes exceed the agreed %d and %d", errs.InvalidArgument, len(it.Color), len(it.Key), s.ColorLen, s.KeyLen)
	}
	return nil
}

// Job is one rank's part of a generalized split, as the algorithms see it.
type Job struct {
	// Me is the rank's item.
	Me Item
	// Parent is the rank's place in the parent seen as a chain.
	Parent Links
	// Shape is the size items travel in.
	Shape Shape
	// Options are the split's options.
	Options *Options
	order   order
}

// chainOf returns rank's links in the group whose members' addresses in
// rank order are table.
func chainOf(rank int, table []int32) Links {
	l := Links{Rank: rank, Size: len(table), Self: table[rank], Left: None, Right: None, First: table[0]}
	if rank > 0 {
		l.Left = table[rank-1]
	}
	if rank+1 < len(table) {
		l.Right = table[rank+1]
	}
	return l
}

// DefaultItemsAlgorithm is the algorithm a generalized split of n ranks
// uses without an Algorithm option: with integer colors and keys and the
// default comparators, DefaultAlgorithm; otherwise allgather-chain below
// 256 ranks (a serial sort wins there, as Moody et al. found), hash64 when
// only splitting with the default color comparator, else bitonic.
func DefaultItemsAlgorithm(n int, o *Options) string {
	switch {
	case o.Ints && o.ColorCompare == nil && o.KeyCompare == nil:
		return DefaultAlgorithm(n)
	case n < 256:
		return "allgather-chain"
	case o.NoReorder && o.ColorCompare == nil:
		return "hash64"
	}
	return "bitonic"
}

// RunItems runs a generalized split on this rank: the algorithm
// o.Algorithm (or DefaultItemsAlgorithm) over the parent chain, then the
// group representation. Integer-only algorithms run when o.Ints is set
// and no comparator is (NoSplit then makes every color 0, NoReorder every
// key 0); otherwise they refuse with ErrUnsupported. The table algorithms
// (allgather, merge, cheng) take Split's colors: a negative one is
// undefined; radix and the chain algorithms order every int64.
func RunItems(ctx context.Context, c Conn, me Item, parent Links, sh Shape, o Options) (*Result, error) {
	if err := o.Check(c.Size()); err != nil {
		return nil, err
	}
	if err := sh.Check(&me); err != nil {
		return nil, err
	}
	name := o.Algorithm
	if name == "" {
		name = DefaultItemsAlgorithm(c.Size(), &o)
	}
	if err := Refusal(name, &o); err != nil {
		return nil, err
	}
	in, _ := Lookup(name)
	j := &Job{Me: me, Parent: parent, Shape: sh, Options: &o, order: newOrder(&o)}
	res := &Result{}
	var s *Sorted
	var err error
	switch {
	case o.NoSplit && o.NoReorder:
		// One group in the parent's order: the parent chain itself.
		p := parent
		s = &Sorted{Rank: p.Rank, Size: p.Size, links: &p}
	case in.Items != nil:
		s, err = in.Items(ctx, c, j, &res.Stats)
	default:
		e := Entry{Color: Undefined, Rank: me.Rank, Addr: me.Addr}
		if v, ok := IntOf(me.Color); ok {
			e.Color = v
		}
		e.Key, _ = IntOf(me.Key)
		if o.NoSplit {
			e.Color = 0
		}
		if o.NoReorder {
			e.Key = 0
		}
		s, err = in.Run(ctx, c, e, &o, &res.Stats)
	}
	if err != nil {
		return res, err
	}
	return res.build(ctx, c, &o, s)
}
