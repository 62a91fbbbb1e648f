package split

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/scoll/scoll/internal/errs"
)

// Poster delivers a message to a rank that cannot know who sends it: the
// last step of a parallel sort on a chain, where the rank holding the i-th
// item tells the item's contributor its new rank and neighbours (Moody et
// al., sec. 3.2). Conns of the root package implement it over the
// transport's responder; algorithms that need it refuse to run without it.
type Poster interface {
	// Post delivers data to the rank at transport address to, to be taken
	// by its Take of this split.
	Post(ctx context.Context, to int32, data []byte) error
	// Take waits for the message posted to this rank in this split and
	// copies it into buf, returning its length.
	Take(ctx context.Context, buf []byte) (int, error)
}

// replyLen is the size of a contributor's reply: rank, size, left, right
// and first addresses (size 0: undefined).
const replyLen = 20

func putReply(l *Links) []byte {
	b := make([]byte, 0, replyLen)
	for _, v := range []int32{int32(l.Rank), int32(l.Size), l.Left, l.Right, l.First} {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return b
}

func getReply(b []byte, self int32) (Links, error) {
	if len(b) != replyLen {
		return Links{}, fmt.Errorf("%w: reply of %d bytes", errs.Mismatch, len(b))
	}
	v := func(i int) int32 { return int32(binary.LittleEndian.Uint32(b[4*i:])) }
	return Links{Rank: int(v(0)), Size: int(v(1)), Self: self, Left: v(2), Right: v(3), First: v(4)}, nil
}

// poster returns c's Poster or an error naming the algorithm.
func poster(c Conn, alg string) (Poster, error) {
	p, ok := c.(Poster)
	if !ok {
		return nil, fmt.Errorf("%w: %s needs a transport that answers requests (transport.Responder)", errs.Unsupported, alg)
	}
	return p, nil
}

// Segmented scan values of finish: a flag (segment boundary), a count and
// (left-to-right) the address of the segment's first contributor.
const segWidth = 9

func segVal(flag bool, count, first int32) []byte {
	b := make([]byte, segWidth)
	if flag {
		b[0] = 1
	}
	binary.LittleEndian.PutUint32(b[1:], uint32(count))
	binary.LittleEndian.PutUint32(b[5:], uint32(first))
	return b
}

func segCount(b []byte) int32 { return int32(binary.LittleEndian.Uint32(b[1:])) }
func segFirst(b []byte) int32 { return int32(binary.LittleEndian.Uint32(b[5:])) }

// segL combines a and b (a left of b) of a left-to-right segmented scan:
// a segment that starts in b hides a.
func segL(a, b []byte) []byte {
	if b[0] == 1 {
		return b
	}
	return segVal(a[0] == 1, segCount(a)+segCount(b), segFirst(a))
}

// segR combines a and b (a left of b) of a right-to-left segmented scan:
// a segment that ends in a hides b.
func segR(a, b []byte) []byte {
	if a[0] == 1 {
		return a
	}
	return segVal(b[0] == 1, segCount(a)+segCount(b), 0)
}

// finish turns a chain whose i-th rank holds the i-th item in split order
// (it) into every contributor's new links: the neighbours' items mark the
// groups' boundaries, a segmented double scan numbers the members and
// counts each group, and one message goes back to each item's
// contributor, which returns its links (nil when undefined).
func finish(ctx context.Context, c Conn, st *Stats, l Links, or *order, sh Shape, it *Item, tag int) (*Links, error) {
	post, err := poster(c, "a sort on a chain")
	if err != nil {
		return nil, err
	}
	enc := sh.encode(it)
	var sends []Send
	var recvs []Recv
	if l.Left != None {
		sends = append(sends, Send{To: int(l.Left), Tag: tag, Data: enc, Direct: true})
		recvs = append(recvs, Recv{From: int(l.Left), Tag: tag + 1, Buf: make([]byte, sh.Len()), Direct: true})
	}
	if l.Right != None {
		sends = append(sends, Send{To: int(l.Right), Tag: tag + 1, Data: enc, Direct: true})
		recvs = append(recvs, Recv{From: int(l.Right), Tag: tag, Buf: make([]byte, sh.Len()), Direct: true})
	}
	if err := round(ctx, c, st, sends, recvs); err != nil {
		return nil, err
	}
	var left, right *Item
	for i := range recvs {
		r := &recvs[i]
		if err := expect(r, sh.Len()); err != nil {
			return nil, err
		}
		var x Item
		if err := sh.get(r.Buf, &x); err != nil {
			return nil, err
		}
		if int32(r.From) == l.Left {
			left = &x
		} else {
			right = &x
		}
	}
	def := or.defined(it)
	joins := func(o *Item) bool { return def && o != nil && or.defined(o) && or.sameColor(it, o) }
	start, end := !joins(left), !joins(right)
	exL, exR, _, err := DoubleScan(ctx, c, st, l, tag+2, segWidth, segVal(start, 1, it.Addr), segVal(end, 1, 0), segL, segR)
	if err != nil {
		return nil, err
	}
	inL, inR := segVal(start, 1, it.Addr), segVal(end, 1, 0)
	if exL != nil {
		inL = segL(exL, inL)
	}
	if exR != nil {
		inR = segR(inR, exR)
	}
	res := Links{Left: None, Right: None}
	if def {
		res.Rank = int(segCount(inL)) - 1
		res.Size = res.Rank + int(segCount(inR))
		res.First = segFirst(inL)
		if !start {
			res.Left = left.Addr
		}
		if !end {
			res.Right = right.Addr
		}
	}
	if err := post.Post(ctx, it.Addr, putReply(&res)); err != nil {
		return nil, err
	}
	buf := make([]byte, replyLen)
	n, err := post.Take(ctx, buf)
	if err != nil {
		return nil, err
	}
	mine, err := getReply(buf[:n], l.Self)
	if err != nil || mine.Size == 0 {
		return nil, err
	}
	return &mine, nil
}

// finishTags is how many tags finish uses from its base.
const finishTags = 2 + scanTags
