package model

import (
	"github.com/scoll/scoll/schedule"
)

// EvaluateGenerator evaluates the schedules gen builds on size ranks, which
// need not come from a registered algorithm (a recorded trace, say:
// transport/record's Trace.Generator with elemSize 1). The row is named
// name and has what package workload's Evaluate computes from schedules:
// Counted, LogGP,
// Critical, CriticalLogGP, Energy, Memory and Counts; Cost, Form and
// FormTime, which belong to registered algorithms, are left zero.
//
// The critical path matches each message when both of its ends are posted
// (see CriticalPath). Schedules recorded from programs whose sends complete
// before the receiver posts its receive (eager point-to-point messages, a
// rank that sends and then receives from a peer doing the same) cannot run
// that way; for them, as for schedules whose rounds hold more than
// MaxCriticalOps operations, Critical and CriticalLogGP are 0 and Energy
// is charged over the round-synchronous time. Other errors (a builder
// error, messages that do not balance) are returned.
func EvaluateGenerator(name string, size, elemSize int, gen schedule.Generator, p Params) (Row, error) {
	return evaluateGenerator(name, size, elemSize, gen, p, MaxCriticalOps)
}

// evaluateGenerator is EvaluateGenerator with a critical path only when the
// ranks' rounds never hold more than limit operations at once.
func evaluateGenerator(name string, size, elemSize int, gen schedule.Generator, p Params, limit int64) (Row, error) {
	if err := p.Validate(); err != nil {
		return Row{}, err
	}
	c, cp, ok, err := run(size, elemSize, gen, p, limit, nil)
	if err != nil || !ok {
		if c, err = Count(size, elemSize, gen); err != nil {
			return Row{}, err
		}
		ok = false
	}
	r := Row{
		Algorithm: name,
		Counted:   AlphaBetaGamma(c, p),
		LogGP:     LogGP(c, p),
		Memory:    Memory(c, p),
		Counts:    c,
	}
	t := r.Counted
	if ok {
		r.Critical, r.CriticalLogGP, r.Arrival = cp.AlphaBetaGamma, cp.LogGP, cp.AlphaBetaGamma
		t = cp.AlphaBetaGamma
	}
	r.Energy = Energy(c, p, t)
	return r, nil
}
