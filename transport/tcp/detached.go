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
// for detachCount messages and detachBytes bytes per peer, and the receiver
// returns credit in batches (kindCredit) as it takes the messages, so a
// stream of bcasts costs one write per message and one credit frame per
// creditBatch messages. Without credit, sends wait for their acks as
// before.
const (
	detachMsg   = 64 << 10  // largest detached message
	detachCount = 64        // detached messages a peer may hold uncredited
	detachBytes = 256 << 10 // their bytes
	creditBatch = detachCount / 4
)

// detachable reports whether a send of n bytes of a collective call may be
// detached. Called with p.mu held.
func (p *peer) detachable(n int) bool {
	return p.t.cfg.DetachedSends && n <= detachMsg &&
		p.detached < detachCount && p.detachedBytes+uint64(n) <= detachBytes
}

// charge and uncharge take and return the credit of a detached send of n
// bytes. Called with p.mu held.
func (p *peer) charge(n uint64) {
	p.detached++
	p.detachedBytes += n
}

func (p *peer) uncharge(n uint64) {
	p.detached--
	p.detachedBytes -= n
}

// credit notes that a detached message of n bytes from the peer was taken
// (matched or dropped) and returns the credit to the peer once a batch is
// due.
func (p *peer) credit(n uint64) {
	p.mu.Lock()
	p.creditN++
	p.creditBytes += n
	if p.creditN < creditBatch && p.creditBytes < detachBytes/4 {
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
	h := header{kind: kindCredit, id: p.creditN, sig: p.creditBytes}
	p.creditN, p.creditBytes = 0, 0
	return h
}

// onCredit returns credit to this rank's detached sends. A peer that
// returns more than it was given breaks the protocol; the credit is
// clamped so that it cannot widen the budget.
func (p *peer) onCredit(h *header) {
	p.mu.Lock()
	p.detached -= min(h.id, p.detached)
	p.detachedBytes -= min(h.sig, p.detachedBytes)
	p.mu.Unlock()
}

// ack acknowledges sync message id, returning any credit due with it: a
// sender out of credit sends acknowledged messages and gets its credit back
// no later than their acks.
func (p *peer) ack(id uint64) {
	p.sendControl(header{kind: kindAck, id: id})
	p.mu.Lock()
	if p.creditN == 0 {
		p.mu.Unlock()
		return
	}
	h := p.takeCredit()
	p.mu.Unlock()
	p.sendControl(h)
}
