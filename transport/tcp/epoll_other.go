//go:build !linux

package tcp

// epoller: no epoll outside Linux; callers do not poll, the reader
// goroutines progress the connections.
type epoller struct{}

func newEpoller() *epoller      { return nil }
func (e *epoller) add(int, int) {}
func (e *epoller) ready() []int { return nil }
func (e *epoller) close()       {}
