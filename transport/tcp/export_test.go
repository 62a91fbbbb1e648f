package tcp

// Uncredited returns how many detached sends to peer wait for the peer's
// credit.
func (t *Transport) Uncredited(peer int) uint64 {
	p := t.peers[peer]
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.detached
}
