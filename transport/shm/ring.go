//go:build linux

package shm

import (
	"encoding/binary"
	"fmt"

	"github.com/scoll/scoll/internal/errs"
)

// Ring is a single-producer, single-consumer queue of variable-length
// records in shared memory: one process writes, another reads, without
// locks. Its region of a segment is laid out as
//
//	line 0  tail: bytes ever written (the producer's counter)
//	line 1  head: bytes ever consumed (the consumer's counter)
//	line 2  the ring's doorbell (8 bytes, see Bell), then the producer's
//	        want-room flag (4 bytes)
//	data    capacity bytes, a power of two
//
// each counter on its own cache line. A record is an 8-byte header (the
// payload length and a check word) and the payload, padded to 8 bytes; a
// record never wraps around the end of the data: when it does not fit in
// what is left, the producer writes a wrap marker and starts over at the
// beginning. The producer publishes a record by advancing tail after
// writing it; the consumer releases it by advancing head after reading it
// (sync/atomic's sequentially consistent operations order the data
// accesses).
//
// A record's header is checked before its payload is trusted: a length
// beyond the ring's largest record or past what was published, or a check
// word that does not match, is ErrCorrupt, never a read out of bounds.
type Ring struct {
	mem      []byte // the whole region
	data     []byte
	mask     uint64
	maxRec   int    // the largest payload
	tail     uint64 // producer: local copy of the tail
	head     uint64 // consumer: local copy of the head
	peekSize uint64 // consumer: the size of the record Peek returned
}

// ErrCorrupt is returned by Ring.Peek for a record that cannot be what the
// producer wrote: the producer's process is broken or not a scoll rank.
var ErrCorrupt = fmt.Errorf("%w: shared-memory ring holds a corrupted record", errs.PeerFailed)

const (
	ringHeader = 3 * lineSize
	recHeader  = 8
	wrapLen    = 0xffffffff // header length of a wrap marker
	recCheck   = 0x5c011ed0 // xor-ed with the length into the check word
)

// RingSize returns the bytes of a ring region with capacity bytes of data.
func RingSize(capacity int) int { return ringHeader + capacity }

// NewRing returns the ring in region mem (RingSize(capacity) bytes, 8-byte
// aligned, zero before first use). capacity must be a power of two of at
// least 64 bytes. Both ends call it on their own mapping of the region.
func NewRing(mem []byte, capacity int) (*Ring, error) {
	if capacity < 64 || capacity&(capacity-1) != 0 || len(mem) < RingSize(capacity) {
		return nil, fmt.Errorf("%w: shm: ring of %d bytes in a region of %d", errs.InvalidArgument, capacity, len(mem))
	}
	r := &Ring{mem: mem[:RingSize(capacity)], data: mem[ringHeader:RingSize(capacity)], mask: uint64(capacity - 1),
		maxRec: capacity/2 - recHeader}
	r.tail = u64(r.mem, 0).Load()
	r.head = u64(r.mem, lineSize).Load()
	return r, nil
}

// MaxRecord returns the largest payload a record can carry.
func (r *Ring) MaxRecord() int { return r.maxRec }

func pad8(n int) uint64 { return uint64(n+7) &^ 7 }

// Write appends one record made of parts (their bytes concatenated) and
// reports whether it fit; a full ring leaves it unwritten. Only the
// producer calls it.
func (r *Ring) Write(parts ...[]byte) (bool, error) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n > r.maxRec {
		return false, fmt.Errorf("%w: shm: record of %d bytes, at most %d", errs.InvalidArgument, n, r.maxRec)
	}
	size := recHeader + pad8(n)
	capacity := r.mask + 1
	free := capacity - (r.tail - u64(r.mem, lineSize).Load())
	off := r.tail & r.mask
	skip := uint64(0)
	if off+size > capacity {
		skip = capacity - off // a wrap marker fills the rest
	}
	if skip+size > free {
		return false, nil
	}
	if skip > 0 {
		putHeader(r.data[off:], wrapLen)
		r.tail += skip
		off = 0
	}
	putHeader(r.data[off:], uint32(n))
	w := r.data[off+recHeader:]
	for _, p := range parts {
		w = w[copy(w, p):]
	}
	r.tail += size
	u64(r.mem, 0).Store(r.tail)
	return true, nil
}

func putHeader(b []byte, n uint32) {
	binary.LittleEndian.PutUint32(b, n)
	binary.LittleEndian.PutUint32(b[4:], n^recCheck)
}

// Peek returns the payload of the next record, a view of the shared memory
// valid until Release, or nil when the ring is empty. Only the consumer
// calls it.
func (r *Ring) Peek() ([]byte, error) {
	for {
		tail := u64(r.mem, 0).Load()
		if tail == r.head {
			return nil, nil
		}
		avail := tail - r.head
		if avail > r.mask+1 || avail < recHeader {
			return nil, ErrCorrupt
		}
		off := r.head & r.mask
		n := binary.LittleEndian.Uint32(r.data[off:])
		if binary.LittleEndian.Uint32(r.data[off+4:]) != n^recCheck {
			return nil, ErrCorrupt
		}
		if n == wrapLen {
			skip := r.mask + 1 - off
			if skip > avail {
				return nil, ErrCorrupt
			}
			r.head += skip
			u64(r.mem, lineSize).Store(r.head)
			continue
		}
		size := recHeader + pad8(int(n))
		if int(n) > r.maxRec || size > avail || off+size > r.mask+1 {
			return nil, ErrCorrupt
		}
		r.peekSize = size
		return r.data[off+recHeader : off+recHeader+uint64(n)], nil
	}
}

// Release consumes the record Peek returned.
func (r *Ring) Release() {
	if r.peekSize == 0 {
		return
	}
	r.head += r.peekSize
	r.peekSize = 0
	u64(r.mem, lineSize).Store(r.head)
}

// Empty reports whether the consumer has consumed everything written.
func (r *Ring) Empty() bool { return u64(r.mem, 0).Load() == u64(r.mem, lineSize).Load() }

// WantRoom tells the consumer that the producer waits for room: its next
// TakeWant after consuming returns true. The producer calls it when a
// Write did not fit and then tries the Write once more, so that room made
// in between is not missed.
func (r *Ring) WantRoom() { u32(r.mem, 2*lineSize+8).Store(1) }

// TakeWant reports, once, whether the producer has asked for room since
// the last call; the consumer calls it after Release and then wakes the
// producer.
func (r *Ring) TakeWant() bool {
	w := u32(r.mem, 2*lineSize+8)
	return w.Load() != 0 && w.Swap(0) != 0
}

// Bell returns the ring's doorbell: the consumer sleeps on it when the ring
// is empty and the producer rings it after writing.
func (r *Ring) Bell() *Bell { return &Bell{mem: r.mem[2*lineSize : 2*lineSize+8]} }
