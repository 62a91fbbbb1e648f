//go:build linux

package bench

import (
	"syscall"
	"time"
)

// blockFor blocks the calling goroutine for about d without spinning.
// Go's timers wake a goroutine up to a millisecond late when the
// processors are idle (the runtime's netpoller waits in whole
// milliseconds) and later still when they are busy, so the last 1.5 ms
// are slept in nanosleep(2): the thread blocks in the kernel, which wakes
// it within tens of microseconds, and the runtime hands its processor to
// other goroutines meanwhile.
func blockFor(d time.Duration) {
	const fine = 1500 * time.Microsecond
	if d > fine {
		time.Sleep(d - fine)
		d = fine
	}
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
