package split

import (
	"context"
	"time"
)

func init() {
	Register(Info{
		Name:   "bitonic",
		Doc:    "Batcher's bitonic sort of the items along the parent chain (any size), then group boundaries, a double scan and one reply to each contributor: O(lg n) memory, O(lg² n) time",
		Source: "Moody, Ahn, de Supinski 2011, sec. 3.2",
		Phases: []string{"partners", "sort", "finish", "build"},
		Items:  runBitonic,
	})
}

// runBitonic sorts the items along the parent chain and finishes there.
func runBitonic(ctx context.Context, c Conn, j *Job, st *Stats) (*Sorted, error) {
	if _, err := poster(c, "bitonic"); err != nil {
		return nil, err
	}
	t := time.Now()
	it, err := bitonicSort(ctx, c, st, j.Parent, &j.order, j.Shape, j.Me, tagBitonic, &t)
	if err != nil {
		return nil, err
	}
	l, err := finish(ctx, c, st, j.Parent, &j.order, j.Shape, &it, tagFinish)
	st.phase("finish", &t)
	if err != nil || l == nil {
		return nil, err
	}
	return &Sorted{Rank: l.Rank, Size: l.Size, links: l}, nil
}

// bitonicSort sorts one item per rank along the chain l by the order or
// and returns the item this rank holds at the end: the l.Rank-th smallest.
// Partners at distances 1, 2, 4, … are learnt first (a double scan without
// data), then every rank follows its own path through Batcher's network
// for any n (halves of ⌊n/2⌋ and ⌈n/2⌉, merges comparing i with i+m for
// the greatest power of two m < n), exchanging items with one partner per
// step. All steps share one tag: a pair's steps come in the same order on
// both sides.
func bitonicSort(ctx context.Context, c Conn, st *Stats, l Links, or *order, sh Shape, it Item, tag int, t *time.Time) (Item, error) {
	none := func(a, b []byte) []byte { return nil }
	_, _, p, err := DoubleScan(ctx, c, st, l, tag, 0, nil, nil, none, none)
	if err != nil {
		return it, err
	}
	st.phase("partners", t)
	mine := sh.encode(&it)
	buf := make([]byte, sh.Len())
	var x Item
	var stepErr error
	step := func(dist int, lower, keepMin bool) {
		if stepErr != nil {
			return
		}
		k := log2(dist)
		to := p.right[k]
		if !lower {
			to = p.left[k]
		}
		recvs := []Recv{{From: int(to), Tag: tag + scanTags, Buf: buf, Direct: true}}
		if stepErr = round(ctx, c, st, []Send{{To: int(to), Tag: tag + scanTags, Data: mine, Direct: true}}, recvs); stepErr != nil {
			return
		}
		if stepErr = expect(&recvs[0], sh.Len()); stepErr != nil {
			return
		}
		if stepErr = sh.get(buf, &x); stepErr != nil {
			return
		}
		if c := or.compare(&x, &it); (c < 0) == keepMin && c != 0 {
			mine, buf = buf, mine
			it = x
			x = Item{}
		}
	}
	bitonicSteps(l.Rank, 0, l.Size, true, step)
	if stepErr != nil {
		return it, stepErr
	}
	// it aliases mine; detach it from the buffers.
	out := Item{Rank: it.Rank, Addr: it.Addr, Key: append([]byte(nil), it.Key...)}
	if it.Color != nil {
		out.Color = append([]byte{}, it.Color...)
	}
	st.phase("sort", t)
	return out, nil
}

// bitonicSteps calls step for every compare-exchange that position i takes
// part in when Batcher's network sorts positions [lo, lo+n) ascending (up)
// or descending: the partner's distance, whether i is the lower position,
// and whether i keeps the smaller item.
func bitonicSteps(i, lo, n int, up bool, step func(dist int, lower, keepMin bool)) {
	if n <= 1 {
		return
	}
	m := n / 2
	if i < lo+m {
		bitonicSteps(i, lo, m, !up, step)
	} else {
		bitonicSteps(i, lo+m, n-m, up, step)
	}
	bitonicMerge(i, lo, n, up, step)
}

// bitonicMerge is the merge of positions [lo, lo+n) as seen by position i.
func bitonicMerge(i, lo, n int, up bool, step func(dist int, lower, keepMin bool)) {
	for n > 1 {
		m := 1
		for m*2 < n {
			m *= 2
		}
		switch {
		case i < lo+n-m:
			step(m, true, up)
		case i >= lo+m:
			step(m, false, !up)
		}
		if i < lo+m {
			n = m
		} else {
			lo, n = lo+m, n-m
		}
	}
}

// log2 returns k for d = 2^k.
func log2(d int) int {
	k := 0
	for d > 1 {
		d >>= 1
		k++
	}
	return k
}
