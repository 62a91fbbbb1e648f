package split

import (
	"context"
	"fmt"
	"time"

	"github.com/scoll/scoll/internal/errs"
)

func init() {
	Register(Info{
		Name:   "gather-scatter",
		Doc:    "gather the items to parent rank 0 along a binomial tree, merging the sorted lists at each step (O(n) merge time at the root), work out every rank's rank, size and neighbours there and scatter the replies down the same tree: O(n) memory and time at the root, 2⌈lg n⌉ rounds (Moody's GatherScatter)",
		Source: "Moody, Ahn, de Supinski 2011, sec. 3.2",
		Phases: []string{"gather", "merge", "replies", "scatter", "build"},
		Items:  runGatherScatter,
	})
}

// Tags of gather-scatter: step k of the gather uses tagGatherSc+k, step k
// of the scatter tagGatherSc+gsScatter+k.
const gsScatter = 64

// runGatherScatter is Moody et al.'s GatherScatter on the parent's ranks
// (the Conn resolves them). The tree is the binomial one of collect:
//
//	gather, step k = 0, 1, …: rank o with bit k set sends its sorted
//	    defined items (those of ranks [o, o+2^k)) to o−2^k and stops;
//	    the others merge what o+2^k sends (≤ 2^k items).
//	replies at rank 0: the sorted items, cut where the color changes,
//	    give every member its rank, size, neighbours and first member;
//	    undefined ranks get an empty reply.
//	scatter, the steps in reverse: rank o receives the replies of its
//	    subtree [o, o+lowbit(o)) and passes [o+d, o+2d) on to o+d for
//	    d = lowbit(o)/2, …, 1.
//
// Unlike the paper's version, which scatters the sorted items and
// finishes on the chain (boundaries, double scan, one reply each), the
// root works the replies out itself: the same O(n) work there, and no
// transport that answers requests needed. Items travel in the split's
// Shape; rank 0 holds n items and n replies, rank o the items and replies
// of its subtree only.
//
// Cost on the critical path: 2⌈lg n⌉ message latencies, about n·(s+20)
// bytes into and out of rank 0 (s = Shape.Len()), and merges of O(n)
// items there (the lists it merges have 1, 2, 4, … items): about
// 2⌈lg n⌉·α + n·(s+20)·β + O(n)·γ. A rank sends one message up the tree
// and one to each of its children: 2(n−1) messages in all.
func runGatherScatter(ctx context.Context, c Conn, j *Job, st *Stats) (*Sorted, error) {
	t := time.Now()
	or, sh := &j.order, j.Shape
	o, n := c.Rank(), c.Size()
	var have []Item
	if or.defined(&j.Me) {
		have = []Item{j.Me}
	}
	var merging time.Duration
	for k := 0; 1<<k < n; k++ {
		d := 1 << k
		if o&d != 0 {
			if err := round(ctx, c, st, []Send{{To: o - d, Tag: tagGatherSc + k, Data: encodeItems(sh, have)}}, nil); err != nil {
				return nil, err
			}
			break
		}
		if o+d >= n {
			continue
		}
		recvs := []Recv{{From: o + d, Tag: tagGatherSc + k, Buf: make([]byte, min(d, n-o-d)*sh.Len())}}
		if err := round(ctx, c, st, nil, recvs); err != nil {
			return nil, err
		}
		m0 := time.Now()
		in, err := sh.decodeAll(recvs[0].Buf[:recvs[0].N])
		if err != nil {
			return nil, err
		}
		have = mergeItems(or, make([]Item, 0, len(have)+len(in)), have, in)
		merging += time.Since(m0)
	}
	st.split("gather", "merge", merging, &t)
	// block holds the replies of this rank's subtree, ranks [o, end).
	end := subtreeEnd(o, n)
	var block []byte
	if o == 0 {
		var err error
		if block, err = gsReplies(or, have, n); err != nil {
			return nil, err
		}
		st.phase("replies", &t)
	} else {
		low := o & -o
		recvs := []Recv{{From: o - low, Tag: tagGatherSc + gsScatter + log2(low), Buf: make([]byte, (end-o)*replyLen)}}
		if err := round(ctx, c, st, nil, recvs); err != nil {
			return nil, err
		}
		if err := expect(&recvs[0], len(recvs[0].Buf)); err != nil {
			return nil, err
		}
		block = recvs[0].Buf
	}
	// The children: o+d for the powers of two d below lowbit(o) (below
	// n at rank 0), largest first.
	top := o & -o
	if o == 0 {
		top = 1 << ceilLog2(n)
	}
	var sends []Send
	for d := top / 2; d >= 1; d /= 2 {
		if o+d >= n {
			continue
		}
		sends = append(sends, Send{To: o + d, Tag: tagGatherSc + gsScatter + log2(d), Data: block[d*replyLen : (min(o+2*d, n)-o)*replyLen]})
	}
	if err := round(ctx, c, st, sends, nil); err != nil {
		return nil, err
	}
	st.phase("scatter", &t)
	l, err := getReply(block[:replyLen], j.Me.Addr)
	if err != nil || l.Size == 0 {
		return nil, err
	}
	return &Sorted{Rank: l.Rank, Size: l.Size, links: &l}, nil
}

// encodeItems packs items in the shape sh.
func encodeItems(sh Shape, items []Item) []byte {
	w := sh.Len()
	b := make([]byte, len(items)*w)
	for i := range items {
		sh.put(b[i*w:], &items[i])
	}
	return b
}

// mergeItems appends the merge of the sorted a and b to dst.
// Like mergeInto, which keeps Entry's inlined compare (a generic merge is ~25% slower).
func mergeItems(or *order, dst, a, b []Item) []Item {
	i, k := 0, 0
	for i < len(a) && k < len(b) {
		if or.compare(&b[k], &a[i]) < 0 {
			dst = append(dst, b[k])
			k++
		} else {
			dst = append(dst, a[i])
			i++
		}
	}
	dst = append(dst, a[i:]...)
	return append(dst, b[k:]...)
}

// gsReplies returns the replies of parent ranks 0 … n−1 (replyLen bytes
// each, in rank order) when sorted are every defined item in split order.
func gsReplies(or *order, sorted []Item, n int) ([]byte, error) {
	out := make([]byte, n*replyLen)
	undef := putReply(&Links{Left: None, Right: None, First: None})
	for r := range n {
		copy(out[r*replyLen:], undef)
	}
	for s := 0; s < len(sorted); {
		e := s + 1
		for e < len(sorted) && or.sameColor(&sorted[s], &sorted[e]) {
			e++
		}
		for i := s; i < e; i++ {
			it := &sorted[i]
			if it.Rank < 0 || int(it.Rank) >= n {
				return nil, fmt.Errorf("%w: item of rank %d in a parent of %d", errs.Mismatch, it.Rank, n)
			}
			l := Links{Rank: i - s, Size: e - s, Left: None, Right: None, First: sorted[s].Addr}
			if i > s {
				l.Left = sorted[i-1].Addr
			}
			if i+1 < e {
				l.Right = sorted[i+1].Addr
			}
			copy(out[int(it.Rank)*replyLen:], putReply(&l))
		}
		s = e
	}
	return out, nil
}
