package bench

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestMedianAgainstSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 40; n++ {
		for range 20 {
			x := make([]float64, n)
			for i := range x {
				x[i] = float64(rng.IntN(7)) // many ties
			}
			s := slices.Sorted(slices.Values(x))
			want := s[n/2]
			if n%2 == 0 {
				want = (s[n/2-1] + s[n/2]) / 2
			}
			orig := slices.Clone(x)
			if got := Median(x); got != want {
				t.Fatalf("Median(%v) = %v, want %v", orig, got, want)
			}
			if !slices.Equal(x, orig) {
				t.Fatal("Median modified its argument")
			}
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
}

// Quantile is the inverse of the empirical distribution function
// (Hyndman and Fan's type 1, R's quantile(x, type = 1)): x[⌈qn⌉] of the
// sorted sample, counting from 1, and x[1] at q = 0.
func TestQuantile(t *testing.T) {
	x := []float64{4, 1, 3, 2, 5} // sorted 1..5
	orig := slices.Clone(x)
	for _, c := range []struct{ q, want float64 }{{0, 1}, {0.2, 1}, {0.25, 2}, {0.5, 3}, {0.9, 5}, {1, 5}} {
		if got := Quantile(x, c.q); got != c.want {
			t.Errorf("Quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if !slices.Equal(x, orig) {
		t.Error("Quantile modified its argument")
	}
	// An even sample: the 0.5-quantile is the lower middle value, where the
	// median is the mean of the two.
	if q, m := Quantile([]float64{1, 2, 3, 10}, 0.5), Median([]float64{1, 2, 3, 10}); q != 2 || m != 2.5 {
		t.Errorf("even sample: Quantile(0.5) = %v, Median = %v; want 2 and 2.5", q, m)
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("Quantile(nil) is not NaN")
	}
}

// Known means, and the median's definition on small samples (the one the
// tables in docs/ use).
func TestMeanAndMedianKnown(t *testing.T) {
	for _, c := range []struct {
		x            []float64
		mean, median float64
	}{
		{[]float64{7}, 7, 7},
		{[]float64{1, 2}, 1.5, 1.5},
		{[]float64{3, 1, 2}, 2, 2},
		{[]float64{10, 1, 2, 3}, 4, 2.5},
		{[]float64{2, 4, 4, 4, 5, 5, 7, 9}, 5, 4.5},
	} {
		if got := Mean(c.x); got != c.mean {
			t.Errorf("Mean(%v) = %v, want %v", c.x, got, c.mean)
		}
		if got := Median(c.x); got != c.median {
			t.Errorf("Median(%v) = %v, want %v", c.x, got, c.median)
		}
	}
	if !math.IsNaN(Mean(nil)) {
		t.Error("Mean(nil) is not NaN")
	}
}

// The calibration's fit on points of a known line: one-way time 2 µs +
// 0.5 ns per byte, the small sizes off the line by ±0.1 µs (their mean is
// on it).
func TestCalibrationFit(t *testing.T) {
	line := func(b int) float64 { return 2e-6 + 0.5e-9*float64(b) }
	cal := &Calibration{}
	for i, b := range []int{8, 64, 512, 4 << 10, 32 << 10, 256 << 10, 1 << 20} {
		y := line(b)
		if b <= 512 {
			y += []float64{-1e-7, 0, 1e-7}[i]
		}
		cal.Points = append(cal.Points, CalPoint{Bytes: b, OneWayS: y})
	}
	cal.fit()
	if math.Abs(cal.Beta-0.5e-9) > 1e-18 || math.Abs(cal.Alpha-2e-6) > 1e-15 {
		t.Errorf("α = %g, β = %g; want 2e-6 and 5e-10", cal.Alpha, cal.Beta)
	}
	// A falling line has no negative β.
	down := &Calibration{Points: []CalPoint{{Bytes: 32 << 10, OneWayS: 2e-6}, {Bytes: 1 << 20, OneWayS: 1e-6}}}
	if down.fit(); down.Beta != 0 {
		t.Errorf("falling points: β = %g, want 0", down.Beta)
	}
}

// The z-scores by hand: n1 = n2 = 5, μ = 6, σ² = 2·25·40/(100·9) = 20/9.
func TestRunsTest(t *testing.T) {
	sigma := math.Sqrt(20.0 / 9)
	for _, c := range []struct {
		name string
		x    []float64
		runs int
		z    float64
	}{
		{"trend", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 2, (2 - 6) / sigma},
		{"alternating", []float64{1, 10, 2, 9, 3, 8, 4, 7, 5, 6}, 10, (10 - 6) / sigma},
		// The median 3 is left out: - - + + → 2 runs, n1 = n2 = 2, μ = 3,
		// σ² = 2·1/3.
		{"ties", []float64{1, 2, 3, 4, 5}, 2, (2 - 3) / math.Sqrt(2.0/3)},
	} {
		r := RunsTest(c.x)
		if r.Runs != c.runs || math.Abs(r.Z-c.z) > 1e-9 {
			t.Errorf("%s: %d runs, z = %.4f; want %d, %.4f", c.name, r.Runs, r.Z, c.runs, c.z)
		}
		// Two-sided normal p: |z| = 2.683 → 0.0073.
		if want := math.Erfc(math.Abs(c.z) / math.Sqrt2); math.Abs(r.P-want) > 1e-12 {
			t.Errorf("%s: p = %v, want %v", c.name, r.P, want)
		}
	}
	if r := RunsTest([]float64{1, 10, 2, 9, 3, 8, 4, 7, 5, 6}); !(r.P < 0.01) {
		t.Errorf("alternating sequence: p = %v, want < 0.01", r.P)
	}
	if r := RunsTest([]float64{2, 2, 2}); r.Z != 0 || r.P != 1 {
		t.Errorf("constant sequence: %+v, want z 0, p 1", r)
	}
}

func TestPermutationTest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a := []float64{5, 3, 8, 1, 9, 2, 7}
	ratio, p := PermutationTest(a, slices.Clone(a), 2000, rng)
	if ratio != 1 || p != 1 {
		t.Errorf("identical samples: ratio %v, p %v; want 1, 1", ratio, p)
	}
	var lo, hi []float64
	for i := range 20 {
		lo = append(lo, float64(1+i))
		hi = append(hi, float64(100+i))
	}
	ratio, p = PermutationTest(hi, lo, 2000, rng)
	if want := Median(hi) / Median(lo); ratio != want {
		t.Errorf("ratio %v, want %v", ratio, want)
	}
	if p > 0.001 {
		t.Errorf("separated samples: p = %v, want ≤ 0.001 (1/2001)", p)
	}
	// Two samples of one distribution: p is not small (this seed).
	var x, y []float64
	for range 50 {
		x = append(x, 1+rng.Float64())
		y = append(y, 1+rng.Float64())
	}
	if _, p := PermutationTest(x, y, 2000, rng); p < 0.05 {
		t.Errorf("one distribution: p = %v", p)
	}
	if r, p := PermutationTest(nil, a, 10, rng); !math.IsNaN(r) || !math.IsNaN(p) {
		t.Error("empty sample accepted")
	}
}

func TestBootstrapMedianCI(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var x []float64
	for range 101 {
		x = append(x, rng.ExpFloat64())
	}
	m := Median(x)
	lo, hi := BootstrapMedianCI(x, 0.95, 2000, rng)
	if !(lo <= m && m <= hi && lo < hi) {
		t.Errorf("CI [%v, %v] does not contain the median %v", lo, hi, m)
	}
	// Wider at a higher level, narrower with more data.
	lo99, hi99 := BootstrapMedianCI(x, 0.99, 2000, rng)
	if !(lo99 <= lo && hi99 >= hi) {
		t.Errorf("99%% CI [%v, %v] inside the 95%% one [%v, %v]", lo99, hi99, lo, hi)
	}
	if lo, hi := BootstrapMedianCI([]float64{7}, 0.95, 100, rng); lo != 7 || hi != 7 {
		t.Errorf("one value: [%v, %v]", lo, hi)
	}
}

func TestAbsorptionOf(t *testing.T) {
	// Balanced 100, imbalance 300: a non-robust algorithm takes 400
	// (absorbs nothing), a robust one 320 (absorbs 80).
	if a := AbsorptionOf(100, 400, 300); a.A != 0 || a.AN != 0 || a.IN != 3 {
		t.Errorf("non-robust: %+v", a)
	}
	if a := AbsorptionOf(100, 320, 300); a.A != 80 || a.AN != 0.8 || a.IN != 3 {
		t.Errorf("robust: %+v", a)
	}
	if a := AbsorptionOf(100, 450, 300); a.A != -50 {
		t.Errorf("adverse: %+v", a)
	}
}
