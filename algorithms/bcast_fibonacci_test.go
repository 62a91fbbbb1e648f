package algorithms

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/schedule"
)

// bestBroadcast is the least LogP broadcast time of P processes over every
// tree and sending order, by exhaustive search: each step picks any
// informed process to send to the next new one.
func bestBroadcast(P int, lp LogP) float64 {
	step := math.Max(lp.G, lp.O)
	next := []float64{0} // each informed process's next send time
	best := math.Inf(1)
	var rec func(informed int, latest float64)
	rec = func(informed int, latest float64) {
		if latest >= best {
			return
		}
		if informed == P {
			best = latest
			return
		}
		for x := range next {
			t := next[x]
			arrive := t + 2*lp.O + lp.L
			next[x] = t + step
			next = append(next, arrive)
			rec(informed+1, math.Max(latest, arrive))
			next = next[:len(next)-1]
			next[x] = t
		}
	}
	rec(1, 0)
	return best
}

// TestFibonacciOptimal: the greedy tree's broadcast time equals the
// exhaustive optimum for P ≤ 8 under several models, and with L = g, o = 0
// it is the binomial tree (⌈lg P⌉ steps).
func TestFibonacciOptimal(t *testing.T) {
	for _, lp := range []LogP{DefaultLogP, {L: 2, O: 0, G: 1}, {L: 3, O: 1, G: 1}, {L: 1, O: 1, G: 2}, {L: 5, O: 0.5, G: 1}, {L: 0.6, O: 4.7, G: 0.2}} {
		for P := 1; P <= 8; P++ {
			_, _, arrive := FibonacciTree(P, lp)
			got := slices.Max(arrive)
			if want := bestBroadcast(P, lp); math.Abs(got-want) > 1e-12 {
				t.Errorf("%+v P=%d: greedy %g, optimum %g", lp, P, got, want)
			}
		}
	}
	for P := 1; P <= 64; P++ {
		_, _, arrive := FibonacciTree(P, DefaultLogP)
		if got := slices.Max(arrive); got != float64(ceilLog2(P)) {
			t.Errorf("L = g = 1, o = 0, P=%d: %g, want lg P = %d", P, got, ceilLog2(P))
		}
	}
	// L = 2g: N(t) = N(t−1) + N(t−2) processes are informed by time t
	// (1, 1, 2, 3, 5, 8, 13, ...): the Fibonacci numbers.
	for t0, n := range []int{1, 1, 2, 3, 5, 8, 13, 21} {
		_, _, arrive := FibonacciTree(n+1, LogP{L: 2, O: 0, G: 1})
		if got := slices.Max(arrive); got != float64(t0+1) && t0 > 0 {
			t.Errorf("L = 2, g = 1: %d processes by time %g, want the %d-th after %d", n+1, got, n+1, t0)
		}
	}
}

func TestFibonacciBadModel(t *testing.T) {
	for _, lp := range []LogP{{L: -1, G: 1}, {L: 1, O: math.NaN(), G: 1}, {L: 1}} {
		p := Params{Spec: schedule.Spec{Coll: schedule.Bcast, Size: 4, Count: 3}, ElemSize: 4, LogP: &lp}
		if _, err := mustLookup(t, schedule.Bcast, Fibonacci).Schedule(&p); !errors.Is(err, errs.InvalidArgument) {
			t.Errorf("%+v: %v, want ErrInvalidArgument", lp, err)
		}
	}
}
