package tcp

// Detached sends (Config.DetachedSends). A send of a collective call
// completes only once its receiver took it as a message of the same call
// (syncsend.go), which makes a bcast's root wait a round trip per call, and
// makes every rank of a mismatched call fail. A small send is detached
// instead when asked: it completes once written, like an eager
// point-to-point send, and the receiver still refuses it if it belongs to
// another call (errs.Mismatch there, and the call fails wherever it is still
// under way, but the sender's part may be over).
// The sender may run ahead of a slow receiver only so far: it holds credit
// for detachCount messages per peer (so at most detachCount·detachMsg bytes
// wait there), and the receiver returns credit in batches (kindCredit) as it
// takes the messages, so a stream of bcasts costs one write per message and
// one credit frame per creditBatch messages. Without credit, sends wait for
// their acks as before, and each such message that arrives takes back the
// credit due so far (a batch may never fill). Larger messages are not detached: a sender running
// ahead would make receivers buffer and copy what they now read into
// posted buffers (1 MiB allreduce between 2 processes: 4x slower with
// 64 KiB detached sends).
const (
	detachMsg   = 4 << 10 // largest detached message
	detachCount = 64      // detached messages a peer may hold uncredited
	creditBatch = detachCount / 4
)

// detachable reports whether a send of n bytes of a collective call may be
// detached. Called with p.mu held.
func (p *peer) detachable(n int) bool {
	return p.t.cfg.DetachedSends && n <= detachMsg && p.detached < detachCount
}

// credit notes that a detached message from the peer was taken (matched or
// dropped) and returns the credit to the peer once a batch is due.
func (p *peer) credit() {
	p.mu.Lock()
	p.creditN++
	if p.creditN < creditBatch {
		p.mu.Unlock()
		return
	}
	h := p.takeCredit()
	p.mu.Unlock()
	p.sendControl(h)
}

// takeCredit returns the credit frame for what was taken and not credited
// yet. Called with p.mu held.
func (p *peer) takeCredit() header {
	h := header{kind: kindCredit, id: p.creditN}
	p.creditN = 0
	return h
}

// onCredit returns credit to this rank's detached sends. A peer that
// returns more than it was given breaks the protocol; the credit is
// clamped so that it cannot widen the budget.
func (p *peer) onCredit(h *header) {
	p.mu.Lock()
	p.detached -= min(h.id, p.detached)
	p.mu.Unlock()
}
