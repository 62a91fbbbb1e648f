package tcp

// Eager sends of collective calls (Config.DetachedSends). A send of a
// collective call completes only once its receiver took it as a message of
// the same call (syncsend.go), which makes a bcast's root wait a round trip
// per call. A small send is eager instead when asked: it completes once
// written, its receiver still acknowledges it or refuses it when it belongs
// to another call (errs.Mismatch there, and the call fails wherever it is
// still under way), and the ledger (ledger.go) holds the sender's next call
// on the communicator until the acknowledgement came, so that the sender
// runs at most one call ahead and learns of a refusal then. Larger
// messages are not eager: a sender running ahead would make receivers
// buffer and copy what they now read into posted buffers (1 MiB allreduce
// between 2 processes: 4x slower with 64 KiB detached sends).
const detachMsg = 4 << 10 // largest eager message of a collective call

// detachable reports whether a send of n bytes of a collective call may be
// eager. Called with p.mu held.
func (p *peer) detachable(n int) bool {
	return p.t.cfg.DetachedSends && n <= detachMsg
}
