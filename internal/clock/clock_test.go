package clock_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/scoll/scoll/internal/clock"
)

// TestRealTimers: in a synctest bubble, Real's timer fires exactly d after
// it was made and not before, its ticker every d, and a stopped timer
// reports that it stopped it.
func TestRealTimers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.Real{}
		start := c.Now()
		tm := c.NewTimer(3 * time.Second)
		time.Sleep(3*time.Second - 1)
		select {
		case <-tm.C():
			t.Fatal("timer fired before its time")
		default:
		}
		if at := <-tm.C(); at.Sub(start) != 3*time.Second {
			t.Fatalf("timer fired after %v, want 3s", at.Sub(start))
		}
		if tm.Stop() {
			t.Error("Stop of a fired timer reports that it stopped it")
		}
		if !c.NewTimer(time.Second).Stop() {
			t.Error("Stop of a pending timer reports that it had fired")
		}
		tk := c.NewTicker(time.Second)
		defer tk.Stop()
		for i := 1; i <= 3; i++ {
			if at := <-tk.C(); at.Sub(start) != time.Duration(3+i)*time.Second {
				t.Fatalf("tick %d after %v, want %ds", i, at.Sub(start), 3+i)
			}
		}
	})
}

// TestTimerReset: a fired timer that is reset fires d after the Reset; a
// pending one fires at its new time only, and Reset reports which it was.
func TestTimerReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.Real{}
		tm := c.NewTimer(time.Second)
		<-tm.C()
		start := c.Now()
		if tm.Reset(2 * time.Second) {
			t.Error("Reset of a fired timer reports it pending")
		}
		if !tm.Reset(time.Second) {
			t.Error("Reset of a pending timer reports it fired or stopped")
		}
		if at := <-tm.C(); at.Sub(start) != time.Second {
			t.Fatalf("reset timer fired after %v, want 1s", at.Sub(start))
		}
		time.Sleep(5 * time.Second)
		select {
		case <-tm.C():
			t.Fatal("the timer fired twice")
		default:
		}
	})
}

// TestSleep: Sleep takes the whole duration when nothing cancels it, and
// returns false at the moment cancel closes.
func TestSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.Real{}
		start := c.Now()
		if !clock.Sleep(c, 2*time.Second, nil) {
			t.Fatal("uncancelled sleep reports a cancel")
		}
		if d := c.Now().Sub(start); d != 2*time.Second {
			t.Fatalf("slept %v, want 2s", d)
		}
		cancel := make(chan struct{})
		go func() {
			time.Sleep(500 * time.Millisecond)
			close(cancel)
		}()
		start = c.Now()
		if clock.Sleep(c, time.Hour, cancel) {
			t.Fatal("cancelled sleep reports the whole duration")
		}
		if d := c.Now().Sub(start); d != 500*time.Millisecond {
			t.Fatalf("cancelled after %v, want 500ms", d)
		}
	})
}
