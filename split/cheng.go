package split

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/scoll/scoll/internal/errs"
)

func init() {
	Register(Info{
		Name:   "cheng",
		Doc:    "gather to p sorting ranks, Cheng et al.'s exact splitters, exchange among the sorters, lg p merge stages, then the tables (replicated or distributed) built from the sorted pieces, or a chain (each rank's links routed back through the sorters and the gather tree)",
		Source: "Sack 2011, sec. 2.3.1–2.3.2; Cheng, Shah, Gilbert and Edelman 2007",
		Phases: []string{"collect", "splitters", "exchange", "merge", "allgather", "broadcast", "records", "scatter", "rows", "links", "build"},
		Run:    runCheng,
	})
}

// DefaultSorters is the number of sorting ranks cheng uses on n ranks
// without a Sorters option: one per 1,024 ranks, between 2 and 64.
func DefaultSorters(n int) int {
	return min(n, max(2, min(64, n/1024)))
}

// sorterTeams returns the collect groups of p sorters over n ranks (group
// s is the parent ranks [lo[s], lo[s+1]), as even as possible) and the team
// of the sorters (the first rank of each group) as seen by rank r.
func sorterTeams(n, p, r int) (lo []int, sorters team) {
	lo = make([]int, p+1)
	for s := range p {
		lo[s+1] = lo[s] + n/p + btoi(s < n%p)
	}
	sorters = listTeam(lo[:p:p], -1)
	for s := range p {
		if lo[s] == r {
			sorters.me = s
		}
	}
	return lo, sorters
}

// groupOf returns the collect group of parent rank r.
func groupOf(lo []int, r int) int {
	s, _ := slices.BinarySearch(lo, r+1)
	return s - 1
}

// runCheng runs Sack's parallel-sort split.
//
//	collect    binomial gather with merging into the sorter of each group
//	           of n/p ranks (O(n/p) at the sorter)
//	splitters  Cheng et al.'s exact-splitter search among the p sorters:
//	           sorter j coordinates splitter j, iterating weighted medians of
//	           the candidates' medians (O(p + lg(n/p)) per iteration, O(lg n)
//	           iterations)
//	exchange   every sorter sends each other sorter its part (O(n/p))
//	merge      each sorter merges its p sorted parts in lg p stages
//	           (O((n/p) lg p))
//	build      replicated tables: the sorters allgather the sorted table
//	           and broadcast it down their groups; distributed tables: see
//	           distributed.go
func runCheng(ctx context.Context, c Conn, me Entry, o *Options, st *Stats) (*Sorted, error) {
	n, r := c.Size(), c.Rank()
	p := o.Sorters
	if p == 0 {
		p = DefaultSorters(n)
	}
	p = min(p, n)
	lo, sorters := sorterTeams(n, p, r)
	grp := groupOf(lo, r)
	t := time.Now()
	mine, err := collect(ctx, c, st, rangeTeam(lo[grp], lo[grp+1], r), me)
	if err != nil {
		return nil, err
	}
	st.phase("collect", &t)
	var srt *sorter
	if sorters.me >= 0 {
		srt = &sorter{c: c, st: st, t: sorters, list: mine}
		if err := srt.sort(ctx, t); err != nil {
			return nil, err
		}
		t = time.Now()
	}
	if o.Chain {
		// A chain result needs no table: the sorters route each
		// contributor its links.
		return chainLinks(ctx, c, st, me, lo, grp, srt)
	}
	if gs := o.GroupFor(n); gs > 1 {
		return buildDistributed(ctx, c, st, gs, me, lo, grp, srt)
	}
	return buildTables(ctx, c, st, me, lo, grp, srt)
}

// SortPhases runs cheng's sorting phases (splitters, exchange, merge) on
// sorting rank sorters[me] of c, which holds the sorted entries list, and
// returns its piece of the global order (the pieces of the sorters, in
// order, are the sorted union, cut into even parts). Every sorter calls it
// together; the phases go to st. It is how the phases are measured apart
// (Sack's Table 2.1).
func SortPhases(ctx context.Context, c Conn, sorters []int, me int, list []Entry, st *Stats) ([]Entry, error) {
	srt := &sorter{c: c, st: st, t: listTeam(sorters, me), list: list}
	if err := srt.sort(ctx, time.Now()); err != nil {
		return nil, err
	}
	return srt.list, nil
}

// MergeInto appends the merge of the sorted a and b to dst (entries
// ordered by color, key, then rank), as every merging phase does.
func MergeInto(dst, a, b []Entry) []Entry { return mergeInto(dst, a, b) }

// Compare orders entries by color, key, then parent rank.
func Compare(a, b Entry) int { return compare(a, b) }

// EntryBytes views entries as the bytes the algorithms send (no copy).
func EntryBytes(es []Entry) []byte { return entryBytesOf(es) }

// sorter is a sorting rank's state.
type sorter struct {
	c    Conn
	st   *Stats
	t    team
	list []Entry // its sorted entries; after sort, its piece of the result
	// counts[s] is the number of defined entries sorter s collected; m is
	// their sum and first the global position of this sorter's piece.
	counts   []int64
	m, first int64
}

// target returns the global position where sorter j's piece starts.
func (s *sorter) target(j int) int64 { return target(s.m, s.t.size(), j) }

// target returns where piece j of m entries cut into p even pieces starts.
func target(m int64, p, j int) int64 {
	return int64(j)*(m/int64(p)) + min(int64(j), m%int64(p))
}

// sort runs the splitters, exchange and merge phases; t is when the
// phase before began.
func (s *sorter) sort(ctx context.Context, t time.Time) error {
	p := s.t.size()
	// Every sorter learns how many entries each holds.
	cnt := make([]byte, 8*p)
	putI64(cnt[8*s.t.me:8*s.t.me], int64(len(s.list)))
	if err := allgather(ctx, s.c, s.st, s.t, evenPieces(8*p, p, 8), cnt); err != nil {
		return err
	}
	s.counts = make([]int64, p)
	for i := range p {
		s.counts[i] = getI64(cnt[8*i:])
		s.m += s.counts[i]
	}
	x, err := s.splitters(ctx)
	if err != nil {
		return err
	}
	s.st.phase("splitters", &t)
	parts, err := s.exchange(ctx, x)
	if err != nil {
		return err
	}
	s.st.phase("exchange", &t)
	s.list = mergeAll(parts)
	s.first = s.target(s.t.me)
	if int64(len(s.list)) != s.target(s.t.me+1)-s.first {
		return fmt.Errorf("%w: sorter %d holds %d entries, expected %d", errs.Mismatch, s.t.me, len(s.list), s.target(s.t.me+1)-s.first)
	}
	s.st.phase("merge", &t)
	return nil
}

// Decisions a coordinator sends for its splitter.
const (
	decBelow = iota // the splitter lies above the pivot
	decAbove        // below it
	decFound        // the pivot is the splitter
	decDone         // every window is empty
)

// splitters finds, for every j in 1..p−1, how many of this sorter's
// entries lie below the element of global position target(j) (Cheng et
// al.'s exact splitting). It returns x with x[0] = 0, x[p] = len(list).
//
// Sorter j coordinates splitter j. Each sorter keeps, per splitter, a
// window [lo, hi] of its entries within which the cut lies. One iteration:
// every sorter sends each coordinator the median of its window and the
// window; the coordinator takes the weighted median M of the medians and
// sends it to all; every sorter counts its entries < M and ≤ M and sends
// both; the coordinator sums them (the global position of M) and decides:
// found (the cut is at the counts), or the cut lies above or below M, which
// every window then excludes. Each iteration removes at least a quarter
// of the candidates of every splitter still open.
func (s *sorter) splitters(ctx context.Context) ([]int64, error) {
	p, me := s.t.size(), s.t.me
	x := make([]int64, p+1)
	x[p] = int64(len(s.list))
	lo := make([]int64, p)
	hi := make([]int64, p)
	open := 0
	for j := 1; j < p; j++ {
		lo[j], hi[j] = 0, int64(len(s.list))
		open++
	}
	const propBytes = entryBytes + 16
	pivots := make([]Entry, p)
	lt := make([]int64, p)
	le := make([]int64, p)
	done := make([]bool, p)
	done[0] = true
	tag := tagSplitters
	for iter := 0; open > 0; iter++ {
		if iter > 64*64 {
			return nil, fmt.Errorf("%w: splitter search does not converge", errs.Mismatch)
		}
		// 1. Proposals to the coordinators.
		var sends []Send
		var recvs []Recv
		prop := func(j int) []byte {
			b := make([]byte, 0, propBytes)
			w := hi[j] - lo[j]
			var med Entry
			if w > 0 {
				med = s.list[lo[j]+w/2]
			}
			b = append(b, entryBytesOf([]Entry{med})...)
			b = putI64(b, lo[j])
			return putI64(b, hi[j])
		}
		for j := 1; j < p; j++ {
			if !done[j] && j != me {
				sends = append(sends, Send{To: s.t.at(j), Tag: tag, Data: prop(j)})
			}
		}
		coord := me > 0 && !done[me]
		var props [][]byte
		if coord {
			props = make([][]byte, p)
			for i := range p {
				if i == me {
					props[i] = prop(me)
					continue
				}
				props[i] = make([]byte, propBytes)
				recvs = append(recvs, Recv{From: s.t.at(i), Tag: tag, Buf: props[i]})
			}
		}
		if err := s.exchangeRound(ctx, sends, recvs, propBytes); err != nil {
			return nil, err
		}
		tag++
		// 2. The coordinator's pivot to every sorter.
		var pivot []byte
		var wlo, whi []int64
		if coord {
			var ms []Entry
			var ws []int64
			wlo, whi = make([]int64, p), make([]int64, p)
			var total int64
			for i, b := range props {
				med := *(*Entry)(unsafe.Pointer(&b[0]))
				wlo[i], whi[i] = getI64(b[entryBytes:]), getI64(b[entryBytes+8:])
				if w := whi[i] - wlo[i]; w > 0 {
					ms = append(ms, med)
					ws = append(ws, w)
					total += w
				}
			}
			pivot = make([]byte, entryBytes+1)
			if total == 0 {
				pivot[entryBytes] = decDone
			} else {
				copy(pivot, entryBytesOf([]Entry{weightedMedian(ms, ws, total)}))
			}
		}
		sends, recvs = s.toAll(coord, pivot, entryBytes+1, done, tag)
		if err := s.exchangeRound(ctx, sends, recvs, entryBytes+1); err != nil {
			return nil, err
		}
		tag++
		got := s.fromCoords(coord, pivot, recvs, done)
		// 3. Counts back to the coordinators.
		sends, recvs = nil, nil
		finished := map[int]bool{}
		for j := 1; j < p; j++ {
			if done[j] {
				continue
			}
			b := got[j]
			if b[entryBytes] == decDone {
				finished[j] = true
				continue
			}
			pv := *(*Entry)(unsafe.Pointer(&b[0]))
			pivots[j] = pv
			lt[j] = int64(sortSearch(s.list, func(e Entry) bool { return compare(e, pv) >= 0 }))
			le[j] = int64(sortSearch(s.list, func(e Entry) bool { return compare(e, pv) > 0 }))
			if j != me {
				sends = append(sends, Send{To: s.t.at(j), Tag: tag, Data: putI64(putI64(nil, lt[j]), le[j])})
			}
		}
		var cnts [][]byte
		if coord && !finished[me] {
			cnts = make([][]byte, p)
			for i := range p {
				if i == me {
					cnts[i] = putI64(putI64(nil, lt[me]), le[me])
					continue
				}
				cnts[i] = make([]byte, 16)
				recvs = append(recvs, Recv{From: s.t.at(i), Tag: tag, Buf: cnts[i]})
			}
		}
		if err := s.exchangeRound(ctx, sends, recvs, 16); err != nil {
			return nil, err
		}
		tag++
		for j := range finished {
			x[j] = lo[j]
			done[j] = true
			open--
		}
		// 4. The coordinator's decision to every sorter.
		var dec []byte
		if coord && cnts != nil {
			var pos int64
			for _, b := range cnts {
				pos += getI64(b)
			}
			d := byte(decFound)
			switch want := s.target(me); {
			case pos < want:
				d = decBelow
			case pos > want:
				d = decAbove
			}
			dec = []byte{d}
		}
		sends, recvs = s.toAll(coord && cnts != nil, dec, 1, done, tag)
		if err := s.exchangeRound(ctx, sends, recvs, 1); err != nil {
			return nil, err
		}
		tag++
		decs := s.fromCoords(coord && cnts != nil, dec, recvs, done)
		for j := 1; j < p; j++ {
			if done[j] {
				continue
			}
			switch decs[j][0] {
			case decFound:
				x[j] = lt[j]
				done[j] = true
				open--
			case decBelow:
				lo[j] = max(lo[j], le[j])
			case decAbove:
				hi[j] = min(hi[j], lt[j])
			}
			if lo[j] > hi[j] {
				return nil, fmt.Errorf("%w: splitter %d window [%d,%d] (sorters disagree)", errs.Mismatch, j, lo[j], hi[j])
			}
		}
	}
	for j := 1; j <= p; j++ {
		if x[j] < x[j-1] {
			return nil, fmt.Errorf("%w: splitters out of order", errs.Mismatch)
		}
	}
	return x, nil
}

// toAll returns the round in which every open coordinator sends msg to
// every other sorter and every sorter receives from the open coordinators.
func (s *sorter) toAll(coord bool, msg []byte, size int, done []bool, tag int) ([]Send, []Recv) {
	p, me := s.t.size(), s.t.me
	var sends []Send
	var recvs []Recv
	if coord {
		for i := range p {
			if i != me {
				sends = append(sends, Send{To: s.t.at(i), Tag: tag, Data: msg})
			}
		}
	}
	for j := 1; j < p; j++ {
		if !done[j] && j != me {
			recvs = append(recvs, Recv{From: s.t.at(j), Tag: tag, Buf: make([]byte, size)})
		}
	}
	return sends, recvs
}

// fromCoords indexes by splitter what toAll's round received (and this
// rank's own message).
func (s *sorter) fromCoords(coord bool, mine []byte, recvs []Recv, done []bool) [][]byte {
	out := make([][]byte, s.t.size())
	k := 0
	for j := 1; j < s.t.size(); j++ {
		if done[j] {
			continue
		}
		if j == s.t.me {
			out[j] = mine
			continue
		}
		out[j] = recvs[k].Buf
		k++
	}
	return out
}

// exchangeRound runs a round whose receives all expect size bytes.
func (s *sorter) exchangeRound(ctx context.Context, sends []Send, recvs []Recv, size int) error {
	if len(sends)+len(recvs) == 0 {
		return nil
	}
	if err := round(ctx, s.c, s.st, sends, recvs); err != nil {
		return err
	}
	for i := range recvs {
		if err := expect(&recvs[i], size); err != nil {
			return err
		}
	}
	return nil
}

// weightedMedian returns the element of ms at which the cumulative weight
// of the sorted elements first reaches half of total.
func weightedMedian(ms []Entry, ws []int64, total int64) Entry {
	idx := make([]int, len(ms))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return compare(ms[a], ms[b]) })
	var acc int64
	for _, i := range idx {
		acc += ws[i]
		if 2*acc >= total {
			return ms[i]
		}
	}
	return ms[idx[len(idx)-1]]
}

// sortSearch returns the first index of list at which f holds (f must be
// false then true along list).
func sortSearch(list []Entry, f func(Entry) bool) int {
	lo, hi := 0, len(list)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if !f(list[m]) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// exchange sends every sorter d this sorter's entries in [x[d], x[d+1])
// and returns the p sorted parts this sorter receives (its own included).
func (s *sorter) exchange(ctx context.Context, x []int64) ([][]Entry, error) {
	p, me := s.t.size(), s.t.me
	out := make([][]byte, p)
	for d := range p {
		out[d] = entryBytesOf(s.list[x[d]:x[d+1]])
	}
	parts := make([][]Entry, p)
	parts[me] = s.list[x[me]:x[me+1]]
	// The entries are received in place, into parts.
	_, err := s.alltoallv(ctx, out, tagExchange, func(d int, n int64) ([]byte, error) {
		const w = int64(entryBytes)
		if n < 0 || n%w != 0 || n/w > s.m {
			return nil, fmt.Errorf("%w: sorter %d announces %d bytes of entries", errs.Mismatch, d, n)
		}
		parts[d] = make([]Entry, n/w)
		return entryBytesOf(parts[d]), nil
	})
	if err != nil {
		return nil, err
	}
	return parts, nil
}

// mergeAll merges sorted parts pairwise in ⌈lg p⌉ stages.
func mergeAll(parts [][]Entry) []Entry {
	for len(parts) > 1 {
		next := make([][]Entry, 0, (len(parts)+1)/2)
		for i := 0; i < len(parts); i += 2 {
			if i+1 == len(parts) {
				next = append(next, parts[i])
				continue
			}
			a, b := parts[i], parts[i+1]
			next = append(next, mergeInto(make([]Entry, 0, len(a)+len(b)), a, b))
		}
		parts = next
	}
	if len(parts) == 0 {
		return nil
	}
	return parts[0]
}

// buildTables finishes cheng with replicated tables: the sorters allgather
// the sorted table (as color runs and addresses) and broadcast it down
// their collect groups; every rank keeps its color's part.
func buildTables(ctx context.Context, c Conn, st *Stats, me Entry, lo []int, grp int, srt *sorter) (*Sorted, error) {
	t := time.Now()
	r := c.Rank()
	var table []byte
	var total int
	if srt != nil {
		// Allgather the addresses and colors of the sorted pieces among
		// the sorters: 12 bytes per entry.
		p := srt.t.size()
		off := make(pieces, p+1)
		for j := range p {
			off[j+1] = 12 * int(srt.target(j+1))
		}
		all := make([]byte, off[p])
		b := all[off[srt.t.me]:off[srt.t.me]]
		for _, e := range srt.list {
			b = putI64(b, e.Color)
		}
		for _, e := range srt.list {
			b = binary.LittleEndian.AppendUint32(b, uint32(e.Addr))
		}
		if err := allgather(ctx, c, st, srt.t, off, all); err != nil {
			return nil, err
		}
		st.phase("allgather", &t)
		table, total = all, len(all)
	}
	// The group learns the table's length first.
	g := rangeTeam(lo[grp], lo[grp+1], r)
	lenb, err := bcast(ctx, c, st, g, 8, putI64(nil, int64(total)))
	if err != nil {
		return nil, err
	}
	total = int(getI64(lenb))
	if total < 0 || total%12 != 0 || total > 12*c.Size() {
		return nil, fmt.Errorf("%w: table of %d bytes", errs.Mismatch, total)
	}
	table, err = bcast(ctx, c, st, g, total, table)
	if err != nil {
		return nil, err
	}
	st.phase("broadcast", &t)
	if me.Color < 0 {
		return nil, nil
	}
	return sortedFromPieces(me, table, int64(total/12), len(lo)-1)
}

// sortedFromPieces extracts this rank's color from the broadcast table of
// m entries: p pieces in sorter order, piece j holding its entries'
// colors (8 bytes each) then their addresses (4 bytes each).
func sortedFromPieces(me Entry, table []byte, m int64, p int) (*Sorted, error) {
	var addrs []int32
	rank := -1
	off := 0
	for j := range p {
		k := int(target(m, p, j+1) - target(m, p, j))
		cols := table[off : off+8*k]
		ads := table[off+8*k : off+12*k]
		for i := range k {
			if getI64(cols[8*i:]) != me.Color {
				continue
			}
			a := int32(binary.LittleEndian.Uint32(ads[4*i:]))
			if a == me.Addr {
				rank = len(addrs)
			}
			addrs = append(addrs, a)
		}
		off += 12 * k
	}
	if rank < 0 {
		return nil, fmt.Errorf("%w: this rank is missing from its color's table", errs.Mismatch)
	}
	return &Sorted{Rank: rank, Size: len(addrs), table: addrs}, nil
}
