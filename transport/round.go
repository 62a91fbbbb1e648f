package transport

// RoundMarker is implemented by transports that need to know where their
// callers' rounds end: a recording transport (transport/record) groups the
// operations a rank posts into the rounds of a schedule, and a Waiter's
// completions happen inside the transport where a wrapper cannot see them.
//
// EndRound tells the transport that every operation posted with w since
// the last EndRound(w) has completed or been withdrawn: together they were
// one round, and the caller posts nothing more with w before it has waited
// again. Code that posts operations and waits for them (the executor, a
// split's rounds, blocking point-to-point calls, a distributed table's
// lookups) calls EndRound after each wait, through the function EndRound,
// also after a failed wait once it has withdrawn or drained what it posted.
type RoundMarker interface {
	EndRound(w *Waiter)
}

// EndRound calls t.EndRound(w) when t is a RoundMarker, and does nothing
// otherwise.
func EndRound(t Transport, w *Waiter) {
	if m, ok := t.(RoundMarker); ok {
		m.EndRound(w)
	}
}
