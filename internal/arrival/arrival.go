// Package arrival predicts when the ranks of a communicator reach a call
// site: each rank measures its arrival at every call of the site, the
// ranks share their measurements every few calls, and a Predictor turns
// the history into the next call's arrival times (Marendic et al. sec. 4:
// predicted arrivals drive the clairvoyant reduction). Every rank feeds
// the same shared measurements to its predictor in the same order, so
// every rank predicts the same times.
package arrival

import (
	"slices"
	"time"
)

// Predictor predicts the ranks' arrival times at a call site's next call
// from those of the calls before. Times are relative to each call's
// earliest rank (which arrives at 0). Implementations must be
// deterministic: every rank feeds its own predictor the same history.
type Predictor interface {
	// Observe adds the arrival times of one call, one per rank.
	Observe(arrivals []time.Duration)
	// Predict returns the predicted arrival times of the next call, one
	// per rank, or nil when it has no prediction.
	Predict() []time.Duration
}

// SMA is the simple moving average of the last N calls' arrival times, per
// rank (Marendic et al. use N = 5).
type SMA struct {
	N    int
	hist [][]time.Duration // the last N calls, oldest first
}

// NewSMA returns the moving average over the last n calls (n < 1: 1).
func NewSMA(n int) *SMA { return &SMA{N: max(n, 1)} }

// Observe implements Predictor.
func (s *SMA) Observe(a []time.Duration) {
	s.hist = append(s.hist, slices.Clone(a))
	if len(s.hist) > s.N {
		s.hist = s.hist[len(s.hist)-s.N:]
	}
}

// Predict implements Predictor: the mean of the calls held, per rank
// (nil before the first call).
func (s *SMA) Predict() []time.Duration {
	if len(s.hist) == 0 {
		return nil
	}
	out := make([]time.Duration, len(s.hist[len(s.hist)-1]))
	for r := range out {
		var sum time.Duration
		n := 0
		for _, h := range s.hist {
			if r < len(h) {
				sum += h[r]
				n++
			}
		}
		out[r] = sum / time.Duration(n)
	}
	return out
}

// Site is one rank's record of one call site: its own arrivals not yet
// shared, and the prediction made from what was shared.
type Site struct {
	// Every is how many calls pass between two sharings (at least 1).
	Every int
	pred  Predictor
	// pending are this rank's arrival times (on the common clock) at the
	// calls since the last sharing.
	pending []time.Duration
	next    []time.Duration // the prediction for the next call
	broken  bool
}

// NewSite returns a call site that shares every k calls and predicts with
// p.
func NewSite(k int, p Predictor) *Site { return &Site{Every: max(k, 1), pred: p} }

// Prediction returns the arrival times predicted for the next call (nil:
// none yet, or the site stopped predicting after a failed call).
func (s *Site) Prediction() []time.Duration {
	if s.broken {
		return nil
	}
	return s.next
}

// Arrived records this rank's arrival at a call and reports whether the
// call is the last before a sharing.
func (s *Site) Arrived(at time.Duration) (share bool) {
	s.pending = append(s.pending, at)
	return len(s.pending) >= s.Every
}

// Failed drops the call just recorded: the site stops predicting (the ranks
// may no longer agree on its history).
func (s *Site) Failed() {
	s.broken = true
	s.pending = s.pending[:0]
}

// Pending returns this rank's unshared arrival times.
func (s *Site) Pending() []time.Duration { return s.pending }

// Shared takes every rank's pending times (all[r][i]: rank r's arrival at
// the i-th call since the last sharing), feeds each call's arrivals,
// relative to its earliest, to the predictor, and updates the prediction.
func (s *Site) Shared(all [][]time.Duration) {
	s.pending = s.pending[:0]
	if len(all) == 0 {
		return
	}
	for i := range all[0] {
		a := make([]time.Duration, len(all))
		first := all[0][i]
		for r := range all {
			a[r] = all[r][i]
			first = min(first, a[r])
		}
		for r := range a {
			a[r] -= first
		}
		s.pred.Observe(a)
	}
	s.next = s.pred.Predict()
}

// Offset estimates how far another clock runs ahead of this one from
// ping-pong samples (Cristian's method): for each, this rank sent at sent,
// the other read its clock at remote, and the reply came back at got (sent
// and got on this clock). The sample with the shortest round trip bounds
// the error best; its offset is remote − (sent + got)/2. It returns the
// offset and the round trip it came from (half of it bounds the error).
func Offset(sent, remote, got []time.Duration) (offset, rtt time.Duration) {
	best := -1
	for i := range sent {
		if d := got[i] - sent[i]; best < 0 || d < rtt {
			best, rtt = i, d
		}
	}
	if best < 0 {
		return 0, 0
	}
	return remote[best] - (sent[best]+got[best])/2, rtt
}
