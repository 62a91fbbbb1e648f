package split

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/scoll/scoll/internal/errs"
)

// A sorter's summary of its sorted piece, allgathered among the sorters so
// each can number the groups that cross the pieces' borders:
//
//	 0 first color    8 last color
//	16 entries of the first color at the piece's start
//	24 entries of the last color at the piece's end
//	32 address of the first entry   36 of the last entry
//	40 address of the first entry of the last color's run
const summaryLen = 48

type summary struct {
	n                   int64 // entries in the piece
	first, last         int64 // colors
	firstRun, lastRun   int64
	firstAddr, lastAddr int32
	lastRunAddr         int32
}

func summarize(list []Entry) []byte {
	b := make([]byte, 0, summaryLen)
	if len(list) == 0 {
		return b[:summaryLen]
	}
	l := len(list)
	fr := 1
	for fr < l && list[fr].Color == list[0].Color {
		fr++
	}
	lr := 1
	for lr < l && list[l-1-lr].Color == list[l-1].Color {
		lr++
	}
	b = putI64(b, list[0].Color)
	b = putI64(b, list[l-1].Color)
	b = putI64(b, int64(fr))
	b = putI64(b, int64(lr))
	for _, a := range []int32{list[0].Addr, list[l-1].Addr, list[l-lr].Addr} {
		b = binary.LittleEndian.AppendUint32(b, uint32(a))
	}
	return b[:summaryLen]
}

func getSummary(b []byte, n int64) summary {
	u := func(o int) int32 { return int32(binary.LittleEndian.Uint32(b[o:])) }
	return summary{n: n, first: getI64(b), last: getI64(b[8:]), firstRun: getI64(b[16:]), lastRun: getI64(b[24:]),
		firstAddr: u(32), lastAddr: u(36), lastRunAddr: u(40)}
}

// chainLinks finishes cheng with a chain result and no table anywhere: the
// sorters allgather one summary of their sorted pieces (p·48 bytes), number
// the members of every group (those crossing a piece's border from the
// summaries), route each entry's links (20 bytes) to the sorter of its
// contributor's collect group (an alltoallv among the sorters), and each
// sorter scatters its group's links down the collect tree (⌈lg(n/p)⌉
// rounds; a rank holds its subtree's links on the way). A rank whose color
// is undefined gets an empty reply. Ranks hold O(1) besides a sorter's
// piece (O(n/p)) and the scatter's subtree.
func chainLinks(ctx context.Context, c Conn, st *Stats, me Entry, lo []int, grp int, srt *sorter) (*Sorted, error) {
	t := time.Now()
	g := rangeTeam(lo[grp], lo[grp+1], c.Rank())
	// Room for this rank's subtree of the group's replies only.
	slots := make([]byte, replyLen*(subtreeEnd(g.me, g.size())-g.me))
	if srt != nil {
		if err := srt.routeLinks(ctx, lo, slots); err != nil {
			return nil, err
		}
	}
	if err := scatter(ctx, c, st, g, uniform(replyLen), slots); err != nil {
		return nil, err
	}
	st.phase("links", &t)
	if me.Color < 0 {
		return nil, nil
	}
	l, err := getReply(slots[:replyLen], me.Addr)
	if err != nil {
		return nil, err
	}
	if l.Size < 1 || l.Rank < 0 || l.Rank >= l.Size {
		return nil, fmt.Errorf("%w: rank %d's links say rank %d of %d", errs.Mismatch, c.Rank(), l.Rank, l.Size)
	}
	return &Sorted{Rank: l.Rank, Size: l.Size, links: &l}, nil
}

// routeLinks numbers this sorter's piece, sends every entry's links to the
// sorter of its contributor's collect group (lo: the groups' first ranks)
// and fills this sorter's group's slots (replyLen bytes per parent rank of
// the group) with what the sorters sent it.
func (s *sorter) routeLinks(ctx context.Context, lo []int, slots []byte) error {
	to, msgs, err := s.links(ctx)
	if err != nil {
		return err
	}
	out := make([][]byte, s.t.size())
	for i, e := range to {
		d := groupOf(lo, int(e))
		out[d] = binary.LittleEndian.AppendUint32(out[d], uint32(e))
		out[d] = append(out[d], msgs[i]...)
	}
	in, err := s.alltoallv(ctx, out, tagLinks, nil)
	if err != nil {
		return err
	}
	first, n := lo[s.t.me], lo[s.t.me+1]-lo[s.t.me]
	for d, b := range in {
		if len(b)%(4+replyLen) != 0 {
			return fmt.Errorf("%w: sorter %d sent %d bytes of links", errs.Mismatch, d, len(b))
		}
		for ; len(b) > 0; b = b[4+replyLen:] {
			k := int(binary.LittleEndian.Uint32(b)) - first
			if k < 0 || k >= n {
				return fmt.Errorf("%w: sorter %d sent the links of rank %d, not of this group", errs.Mismatch, d, k+first)
			}
			copy(slots[k*replyLen:], b[4:4+replyLen])
		}
	}
	return nil
}

// summaries allgathers every sorter's summary of its piece.
func (s *sorter) summaries(ctx context.Context) ([]summary, error) {
	p, me := s.t.size(), s.t.me
	all := make([]byte, p*summaryLen)
	copy(all[me*summaryLen:], summarize(s.list))
	if err := allgather(ctx, s.c, s.st, s.t, evenPieces(len(all), p, summaryLen), all); err != nil {
		return nil, err
	}
	sums := make([]summary, p)
	for j := range sums {
		sums[j] = getSummary(all[j*summaryLen:], s.target(j+1)-s.target(j))
	}
	return sums, nil
}

// runBefore follows the run of color col that starts this sorter's piece
// back through the earlier pieces: where it starts, the address of its
// first entry (addr, this piece's first entry's, if it starts here) and
// the address of the entry just before this piece (None when that entry
// has another color or there is none).
func (s *sorter) runBefore(sums []summary, col int64, addr int32) (start int64, first, left int32) {
	start, first, left = s.first, addr, None
	for j, near := s.t.me-1, true; j >= 0; j-- {
		x := sums[j]
		if x.n == 0 {
			continue
		}
		if x.last != col {
			break
		}
		if near {
			left, near = x.lastAddr, false
		}
		start, first = s.target(j)+x.n-x.lastRun, x.lastRunAddr
		if x.lastRun < x.n {
			break
		}
	}
	return start, first, left
}

// runAfter follows the run of color col that ends this sorter's piece on
// through the later pieces: where it ends and the address of the entry
// just after this piece (None when that entry has another color or there
// is none).
// It mirrors runBefore on the pieces' other ends (first color, run, address).
func (s *sorter) runAfter(sums []summary, col int64) (end int64, right int32) {
	end, right = s.first+int64(len(s.list)), None
	for j, near := s.t.me+1, true; j < len(sums); j++ {
		x := sums[j]
		if x.n == 0 {
			continue
		}
		if x.first != col {
			break
		}
		if near {
			right, near = x.firstAddr, false
		}
		end = s.target(j) + x.firstRun
		if x.firstRun < x.n {
			break
		}
	}
	return end, right
}

// links numbers this sorter's piece: each entry's contributor (parent
// rank) and links, encoded as a reply.
func (s *sorter) links(ctx context.Context) (ranks []int32, replies [][]byte, err error) {
	sums, err := s.summaries(ctx)
	if err != nil {
		return nil, nil, err
	}
	L := s.list
	if len(L) == 0 {
		return nil, nil, nil
	}
	F, l := s.first, len(L)
	// The first run may begin in earlier pieces, the last end in later ones.
	startPos, firstAddr, leftAddr := s.runBefore(sums, L[0].Color, L[0].Addr)
	endPos, rightAddr := s.runAfter(sums, L[l-1].Color)
	ranks, replies = make([]int32, 0, l), make([][]byte, 0, l)
	for a := 0; a < l; {
		b := a + 1
		for b < l && L[b].Color == L[a].Color {
			b++
		}
		lo, hi, fa := F+int64(a), F+int64(b), L[a].Addr
		if a == 0 {
			lo, fa = startPos, firstAddr
		}
		if b == l {
			hi = endPos
		}
		for i := a; i < b; i++ {
			lk := Links{Rank: int(F + int64(i) - lo), Size: int(hi - lo), Left: None, Right: None, First: fa}
			switch {
			case i > a:
				lk.Left = L[i-1].Addr
			case a == 0:
				lk.Left = leftAddr
			}
			switch {
			case i+1 < b:
				lk.Right = L[i+1].Addr
			case b == l:
				lk.Right = rightAddr
			}
			ranks, replies = append(ranks, L[i].Rank), append(replies, putReply(&lk))
		}
		a = b
	}
	return ranks, replies, nil
}
