package split

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/scoll/scoll/internal/errs"
)

// Building distributed tables from the sorted pieces (cheng with P' > 1).
//
// No rank can address the members of a new communicator before they know
// each other, so the sorters, which hold the sorted table between them,
// hand every member what it needs to build its part with the others:
//
//  1. bounds     the sorters allgather a summary of their pieces (first
//                and last color and their counts), from which each
//                learns where its colors start and how long they are
//  2. addresses  for each member of its piece, a sorter needs the
//                addresses of the member's column (one per block) and of
//                its partners in Bruck's allgather within its block
//                (2⌈lg len⌉): those outside its piece it requests from
//                the sorters holding them
//  3. records    one fixed-size record per member (new rank, size,
//                partners, column) goes to the sorter of the member's
//                collect group, which scatters them down the group
//  4. rows       the members of each block allgather their addresses
//                (Bruck), talking to the partners their record named
//
// Per sorter O((n/p)(P' + lg n)) addresses move in steps 2 and 3; per
// member O(m/P' + P' + lg n). No rank ever holds a whole table.

// recordLen returns the length in int32 words of a member's record for a
// parent of n ranks and groups of p: new rank, size, the address of rank
// 0, 2⌈lg n⌉ partners and up to min(p, n) column entries.
func recordLen(n, p int) int { return recordHead + 2*ceilLog2(n) + min(p, n) }

// recordHead is the words of a record before its addresses.
const recordHead = 3

// buildDistributed finishes cheng with distributed tables of groups of p
// ranks. srt is nil on ranks that are not sorters.
func buildDistributed(ctx context.Context, c Conn, st *Stats, p int, me Entry, lo []int, grp int, srt *sorter) (*Sorted, error) {
	t := time.Now()
	n, r := c.Size(), c.Rank()
	rl := recordLen(n, p)
	g := rangeTeam(lo[grp], lo[grp+1], r)
	// Room for this rank's subtree of the group's slots only.
	slots := make([]byte, 4*rl*(subtreeEnd(g.me, g.size())-g.me))
	if srt != nil {
		if err := srt.records(ctx, p, rl, lo, slots); err != nil {
			return nil, err
		}
		st.phase("records", &t)
	}
	if err := scatter(ctx, c, st, g, uniform(4*rl), slots); err != nil {
		return nil, err
	}
	st.phase("scatter", &t)
	rec := make([]int32, rl)
	for i := range rec {
		rec[i] = int32(binary.LittleEndian.Uint32(slots[4*i:]))
	}
	if me.Color < 0 {
		return nil, nil
	}
	j, m, zero := int(rec[0]), int(rec[1]), rec[2]
	if m < 1 || j < 0 || j >= m {
		return nil, fmt.Errorf("%w: record of rank %d says rank %d of %d", errs.Mismatch, r, j, m)
	}
	lay := layout{m: m, g: min(p, m)}
	k := lay.block(j)
	length, o := lay.length(k), j-lay.start(k)
	steps := ceilLog2(length)
	h := recordHead
	from, to := rec[h:h+steps], rec[h+steps:h+2*steps]
	column := slices.Clone(rec[h+2*steps : h+2*steps+lay.g])
	rows, err := blockRows(ctx, c, st, me.Addr, o, length, from, to)
	if err != nil {
		return nil, err
	}
	st.phase("rows", &t)
	return &Sorted{Rank: j, Size: m, group: newDistributed(j, m, p, rows, column, zero)}, nil
}

// blockRows gathers the addresses of a block's members by Bruck's
// allgather: at step i the member at offset o sends what it has gathered
// to the member at o−2^i and receives as much from o+2^i (mod len), whose
// addresses are to[i] and from[i].
func blockRows(ctx context.Context, c Conn, st *Stats, self int32, o, length int, from, to []int32) ([]int32, error) {
	buf := make([]int32, 1, length)
	buf[0] = self
	for i := range from {
		d := 1 << i
		cnt := min(d, length-d)
		in := make([]byte, 4*cnt)
		out := make([]byte, 0, 4*cnt)
		for _, a := range buf[:cnt] {
			out = binary.LittleEndian.AppendUint32(out, uint32(a))
		}
		recvs := []Recv{{From: int(from[i]), Direct: true, Tag: tagRows + i, Buf: in}}
		if err := round(ctx, c, st, []Send{{To: int(to[i]), Direct: true, Tag: tagRows + i, Data: out}}, recvs); err != nil {
			return nil, err
		}
		if err := expect(&recvs[0], len(in)); err != nil {
			return nil, err
		}
		for q := range cnt {
			buf = append(buf, int32(binary.LittleEndian.Uint32(in[4*q:])))
		}
	}
	// buf holds offsets o, o+1, …, o−1 (mod len).
	rows := make([]int32, length)
	for q, a := range buf {
		rows[(o+q)%length] = a
	}
	return rows, nil
}

// records computes the record of every member of this sorter's piece,
// routes each to the sorter of its member's collect group and fills this
// sorter's group's slots (rl words per parent rank of the group, zero for
// ranks whose color is undefined).
func (s *sorter) records(ctx context.Context, p, rl int, lo []int, slots []byte) error {
	// 1. Where the colors of this piece start and how long they are.
	sums, err := s.summaries(ctx)
	if err != nil {
		return err
	}
	// Global bounds of every color of the piece: a run at either end of
	// the piece may go on in the neighbouring pieces.
	type bounds struct{ start, size int64 }
	colorBounds := func(col int64, localFirst, localLen int64) bounds {
		start, end := s.first+localFirst, s.first+localFirst+localLen
		if localFirst == 0 {
			start, _, _ = s.runBefore(sums, col, None)
		}
		if localFirst+localLen == int64(len(s.list)) {
			end, _ = s.runAfter(sums, col)
		}
		return bounds{start, end - start}
	}
	// 2. The positions each member needs, and the addresses of those
	// outside this piece, from the sorters that hold them.
	type member struct {
		e        Entry
		j, m     int64
		start    int64 // position of the member's color's rank 0
		lay      layout
		need     []int64 // positions: from-partners, to-partners, column
		partners int
	}
	members := make([]member, len(s.list))
	var want []int64
	for i := 0; i < len(s.list); {
		col := s.list[i].Color
		k := len(colorRange(s.list[i:], col))
		bd := colorBounds(col, int64(i), int64(k))
		for q := i; q < i+k; q++ {
			mb := &members[q]
			mb.e, mb.start, mb.m = s.list[q], bd.start, bd.size
			mb.j = s.first + int64(q) - bd.start
			mb.lay = layout{m: int(bd.size), g: min(p, int(bd.size))}
			blk := mb.lay.block(int(mb.j))
			bs, length := mb.lay.start(blk), mb.lay.length(blk)
			o := int(mb.j) - bs
			steps := ceilLog2(length)
			mb.partners = steps
			for i := range steps {
				mb.need = append(mb.need, bd.start+int64(bs+(o+(1<<i))%length))
			}
			for i := range steps {
				mb.need = append(mb.need, bd.start+int64(bs+((o-(1<<i))%length+length)%length))
			}
			for b := range mb.lay.g {
				mb.need = append(mb.need, bd.start+int64(mb.lay.owner(b, o)))
			}
			if bd.start < s.first {
				want = append(want, bd.start)
			}
			for _, q := range mb.need {
				if q < s.first || q >= s.first+int64(len(s.list)) {
					want = append(want, q)
				}
			}
		}
		i += k
	}
	slices.Sort(want)
	want = slices.Compact(want)
	addrOf, err := s.fetch(ctx, want)
	if err != nil {
		return err
	}
	address := func(q int64) int32 {
		if q >= s.first && q < s.first+int64(len(s.list)) {
			return s.list[q-s.first].Addr
		}
		i, _ := slices.BinarySearch(want, q)
		return addrOf[i]
	}
	// 3. Records to the sorters of the members' collect groups.
	perDest := make([][]byte, s.t.size())
	for _, mb := range members {
		d := groupOf(lo, int(mb.e.Rank))
		rec := binary.LittleEndian.AppendUint32(perDest[d], uint32(mb.e.Rank))
		rec = binary.LittleEndian.AppendUint32(rec, uint32(mb.j))
		rec = binary.LittleEndian.AppendUint32(rec, uint32(mb.m))
		rec = binary.LittleEndian.AppendUint32(rec, uint32(address(mb.start)))
		for _, q := range mb.need {
			rec = binary.LittleEndian.AppendUint32(rec, uint32(address(q)))
		}
		for range rl - recordHead - len(mb.need) {
			rec = binary.LittleEndian.AppendUint32(rec, 0)
		}
		perDest[d] = rec
	}
	got, err := s.alltoallv(ctx, perDest, tagRecords, nil)
	if err != nil {
		return err
	}
	recBytes := 4 * (rl + 1)
	for _, in := range got {
		if len(in)%recBytes != 0 {
			return fmt.Errorf("%w: %d bytes of records", errs.Mismatch, len(in))
		}
		for off := 0; off < len(in); off += recBytes {
			pr := int(int32(binary.LittleEndian.Uint32(in[off:])))
			i := pr - lo[s.t.me]
			if i < 0 || i >= lo[s.t.me+1]-lo[s.t.me] {
				return fmt.Errorf("%w: record of rank %d sent to the sorter of another group", errs.Mismatch, pr)
			}
			copy(slots[4*rl*i:4*rl*(i+1)], in[off+4:off+recBytes])
		}
	}
	return nil
}

// fetch returns the addresses of the sorted positions want (sorted,
// distinct, none in this sorter's piece), asking the sorters that hold
// them.
func (s *sorter) fetch(ctx context.Context, want []int64) ([]int32, error) {
	np := s.t.size()
	reqs := make([][]byte, np)
	for _, q := range want {
		d := sortSearchInt(np, func(j int) bool { return s.target(j+1) > q })
		reqs[d] = putI64(reqs[d], q)
	}
	asked, err := s.alltoallv(ctx, reqs, tagRecords+1, nil)
	if err != nil {
		return nil, err
	}
	replies := make([][]byte, np)
	for d, in := range asked {
		for off := 0; off+8 <= len(in); off += 8 {
			q := getI64(in[off:]) - s.first
			if q < 0 || q >= int64(len(s.list)) {
				return nil, fmt.Errorf("%w: sorter %d asks for position %d not held here", errs.Mismatch, d, q+s.first)
			}
			replies[d] = binary.LittleEndian.AppendUint32(replies[d], uint32(s.list[q].Addr))
		}
	}
	answers, err := s.alltoallv(ctx, replies, tagRecords+2, nil)
	if err != nil {
		return nil, err
	}
	out := make([]int32, 0, len(want))
	for d := range np {
		if len(answers[d]) != len(reqs[d])/2 {
			return nil, fmt.Errorf("%w: sorter %d answered %d of %d positions", errs.Mismatch, d, len(answers[d])/4, len(reqs[d])/8)
		}
		for off := 0; off < len(answers[d]); off += 4 {
			out = append(out, int32(binary.LittleEndian.Uint32(answers[d][off:])))
		}
	}
	// Requests went out grouped by sorter in position order, so the
	// answers concatenated in sorter order follow want's order.
	return out, nil
}

// alltoallv sends out[d] to every other sorter d and returns what each
// sent this one (its own part passed through): a round of byte counts,
// then a round of data. recvBuf returns the buffer for the n bytes sorter
// d announces, or an error for a count it cannot take; nil recvBuf takes
// up to 2^40 bytes into new slices.
func (s *sorter) alltoallv(ctx context.Context, out [][]byte, tag int, recvBuf func(d int, n int64) ([]byte, error)) ([][]byte, error) {
	if recvBuf == nil {
		recvBuf = func(d int, n int64) ([]byte, error) {
			if n < 0 || n > 1<<40 {
				return nil, fmt.Errorf("%w: sorter %d announces %d bytes", errs.Mismatch, d, n)
			}
			return make([]byte, n), nil
		}
	}
	np, me := s.t.size(), s.t.me
	var sends []Send
	var recvs []Recv
	for d := range np {
		if d != me {
			sends = append(sends, Send{To: s.t.at(d), Tag: tag, Data: putI64(nil, int64(len(out[d])))})
			recvs = append(recvs, Recv{From: s.t.at(d), Tag: tag, Buf: make([]byte, 8)})
		}
	}
	if err := s.exchangeRound(ctx, sends, recvs, 8); err != nil {
		return nil, err
	}
	in := make([][]byte, np)
	in[me] = out[me]
	sends = sends[:0]
	var data []Recv
	k := 0
	for d := range np {
		if d == me {
			continue
		}
		b, err := recvBuf(d, getI64(recvs[k].Buf))
		if err != nil {
			return nil, err
		}
		k++
		in[d] = b
		sends = append(sends, Send{To: s.t.at(d), Tag: tag + 1<<10, Data: out[d]})
		data = append(data, Recv{From: s.t.at(d), Tag: tag + 1<<10, Buf: in[d]})
	}
	if err := round(ctx, s.c, s.st, sends, data); err != nil {
		return nil, err
	}
	for i := range data {
		if err := expect(&data[i], len(data[i].Buf)); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// sortSearchInt returns the first i in [0, n) for which f holds, or n.
func sortSearchInt(n int, f func(int) bool) int {
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if !f(m) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
