package tcp

import "github.com/scoll/scoll/transport"

// Sync sends: a send of a collective call completes once it is written and
// the receiver took it as a message of the same call, told either by an ack
// or by a message of that call from the receiver itself (a proof).

// syncSend is a send of a collective call that completes once it is
// written and the receiver took it (ack), or the receiver proved to be in
// the same call, or failed.
type syncSend struct {
	m       *transport.Msg
	written bool
	acked   bool
	err     error
	eager   bool // an eager send (ledger.go): m is the ledger's copy, complete already
}

// settle removes sync send id and returns it when it can complete: written,
// and acked or failed. An eager send's entry goes to the ledger instead.
// Called with p.mu held.
func (p *peer) settle(id uint64) *syncSend {
	s := p.acks[id]
	if s == nil || !s.written || !s.acked && s.err == nil {
		return nil
	}
	delete(p.acks, id)
	if s.eager {
		var err error
		if !s.acked {
			err = s.err
		}
		p.t.ledger.done(s.m.Key, p.rank, err)
		return nil
	}
	return s
}

// wroteSync records that the frame of sync send id has been written (err:
// writing it failed) and returns the send when it can complete. Called with
// p.mu held.
func (p *peer) wroteSync(id uint64, err error) *syncSend {
	s := p.acks[id]
	if s == nil {
		return nil
	}
	s.written = true
	if err != nil && !s.acked {
		s.err = err
	}
	return p.settle(id)
}

// failSyncs fails the sync sends that match: those written or still in
// p.out at once (returned), those being written when the writer is done.
// Called with p.mu held.
func (p *peer) failSyncs(match func(*transport.Msg) bool, err error) []*transport.Msg {
	queued := map[uint64]bool{}
	for _, f := range p.out {
		if f.h.kind == kindSync {
			queued[f.h.id] = true
		}
	}
	var out []*transport.Msg
	for id, s := range p.acks {
		if !match(s.m) || s.acked {
			// An acknowledged send was received: it completes when the
			// writer is done with it, failure or not.
			continue
		}
		s.err = err
		if queued[id] {
			s.written = true // never will be: the caller drops the frame
		}
		if s := p.settle(id); s != nil {
			out = append(out, s.m)
		}
	}
	return out
}

// prove records that the peer is in call k with signature sig, which
// completes the written sync sends of that call. Called with p.mu held;
// returns the sends to complete.
func (p *peer) prove(k transport.Key, sig uint64) []*transport.Msg {
	if k.Seq == 0 {
		return nil
	}
	p.proofKey, p.proofSig = callKey{k.Comm, k.Seq}, sig
	var out []*transport.Msg
	for id, s := range p.acks {
		if s.m.Key.Comm == k.Comm && s.m.Key.Seq == k.Seq && s.m.Sig == sig {
			s.acked = true
			if s := p.settle(id); s != nil {
				out = append(out, s.m)
			}
		}
	}
	return out
}

// proven reports whether the peer proved to be in m's call, so that m needs
// no ack. Called with p.mu held.
func (p *peer) proven(m *transport.Msg) bool {
	return m.Key.Seq != 0 && p.proofKey == callKey{m.Key.Comm, m.Key.Seq} && p.proofSig == m.Sig
}

// sentProof reports whether this rank has sent the peer a message of call
// k with signature sig, which serves the peer as an ack of its sync sends of
// the call. Called with p.mu held.
func (p *peer) sentProof(k transport.Key, sig uint64) bool {
	return k.Seq != 0 && p.sentKey == callKey{k.Comm, k.Seq} && p.sentSig == sig
}
