package inproc

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// Meetings: a shared-memory rendezvous for small collectives.
//
// Ranks of one process can see each other's buffers. When they outnumber
// the CPUs, a rank waiting for a message parks its goroutine, and the cost
// of parking and waking per message dominates small collectives whatever
// the schedule. A meeting needs one wake-up per rank instead: every rank
// deposits a value (its buffers), the last to arrive runs the collective for
// all of them, and every rank returns its result.

// meeting is one collective call of one communicator.
//
// Invariant: state moves from open to running or failed exactly once.
type meeting struct {
	cs      *commState
	vals    []any
	sigs    []uint64
	joined  []atomic.Bool // set after vals and sigs
	arrived atomic.Int32
	state   atomic.Int32
	done    chan struct{}
	err     error // set before done is closed
}

const (
	meetOpen int32 = iota
	meetRunning
	meetFailed
)

type meetKey struct{ comm, seq uint64 }

// Meet implements transport.Meeter.
func (e *Endpoint) Meet(ctx context.Context, key transport.Key, sig uint64, val any, fn func(vals []any) error) error {
	return e.worldMember(key.Comm).meet(ctx, key, sig, val, fn)
}

// Meet implements transport.Meeter for a communicator whose members are
// known (errs.Unsupported otherwise).
func (v *View) Meet(ctx context.Context, key transport.Key, sig uint64, val any, fn func(vals []any) error) error {
	if !v.m.cs.known {
		return fmt.Errorf("%w: meetings on a communicator whose members are not known here", errs.Unsupported)
	}
	return v.m.meet(ctx, key, sig, val, fn)
}

func (mb member) meet(ctx context.Context, key transport.Key, sig uint64, val any, fn func(vals []any) error) error {
	e, cs := mb.e, mb.cs
	w := e.w
	if w.exited[e.rank].Load() {
		return e.gone(e.rank)
	}
	k := meetKey{key.Comm, key.Seq}
	v, ok := w.meets.Load(k)
	created := false
	if !ok {
		var loaded bool
		v, loaded = w.meets.LoadOrStore(k, &meeting{cs: cs, vals: make([]any, cs.size), sigs: make([]uint64, cs.size),
			joined: make([]atomic.Bool, cs.size), done: make(chan struct{})})
		if created = !loaded; created {
			w.nmeets.Add(1)
		}
	}
	m := v.(*meeting)
	m.vals[mb.rank], m.sigs[mb.rank] = val, sig
	m.joined[mb.rank].Store(true)
	if w.baseDone != nil {
		select {
		case <-w.baseDone: // ended before this meeting was seen by SetContext's sweep
			m.fail(fmt.Errorf("%w: world context ended", errs.Canceled))
		default:
		}
	}
	if int(m.arrived.Add(1)) == cs.size {
		w.meets.Delete(k)
		w.nmeets.Add(-1)
		if !m.state.CompareAndSwap(meetOpen, meetRunning) {
			<-m.done
			return m.err
		}
		for r, s := range m.sigs {
			if s != sig {
				m.err = &errs.MismatchError{Seq: key.Seq, Rank: mb.rank, Other: r, Sig: sig, OtherSig: s}
				break
			}
		}
		if m.err == nil {
			m.err = fn(m.vals)
		}
		close(m.done)
		return m.err
	}
	// Exit checks the open meetings after marking a rank exited (when
	// nmeets ≠ 0); a meeting its sweep missed was stored, and counted, after
	// the sweep began, so its creator, checking after the store, sees every
	// rank that exited before it. Only the creator looks (O(size) once per
	// meeting, not once per rank).
	if created {
		for r := range cs.size {
			if mb.exited(r) && !m.joined[r].Load() {
				m.fail(fmt.Errorf("%w: rank %d has exited", errs.PeerFailed, r))
				break
			}
		}
	}
	if done := ctx.Done(); done == nil || done == w.baseDone {
		// The world's own context: its end fails every open meeting (see
		// SetContext), so one channel suffices. Waiting on a channel all
		// ranks share (the context's) would serialise them on its lock.
		<-m.done
		return m.err
	}
	select {
	case <-m.done:
		return m.err
	case <-ctx.Done():
		if m.fail(transport.CtxErr(ctx)) {
			return m.err
		}
		<-m.done // the last rank is running the collective: it is short
		return m.err
	}
}

// fail ends an open meeting with err and reports whether it did.
func (m *meeting) fail(err error) bool {
	if !m.state.CompareAndSwap(meetOpen, meetFailed) {
		return false
	}
	m.err = err
	close(m.done)
	return true
}

// SetContext ties the world to ctx: when ctx ends, every open meeting fails
// with its error. Calls passing ctx itself then wait more cheaply.
func (w *World) SetContext(ctx context.Context) {
	w.baseDone = ctx.Done()
	context.AfterFunc(ctx, func() {
		err := transport.CtxErr(ctx)
		w.meets.Range(func(_, v any) bool {
			v.(*meeting).fail(err)
			return true
		})
	})
}

// meetExit fails the open meetings rank r has not joined. It costs
// O(log size) per meeting in w.meets; Exit calls it only when there are
// some (w.nmeets).
func (w *World) meetExit(r int) {
	var err error
	w.meets.Range(func(_, v any) bool {
		m := v.(*meeting)
		if m.state.Load() != meetOpen {
			return true // failed meetings stay until their last rank arrives
		}
		if gr := m.cs.rankOf(r); gr >= 0 && !m.joined[gr].Load() {
			if err == nil {
				err = exitErr(r)
			}
			m.fail(err)
		}
		return true
	})
}
