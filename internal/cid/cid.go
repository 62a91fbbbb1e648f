// Package cid keeps the context ids of one rank's communicators: the ids
// in use (reserved by an agreement under way, or held by a communicator)
// and the floor below which none is handed out again. Ids are never
// reused, so a transport's records of an old communicator's calls cannot
// meet a new one's. A Pool is safe for concurrent use.
package cid

import "sync"

// Max is the largest context id (29 bits: the message keys keep the bits
// above for point-to-point, split and lookup traffic).
const Max = 1<<29 - 1

// Pool is one rank's context ids. The zero Pool is empty and ready.
type Pool struct {
	mu    sync.Mutex
	used  map[uint32]bool
	floor uint32
}

// ReserveFrom reserves and returns the lowest id ≥ from (and ≥ 1) that is
// free and not below the floor, or 0 when none is left.
func (p *Pool) ReserveFrom(from uint32) uint32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := max(from, p.floor, 1); c <= Max; c++ {
		if !p.used[c] {
			p.mark(c)
			return c
		}
	}
	return 0
}

// Reserve reserves id if it is free and not below the floor, and reports
// whether it did.
func (p *Pool) Reserve(id uint32) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if id == 0 || id > Max || id < p.floor || p.used[id] {
		return false
	}
	p.mark(id)
	return true
}

func (p *Pool) mark(id uint32) {
	if p.used == nil {
		p.used = map[uint32]bool{}
	}
	p.used[id] = true
}

// Taken raises the floor above id, which an agreement has given a
// communicator.
func (p *Pool) Taken(id uint32) {
	p.mu.Lock()
	p.floor = max(p.floor, id+1)
	p.mu.Unlock()
}

// Release frees id (0 is never reserved and is ignored).
func (p *Pool) Release(id uint32) {
	if id == 0 {
		return
	}
	p.mu.Lock()
	delete(p.used, id)
	p.mu.Unlock()
}
