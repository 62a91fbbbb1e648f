package model

import (
	"math"
	"testing"
)

func curieParams(t *testing.T) Params {
	t.Helper()
	p, err := ParamsByName("curie")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMarendicClairvoyantN: the row at the optimal segment count is Table
// 3's Clairvoyant row, and no integer N beats it.
func TestMarendicClairvoyantN(t *testing.T) {
	p := curieParams(t)
	for _, m := range []float64{4e3, 4e5, 4e7} {
		opt := NOpt(7, m, p.Alpha, p.Beta, p.Gamma)
		row := MarendicClairvoyant(p, 128, m)
		// The real-valued optimum equals the row (Eq. 2 from Eq. 1).
		tOpt := 6*p.Alpha + 6*(m/opt)*(p.Beta+p.Gamma) + opt*p.Alpha + m*(p.Beta+p.Gamma)
		if math.Abs(tOpt-row) > 1e-12*row {
			t.Fatalf("m=%g: Eq. 1 at N_opt %g, row %g", m, tOpt, row)
		}
		for _, N := range []int{1, int(opt), int(opt) + 1, 4 * int(opt)} {
			if got := MarendicClairvoyantN(p, 128, m, max(N, 1)); got < row*(1-1e-12) {
				t.Fatalf("m=%g N=%d: %g below the optimum %g", m, N, got, row)
			}
		}
	}
	if MarendicClairvoyantN(p, 1, 1e6, 4) != 0 {
		t.Fatal("one process costs time")
	}
}

// TestMarendicAbsorption: with N segments, t(P) − t(2) is ⌈lg P⌉ − 1
// rounds, so Fig. 6's curves are (⌈lg P⌉ − 1)/(⌈lg P⌉ + N − 1) for every
// size; the bound of Proposition 3.7 lies in [0, 1) and uses the better
// two-way strategy (one message below m = 2α/γ).
func TestMarendicAbsorption(t *testing.T) {
	p := curieParams(t)
	for _, N := range []int{1, 4, 16} {
		for _, m := range []float64{4e2, 4e4, 4e6} {
			want := 6 / float64(6+N)
			if got := MarendicAbsorption(p, 128, m, N); math.Abs(got-want) > 1e-12 {
				t.Fatalf("N=%d m=%g: %g, want %g", N, m, got, want)
			}
		}
	}
	switchAt := 2 * p.Alpha / p.Gamma
	for _, m := range []float64{switchAt / 10, switchAt * 10} {
		two := MarendicTwoWay(p, m)
		oneMsg := p.Alpha + m*p.Beta + m*p.Gamma
		split := 2*p.Alpha + m*p.Beta + m*p.Gamma/2
		if want := map[bool]float64{true: oneMsg, false: split}[m < switchAt]; two != want {
			t.Fatalf("m=%g: two-way %g, want %g", m, two, want)
		}
		a := MarendicMaxAbsorption(p, 128, m)
		if !(a >= 0 && a < 1) {
			t.Fatalf("m=%g: bound %g", m, a)
		}
		tc := MarendicClairvoyant(p, 128, m)
		if math.Abs(a-(tc-two)/tc) > 1e-12 {
			t.Fatalf("m=%g: bound %g", m, a)
		}
	}
}

// TestMarendicBeats: the range found for Butterfly against Clairvoyant
// has ratio 1 at its ends, below 1 inside, above outside, and holds the
// least ratio.
func TestMarendicBeats(t *testing.T) {
	p := curieParams(t)
	k := []int{4, 4, 8}
	r := MarendicBeats("Butterfly", p, 128, k, 4e2, 4e8)
	ratio := func(m float64) float64 {
		rows := MarendicRows(p, 128, m, k)
		return rows["Butterfly"] / rows["Clairvoyant"]
	}
	if !(r.Lo > 0 && r.Hi > r.Lo && r.MinRatio < 1 && r.MinAt > r.Lo && r.MinAt < r.Hi) {
		t.Fatalf("%+v", r)
	}
	for _, m := range []float64{r.Lo, r.Hi} {
		if math.Abs(ratio(m)-1) > 1e-9 {
			t.Fatalf("ratio %g at an end %g", ratio(m), m)
		}
	}
	if ratio(r.Lo*0.9) <= 1 || ratio(r.Hi*1.1) <= 1 || ratio(math.Sqrt(r.Lo*r.Hi)) >= 1 {
		t.Fatalf("not one interval around %+v", r)
	}
	if none := MarendicBeats("Binomial Tree", p, 128, k, 4e5, 4e8); none.Lo != 0 || none.MinRatio <= 1 {
		t.Fatalf("binomial beats clairvoyant at large sizes: %+v", none)
	}
}

// TestBcastRoundOptimal: the bound is the least of (n + ⌈lg p⌉ − 1)(α +
// βs/n) over integers n (checked by scanning), the binomial tree's time at
// small s, and never above the notes' reference where that one holds.
func TestBcastRoundOptimal(t *testing.T) {
	for _, c := range []struct {
		alpha, beta float64
		p           int
		s           float64
	}{
		{2e-6, 1e-9, 4, 1000}, {2e-6, 1e-9, 1000, 1 << 20}, {1e-6, 1e-9, 4096, 64 << 20}, {3e-7, 1.25e-10, 17, 8}, {1e-6, 1e-9, 2, 1e6},
	} {
		got, n := BcastRoundOptimal(c.alpha, c.beta, c.p, c.s)
		L := float64(ceilLog2(c.p))
		best := math.Inf(1)
		for k := 1; k <= 1<<16; k++ {
			best = min(best, (float64(k)+L-1)*(c.alpha+c.beta*c.s/float64(k)))
		}
		if math.Abs(got-best) > 1e-12*best || math.Abs(got-(float64(n)+L-1)*(c.alpha+c.beta*c.s/float64(n))) > 1e-12*best {
			t.Errorf("%+v: %g at n=%d, scan %g", c, got, n, best)
		}
	}
	// Tiny messages: one packet, the binomial tree's ⌈lg p⌉(α + βs).
	if got, n := BcastRoundOptimal(1e-6, 1e-9, 64, 8); n != 1 || math.Abs(got-6*(1e-6+8e-9)) > 1e-18 {
		t.Errorf("small s: %g at n=%d", got, n)
	}
	if got, _ := BcastRoundOptimal(1e-6, 1e-9, 1, 8); got != 0 {
		t.Errorf("one process: %g", got)
	}
}
