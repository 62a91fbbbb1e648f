//go:build linux

package shm

import (
	"runtime"
	"slices"
	"time"
)

// yieldFor is how long the progress goroutine waits, on a timer, before
// it looks again at rings no waiter is parked on; it doubles, up to
// Config.Poll, while nothing happens.
const yieldFor = 200 * time.Microsecond

// progress drains the incoming rings for the waiters that parked, checks
// the peers' liveness, and otherwise stays out of the way, until Close.
//
// It sleeps on the doorbell (a futex: woken as soon as a record arrives,
// or room for its records waiting for it) only while a waiter is parked or
// records wait for room. A goroutine in a futex(2) call keeps its
// thread and the runtime's processor until the runtime takes the
// processor back, which can take milliseconds; with GOMAXPROCS=1 (a rank
// per core) the caller would wait that long at every runtime.Gosched.
// Without a parked waiter it waits on a timer instead, which frees the
// processor: a caller in a call polls the rings itself, and between calls
// records wait for the next call's poll, only the non-blocking calls
// left running progress at the timer's pace.
func (t *Transport) progress() {
	defer close(t.done)
	bell := t.bell(t.rank)
	clk := t.clk
	checked := clk.Now()
	polls := t.polls.Load()
	t.probed[t.rank] = true
	probing := true
	timer := clk.NewTimer(time.Hour)
	defer timer.Stop()
	idle := yieldFor
	for {
		select {
		case <-t.stop:
			return
		default:
		}
		// Due once Poll has passed: an idle endpoint wakes at least every
		// Poll, a little late in real time but on the dot in a
		// testing/synctest bubble, where > would skip every other wake-up.
		if clk.Now().Sub(checked) >= t.cfg.poll() {
			t.checkPeers()
			checked = clk.Now()
		}
		if probing {
			t.probePeers()
			probing = slices.Contains(t.probed, false)
		}
		n := t.polls.Load()
		if t.parked.Load() == 0 && t.npend.Load() == 0 {
			if n != polls {
				// A caller polls: it does the work.
				polls, idle = n, yieldFor
			} else if t.drainMu.TryLock() {
				busy := t.drain()
				t.drainMu.Unlock()
				if busy {
					idle = yieldFor
					continue
				}
				idle = min(2*idle, t.cfg.poll())
			}
			timer.Reset(idle)
			select {
			case <-t.stop:
				return
			case <-t.kick: // a waiter parked
			case <-timer.C():
			}
			continue
		}
		polls, idle = n, yieldFor
		if t.drainMu.TryLock() {
			busy := t.drain()
			t.drainMu.Unlock()
			if busy {
				continue
			}
		}
		if t.spinFor(t.cfg.spin(t.size), polls) {
			continue
		}
		if t.sock != nil {
			seq := bell.ArmSocket()
			if t.arrived() || t.polls.Load() != polls || t.parked.Load() == 0 && t.npend.Load() == 0 {
				bell.DisarmSocket()
				continue
			}
			bell.SleepSocket(t.sock, clk, seq, t.cfg.poll())
			continue
		}
		seq := bell.Arm()
		if t.arrived() || t.polls.Load() != polls || t.parked.Load() == 0 && t.npend.Load() == 0 {
			bell.Disarm()
			continue
		}
		bell.Sleep(seq, t.cfg.poll())
	}
}

// arrived reports whether an incoming ring holds a record.
func (t *Transport) arrived() bool {
	for p := range t.size {
		if p != t.rank && !t.in[p].Empty() {
			return true
		}
	}
	return false
}

// spinFor polls the incoming rings for up to d and reports whether a
// record arrived, a caller started polling (the count of Poll calls is no
// longer polls), or a record waiting for room was written.
func (t *Transport) spinFor(d time.Duration, polls uint64) bool {
	if d <= 0 {
		return false
	}
	clk := t.clk
	for start := clk.Now(); clk.Now().Sub(start) < d; {
		if t.arrived() || t.polls.Load() != polls {
			return true
		}
		if n := t.npend.Load(); n > 0 {
			if t.flushAll(); t.npend.Load() < n {
				return true
			}
		}
		runtime.Gosched()
	}
	return false
}
