package arrival

import (
	"slices"
	"testing"
	"time"
)

func TestSMA(t *testing.T) {
	s := NewSMA(3)
	if s.Predict() != nil {
		t.Fatal("a prediction before any call")
	}
	ms := time.Millisecond
	for _, a := range [][]time.Duration{{0, 3 * ms}, {0, 6 * ms}, {3 * ms, 0}, {0, 9 * ms}} {
		s.Observe(a)
	}
	// The last three: (6, 0, 9)/3 on rank 1, (0, 3, 0)/3 on rank 0.
	if got, want := s.Predict(), []time.Duration{ms, 5 * ms}; !slices.Equal(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
	if NewSMA(0).N != 1 {
		t.Fatal("n < 1 not raised to 1")
	}
}

// TestSite shares every two calls: the predictor sees each call's
// arrivals relative to its earliest rank.
func TestSite(t *testing.T) {
	s := NewSite(2, NewSMA(5))
	if s.Arrived(100) || !s.Arrived(250) {
		t.Fatal("sharing due at the wrong call")
	}
	if !slices.Equal(s.Pending(), []time.Duration{100, 250}) {
		t.Fatalf("pending %v", s.Pending())
	}
	// Rank 1's clock readings: 40 late at the first call, 10 early at the
	// second.
	s.Shared([][]time.Duration{{100, 250}, {140, 240}})
	if got, want := s.Prediction(), []time.Duration{5, 20}; !slices.Equal(got, want) {
		t.Fatalf("prediction %v, want %v (means of (0,40) and (10,0))", got, want)
	}
	if len(s.Pending()) != 0 {
		t.Fatal("pending kept after sharing")
	}
	s.Arrived(300)
	s.Failed()
	if s.Prediction() != nil || len(s.Pending()) != 0 {
		t.Fatal("a failed call left a prediction")
	}
}

func TestOffset(t *testing.T) {
	// The other clock runs 1000 ahead; the second sample has the shortest
	// round trip (symmetric delays 5).
	sent := []time.Duration{0, 100, 200}
	got := []time.Duration{60, 110, 240}
	remote := []time.Duration{1000 + 50, 1000 + 105, 1000 + 210}
	off, rtt := Offset(sent, remote, got)
	if off != 1000 || rtt != 10 {
		t.Fatalf("offset %v rtt %v, want 1000 and 10", off, rtt)
	}
	if off, rtt := Offset(nil, nil, nil); off != 0 || rtt != 0 {
		t.Fatal("no samples")
	}
}
