// Package cid keeps the context ids of one rank's communicators: the ids
// in use (reserved by an agreement under way, or held by a communicator)
// and the floor below which none is handed out again. Ids are never
// reused, so a transport's records of an old communicator's calls cannot
// meet a new one's. A Pool is safe for concurrent use.
package cid

import "sync"

// Max is the largest context id (28 bits, which an id holds in bits 32 to
// 59: the message keys keep the four bits above for point-to-point, split,
// lookup and post traffic).
const Max = 1<<28 - 1

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

// The bits a communicator's context id carries into message keys. id =
// cid<<32 | (leader+1), where cid is a number every member had free when
// the communicator was made and leader is the transport address of its
// rank 0; the world is cid 0, leader 0: id 1. The bits above mark the
// message spaces of one communicator beside its collectives' own.
const (
	P2PBit     = 1 << 63 // point-to-point messages
	SplitBit   = 1 << 62 // the rounds of a split or chain call running on it
	ServiceBit = 1 << 61 // the lookups of its distributed table or chain
	PostBit    = 1 << 60 // the replies a sorting split posts to contributors
)

// ID returns the communicator id of context id c with the given leader.
func ID(c uint32, leader int32) uint64 { return uint64(c)<<32 | (uint64(uint32(leader)) + 1) }
