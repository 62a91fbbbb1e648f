package comm

import (
	"errors"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/internal/plan"
	"github.com/scoll/scoll/schedule"
)

// The errors of the public API read "rank R: Call: scoll: kind: details"
// (errs.CallError): the calls of this package wrap their errors with the
// rank and the public name of the call (errs.At) where the public API
// returns them: Blocking, Nonblocking, NewPersistent, the requests' and
// persistent calls' methods. Below that, errors carry the details only,
// never an internal path's name.

// publicNames are the collectives' names in package scoll's API.
var publicNames = [schedule.NumCollectives]string{
	schedule.Bcast: "Bcast", schedule.Reduce: "Reduce", schedule.Allreduce: "Allreduce",
	schedule.Gather: "Gather", schedule.Gatherv: "Gatherv", schedule.Scatter: "Scatter",
	schedule.Scatterv: "Scatterv", schedule.Allgather: "Allgather", schedule.Allgatherv: "Allgatherv",
	schedule.Alltoall: "Alltoall", schedule.Alltoallv: "Alltoallv",
	schedule.ReduceScatterBlock: "ReduceScatterBlock", schedule.ReduceScatter: "ReduceScatter",
	schedule.Scan: "Scan", schedule.Exscan: "Exscan", schedule.Barrier: "Barrier",
}

// Form is the way a collective is called: blocking (Allreduce), started
// (IAllreduce) or persistent (AllreduceInit).
type Form uint8

// The forms of a call.
const (
	FormBlocking Form = iota
	FormStarted
	FormPersistent
)

// CallName returns the public name of collective coll called in form f.
func CallName(coll schedule.Collective, f Form) string {
	if int(coll) >= len(publicNames) {
		return coll.String()
	}
	n := publicNames[coll]
	switch f {
	case FormStarted:
		return "I" + n
	case FormPersistent:
		return n + "Init"
	}
	return n
}

// errAt returns err as the error of cl on c's rank in form f (errs.At),
// with the entry and path it ran on for debugging.
func (cl *Call) errAt(c *Comm, f Form, err error) error {
	err = errs.At(RankOf(c), CallName(cl.coll, f), err)
	if ce, ok := err.(*errs.CallError); ok && ce.Path == "" && cl.info != nil {
		d := *ce // err may be another's: do not write to it
		d.Path = cl.info.Name + "/" + cl.path.String()
		return &d
	}
	return err
}

// RankOf returns c's rank, or -1 for a nil communicator.
func RankOf(c *Comm) int {
	if c == nil {
		return -1
	}
	return c.rank
}

// explain returns err, a mismatch found by comparing signatures replaced by
// one that says what the other rank called: its collective's public name,
// and whether it is this call's collective with other arguments.
func (cl *Call) explain(err error) error {
	if err == nil {
		return nil // before errors.As's target, which goes to the heap
	}
	return cl.explainErr(err)
}

func (cl *Call) explainErr(err error) error {
	var me *errs.MismatchError
	if !errors.As(err, &me) || me.Theirs != "" {
		return err
	}
	d := *me
	if me.OtherSig == cl.sig && me.Sig != cl.sig {
		// The error was found by the other side (a meeting's last rank, a
		// sender) and is shared: the differing call is its finder's.
		d.Rank, d.Sig, d.Other, d.OtherSig = me.Other, me.OtherSig, me.Rank, me.Sig
	}
	if coll, ok := plan.SigCollective(d.OtherSig); ok {
		d.Theirs, d.Same = publicNames[coll], coll == cl.coll
	} else if plan.SigKind(d.OtherSig) == plan.SigConstructor {
		d.Theirs = "Split, Dup or Create"
	}
	return &d
}
