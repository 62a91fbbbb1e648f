//go:build linux

package shm

import (
	"golang.org/x/sys/unix"

	"github.com/scoll/scoll/transport"
)

// Poll drains the incoming rings unless another goroutine is draining
// them (transport.Poller).
//
// When the segment's ranks share cores, a Poll that found nothing yields
// the core (sched_yield(2)) to the other processes, one of which may be the
// rank waited for: waiting ranks then take turns polling, as MPI libraries
// do when oversubscribed, where sleeping and waking by futex would cost a
// wake-up and a context switch per message.
func (t *Transport) Poll() {
	t.polls.Add(1)
	if t.drainMu.TryLock() {
		busy := t.drain()
		t.drainMu.Unlock()
		if !busy && t.shared {
			schedYield()
		}
	}
}

// schedYield gives the core to another runnable thread of the host.
func schedYield() { unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }

// Park tells the progress goroutine that a waiter stopped polling
// (transport.Poller): it drains the rings until Unpark.
func (t *Transport) Park(w *transport.Waiter) {
	t.parked.Add(1)
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

// Unpark undoes Park.
func (t *Transport) Unpark(w *transport.Waiter) { t.parked.Add(-1) }

// SpinHint returns how many times a waiter polls before it parks
// (transport.SpinHinter): about 50 µs of polling when the segment's ranks
// have a core each, a few polls when they share cores, where a spinning
// rank would take the time of the rank it waits for.
func (t *Transport) SpinHint() int {
	if t.shared {
		return sharedSpin
	}
	return 4096
}

// sharedSpin is the SpinHint of ranks that share cores: each poll that
// finds nothing yields the core; after these the waiter parks, so that
// ranks with work (a large copy) get the cores.
const sharedSpin = 64
