package split

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/scoll/scoll/internal/errs"
)

// A team is a set of the parent's ranks that run a collective among
// themselves (a collect group, the sorters): member i is parent rank
// list[i], or lo+i when list is nil (a range of n ranks); this rank is
// member me (or -1 when not a member).
type team struct {
	list  []int
	lo, n int
	me    int
}

// rangeTeam returns the team of parent ranks [lo, hi) as seen by rank r.
func rangeTeam(lo, hi, r int) team {
	t := team{lo: lo, n: hi - lo, me: -1}
	if r >= lo && r < hi {
		t.me = r - lo
	}
	return t
}

// listTeam returns the team of the parent ranks in list; this rank is
// member me.
func listTeam(list []int, me int) team { return team{list: list, n: len(list), me: me} }

func (t team) size() int { return t.n }

// at returns the parent rank of member i.
func (t team) at(i int) int {
	if t.list != nil {
		return t.list[i]
	}
	return t.lo + i
}

// Tags: every phase of an algorithm has its own range, so that messages of
// different phases between the same pair never match each other.
const (
	tagCollect   = 1 << 20
	tagAllgather = 2 << 20
	tagScatter   = 3 << 20
	tagBruck     = 4 << 20
	tagSplitters = 5 << 20
	tagExchange  = 6 << 20
	tagRecords   = 7 << 20
	tagRows      = 8 << 20
	// The chain algorithms (Moody et al.).
	tagBitonic     = 9 << 20
	tagFinish      = 10 << 20
	tagHash        = 11 << 20
	tagChainGather = 12 << 20
	tagRadix       = 13 << 20
	tagGatherSc    = 14 << 20
	tagChainTable  = 15 << 20
	tagLinks       = 16 << 20
)

// collect gathers the defined entries of the team's members, sorted, at
// member 0 along a binomial tree, each step merging the sorted table
// received into the own one (Sack's collect phase). Members other than 0
// return nil.
func collect(ctx context.Context, c Conn, st *Stats, t team, me Entry) ([]Entry, error) {
	o, g := t.me, t.size()
	var have []Entry
	if me.Color >= 0 {
		have = []Entry{me}
	}
	for k := 0; 1<<k < g; k++ {
		d := 1 << k
		if o&d != 0 {
			return nil, round(ctx, c, st, []Send{{To: t.at(o - d), Tag: tagCollect + k, Data: entryBytesOf(have)}}, nil)
		}
		if o+d < g {
			in := make([]Entry, min(d, g-o-d))
			recvs := []Recv{{From: t.at(o + d), Tag: tagCollect + k, Buf: entryBytesOf(in)}}
			if err := round(ctx, c, st, nil, recvs); err != nil {
				return nil, err
			}
			if recvs[0].N%entryBytes != 0 {
				return nil, fmt.Errorf("%w: %d bytes of entries from rank %d", errs.Mismatch, recvs[0].N, recvs[0].From)
			}
			have = mergeInto(make([]Entry, 0, len(have)+recvs[0].N/entryBytes), have, in[:recvs[0].N/entryBytes])
		}
	}
	return have, nil
}

// pieces describes a byte string cut into one piece per team member:
// piece i is [off[i], off[i+1]).
type pieces []int

// evenPieces cuts total bytes into g pieces of whole units of unit bytes,
// as even as possible.
func evenPieces(total, g, unit int) pieces {
	units := total / unit
	off := make(pieces, g+1)
	for i := range g {
		off[i+1] = off[i] + (units/g+btoi(i < units%g))*unit
	}
	off[g] = total
	return off
}

// at returns where piece i starts.
func (p pieces) at(i int) int { return p[i] }

// uniform returns the starts of pieces of size bytes each.
func uniform(size int) func(i int) int { return func(i int) int { return size * i } }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// span returns the byte ranges of pieces first, first+1, …, first+n−1
// (mod g) of data.
func (p pieces) span(data []byte, first, n int) [][]byte {
	g := len(p) - 1
	var out [][]byte
	for n > 0 {
		last := min(first+n, g)
		out = append(out, data[p[first]:p[last]])
		n -= last - first
		first = 0
	}
	return out
}

// spanLen returns the bytes of pieces first … first+n−1 (mod g).
func (p pieces) spanLen(first, n int) int {
	g := len(p) - 1
	l := 0
	for n > 0 {
		last := min(first+n, g)
		l += p[last] - p[first]
		n -= last - first
		first = 0
	}
	return l
}

// allgather gathers every member's piece on every member by Bruck's
// algorithm (any team size, ⌈lg g⌉ rounds, each member sending its
// gathered pieces to the member 2^k below and receiving as many from the
// member 2^k above). data holds the whole string's space (p's total
// length); on entry only this member's piece is set. The piece sizes must
// be known to every member.
func allgather(ctx context.Context, c Conn, st *Stats, t team, p pieces, data []byte) error {
	o, g := t.me, t.size()
	// buf holds pieces o, o+1, … in order; it is copied into data at the
	// end.
	buf := make([]byte, 0, p[g])
	buf = append(buf, data[p[o]:p[o+1]]...)
	for k := 0; 1<<k < g; k++ {
		d := 1 << k
		cnt := min(d, g-d)
		send := buf[:p.spanLen(o, cnt)]
		want := p.spanLen((o+d)%g, cnt)
		in := buf[len(buf) : len(buf)+want]
		recvs := []Recv{{From: t.at((o + d) % g), Tag: tagBruck + k, Buf: in}}
		if err := round(ctx, c, st, []Send{{To: t.at((o - d + g) % g), Tag: tagBruck + k, Data: send}}, recvs); err != nil {
			return err
		}
		if err := expect(&recvs[0], want); err != nil {
			return err
		}
		buf = buf[:len(buf)+want]
	}
	// buf = pieces o … g−1, 0 … o−1.
	tail := p[g] - p[o]
	copy(data[p[o]:], buf[:tail])
	copy(data[:p[o]], buf[tail:])
	return nil
}

// bcast sends member 0's data (total bytes, known to every member) to
// every member: a binomial scatter of g pieces followed by Bruck's
// allgather (van de Geijn's broadcast: about 2·total bytes per member,
// 2⌈lg g⌉ rounds). Member 0 passes data; the others pass nil and get the
// string.
func bcast(ctx context.Context, c Conn, st *Stats, t team, total int, data []byte) ([]byte, error) {
	if t.size() == 1 {
		return data, nil
	}
	if t.me != 0 {
		data = make([]byte, total)
	}
	p := evenPieces(total, t.size(), 1)
	if err := scatter(ctx, c, st, t, p.at, data[p[t.me]:]); err != nil {
		return nil, err
	}
	if err := allgather(ctx, c, st, t, p, data); err != nil {
		return nil, err
	}
	return data, nil
}

// scatter hands every member its piece of member 0's data along a
// binomial tree: at step k (from the top) a member holding pieces
// [o, o+2^(k+1)) passes [o+2^k, o+2^(k+1)) on to member o+2^k. A member
// needs room only for its subtree, pieces [o, subtreeEnd(o, g)): data holds
// the bytes from p[o] of the whole string on (member 0: all of it). On
// return the member's own piece (and its subtree's) is set.
//
// p gives where piece i starts (i = 0 … g): pieces.at, or uniform for
// pieces of one size, which needs no array of g offsets on every member.
func scatter(ctx context.Context, c Conn, st *Stats, t team, p func(i int) int, data []byte) error {
	o, g := t.me, t.size()
	base := p(o)
	top := ceilLog2(g)
	for k := top - 1; k >= 0; k-- {
		d := 1 << k
		switch {
		case o%(2*d) == 0 && o+d < g:
			hi := min(o+2*d, g)
			if err := round(ctx, c, st, []Send{{To: t.at(o + d), Tag: tagScatter + k, Data: data[p(o+d)-base : p(hi)-base]}}, nil); err != nil {
				return err
			}
		case o%(2*d) == d:
			hi := min(o+d, g)
			recvs := []Recv{{From: t.at(o - d), Tag: tagScatter + k, Buf: data[:p(hi)-base]}}
			if err := round(ctx, c, st, nil, recvs); err != nil {
				return err
			}
			if err := expect(&recvs[0], p(hi)-p(o)); err != nil {
				return err
			}
		}
	}
	return nil
}

// subtreeEnd returns the end of member o's subtree in scatter's tree of g
// members: o + its lowest set bit (the whole team for member 0).
func subtreeEnd(o, g int) int {
	if o == 0 {
		return g
	}
	return min(o+o&-o, g)
}

// Little-endian helpers for the small records the algorithms exchange.
func putI64(b []byte, v int64) []byte { return binary.LittleEndian.AppendUint64(b, uint64(v)) }
func getI64(b []byte) int64           { return int64(binary.LittleEndian.Uint64(b)) }
