package scoll

import (
	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/record"
)

// WithRecorder makes Run record the messages its ranks post into rec, so
// that code which is not a static schedule — Split, or a program that
// mixes collectives with Send and Recv — can be simulated (package sim,
// scoll sim --trace) and costed (package model, scoll model --trace):
//
//	rec := record.New()
//	err := scoll.Run(ctx, 8, fn, scoll.WithRecorder(rec))
//	...
//	tr, err := rec.Trace() // per-rank rounds of sends and receives
//	err = tr.WriteFile("run.trace")
//
// Every rank's endpoint is wrapped with record.Wrap. While recording,
// collectives run their schedules as messages, never through the
// shared-memory paths in-process ranks otherwise take for small calls, and
// local reductions and copies are not recorded (see package
// transport/record for what a trace holds). Results are unchanged.
// WithRecorder applies to Run; Init and NewComm ignore it.
func WithRecorder(rec *record.Recorder) Option {
	return func(c *runConfig) {
		if rec == nil {
			c.wrap = nil
			return
		}
		c.wrap = func(t transport.Transport) transport.Transport { return record.Wrap(t, rec) }
	}
}

// endpoint returns the endpoint a rank of Run uses for t.
func (c *runConfig) endpoint(t transport.Transport) transport.Transport {
	if c.wrap == nil {
		return t
	}
	return c.wrap(t)
}
