package split

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/scoll/scoll/internal/errs"
)

// None is the address of a chain's missing neighbour: the left one of
// rank 0 and the right one of the last rank.
const None int32 = -1

// Links is one rank's place in a chain (Moody et al., sec. 2): the chain's
// size, the rank's rank in it and the transport addresses of itself, its
// left and right neighbours (None at the ends) and of rank 0. Messages
// along a chain are addressed directly (Send.Direct), so a chain needs no
// table of its members.
type Links struct {
	Rank, Size               int
	Self, Left, Right, First int32
}

// Chain is the group representation of a chain: O(1) memory per rank. It
// knows the addresses of ranks 0, its own and its neighbours'; Resolve
// finds any other by walking the chain, asking one member after another
// for its neighbours (one request per hop, through the Asker; answers are
// cached). Collectives run on a chain with the chain algorithms (double
// scans with forwarded addresses, ⌈lg n⌉ rounds) or resolve the whole
// membership once.
type Chain struct {
	Links
	asker Asker

	mu    sync.Mutex
	cache map[int32]int32 // rank → address learned by walks
	hops  int64
	// table, once Learn has run, holds every member's address.
	table []int32
	// walked, once Walk has run on this rank alone, too; unlike table it
	// changes no collective's algorithm (the others may not have it).
	walked []int32
}

// Learn makes the chain hold every member's address (members in rank
// order, as a collective over the chain gathered them): lookups are local
// from then on.
func (ch *Chain) Learn(members []int32) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ch.table, ch.cache = members, nil
}

// Learnt reports whether Learn has run.
func (ch *Chain) Learnt() bool {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return ch.table != nil
}

// NewChain returns the chain group of the given links.
func NewChain(l Links) *Chain { return &Chain{Links: l} }

// Attach sets how Resolve asks other members for their neighbours.
func (ch *Chain) Attach(a Asker) { ch.asker = a }

// Size implements Group.
func (ch *Chain) Size() int { return ch.Links.Size }

// Rank implements Group.
func (ch *Chain) Rank() int { return ch.Links.Rank }

// Members implements Group: nil unless Learn has run.
func (ch *Chain) Members() []int32 {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return ch.table
}

// Kind implements Group.
func (ch *Chain) Kind() string { return "chain" }

// Bytes implements Group: the links and what walks have cached.
func (ch *Chain) Bytes() int {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return 32 + 8*len(ch.cache) + 4*len(ch.table) + 4*len(ch.walked)
}

// Hops returns the number of lookups walks have sent so far.
func (ch *Chain) Hops() int64 {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return ch.hops
}

// Addr implements Group.
func (ch *Chain) Addr(r int) (int32, bool) {
	switch r {
	case ch.Links.Rank:
		return ch.Self, true
	case ch.Links.Rank - 1:
		return ch.Left, ch.Left != None
	case ch.Links.Rank + 1:
		return ch.Right, ch.Right != None
	case 0:
		return ch.First, true
	}
	if r < 0 || r >= ch.Links.Size {
		return 0, false
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.table != nil {
		return ch.table[r], true
	}
	if ch.walked != nil {
		return ch.walked[r], true
	}
	a, ok := ch.cache[int32(r)]
	return a, ok
}

// Resolve implements Group: ranks it does not know are found by walks
// from the nearest known rank, one lookup request per hop.
func (ch *Chain) Resolve(ctx context.Context, ranks []int, out []int32) error {
	for i, r := range ranks {
		if r < 0 || r >= ch.Links.Size {
			return fmt.Errorf("%w: rank %d out of range [0,%d)", errs.InvalidArgument, r, ch.Links.Size)
		}
		a, ok := ch.Addr(r)
		if !ok {
			var err error
			if a, err = ch.walk(ctx, r); err != nil {
				return err
			}
		}
		out[i] = a
	}
	return nil
}

// Chain lookups: a request is the kind byte 'c'; the answer is the
// member's left and right neighbours.
const chainAsk = 'c'

// Answer answers a chain lookup with this member's neighbours.
func (ch *Chain) Answer(req []byte) []byte {
	if len(req) != 1 || req[0] != chainAsk {
		return nil
	}
	b := binary.LittleEndian.AppendUint32(nil, uint32(ch.Left))
	return binary.LittleEndian.AppendUint32(b, uint32(ch.Right))
}

// walk finds the address of rank r from the nearest rank whose address
// is known, asking each member on the way for its neighbours.
func (ch *Chain) walk(ctx context.Context, r int) (int32, error) {
	if ch.asker == nil {
		return 0, fmt.Errorf("%w: chain: rank %d is not a neighbour and nothing answers lookups", errs.Unsupported, r)
	}
	ch.mu.Lock()
	from, at := ch.Links.Rank, ch.Self
	if abs(r) < abs(r-from) {
		from, at = 0, ch.First
	}
	for k, a := range ch.cache {
		if abs(r-int(k)) < abs(r-from) {
			from, at = int(k), a
		}
	}
	ch.mu.Unlock()
	for from != r {
		left, right, err := ch.neighbours(ctx, at, from)
		if err != nil {
			return 0, err
		}
		if r < from {
			from, at = from-1, left
		} else {
			from, at = from+1, right
		}
		if at == None {
			return 0, fmt.Errorf("%w: chain ends before rank %d", errs.Mismatch, r)
		}
		ch.mu.Lock()
		if ch.cache == nil {
			ch.cache = map[int32]int32{}
		}
		if len(ch.cache) < cacheSize {
			ch.cache[int32(from)] = at
		}
		ch.mu.Unlock()
	}
	return at, nil
}

// Walk learns every member's address without the others' help (not
// collectively): it asks each member from rank 0 on for its right
// neighbour, n − 1 requests in sequence, and keeps the addresses for
// later lookups (Addr) but, unlike Learn, leaves Learnt false: the other
// members have not learnt them, and collectives must pick the same
// algorithm everywhere. It is how a local call (TranslateRanks) finds a
// chain's members.
func (ch *Chain) Walk(ctx context.Context) ([]int32, error) {
	ch.mu.Lock()
	m := ch.table
	if m == nil {
		m = ch.walked
	}
	ch.mu.Unlock()
	if m != nil {
		return m, nil
	}
	n := ch.Links.Size
	m = make([]int32, n)
	m[0] = ch.First
	for r := 1; r < n; r++ {
		if a, ok := ch.Addr(r); ok {
			m[r] = a
			continue
		}
		if ch.asker == nil {
			return nil, fmt.Errorf("%w: chain: rank %d is not a neighbour and nothing answers lookups", errs.Unsupported, r)
		}
		_, right, err := ch.neighbours(ctx, m[r-1], r-1)
		if err != nil {
			return nil, err
		}
		if m[r] = right; right == None {
			return nil, fmt.Errorf("%w: chain ends before rank %d", errs.Mismatch, r)
		}
	}
	ch.mu.Lock()
	ch.walked = m
	ch.mu.Unlock()
	return m, nil
}

// neighbours asks the member of rank r at address at for its neighbours
// (one lookup request, counted in Hops).
func (ch *Chain) neighbours(ctx context.Context, at int32, r int) (left, right int32, err error) {
	rep := [][]byte{make([]byte, 8)}
	if err := ch.asker.Ask(ctx, []int32{at}, [][]byte{{chainAsk}}, rep); err != nil {
		return 0, 0, err
	}
	if len(rep[0]) != 8 {
		return 0, 0, fmt.Errorf("%w: chain lookup at rank %d unanswered (closed?)", errs.PeerFailed, r)
	}
	ch.mu.Lock()
	ch.hops++
	ch.mu.Unlock()
	return int32(binary.LittleEndian.Uint32(rep[0])), int32(binary.LittleEndian.Uint32(rep[0][4:])), nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// partners holds a rank's partners at distances 1, 2, 4, … along a chain
// (None past the ends), learnt by forwarding addresses (Moody's Fig. 1).
type partners struct {
	left, right []int32
}

// scanMsg is a doubling round's message: the sender's partner on the far
// side (so the receiver learns its partner twice as far) and a value.
func scanMsg(addr int32, has bool, v []byte) []byte {
	b := make([]byte, 5+len(v))
	binary.LittleEndian.PutUint32(b, uint32(addr))
	if has {
		b[4] = 1
		copy(b[5:], v)
	}
	return b
}

// DoubleScan runs a left-to-right and a right-to-left exclusive scan at
// once on the chain l (⌈lg n⌉ rounds). Each rank contributes fromL (to the
// left-to-right scan) and fromR (to the right-to-left one), values of
// width bytes; opL and opR combine two values, the first to the left of
// the second, into a new slice. It returns the combination of the values
// of every rank to the left (nil for rank 0) and to the right (nil for
// the last rank), and the partners learnt on the way.
func DoubleScan(ctx context.Context, c Conn, st *Stats, l Links, tag, width int, fromL, fromR []byte, opL, opR func(a, b []byte) []byte) (left, right []byte, p partners, err error) {
	accL, accR := fromL, fromR
	lp, rp := l.Left, l.Right
	for k, d := 0, 1; d < l.Size; k, d = k+1, d*2 {
		p.left, p.right = append(p.left, lp), append(p.right, rp)
		var sends []Send
		var recvs []Recv
		if rp != None {
			sends = append(sends, Send{To: int(rp), Tag: tag + 2*k, Data: scanMsg(lp, true, accL), Direct: true})
			recvs = append(recvs, Recv{From: int(rp), Tag: tag + 2*k + 1, Buf: make([]byte, 5+width), Direct: true})
		}
		if lp != None {
			sends = append(sends, Send{To: int(lp), Tag: tag + 2*k + 1, Data: scanMsg(rp, true, accR), Direct: true})
			recvs = append(recvs, Recv{From: int(lp), Tag: tag + 2*k, Buf: make([]byte, 5+width), Direct: true})
		}
		if err := round(ctx, c, st, sends, recvs); err != nil {
			return nil, nil, p, err
		}
		nl, nr := None, None
		for _, r := range recvs {
			if err := expect(&r, 5+width); err != nil {
				return nil, nil, p, err
			}
			far, v := int32(binary.LittleEndian.Uint32(r.Buf)), r.Buf[5:]
			if int32(r.From) == lp {
				// The left partner's block, to the left of everything so far.
				nl = far
				accL = opL(v, accL)
				left = joinScan(opL, v, left)
			} else {
				nr = far
				accR = opR(accR, v)
				right = joinScan(opR, right, v)
			}
		}
		lp, rp = nl, nr
	}
	return left, right, p, nil
}

// joinScan returns op(a, b), or the other one when a or b is nil (a scan
// over no ranks).
func joinScan(op func(a, b []byte) []byte, a, b []byte) []byte {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return op(a, b)
}

// chainAllreduce combines every rank's value v (of one width) along the
// chain l with op, a to the left of b; every rank gets the result (one
// DoubleScan, ⌈lg n⌉ rounds).
func chainAllreduce(ctx context.Context, c Conn, st *Stats, l Links, tag int, v []byte, op func(a, b []byte) []byte) ([]byte, error) {
	exL, exR, _, err := DoubleScan(ctx, c, st, l, tag, len(v), v, v, op, op)
	if err != nil {
		return nil, err
	}
	return joinScan(op, joinScan(op, exL, v), exR), nil
}

// scanTags is how many tags a DoubleScan of a chain uses: two per round
// (64 rounds reach any chain).
const scanTags = 128

// LinksOf returns this rank's links in the parent seen as a chain, given
// its own address: one round with the parent's neighbours, and rank 0's
// address passed along the chain (⌈lg n⌉ rounds). Callers that know the
// parent's addresses build Links themselves.
func LinksOf(ctx context.Context, c Conn, self int32) (Links, error) {
	var st Stats
	r, n := c.Rank(), c.Size()
	l := Links{Rank: r, Size: n, Self: self, Left: None, Right: None}
	me := binary.LittleEndian.AppendUint32(nil, uint32(self))
	var sends []Send
	var recvs []Recv
	if r > 0 {
		sends = append(sends, Send{To: r - 1, Tag: tagChainTable, Data: me})
		recvs = append(recvs, Recv{From: r - 1, Tag: tagChainTable + 1, Buf: make([]byte, 4)})
	}
	if r+1 < n {
		sends = append(sends, Send{To: r + 1, Tag: tagChainTable + 1, Data: me})
		recvs = append(recvs, Recv{From: r + 1, Tag: tagChainTable, Buf: make([]byte, 4)})
	}
	if err := round(ctx, c, &st, sends, recvs); err != nil {
		return l, err
	}
	for _, x := range recvs {
		if err := expect(&x, 4); err != nil {
			return l, err
		}
		if x.From < r {
			l.Left = int32(binary.LittleEndian.Uint32(x.Buf))
		} else {
			l.Right = int32(binary.LittleEndian.Uint32(x.Buf))
		}
	}
	first := func(a, _ []byte) []byte { return a }
	exL, _, _, err := DoubleScan(ctx, c, &st, l, tagChainTable+2, 4, me, me, first, first)
	if err != nil {
		return l, err
	}
	l.First = self
	if exL != nil {
		l.First = int32(binary.LittleEndian.Uint32(exL))
	}
	return l, nil
}

// ChainAllgather gathers every rank's value (of one width) along the chain
// l, in chain order (⌈lg n⌉ rounds, n−1 values received).
func ChainAllgather(ctx context.Context, c Conn, l Links, mine []byte) ([]byte, error) {
	var st Stats
	return chainAllgather(ctx, c, &st, l, tagChainTable, mine)
}

// ChainAllreduce combines every rank's value v along the chain l with op
// (a to the left of b), in chain order; every rank gets the result
// (one double scan: ⌈lg n⌉ rounds).
func ChainAllreduce(ctx context.Context, c Conn, l Links, v []byte, op func(a, b []byte) []byte) ([]byte, error) {
	var st Stats
	return chainAllreduce(ctx, c, &st, l, tagChainTable, v, op)
}
