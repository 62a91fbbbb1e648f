package split

import (
	"context"
	"slices"
	"time"
)

func init() {
	Register(Info{
		Name:   "allgather-chain",
		Doc:    "allgather the items along the parent chain (doubling, forwarded addresses), keep the own color, sort: O(n) memory, O(n lg n) time per rank (Moody's AllgatherGroup)",
		Source: "Moody, Ahn, de Supinski 2011, sec. 3.1",
		Phases: []string{"gather", "sort", "build"},
		Items:  runAllgatherChain,
	})
}

// runAllgatherChain gathers every item along the parent chain and picks
// the rank's group out of them.
func runAllgatherChain(ctx context.Context, c Conn, j *Job, st *Stats) (*Sorted, error) {
	t := time.Now()
	return gatherGroup(ctx, c, j, st, j.Parent, &t)
}

// gatherGroup gathers the items of the chain l along it and picks this
// rank's group out of them (phases gather and sort).
func gatherGroup(ctx context.Context, c Conn, j *Job, st *Stats, l Links, t *time.Time) (*Sorted, error) {
	all, err := chainAllgather(ctx, c, st, l, tagChainGather, j.Shape.encode(&j.Me))
	if err != nil {
		return nil, err
	}
	items, err := j.Shape.decodeAll(all)
	if err != nil {
		return nil, err
	}
	st.phase("gather", t)
	s := sortedItems(&j.order, items, &j.Me)
	st.phase("sort", t)
	return s, nil
}

// sortedItems returns the result of the rank contributing me when items
// are every item of a chain that holds all of me's group (in any order):
// its group's members' addresses in split order.
func sortedItems(or *order, items []Item, me *Item) *Sorted {
	if !or.defined(me) {
		return nil
	}
	mine := slices.DeleteFunc(items, func(x Item) bool { return !or.defined(&x) || !or.sameColor(&x, me) })
	slices.SortFunc(mine, func(a, b Item) int { return or.compare(&a, &b) })
	return sortedTable(len(mine), me.Rank, func(i int) (int32, int32) { return mine[i].Addr, mine[i].Rank })
}

// chainAllgather gathers every rank's value (all of one width) along the
// chain l in chain order, in ⌈lg n⌉ doubling rounds: in round k a rank
// sends the block of up to 2^k values it has gathered on each side to the
// partner 2^k away on the other side, with the address of its partner on
// that side. Each rank receives n−1 values.
func chainAllgather(ctx context.Context, c Conn, st *Stats, l Links, tag int, mine []byte) ([]byte, error) {
	w := len(mine)
	// leftBlk holds the values of ranks [r−len+1, r], rightBlk [r, r+len).
	leftBlk, rightBlk := slices.Clone(mine), slices.Clone(mine)
	lp, rp := l.Left, l.Right
	for k, d := 0, 1; d < l.Size; k, d = k+1, d*2 {
		var sends []Send
		var recvs []Recv
		i := l.Rank
		if rp != None {
			sends = append(sends, Send{To: int(rp), Tag: tag + 2*k, Data: scanMsg(lp, true, leftBlk), Direct: true})
			recvs = append(recvs, Recv{From: int(rp), Tag: tag + 2*k + 1, Buf: make([]byte, 5+w*min(d, l.Size-(i+d))), Direct: true})
		}
		if lp != None {
			sends = append(sends, Send{To: int(lp), Tag: tag + 2*k + 1, Data: scanMsg(rp, true, rightBlk), Direct: true})
			recvs = append(recvs, Recv{From: int(lp), Tag: tag + 2*k, Buf: make([]byte, 5+w*min(d, i-d+1)), Direct: true})
		}
		if err := round(ctx, c, st, sends, recvs); err != nil {
			return nil, err
		}
		nl, nr := None, None
		for _, r := range recvs {
			if err := expect(&r, len(r.Buf)); err != nil {
				return nil, err
			}
			far := int32(uint32(r.Buf[0]) | uint32(r.Buf[1])<<8 | uint32(r.Buf[2])<<16 | uint32(r.Buf[3])<<24)
			if int32(r.From) == lp {
				nl = far
				leftBlk = append(slices.Clone(r.Buf[5:]), leftBlk...)
			} else {
				nr = far
				rightBlk = append(rightBlk, r.Buf[5:]...)
			}
		}
		lp, rp = nl, nr
	}
	return append(leftBlk, rightBlk[w:]...), nil
}
