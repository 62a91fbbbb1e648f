package schedule

import (
	"errors"
	"fmt"
	"slices"
)

// ErrBuild is wrapped by every error a Builder records.
var ErrBuild = errors.New("schedule: invalid schedule")

// Builder accumulates the schedule of one rank. It keeps the first error: after
// a failure every further call is a no-op and Schedule returns the error, so an
// algorithm need not check errors after each call.
//
// Zero-length sends, receives and local operations are dropped (both sides of a
// message drop it, since their lengths must match), except after KeepEmpty,
// which barrier algorithms use to synchronise with empty messages.
//
// A Builder either materialises the schedule (NewBuilder, then Schedule) or
// streams each finished round to a consumer (NewStream), so that schedules whose
// total size is quadratic in the rank count never exist in memory at once.
type Builder struct {
	rank, size int
	sendLen    int // -1: unknown
	recvLen    int // -1: unknown
	scratch    int
	keepEmpty  bool
	noOverlap  bool // skip the per-round overlap check

	rounds []Round
	cur    Round
	local  bool // cur holds a local operation
	nround int  // rounds emitted so far
	err    error

	yield   func(Round, int) bool // streaming consumer; nil when materialising
	stopped bool
}

// NewBuilder returns a Builder that materialises the schedule of rank in a
// group of size ranks.
func NewBuilder(rank, size int) *Builder {
	b := &Builder{rank: rank, size: size, sendLen: -1, recvLen: -1}
	if size < 1 || rank < 0 || rank >= size {
		b.Fail(fmt.Errorf("rank %d of size %d", rank, size))
	}
	return b
}

// NewStream returns a Builder that passes each finished round, with the scratch
// length allocated so far, to yield instead of keeping it. The Round is reused
// after yield returns. When yield returns false the builder stops quietly.
func NewStream(rank, size int, yield func(r Round, scratch int) bool) *Builder {
	b := NewBuilder(rank, size)
	b.yield = yield
	return b
}

// Rank returns the rank whose schedule is being built.
func (b *Builder) Rank() int { return b.rank }

// Size returns the number of ranks.
func (b *Builder) Size() int { return b.size }

// Err returns the first error recorded, or nil.
func (b *Builder) Err() error { return b.err }

// Fail records err (wrapped in ErrBuild) unless an error is already recorded.
func (b *Builder) Fail(err error) {
	if b.err == nil && err != nil {
		if !errors.Is(err, ErrBuild) {
			err = fmt.Errorf("%w: rank %d: %w", ErrBuild, b.rank, err)
		}
		b.err = err
	}
}

// Failf records a formatted error.
func (b *Builder) Failf(format string, args ...any) { b.Fail(fmt.Errorf(format, args...)) }

// SetBounds declares the lengths of the send and receive buffers so that
// out-of-range regions are reported when they are added. A negative length
// means unknown.
func (b *Builder) SetBounds(sendLen, recvLen int) { b.sendLen, b.recvLen = sendLen, recvLen }

// KeepEmpty makes the builder keep zero-length sends and receives.
func (b *Builder) KeepEmpty() { b.keepEmpty = true }

// Alloc reserves n scratch elements and returns their region.
func (b *Builder) Alloc(n int) Region {
	if n < 0 {
		b.Failf("negative scratch allocation %d", n)
		n = 0
	}
	r := ScratchBuf(b.scratch, n)
	b.scratch += n
	return r
}

// ScratchLen returns the number of scratch elements allocated so far.
func (b *Builder) ScratchLen() int { return b.scratch }

func (b *Builder) active() bool { return b.err == nil && !b.stopped }

func (b *Builder) check(r Region, write bool) bool {
	if r.Off < 0 || r.Len < 0 {
		b.Failf("bad region %s", r)
		return false
	}
	limit := -1
	switch r.Space {
	case SendSpace:
		if write {
			b.Failf("write to read-only region %s", r)
			return false
		}
		limit = b.sendLen
	case RecvSpace:
		limit = b.recvLen
	case ScratchSpace:
		limit = b.scratch
	default:
		b.Failf("bad space in region %s", r)
		return false
	}
	if limit >= 0 && r.End() > limit && r.Len > 0 {
		b.Failf("region %s out of range (length %d)", r, limit)
		return false
	}
	return true
}

func (b *Builder) comm(k Kind, peer int, r Region) {
	if !b.active() {
		return
	}
	if peer < 0 || peer >= b.size || peer == b.rank {
		b.Failf("%s with peer %d (rank %d of %d)", k, peer, b.rank, b.size)
		return
	}
	if b.local {
		b.Failf("%s after a local operation in the same round; call EndRound first", k)
		return
	}
	if !b.check(r, k.IsRecv()) {
		return
	}
	if r.Len == 0 && !b.keepEmpty {
		return
	}
	op := Op{Kind: k, Peer: peer}
	if k == OpSend {
		op.Src = r
	} else {
		op.Dst = r
	}
	if r.Len == 0 && k == OpRecvReduce {
		op.Kind = OpRecv // nothing to combine: an empty message
	}
	b.cur = append(b.cur, op)
}

// Send adds a send of region r to peer.
func (b *Builder) Send(peer int, r Region) { b.comm(OpSend, peer, r) }

// Recv adds a receive from peer into region r.
func (b *Builder) Recv(peer int, r Region) { b.comm(OpRecv, peer, r) }

// RecvReduce adds a receive from peer combined with the local region src
// into dst: dst = src ⊕ msg when srcLeft, else dst = msg ⊕ src. src may be
// dst itself.
func (b *Builder) RecvReduce(peer int, dst, src Region, srcLeft bool) {
	if !b.active() {
		return
	}
	if dst.Len != src.Len {
		b.Failf("recvreduce into %s with %s: lengths differ", dst, src)
		return
	}
	if src != dst && src.Overlaps(dst) {
		b.Failf("recvreduce into %s from partly overlapping %s", dst, src)
		return
	}
	if !b.check(src, false) {
		return
	}
	n := len(b.cur)
	b.comm(OpRecvReduce, peer, dst)
	if len(b.cur) > n {
		b.cur[n].Src = src
		b.cur[n].SrcLeft = srcLeft
	}
}

// Exchange adds a send of out to peer and a receive of in from peer.
func (b *Builder) Exchange(peer int, out, in Region) {
	b.Send(peer, out)
	b.Recv(peer, in)
}

func (b *Builder) localOp(k Kind, dst, src Region, srcLeft bool) {
	if !b.active() {
		return
	}
	if dst.Len != src.Len {
		b.Failf("%s of %s and %s: lengths differ", k, dst, src)
		return
	}
	if !b.check(dst, true) || !b.check(src, false) {
		return
	}
	if dst.Len == 0 || (k == OpCopy && dst == src) {
		return
	}
	if k == OpReduce && dst.Overlaps(src) {
		b.Failf("reduce of overlapping regions %s and %s", dst, src)
		return
	}
	b.cur = append(b.cur, Op{Kind: k, Dst: dst, Src: src, SrcLeft: srcLeft})
	b.local = true
}

// Reduce adds dst = dst ⊕ src (dst is the left operand).
func (b *Builder) Reduce(dst, src Region) { b.localOp(OpReduce, dst, src, false) }

// ReduceLeft adds dst = src ⊕ dst (src is the left operand).
func (b *Builder) ReduceLeft(dst, src Region) { b.localOp(OpReduce, dst, src, true) }

// ReduceOrdered adds a reduction whose left operand is the one holding
// contributions of lower ranks: dst = src ⊕ dst when srcLower, else
// dst = dst ⊕ src.
func (b *Builder) ReduceOrdered(dst, src Region, srcLower bool) {
	b.localOp(OpReduce, dst, src, srcLower)
}

// Copy adds dst = src.
func (b *Builder) Copy(dst, src Region) { b.localOp(OpCopy, dst, src, false) }

// SkipOverlapCheck turns off the check that a round's receive regions do not
// overlap each other or its send regions. Consumers that only count or time
// messages of verified algorithms (simulators, cost models) use it on large
// schedules; bounds and everything else are still checked.
func (b *Builder) SkipOverlapCheck() { b.noOverlap = true }

// EndRound closes the current round. An empty round is dropped.
func (b *Builder) EndRound() {
	if !b.active() {
		return
	}
	if !b.noOverlap {
		if err := checkRound(b.cur); err != nil {
			b.Fail(err)
			return
		}
	}
	b.local = false
	if len(b.cur) == 0 {
		return
	}
	b.nround++
	if b.yield != nil {
		if !b.yield(b.cur, b.scratch) {
			b.stopped = true
		}
		b.cur = b.cur[:0]
		return
	}
	b.rounds = append(b.rounds, b.cur)
	b.cur = nil
}

// Rounds returns the number of rounds emitted so far.
func (b *Builder) Rounds() int { return b.nround }

// Schedule closes the open round and returns the schedule. When streaming it
// returns a Schedule without rounds.
func (b *Builder) Schedule() (*Schedule, error) {
	b.EndRound()
	if b.err != nil {
		return nil, b.err
	}
	return &Schedule{Rank: b.rank, Size: b.size, Scratch: b.scratch, Rounds: b.rounds}, nil
}

// checkRound reports overlaps that would make a round's result depend on
// timing: a receive overlapping another receive or a send. It runs in
// O(n log n) for n operations.
func checkRound(ops Round) error {
	var recvs []int
	for i, o := range ops {
		if o.Kind.IsRecv() && o.Dst.Len > 0 {
			recvs = append(recvs, i)
		}
	}
	if len(recvs) == 0 {
		return nil
	}
	less := func(a, b Region) bool {
		if a.Space != b.Space {
			return a.Space < b.Space
		}
		return a.Off < b.Off
	}
	slices.SortFunc(recvs, func(a, b int) int {
		switch {
		case less(ops[a].Dst, ops[b].Dst):
			return -1
		case less(ops[b].Dst, ops[a].Dst):
			return 1
		}
		return 0
	})
	for k := 1; k < len(recvs); k++ {
		a, b := ops[recvs[k-1]], ops[recvs[k]]
		if a.Dst.Overlaps(b.Dst) {
			return fmt.Errorf("%w: %s overlaps %s in one round", ErrBuild, a, b)
		}
	}
	for _, o := range ops {
		if !(o.Kind == OpSend || o.Kind == OpRecvReduce) || o.Src.Len == 0 {
			continue
		}
		// first receive that does not end before o.Src starts
		k, _ := slices.BinarySearchFunc(recvs, o.Src, func(i int, t Region) int {
			d := ops[i].Dst
			if d.Space != t.Space {
				return int(d.Space) - int(t.Space)
			}
			if d.End() <= t.Off {
				return -1
			}
			return 1
		})
		for ; k < len(recvs); k++ {
			d := ops[recvs[k]].Dst
			if d.Space != o.Src.Space || d.Off >= o.Src.End() {
				break
			}
			if d.Overlaps(o.Src) && !(o.Kind == OpRecvReduce && o.Src == d && ops[recvs[k]] == o) {
				return fmt.Errorf("%w: %s overlaps %s in one round", ErrBuild, ops[recvs[k]], o)
			}
		}
	}
	return nil
}
