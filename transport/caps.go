package transport

// Caps are the optional interfaces an endpoint offers beyond Transport,
// each nil when it does not offer it, and what each unlocks in scoll (the
// table in docs/architecture.md says the same):
//
//	Checker      call records: ranks that call mismatched collectives fail with
//	             errs.Mismatch instead of waiting for each other forever
//	Poller       receives that progress when the receiver polls (lock-free
//	             rings): waiters poll it while they spin, and it kicks them
//	Meeter       the meeting path (algorithm meet): in-process ranks meet in
//	             shared memory, the last one combines for all
//	Exchanger    the exchange path (algorithm exchange): small blocking calls
//	             publish their inputs and read the others'
//	CallAborter  a rank that gives a call up (bad arguments, a failure) makes
//	             the others' part of it fail at once, across processes
//	Modeler      the α and β the default algorithm choice costs messages with
//	Noder        every rank's node: the node-aware algorithms (hier) and the
//	             default choice's preference for them
//	ClockSharer  one clock for all ranks: call sites need no clock
//	             synchronisation, the machine model no agreement
//	Combiner     combining receives: the executor folds a message into the
//	             result as it arrives instead of copying it first
//	SpinHinter   the number of polls before a waiter parks
//	Grouper      per-communicator state for derived communicators: their
//	             call records, meetings and exchanges (GroupView)
//	Responder    requests answered while the rank is busy: distributed group
//	             tables, chain walks and the sorting splits' posts
//	RoundMarker  the ends of rounds: a recording transport (transport/record)
//	             groups operations into a trace's rounds
//
// A GroupView offers, for one communicator, the Checker, Meeter and
// Exchanger its transport offers it.
type Caps struct {
	Checker     Checker
	Poller      Poller
	Meeter      Meeter
	Exchanger   Exchanger
	CallAborter CallAborter
	Modeler     Modeler
	Noder       Noder
	ClockSharer ClockSharer
	Combiner    Combiner
	SpinHinter  SpinHinter
	Grouper     Grouper
	Responder   Responder
	RoundMarker RoundMarker
	Settler     Settler
}

// Capser is implemented by endpoints that say themselves which optional
// interfaces they offer: a wrapper that implements every interface
// (forwarding each to the endpoint it wraps) but offers only those the
// wrapped endpoint offers (transport/record). CapsOf returns its Caps.
type Capser interface {
	Caps() Caps
}

// CapsOf returns the optional interfaces t offers: t's own Caps when t is
// a Capser, else the interfaces t implements. Code that asks whether an
// endpoint (or a GroupView) offers an optional interface asks CapsOf, not
// a type assertion, so that wrappers can decline what they implement.
func CapsOf(t any) Caps {
	if c, ok := t.(Capser); ok {
		return c.Caps()
	}
	var c Caps
	c.Checker, _ = t.(Checker)
	c.Poller, _ = t.(Poller)
	c.Meeter, _ = t.(Meeter)
	c.Exchanger, _ = t.(Exchanger)
	c.CallAborter, _ = t.(CallAborter)
	c.Modeler, _ = t.(Modeler)
	c.Noder, _ = t.(Noder)
	c.ClockSharer, _ = t.(ClockSharer)
	c.Combiner, _ = t.(Combiner)
	c.SpinHinter, _ = t.(SpinHinter)
	c.Grouper, _ = t.(Grouper)
	c.Responder, _ = t.(Responder)
	c.RoundMarker, _ = t.(RoundMarker)
	c.Settler, _ = t.(Settler)
	return c
}
