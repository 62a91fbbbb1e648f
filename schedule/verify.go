package schedule

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// ErrVerify is wrapped by every error Verify and Validate report about a
// schedule (as opposed to an inconsistent Spec).
var ErrVerify = errors.New("schedule: verification failed")

// Generator emits the schedule of the builder's rank (b.Rank()) into b.
type Generator func(b *Builder)

// Options tune Verify.
type Options struct {
	// Ordered requires every reduction to combine contributions in rank order,
	// as non-commutative operators need.
	Ordered bool
	// MatchOnly checks only that messages match (what Validate does) and
	// skips the data.
	MatchOnly bool
	// Fingerprint proves a commutative reduction probabilistically: instead
	// of the exact set of ranks whose contributions an element holds, the
	// verifier tracks a fingerprint of that multiset: its size and two sums
	// Σ w1_r, Σ w2_r mod p = 2^61 − 1 of per-rank weights drawn from a PCG
	// generator seeded with Seed. Combining costs O(1) however fragmented
	// the sets are. Everything else (matching, deadlock freedom, bounds,
	// which element index each value belongs to, where results land) is
	// checked exactly as without it.
	//
	// Guarantee: a combination of more than Size contributions is rejected
	// at once, so a multiplicity never reaches p. A result whose multiset
	// differs from the required one (a contribution missing or duplicated)
	// but has its size then matches the required fingerprint only if both
	// sums of the nonzero differences vanish mod p, which for uniform
	// weights has probability 1/p² < 2^-121. Treating the seeded weights as
	// uniform, Verify accepts a wrong schedule chosen independently of Seed
	// with probability below Size·2^-121 ≤ 2^-90. A correct schedule is
	// always accepted. Unlike exact tracking, a duplicate in a partial
	// result that never reaches a result buffer goes unreported.
	//
	// Fingerprint is ignored for collectives that do not reduce and when
	// Ordered is set: a sum cannot tell the order of combination, so
	// non-commutative reductions are always tracked exactly.
	Fingerprint bool
	// Seed draws the weights of Fingerprint; verifications with different
	// seeds fail independently.
	Seed uint64
}

// Validate checks that the schedules of all ranks fit together: every send
// meets a receive of equal length on its peer, in posting order, and the
// ranks run to completion without deadlock under rendezvous semantics.
func Validate(spec *Spec, gen Generator) error {
	return Verify(spec, gen, Options{MatchOnly: true})
}

// FromSchedules returns a Generator that replays materialised schedules, one
// per rank.
func FromSchedules(ss []*Schedule) Generator {
	return func(b *Builder) {
		if b.Rank() >= len(ss) || ss[b.Rank()] == nil {
			b.Failf("no schedule for rank %d", b.Rank())
			return
		}
		s := ss[b.Rank()]
		if s.Rank != b.Rank() {
			b.Failf("schedule of rank %d given for rank %d", s.Rank, b.Rank())
			return
		}
		b.Alloc(s.Scratch)
		b.keepEmpty = true // the schedule already dropped what it meant to
		for _, r := range s.Rounds {
			b.cur = append(b.cur[:0], r...)
			b.local = false
			b.EndRound()
		}
	}
}

// Verify executes the schedules of all ranks symbolically and proves that they
// compute spec's collective: each element of each result holds the right
// input (data movement) or every contribution exactly once (reductions; in
// rank order with Options.Ordered). Barrier schedules are checked to make
// every rank's exit depend on every rank's entry.
//
// Schedules are generated per rank and consumed round by round, so memory
// stays proportional to the ranks' current rounds and buffer states, not to the
// total schedule size. In reductions each run of elements names its set of
// contributions in a table shared by all ranks: exact sets are hash-consed
// (ranks holding the same partial result share one copy, and repeated
// combinations of long sets are memoised), or fingerprinted with
// Options.Fingerprint.
func Verify(spec *Spec, gen Generator, opt Options) error {
	if err := spec.Check(); err != nil {
		return err
	}
	if spec.Coll == Alltoallv && spec.InPlace {
		return fmt.Errorf("%w: in-place alltoallv is not supported", ErrSpec)
	}
	v := &verifier{spec: spec, opt: opt, p: spec.Size}
	v.mode = modeGather
	if spec.Coll.Reduces() && !opt.MatchOnly {
		if spec.Size > math.MaxInt32 {
			return fmt.Errorf("%w: %s: %d ranks: the verifier numbers ranks in 32 bits", ErrVerify, spec.Coll, spec.Size)
		}
		v.mode = modeReduce
		if opt.Fingerprint && !opt.Ordered {
			v.sets = newFingerprints(v.p, opt.Seed)
		} else {
			v.sets = newExactSets(opt.Ordered)
		}
	} else if spec.Coll == Barrier {
		v.mode = modeBarrier
	}
	if opt.MatchOnly {
		v.mode = modeMatch
	}
	v.ranks = make([]*vrank, v.p)
	for r := range v.p {
		vr := &vrank{rank: r}
		v.ranks[r] = vr
		sendLen, recvLen := spec.BufLens(r)
		vr.sendLen, vr.recvLen = sendLen, recvLen
		if v.mode != modeMatch {
			vr.bufs[SendSpace].grow(sendLen)
			vr.bufs[RecvSpace].grow(recvLen)
			if err := v.initial(vr); err != nil {
				return fmt.Errorf("%w: %s: %w", ErrVerify, spec.Coll, err)
			}
		}
		if v.mode == modeBarrier {
			vr.know = []ival{{r, r + 1}}
		}
	}
	v.e = NewReplay(v.p, gen, v, ReplayOptions{Setup: func(b *Builder) {
		b.SetBounds(v.ranks[b.Rank()].sendLen, v.ranks[b.Rank()].recvLen)
		if spec.Coll == Barrier {
			b.KeepEmpty()
		}
	}})
	defer v.e.Close()
	if err := v.e.Run(); err != nil {
		if !errors.Is(err, ErrVerify) {
			err = fmt.Errorf("%w: %s: %w", ErrVerify, spec.Coll, err)
		}
		return err
	}
	var stuck []string
	for _, vr := range v.ranks {
		if !v.e.Done(vr.rank) {
			if len(stuck) < 8 {
				stuck = append(stuck, v.describeWait(vr))
			} else if len(stuck) == 8 {
				stuck = append(stuck, "...")
			}
		}
	}
	if len(stuck) > 0 {
		return fmt.Errorf("%w: %s: deadlock: %s", ErrVerify, spec.Coll, strings.Join(stuck, "; "))
	}
	if v.mode == modeMatch {
		return nil
	}
	for _, vr := range v.ranks {
		if err := v.final(vr); err != nil {
			return fmt.Errorf("%w: %s: rank %d: %w", ErrVerify, spec.Coll, vr.rank, err)
		}
	}
	return nil
}

type vmode uint8

const (
	modeMatch vmode = iota
	modeGather
	modeReduce
	modeBarrier
)

type verifier struct {
	spec  *Spec
	opt   Options
	mode  vmode
	p     int
	ranks []*vrank
	e     *Replay
	sets  contribTable // modeReduce only
}

type vrank struct {
	rank             int
	sendLen, recvLen int
	round            Round
	ridx             int
	msgs             []*vmsg // the current round's sends, by operation index
	bufs             [numSpaces]symbuf
	know             []ival
	newKnow          []ival
}

type vmsg struct {
	from, to int
	n        int
	data     []seg
	know     []ival
	ridx     int
}

func (v *verifier) fail(vr *vrank, format string, args ...any) error {
	return fmt.Errorf("%w: %s: rank %d round %d: %s", ErrVerify, v.spec.Coll, vr.rank, vr.ridx, fmt.Sprintf(format, args...))
}

func (v *verifier) bounds(vr *vrank, r Region, scratch int) error {
	limit := scratch
	switch r.Space {
	case SendSpace:
		limit = vr.sendLen
	case RecvSpace:
		limit = vr.recvLen
	case ScratchSpace:
	default:
		return v.fail(vr, "region %s in an unknown space", r)
	}
	if r.Off < 0 || r.Len < 0 || (r.Len > 0 && r.End() > limit) {
		return v.fail(vr, "region %s out of range (length %d)", r, limit)
	}
	return nil
}

// Start checks rank r's round and snapshots its sends before any receive
// of the round can land.
func (v *verifier) Start(r, index int, rd Round, scratch int) error {
	vr := v.ranks[r]
	vr.round, vr.ridx = rd, index
	if v.mode != modeMatch {
		vr.bufs[ScratchSpace].grow(scratch)
	}
	if err := checkRound(rd); err != nil {
		return v.fail(vr, "%v", err)
	}
	vr.msgs = vr.msgs[:0]
	for i, o := range rd {
		if err := v.checkOp(vr, o, scratch); err != nil {
			return err
		}
		if o.Kind.IsComm() && (o.Peer < 0 || o.Peer >= v.p || o.Peer == vr.rank) {
			return v.fail(vr, "bad peer in %s", o)
		}
		if o.Kind == OpSend {
			m := &vmsg{from: vr.rank, to: o.Peer, n: o.Src.Len, ridx: vr.ridx}
			if v.mode != modeMatch {
				m.data = vr.bufs[o.Src.Space].read(o.Src.Off, o.Src.Len)
			}
			m.know = vr.know
			for len(vr.msgs) <= i {
				vr.msgs = append(vr.msgs, nil)
			}
			vr.msgs[i] = m
		}
	}
	return nil
}

// checkOp checks what the Builder guarantees, for schedules that did not come
// from one (replayed or decoded).
func (v *verifier) checkOp(vr *vrank, o Op, scratch int) error {
	var regions []Region
	write := false
	switch o.Kind {
	case OpSend:
		regions = []Region{o.Src}
	case OpRecv:
		regions, write = []Region{o.Dst}, true
	case OpReduce, OpCopy, OpRecvReduce:
		regions, write = []Region{o.Dst, o.Src}, true
		if o.Dst.Len != o.Src.Len {
			return v.fail(vr, "%s: lengths differ", o)
		}
	default:
		return v.fail(vr, "unknown operation kind %d", o.Kind)
	}
	for _, r := range regions {
		if err := v.bounds(vr, r, scratch); err != nil {
			return err
		}
	}
	if write && o.Dst.Space == SendSpace && o.Dst.Len > 0 {
		return v.fail(vr, "%s writes the read-only send buffer", o)
	}
	return nil
}

// Match delivers a send's snapshot to the receive it meets.
func (v *verifier) Match(send, recv Ref) error {
	m := v.ranks[send.Rank].msgs[send.Op]
	to := v.ranks[recv.Rank]
	op := to.round[recv.Op]
	dst := op.Dst
	if m.n != dst.Len {
		return v.fail(to, "receive of %d elements from rank %d matches a send of %d elements (sender round %d)",
			dst.Len, m.from, m.n, m.ridx)
	}
	if v.mode != modeMatch {
		data := m.data
		if op.Kind == OpRecvReduce {
			if v.mode != modeReduce {
				return v.fail(to, "%s in a collective that does not reduce", op)
			}
			local := to.bufs[op.Src.Space].read(op.Src.Off, op.Src.Len)
			var err error
			// reduceSegs(d, s, srcLeft): d ⊕ s, or s ⊕ d when srcLeft.
			data, err = reduceSegs(m.data, local, op.SrcLeft, v.sets)
			if err != nil {
				return v.fail(to, "%s: %v", op, err)
			}
		}
		to.bufs[dst.Space].write(dst.Off, data)
	}
	if v.mode == modeBarrier {
		to.newKnow = unionSorted(to.newKnow, m.know)
	}
	v.e.Complete(m.from)
	v.e.Complete(to.rank)
	return nil
}

// Finish applies the round's local operations after its messages
// completed.
func (v *verifier) Finish(r int) error {
	vr := v.ranks[r]
	if v.mode == modeBarrier && vr.newKnow != nil {
		vr.know = unionSorted(vr.know, vr.newKnow)
		vr.newKnow = nil
	}
	if v.mode == modeMatch {
		return nil
	}
	for _, o := range vr.round {
		switch o.Kind {
		case OpCopy:
			data := vr.bufs[o.Src.Space].read(o.Src.Off, o.Src.Len)
			vr.bufs[o.Dst.Space].write(o.Dst.Off, data)
		case OpReduce:
			if v.mode != modeReduce {
				return v.fail(vr, "%s in a collective that does not reduce", o)
			}
			d := vr.bufs[o.Dst.Space].read(o.Dst.Off, o.Dst.Len)
			s := vr.bufs[o.Src.Space].read(o.Src.Off, o.Src.Len)
			out, err := reduceSegs(d, s, o.SrcLeft, v.sets)
			if err != nil {
				return v.fail(vr, "%s: %v", o, err)
			}
			vr.bufs[o.Dst.Space].write(o.Dst.Off, out)
		}
	}
	return nil
}

// unionSorted returns the union of a and b, sorted and merged, in a new
// slice.
func unionSorted(a, b []ival) []ival {
	return mergeSorted(append(slices.Clone(a), b...))
}

func (v *verifier) describeWait(vr *vrank) string {
	if _, _, posted := v.e.Round(vr.rank); !posted {
		return fmt.Sprintf("rank %d not started", vr.rank)
	}
	var ops []string
	for _, o := range vr.round {
		if o.Kind.IsComm() {
			ops = append(ops, o.String())
		}
	}
	return fmt.Sprintf("rank %d waits in round %d on {%s}", vr.rank, vr.ridx, strings.Join(ops, ", "))
}

// input places a rank's input at off in the given space.
func (vr *vrank) input(s Space, off int, sg seg) {
	vr.bufs[s].write(off, []seg{sg})
}

func (v *verifier) initial(vr *vrank) error {
	s, r, p, n := v.spec, vr.rank, v.p, v.spec.Count
	in := SendSpace
	if s.InPlaceAt(r) {
		in = RecvSpace
	}
	if v.mode == modeReduce {
		sendLen, recvLen := s.BufLens(r)
		l := sendLen
		if in == RecvSpace {
			l = recvLen
		}
		own, err := v.sets.of([]ival{{r, r + 1}})
		if err != nil {
			return err
		}
		vr.input(in, 0, seg{n: l, def: true, start: 0, set: own})
		return nil
	}
	switch s.Coll {
	case Bcast:
		if r == s.Root {
			vr.input(RecvSpace, 0, seg{n: n, def: true})
		}
	case Gather, Allgather:
		off := 0
		if in == RecvSpace {
			off = r * n
		}
		vr.input(in, off, seg{n: n, def: true, start: r * n})
	case Gatherv, Allgatherv:
		off := 0
		if in == RecvSpace {
			off = s.VDispls()[r]
		}
		vr.input(in, off, seg{n: s.Counts[r], def: true, start: Packed(s.Counts)[r]})
	case Scatter:
		if r == s.Root {
			vr.input(SendSpace, 0, seg{n: p * n, def: true})
		}
	case Scatterv:
		if r == s.Root {
			d, pk := s.VDispls(), Packed(s.Counts)
			for q := range p {
				vr.input(SendSpace, d[q], seg{n: s.Counts[q], def: true, start: pk[q]})
			}
		}
	case Alltoall:
		vr.input(in, 0, seg{n: p * n, def: true, start: r * p * n})
	case Alltoallv:
		vr.input(SendSpace, 0, seg{n: vr.sendLen, def: true, start: v.alltoallvBase(r)})
	}
	return nil
}

func (v *verifier) alltoallvBase(r int) int {
	base := 0
	for q := range r {
		base += Extent(v.spec.AlltoallvSend(q))
	}
	return base
}

// expected returns the required content of rank r's receive buffer as
// placed segs; elements not listed are not checked.
func (v *verifier) expected(r int) []placed {
	s, p, n := v.spec, v.p, v.spec.Count
	all := []ival{{0, p}}
	switch s.Coll {
	case Bcast:
		return []placed{{off: 0, seg: seg{n: n, def: true}}}
	case Reduce:
		if r != s.Root {
			return nil
		}
		return []placed{{0, seg{n: n, def: true}, all}}
	case Allreduce:
		return []placed{{0, seg{n: n, def: true}, all}}
	case Scan:
		return []placed{{0, seg{n: n, def: true}, []ival{{0, r + 1}}}}
	case Exscan:
		if r == 0 {
			return nil
		}
		return []placed{{0, seg{n: n, def: true}, []ival{{0, r}}}}
	case ReduceScatterBlock:
		return []placed{{0, seg{n: n, def: true, start: r * n}, all}}
	case ReduceScatter:
		return []placed{{0, seg{n: s.Counts[r], def: true, start: Packed(s.Counts)[r]}, all}}
	case Gather, Allgather:
		if s.Coll == Gather && r != s.Root {
			return nil
		}
		return []placed{{off: 0, seg: seg{n: p * n, def: true}}}
	case Gatherv, Allgatherv:
		if s.Coll == Gatherv && r != s.Root {
			return nil
		}
		d, pk := s.VDispls(), Packed(s.Counts)
		out := make([]placed, p)
		for q := range p {
			out[q] = placed{off: d[q], seg: seg{n: s.Counts[q], def: true, start: pk[q]}}
		}
		return out
	case Scatter:
		if s.InPlaceAt(r) {
			return nil
		}
		return []placed{{off: 0, seg: seg{n: n, def: true, start: r * n}}}
	case Scatterv:
		if s.InPlaceAt(r) {
			return nil
		}
		return []placed{{off: 0, seg: seg{n: s.Counts[r], def: true, start: Packed(s.Counts)[r]}}}
	case Alltoall:
		out := make([]placed, p)
		for q := range p {
			out[q] = placed{off: q * n, seg: seg{n: n, def: true, start: q*p*n + r*n}}
		}
		return out
	case Alltoallv:
		rc, rd := s.AlltoallvRecv(r)
		out := make([]placed, p)
		for q := range p {
			_, sd := s.AlltoallvSend(q)
			out[q] = placed{off: rd[q], seg: seg{n: rc[q], def: true, start: v.alltoallvBase(q) + sd[r]}}
		}
		return out
	}
	return nil
}

// placed is the required content of a run of the receive buffer: seg at
// off, holding in reductions the contributions of the ranks of ranks.
type placed struct {
	off   int
	seg   seg
	ranks []ival
}

func (v *verifier) final(vr *vrank) error {
	if v.mode == modeBarrier {
		if len(vr.know) != 1 || vr.know[0] != (ival{0, v.p}) {
			return fmt.Errorf("leaves the barrier knowing only of ranks %v", vr.know)
		}
		return nil
	}
	for _, pl := range v.expected(vr.rank) {
		if pl.seg.n == 0 {
			continue
		}
		if pl.ranks != nil {
			id, err := v.sets.of(pl.ranks)
			if err != nil {
				return err
			}
			pl.seg.set = id
		}
		got := vr.bufs[RecvSpace].read(pl.off, pl.seg.n)
		if len(got) == 1 && got[0].def && got[0].start == pl.seg.start && got[0].set == pl.seg.set {
			continue
		}
		return fmt.Errorf("recv[%d:%d] holds %s, want %s", pl.off, pl.off+pl.seg.n,
			segsString(got, v.sets), segsString([]seg{pl.seg}, v.sets))
	}
	return nil
}
