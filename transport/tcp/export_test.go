package tcp

// Uncredited returns how many detached sends to peer, and how many bytes,
// wait for the peer's credit.
func (t *Transport) Uncredited(peer int) (n, bytes uint64) {
	p := t.peers[peer]
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.detached, p.detachedBytes
}
