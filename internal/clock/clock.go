// Package clock is where scoll's transports take time from: the system
// clock by default, another one where a caller or a test passes it in.
//
// Deadlines a transport sets on network connections are computed from Now,
// and connections enforce them in the runtime's time, so a clock given to a
// transport must agree with the runtime's. Real does, inside a
// testing/synctest bubble too, where the runtime's time is the bubble's fake
// time: tests of timeouts run the transport with Real in a bubble, over
// in-memory connections (goroutines blocked on real sockets never let a
// bubble's time advance).
package clock

import "time"

// Clock tells the time and makes timers.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer returns a timer that fires once, d from now.
	NewTimer(d time.Duration) Timer
	// NewTicker returns a ticker that fires every d (d > 0).
	NewTicker(d time.Duration) Ticker
}

// Timer fires once, as a time.Timer does.
type Timer interface {
	// C returns the channel the timer sends the time on when it fires.
	C() <-chan time.Time
	// Stop stops the timer and reports whether it stopped it before it
	// fired.
	Stop() bool
	// Reset makes the timer fire d from now, stopped, fired or pending,
	// and reports whether it was pending; no value sent before the Reset
	// is received after it (as time.Timer.Reset since Go 1.23).
	Reset(d time.Duration) bool
}

// Ticker fires at intervals, as a time.Ticker does.
type Ticker interface {
	// C returns the channel the ticker sends the time on.
	C() <-chan time.Time
	// Stop stops the ticker.
	Stop()
}

// Real is the system clock of package time.
type Real struct{}

var _ Clock = Real{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// NewTimer returns a time.Timer.
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

// NewTicker returns a time.Ticker.
func (Real) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time { return r.t.C }
func (r realTicker) Stop()               { r.t.Stop() }

// Sleep waits d on c, or less when cancel is closed first, and reports
// whether the whole d passed. A nil cancel never closes.
func Sleep(c Clock, d time.Duration, cancel <-chan struct{}) bool {
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-cancel:
		return false
	}
}
