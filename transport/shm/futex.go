//go:build linux

package shm

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/scoll/scoll/internal/clock"
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
//
// An endpoint with a socket bell (Config.BellSocket) sleeps on the
// bell's socket instead (ArmSocket, SleepSocket): Ring then also sends
// the sleeper's socket a byte.
type Bell struct {
	mem  []byte
	sock *sockBell // the ringing endpoint's socket bell, or nil
	to   int       // the sleeper's segment rank, for sock
}

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

// ArmSocket is Arm for a sleeper on the endpoint's socket bell;
// SleepSocket or DisarmSocket must follow.
func (b *Bell) ArmSocket() uint32 {
	seq := u32(b.mem, 0).Load()
	u32(b.mem, 4).Add(sockSleeper)
	return seq
}

// DisarmSocket withdraws an ArmSocket without sleeping.
func (b *Bell) DisarmSocket() { u32(b.mem, 4).Add(^uint32(sockSleeper - 1)) }

// SleepSocket is Sleep on the socket bell s (this endpoint's): it waits in
// the Go runtime's network poller, so that the process's other goroutines
// (network readers) run meanwhile, and disarms.
func (b *Bell) SleepSocket(s *sockBell, clk clock.Clock, seq uint32, d time.Duration) {
	defer b.DisarmSocket()
	if u32(b.mem, 0).Load() != seq {
		return
	}
	s.sleep(clk, d)
}

// Ring wakes the sleepers, if any: it advances the sequence number and
// calls futex(2), or sends to the sleeper's socket, only when some
// consumer has armed the bell.
func (b *Bell) Ring() {
	if v := u32(b.mem, 4).Load(); v != 0 {
		u32(b.mem, 0).Add(1)
		if v%sockSleeper != 0 {
			futex(&b.mem[0], futexWake, 1<<30, nil)
		}
		if v >= sockSleeper && b.sock != nil {
			b.sock.wake(b.to)
		}
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
