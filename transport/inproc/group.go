package inproc

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// Communicators. The state the world keeps per communicator (call records,
// exchange slots) lives in a commState, indexed by the communicator's own
// ranks. Messages need none: they are addressed to world ranks, which the
// executor translates.

// commState is one communicator's shared state.
type commState struct {
	id   uint64
	size int
	// members[r] is the world rank of rank r; nil for a communicator of the
	// whole world in world order. known is false for a group whose table
	// no rank holds whole (a distributed table): then its members are
	// unknown here and the shared-memory paths are off.
	members []int32
	known   bool

	refs  atomic.Int32 // members that joined and have not left
	calls atomic.Pointer[callTable]
	exch  atomic.Pointer[exchTable]

	byWorldOnce sync.Once
	byWorld     []uint64 // world rank<<32 | rank for every member, sorted; made by rankOf
}

// world returns the world rank of rank r of the communicator.
func (cs *commState) world(r int) int {
	if cs.members == nil {
		return r
	}
	return int(cs.members[r])
}

// rankOf returns the communicator rank of world rank wr, or -1.
func (cs *commState) rankOf(wr int) int {
	if cs.members == nil {
		if cs.known && wr < cs.size {
			return wr
		}
		return -1
	}
	// A sorted index, made on first use, so that an exiting rank finds
	// itself in each open meeting in O(log size).
	cs.byWorldOnce.Do(func() {
		cs.byWorld = make([]uint64, len(cs.members))
		for r, m := range cs.members {
			cs.byWorld[r] = uint64(uint32(m))<<32 | uint64(r)
		}
		slices.Sort(cs.byWorld)
	})
	if wr < 0 || wr > math.MaxUint32 {
		return -1
	}
	i, _ := slices.BinarySearch(cs.byWorld, uint64(wr)<<32)
	if i < len(cs.byWorld) && cs.byWorld[i]>>32 == uint64(wr) {
		return int(uint32(cs.byWorld[i]))
	}
	return -1
}

// callTable returns the communicator's call records, made on first use.
func (cs *commState) callTable() *callTable {
	if t := cs.calls.Load(); t != nil {
		return t
	}
	cs.calls.CompareAndSwap(nil, &callTable{ranks: make([][callRing]sigSlot, cs.size)})
	return cs.calls.Load()
}

// worldState returns the state of communicator comm of the whole world in
// world order (the Endpoint's own methods), made on first use.
func (e *Endpoint) worldState(comm uint64) *commState {
	if cs := e.last.Load(); cs != nil && cs.id == comm {
		return cs
	}
	v, ok := e.w.comms.Load(comm)
	if !ok {
		v, _ = e.w.comms.LoadOrStore(comm, &commState{id: comm, size: e.w.size, known: true})
	}
	cs := v.(*commState)
	e.last.Store(cs)
	return cs
}

// member is one rank's view of a communicator.
type member struct {
	e    *Endpoint
	cs   *commState
	rank int
}

// View is one rank's view of a communicator derived from the world, made
// by Join. It implements transport.Checker and, when the group's members
// are known, transport.Meeter and transport.Exchanger, with the
// communicator's ranks.
type View struct {
	m    member
	left atomic.Bool
}

var (
	_ transport.Grouper   = (*Endpoint)(nil)
	_ transport.Checker   = (*View)(nil)
	_ transport.Meeter    = (*View)(nil)
	_ transport.Exchanger = (*View)(nil)
)

// Join implements transport.Grouper.
func (e *Endpoint) Join(g transport.Group) transport.GroupView {
	fresh := &commState{id: g.Comm, size: g.Size, members: g.Members, known: g.Members != nil}
	v, loaded := e.w.comms.LoadOrStore(g.Comm, fresh)
	cs := v.(*commState)
	if loaded && cs.size != g.Size {
		// Another communicator with this id is alive: a caller's bug.
		// Keep the two apart rather than corrupt either.
		cs = fresh
	}
	cs.refs.Add(1)
	return &View{m: member{e: e, cs: cs, rank: g.Rank}}
}

// Leave implements transport.GroupView: the last member to leave frees the
// communicator's state.
func (v *View) Leave() {
	if v.left.Swap(true) {
		return
	}
	cs := v.m.cs
	if cs.refs.Add(-1) == 0 {
		v.m.e.w.comms.CompareAndDelete(cs.id, cs)
	}
}

// RecordCall implements transport.Checker.
func (v *View) RecordCall(comm, seq, sig uint64) { v.m.recordCall(seq, sig) }

// CheckCall implements transport.Checker.
func (v *View) CheckCall(comm, seq, sig uint64, full bool) error {
	return v.m.checkCall(seq, sig, full)
}

// recordCall notes that this rank starts collective seq with signature sig.
func (m member) recordCall(seq, sig uint64) {
	if m.cs.size == 1 {
		return
	}
	sl := &m.cs.callTable().ranks[m.rank][seq%callRing]
	// seq is cleared first so that a reader never pairs a sequence number
	// with the signature of another call (checkCall re-reads seq).
	sl.seq.Store(0)
	sl.sig.Store(sig)
	sl.seq.Store(seq)
}

// checkCall fails with errs.Mismatch when a rank has recorded collective seq
// with another signature. Unless full, only the two neighbouring ranks are
// looked at (a mismatch anywhere makes some pair of neighbours differ, and
// one of them sees it when it waits). The check is best effort: ranks that
// have not started the collective yet, or are more than a ring ahead, are
// not seen.
func (m member) checkCall(seq, sig uint64, full bool) error {
	t := m.cs.callTable()
	P := len(t.ranks)
	for i := range P {
		r := i
		if !full {
			if i >= 2 {
				break
			}
			r = (m.rank + P - 1 + 2*i) % P // rank-1, rank+1
		}
		sl := &t.ranks[r][seq%callRing]
		if sl.seq.Load() != seq {
			continue
		}
		other := sl.sig.Load()
		if sl.seq.Load() == seq && other != sig {
			return &errs.MismatchError{Seq: seq, Rank: m.rank, Other: r, Sig: sig, OtherSig: other}
		}
	}
	return nil
}

// exited reports whether rank r of the communicator has exited.
func (m member) exited(r int) bool { return m.e.w.exited[m.cs.world(r)].Load() }
