package split

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// Distributed tables (Sack 2.3.2).
//
// The m members of a communicator are cut into G = min(P', m) blocks of
// consecutive ranks, as even as possible. Rank j of block k, at offset o,
// holds the rows of its block (the addresses of its block's members) and
// its column: for every block k', the address of the member of k' at
// offset min(o, len(k')−1), the owner it asks for rows of k'; and the
// address of rank 0, the communicator's leader. The G
// members at one offset thus share one whole table, each holding about
// m/P' rows: memory per rank m/P' + P' addresses, m²/P' + m·P' in all.
//
//	block 0: ranks 0 1 2 3      rank 5 holds rows 4..7 and column {1, 5, 9}:
//	block 1: ranks 4 5 6 7      to find rank 10 it asks rank 9, the member
//	block 2: ranks 8 9 10       of block 2 at its own offset
//
// A rank answers its column-mates' lookups from its rows while it is busy
// in its own calls: the transport's responder runs Answer (see the root
// package). Answers are cached.

// DefaultGroupSize is the P' a split of n ranks uses without a GroupSize
// option: a replicated table below 4,096 ranks, above it a distributed
// table shared by max(16, ⌈√n⌉) ranks (memory per rank about 2√n
// addresses).
func DefaultGroupSize(n int) int {
	if n < 4096 {
		return 1
	}
	s := 1
	for s*s < n {
		s++
	}
	return max(16, s)
}

// layout is the block structure of a distributed table of m members in g
// blocks.
type layout struct{ m, g int }

// start returns the first rank of block k.
func (l layout) start(k int) int { return k*(l.m/l.g) + min(k, l.m%l.g) }

// length returns the number of members of block k.
func (l layout) length(k int) int { return l.m/l.g + btoi(k < l.m%l.g) }

// block returns the block of rank j.
func (l layout) block(j int) int {
	q, r := l.m/l.g, l.m%l.g
	if j < r*(q+1) {
		return j / (q + 1)
	}
	return r + (j-r*(q+1))/q
}

// owner returns the rank of block k that the member at offset o asks.
func (l layout) owner(k, o int) int { return l.start(k) + min(o, l.length(k)-1) }

// Asker sends lookup requests of a distributed table to the owners (as
// transport addresses) and waits for the replies; the root package
// implements it over the transport's responder.
type Asker interface {
	Ask(ctx context.Context, to []int32, reqs, replies [][]byte) error
}

// Distributed is Sack's distributed table, one rank's part.
type Distributed struct {
	rank   int
	lay    layout
	p      int     // P', the group size asked for
	rows   []int32 // the own block's members' addresses
	column []int32 // per block, the owner this rank asks
	zero   int32   // the address of rank 0 (the communicator's leader)

	asker Asker

	mu    sync.Mutex
	cache map[int32]int32 // rank → address, bounded by cacheSize
	// rowRank maps the addresses of the own block to their ranks, made by
	// the first reverse lookup.
	rowRank map[int32]int32
	// Lookups counts the ranks this rank has asked owners for.
	lookups int64
}

// cacheSize bounds a distributed table's cache of answers.
const cacheSize = 1024

// Lookup requests: a kind byte, then int32 values; the reply has one int32
// per value (an empty reply means the owner could not answer).
const (
	askAddrs byte = 'a' // the addresses of these ranks (all in the owner's block)
	askRanks byte = 'r' // the ranks of these addresses in the owner's block, or -1
)

// maxAsk is the most values one request carries (transport.MaxRequest
// bytes with the kind byte).
const maxAsk = (transport.MaxRequest - 1) / 4

// newDistributed returns rank's part of the distributed table of m
// members shared by groups of p ranks.
func newDistributed(rank, m, p int, rows, column []int32, zero int32) *Distributed {
	return &Distributed{rank: rank, lay: layout{m: m, g: min(p, m)}, p: p, rows: rows, column: column, zero: zero, cache: map[int32]int32{}}
}

// DistributedFromTable returns rank's part of the distributed table shared
// by groups of p ranks built from the whole table (the gathering
// algorithms hold it anyway; only the part is kept).
func DistributedFromTable(rank int, table []int32, p int) *Distributed {
	m := len(table)
	lay := layout{m: m, g: min(p, m)}
	k := lay.block(rank)
	rows := append([]int32(nil), table[lay.start(k):lay.start(k)+lay.length(k)]...)
	o := rank - lay.start(k)
	col := make([]int32, lay.g)
	for b := range col {
		col[b] = table[lay.owner(b, o)]
	}
	return newDistributed(rank, m, p, rows, col, table[0])
}

// Attach sets how the table sends its lookups.
func (d *Distributed) Attach(a Asker) { d.asker = a }

// Clone returns a part with the same rows and column and an empty cache,
// for a duplicate of the communicator.
func (d *Distributed) Clone() *Distributed {
	return newDistributed(d.rank, d.lay.m, d.p, d.rows, d.column, d.zero)
}

// Size implements Group.
func (d *Distributed) Size() int { return d.lay.m }

// Rank implements Group.
func (d *Distributed) Rank() int { return d.rank }

// Members implements Group: a distributed table is never whole here.
func (d *Distributed) Members() []int32 { return nil }

// Kind implements Group.
func (d *Distributed) Kind() string { return fmt.Sprintf("distributed:%d", d.p) }

// Bytes implements Group: rows, column, the cache and the reverse index.
func (d *Distributed) Bytes() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return 4*(len(d.rows)+len(d.column)) + 8*len(d.cache) + 8*len(d.rowRank)
}

// Lookups returns how many ranks this part has asked owners for.
func (d *Distributed) Lookups() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lookups
}

// own returns the address of rank r if it is in this rank's block.
func (d *Distributed) own(r int) (int32, bool) {
	s := d.lay.start(d.lay.block(d.rank))
	if r >= s && r < s+len(d.rows) {
		return d.rows[r-s], true
	}
	return 0, false
}

// Addr implements Group: the own block's rows, the column's owners, rank 0
// and cached answers.
func (d *Distributed) Addr(r int) (int32, bool) {
	if r < 0 || r >= d.lay.m {
		return 0, false
	}
	if r == 0 {
		return d.zero, true
	}
	if a, ok := d.own(r); ok {
		return a, true
	}
	k := d.lay.block(r)
	if r == d.lay.owner(k, d.rank-d.lay.start(d.lay.block(d.rank))) {
		return d.column[k], true
	}
	d.mu.Lock()
	a, ok := d.cache[int32(r)]
	d.mu.Unlock()
	return a, ok
}

// Resolve implements Group: what is not held locally is asked of the
// owners, all at once (one lookup round).
func (d *Distributed) Resolve(ctx context.Context, ranks []int, out []int32) error {
	var (
		owners []int32
		vals   [][]int32
		asked  [][]int // per owner, indices into ranks
		byOwn  map[int32]int
	)
	for i, r := range ranks {
		if r < 0 || r >= d.lay.m {
			return fmt.Errorf("%w: rank %d out of range [0,%d)", errs.InvalidArgument, r, d.lay.m)
		}
		if a, ok := d.Addr(r); ok {
			out[i] = a
			continue
		}
		own := d.column[d.lay.block(r)]
		if byOwn == nil {
			byOwn = map[int32]int{}
		}
		k, ok := byOwn[own]
		if !ok {
			k = len(owners)
			byOwn[own] = k
			owners = append(owners, own)
			vals = append(vals, nil)
			asked = append(asked, nil)
		}
		vals[k] = append(vals[k], int32(r))
		asked[k] = append(asked[k], i)
	}
	if len(owners) == 0 {
		return nil
	}
	got, err := d.ask(ctx, askAddrs, owners, vals)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for k := range owners {
		for j, i := range asked[k] {
			a := got[k][j]
			out[i] = a
			d.lookups++
			if len(d.cache) >= cacheSize {
				for key := range d.cache { // evict one, whichever
					delete(d.cache, key)
					break
				}
			}
			d.cache[int32(ranks[i])] = a
		}
	}
	return nil
}

// Find returns the ranks of the members at the transport addresses addrs,
// or −1 for an address that is no member: it asks the owner of every block
// at once (one lookup round, P' owners).
func (d *Distributed) Find(ctx context.Context, addrs []int32) ([]int, error) {
	out := make([]int, len(addrs))
	for i := range out {
		out[i] = -1
	}
	mine := d.answerRanks(addrs)
	var owners []int32
	var vals [][]int32
	for b, own := range d.column {
		if b != d.lay.block(d.rank) {
			owners = append(owners, own)
			vals = append(vals, addrs)
		}
	}
	got, err := d.ask(ctx, askRanks, owners, vals)
	if err != nil {
		return nil, err
	}
	for i := range addrs {
		if mine[i] >= 0 {
			out[i] = int(mine[i])
		}
		for k := range owners {
			if r := got[k][i]; r >= 0 {
				out[i] = int(r)
			}
		}
	}
	return out, nil
}

// ask sends owners[k] requests of kind for vals[k] (cut into pieces of at
// most maxAsk values) all at once, and returns the replies' values.
func (d *Distributed) ask(ctx context.Context, kind byte, owners []int32, vals [][]int32) ([][]int32, error) {
	if d.asker == nil {
		return nil, fmt.Errorf("%w: distributed table has no way to ask its owners", errs.Unsupported)
	}
	var to []int32
	var reqs, replies [][]byte
	var of []int // the owner of each request
	for k, vs := range vals {
		for lo := 0; lo < len(vs); lo += maxAsk {
			req := []byte{kind}
			for _, v := range vs[lo:min(lo+maxAsk, len(vs))] {
				req = binary.LittleEndian.AppendUint32(req, uint32(v))
			}
			to = append(to, owners[k])
			reqs = append(reqs, req)
			replies = append(replies, make([]byte, len(req)-1))
			of = append(of, k)
		}
	}
	if err := d.asker.Ask(ctx, to, reqs, replies); err != nil {
		return nil, err
	}
	out := make([][]int32, len(owners))
	for i, rep := range replies {
		if len(rep) != len(reqs[i])-1 {
			return nil, fmt.Errorf("%w: the owner at address %d did not answer a lookup of %d values", errs.PeerFailed, to[i], len(reqs[i])/4)
		}
		for j := 0; j < len(rep); j += 4 {
			out[of[i]] = append(out[of[i]], int32(binary.LittleEndian.Uint32(rep[j:])))
		}
	}
	return out, nil
}

// Answer answers a lookup request (see askAddrs, askRanks). A request it
// cannot answer (a rank outside this rank's block, a malformed request)
// gets an empty reply.
func (d *Distributed) Answer(req []byte) []byte {
	if len(req)%4 != 1 {
		return nil
	}
	kind, body := req[0], req[1:]
	vals := make([]int32, len(body)/4)
	for i := range vals {
		vals[i] = int32(binary.LittleEndian.Uint32(body[4*i:]))
	}
	var res []int32
	switch kind {
	case askAddrs:
		res = make([]int32, len(vals))
		for i, r := range vals {
			a, ok := d.own(int(r))
			if !ok {
				return nil
			}
			res[i] = a
		}
	case askRanks:
		res = d.answerRanks(vals)
	default:
		return nil
	}
	out := make([]byte, 0, 4*len(res))
	for _, v := range res {
		out = binary.LittleEndian.AppendUint32(out, uint32(v))
	}
	return out
}

// answerRanks returns the ranks of the addresses in this rank's block, −1
// for the others.
func (d *Distributed) answerRanks(addrs []int32) []int32 {
	d.mu.Lock()
	if d.rowRank == nil {
		first := int32(d.lay.start(d.lay.block(d.rank)))
		d.rowRank = make(map[int32]int32, len(d.rows))
		for i, a := range d.rows {
			d.rowRank[a] = first + int32(i)
		}
	}
	m := d.rowRank
	d.mu.Unlock()
	out := make([]int32, len(addrs))
	for i, a := range addrs {
		r, ok := m[a]
		if !ok {
			r = -1
		}
		out[i] = r
	}
	return out
}

// ceilLog2 returns ⌈lg n⌉ for n ≥ 1.
func ceilLog2(n int) int {
	if n <= 1 {
		return 0
	}
	return bits.Len(uint(n - 1))
}
