package transport

import "context"

// Exchanger is implemented by transports whose ranks share memory and each
// have a CPU, so that a waiting rank may spin. An exchange is a leaderless
// all-to-all of small payloads for one collective call: every rank publishes
// its payload, waits until every rank has published for the same call, and
// then reads all the payloads and computes its own result locally. Small
// blocking collectives cost one publication and one poll of each peer
// instead of a schedule of messages.
//
// A rank runs at most one exchange per communicator at a time, and the
// ranks of a communicator run its exchanges in the same order (the order of
// their collective calls).
type Exchanger interface {
	// ExchangeLimit returns the largest payload, in bytes, Exchange takes,
	// or -1 when the transport offers no exchanges (for example when the
	// ranks outnumber the CPUs and would wait by parking). It does not
	// change during the transport's life, and all ranks return the same.
	ExchangeLimit() int
	// Exchange runs this rank's part of x: it copies x.Payload where the
	// other ranks can read it, waits until every rank has published for the
	// call (x.Comm, x.Seq), and sets x.Data. A waiting rank polls up to
	// x.Spin times, then parks until a peer publishes.
	//
	// Errors: errs.Mismatch when the ranks' signatures differ (every rank
	// sees it), or when the transport's Checker shows that a rank made
	// another call with this sequence number (a rank that ran a message
	// schedule); errs.PeerFailed when a rank exited without publishing
	// (errs.Closed once the transport is closed); CtxErr(ctx) when ctx
	// ends first. After an error this rank's payload stays published, so
	// the other ranks may still complete the call with it.
	Exchange(ctx context.Context, x *Exchange) error
}

// Flow says whose payloads the ranks of an exchange need (Exchange.Flow).
type Flow uint8

// The flows of an exchange.
const (
	FlowAll      Flow = iota // every rank needs every payload
	FlowFromRoot             // the others need the root's; the root none
	FlowToRoot               // the root needs every payload; the others none
)

// Exchange is one rank's part of an exchange. The caller sets the fields
// above Data; Exchange sets Data.
type Exchange struct {
	// Comm is the communicator's context id.
	Comm uint64
	// Seq is the call's sequence number on the communicator; it increases
	// from one call to the next.
	Seq uint64
	// Sig is the call's signature; every rank must pass the same.
	Sig uint64
	// Spin is how many times to poll the other ranks before parking.
	Spin int
	// Flow says whose payloads the ranks need: every rank every rank's
	// (FlowAll, the zero value), the ranks the root's alone and the root
	// none (FlowFromRoot: bcast), or the root every rank's and the others
	// none (FlowToRoot: reduce). A rank that needs no payload of a peer
	// does not wait for it: it may run one exchange ahead of that peer,
	// and learns of a mismatch there at its next exchange, which then
	// fails with errs.Mismatch naming this one (Data then holds only the
	// payloads this rank needs).
	Flow Flow
	// Root is the root of a FlowFromRoot or FlowToRoot exchange.
	Root int
	// Payload is this rank's contribution, at most ExchangeLimit bytes
	// (nil for none). Exchange copies it, so the caller may overwrite it
	// as soon as Exchange returns.
	Payload []byte
	// Data[r] is rank r's payload after a successful Exchange; it has one
	// entry per rank (Exchange allocates it if it is short). The payloads
	// live in memory the other ranks write: they must not be written, and
	// stay valid only until this rank's next Exchange on the communicator
	// (a rank overwrites its payload of exchange e no sooner than in
	// exchange e+2, which needs every rank's publication of exchange e+1).
	Data [][]byte
}
