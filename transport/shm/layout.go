//go:build linux

package shm

// A segment of n ranks holds n slots, one cache line each, then the n*n
// rings by (from, to), then the exchange slots (exchange.go).
//
// A rank's slot holds its pid (u32), its state (u32), its doorbell (8
// bytes), the address of its probe word (u64) and the value there (u64),
// and the bitmap of the ranks whose memory it can read (256 bits), at
// these offsets:
const (
	slotPid     = 0
	slotState   = 4
	slotBell    = 8
	slotProbe   = 16
	slotMagic   = 24
	slotCanRead = 32
	maxCMARanks = 256 // the ranks the bitmap covers

	stateUp     = 1 // the rank's endpoint runs (0: not started yet)
	stateClosed = 2 // the rank closed its endpoint
)

// SegmentSize returns the bytes of a segment for n ranks with rings of
// ringBytes.
func SegmentSize(n, ringBytes int) int {
	return n*lineSize + n*n*RingSize(ringBytes) + 2*n*exchSlotSize
}

// ringMem returns the region of the ring from rank from to rank to.
func (t *Transport) ringMem(from, to int) []byte {
	rs := RingSize(t.cfg.ringBytes())
	off := t.size*lineSize + (from*t.size+to)*rs
	return t.seg.Bytes()[off : off+rs]
}

// bell returns rank r's doorbell, which r sleeps on.
func (t *Transport) bell(r int) *Bell {
	off := r*lineSize + slotBell
	return &Bell{mem: t.seg.Bytes()[off : off+8], sock: t.sock, to: r}
}

// state returns rank r's state: stateUp, stateClosed or 0.
func (t *Transport) state(r int) uint32 { return u32(t.seg.Bytes(), r*lineSize+slotState).Load() }

// pid returns the pid of rank r's process (0 before its endpoint starts).
func (t *Transport) pid(r int) int { return int(u32(t.seg.Bytes(), r*lineSize+slotPid).Load()) }
