//go:build linux

package shm

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Bell lets a consumer in one process sleep until a producer in another
// rings, through a futex on a word of shared memory. Its 8 bytes hold a
// sequence number (word 0) and the number of sleepers (word 1). A producer
// that finds no sleeper touches neither word and makes no system call, so
// a busy consumer that polls costs its producers nothing.
//
// A consumer arms the bell (Arm), checks its condition once more (the ring
// is empty) and then sleeps (Sleep) or, when the condition changed,
// disarms (Disarm). A producer publishes its data and then rings. Either
// the producer sees the sleeper and wakes it, or the consumer's second
// check sees the data (both sides use sequentially consistent atomics), so
// no wake-up is lost.
type Bell struct{ mem []byte }

// Seq returns the current sequence number.
func (b *Bell) Seq() uint32 { return u32(b.mem, 0).Load() }

// Arm registers a sleeper and returns the sequence number to pass to
// Sleep. Sleep or Disarm must follow.
func (b *Bell) Arm() uint32 {
	seq := u32(b.mem, 0).Load()
	u32(b.mem, 4).Add(1)
	return seq
}

// Disarm withdraws an Arm without sleeping.
func (b *Bell) Disarm() { u32(b.mem, 4).Add(^uint32(0)) }

// Sleep sleeps until the sequence number differs from seq (from Arm), for
// at most d (d ≤ 0: no limit), or a spurious wake-up, and disarms; callers
// recheck their condition.
func (b *Bell) Sleep(seq uint32, d time.Duration) {
	defer b.Disarm()
	var ts *unix.Timespec
	if d > 0 {
		t := unix.NsecToTimespec(d.Nanoseconds())
		ts = &t
	}
	futex(&b.mem[0], futexWait, seq, ts)
}

// Ring wakes the sleepers, if any: it advances the sequence number and
// calls futex(2) only when some consumer has armed the bell.
func (b *Bell) Ring() {
	if u32(b.mem, 4).Load() != 0 {
		u32(b.mem, 0).Add(1)
		futex(&b.mem[0], futexWake, 1<<30, nil)
	}
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
