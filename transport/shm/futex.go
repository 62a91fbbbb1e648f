//go:build linux

package shm

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Bell lets a consumer in one process sleep until a producer in another
// rings, through a futex on a word of shared memory. Its 8 bytes hold a
// sequence number that every ring advances (word 0) and the number of
// sleepers (word 1), so that a producer makes the system call only when
// somebody sleeps.
//
// A consumer reads Seq, checks its condition (the ring is empty), and only
// then calls Wait with that sequence number: a ring after the read makes
// Wait return at once, so no wake-up is lost.
type Bell struct{ mem []byte }

// Seq returns the current sequence number, to pass to Wait.
func (b *Bell) Seq() uint32 { return u32(b.mem, 0).Load() }

// Ring advances the sequence number and wakes the sleepers, if any.
func (b *Bell) Ring() {
	u32(b.mem, 0).Add(1)
	if u32(b.mem, 4).Load() != 0 {
		futex(&b.mem[0], futexWake, 1<<30, nil)
	}
}

// Wait sleeps until the sequence number differs from seq, for at most d
// (d ≤ 0: no limit), or a spurious wake-up; callers recheck their
// condition.
func (b *Bell) Wait(seq uint32, d time.Duration) {
	u32(b.mem, 4).Add(1)
	defer u32(b.mem, 4).Add(^uint32(0))
	var ts *unix.Timespec
	if d > 0 {
		t := unix.NsecToTimespec(d.Nanoseconds())
		ts = &t
	}
	futex(&b.mem[0], futexWait, seq, ts)
}

// futex(2) operations on words shared between processes (not
// FUTEX_PRIVATE_FLAG).
const (
	futexWait = 0
	futexWake = 1
)

// futex calls futex(2) on the shared (not process-private) word at addr.
func futex(addr *byte, op int, val uint32, ts *unix.Timespec) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), uintptr(op), uintptr(val), uintptr(unsafe.Pointer(ts)), 0, 0)
}
