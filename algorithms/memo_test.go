package algorithms

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestMemo: a key is computed once however many goroutines ask at once,
// and the memo never holds more than its bound (the oldest keys go).
func TestMemo(t *testing.T) {
	m := newMemo[int, int](4)
	var calls atomic.Int32
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			if v := m.get(7, func() int { calls.Add(1); return 49 }); v != 49 {
				t.Errorf("got %d", v)
			}
		})
	}
	wg.Wait()
	if calls.Load() != 1 {
		t.Fatalf("computed %d times", calls.Load())
	}
	for k := range 10 {
		m.get(k, func() int { return k * k })
	}
	if m.len() != 4 {
		t.Fatalf("holds %d keys, bound 4", m.len())
	}
	// The newest keys are kept; an old one is computed again.
	calls.Store(0)
	if v := m.get(9, func() int { calls.Add(1); return -1 }); v != 81 || calls.Load() != 0 {
		t.Fatalf("newest key: %d, %d computations", v, calls.Load())
	}
	if v := m.get(0, func() int { calls.Add(1); return -2 }); v != -2 || calls.Load() != 1 {
		t.Fatalf("dropped key: %d, %d computations", v, calls.Load())
	}
}
