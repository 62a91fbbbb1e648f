//go:build linux

package shm

// Slot layout per rank (one cache line): pid u32, state u32, bell (8
// bytes), the address of the rank's probe word (u64) and the value there
// (u64), and the bitmap of the ranks whose memory the rank can read
// (256 bits).
const (
	slotProbe   = 16
	slotMagic   = 24
	slotCanRead = 32
	maxCMARanks = 256

	stateUp     = 1
	stateClosed = 2
)

// SegmentSize returns the bytes of a segment for n ranks with rings of
// ringBytes.
func SegmentSize(n, ringBytes int) int {
	return n*lineSize + n*n*RingSize(ringBytes) + 2*n*exchSlotSize
}

func (t *Transport) ringMem(from, to int) []byte {
	rs := RingSize(t.cfg.ringBytes())
	off := t.size*lineSize + (from*t.size+to)*rs
	return t.seg.Bytes()[off : off+rs]
}

func (t *Transport) bell(r int) *Bell {
	off := r*lineSize + 8
	return &Bell{mem: t.seg.Bytes()[off : off+8]}
}

func (t *Transport) state(r int) uint32 { return u32(t.seg.Bytes(), r*lineSize+4).Load() }
