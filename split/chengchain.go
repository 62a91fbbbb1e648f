package split

import (
	"context"
	"encoding/binary"
	"time"
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
// summaries), and post each entry's contributor its links (sec. 3.2's
// message back). Ranks hold O(1) besides a sorter's piece (O(n/p)). c must
// be a Poster; every rank with a defined color takes one message.
func chainLinks(ctx context.Context, c Conn, post Poster, st *Stats, me Entry, srt *sorter) (*Sorted, error) {
	t := time.Now()
	if srt != nil {
		if err := srt.postLinks(ctx, post); err != nil {
			return nil, err
		}
	}
	if me.Color < 0 {
		st.phase("links", &t)
		return nil, nil
	}
	buf := make([]byte, replyLen)
	n, err := post.Take(ctx, buf)
	if err != nil {
		return nil, err
	}
	l, err := getReply(buf[:n], me.Addr)
	if err != nil {
		return nil, err
	}
	st.phase("links", &t)
	return &Sorted{Rank: l.Rank, Size: l.Size, links: &l}, nil
}

// postLinks numbers this sorter's piece and posts every entry's links.
func (s *sorter) postLinks(ctx context.Context, post Poster) error {
	p, me := s.t.size(), s.t.me
	all := make([]byte, p*summaryLen)
	copy(all[me*summaryLen:], summarize(s.list))
	if err := allgather(ctx, s.c, s.st, s.t, evenPieces(len(all), p, summaryLen), all); err != nil {
		return err
	}
	sum := func(j int) summary { return getSummary(all[j*summaryLen:], s.target(j+1)-s.target(j)) }
	L := s.list
	if len(L) == 0 {
		return nil
	}
	F, l := s.first, len(L)
	// The first run may begin in earlier pieces, the last end in later ones.
	c0, cl := L[0].Color, L[l-1].Color
	startPos, firstAddr, leftAddr := F, L[0].Addr, None
	for j, near := me-1, true; j >= 0; j-- {
		x := sum(j)
		if x.n == 0 {
			continue
		}
		if x.last != c0 {
			break
		}
		if near {
			leftAddr, near = x.lastAddr, false
		}
		startPos, firstAddr = s.target(j)+x.n-x.lastRun, x.lastRunAddr
		if x.lastRun < x.n {
			break
		}
	}
	endPos, rightAddr := F+int64(l), None
	for j, near := me+1, true; j < p; j++ {
		x := sum(j)
		if x.n == 0 {
			continue
		}
		if x.first != cl {
			break
		}
		if near {
			rightAddr, near = x.firstAddr, false
		}
		endPos = s.target(j) + x.firstRun
		if x.firstRun < x.n {
			break
		}
	}
	to, msgs := make([]int32, 0, l), make([][]byte, 0, l)
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
			to, msgs = append(to, L[i].Addr), append(msgs, putReply(&lk))
		}
		a = b
	}
	if pa, ok := post.(PostAller); ok {
		return pa.PostAll(ctx, to, msgs)
	}
	for i := range to {
		if err := post.Post(ctx, to[i], msgs[i]); err != nil {
			return err
		}
	}
	return nil
}
