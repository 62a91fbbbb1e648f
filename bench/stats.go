package bench

import (
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// The statistics of every harness, in one place. gonum's stat package
// (gonum.org/v1/gonum/stat) computes what it has: quantiles (Quantile),
// means (stat.Mean) and the least-squares line of the calibration
// (stat.LinearRegression). Own code remains where no well-kept Go library
// has the function:
//
//   - Median: stat.Quantile(0.5, ...) is the lower middle value of an even
//     sample (Empirical) or an interpolation that is not the middle value of
//     an odd one (LinInterp, Hyndman and Fan's type 4); the median here is
//     the mean of the two middle values, the definition of the tables in
//     docs/ (the imbalance runs take 30 samples), of R's median, NumPy's and
//     Python's statistics.median (scripts/before-after.sh).
//   - the percentile bootstrap of the median, the permutation test of two
//     medians and the Wald–Wolfowitz runs test that the imbalance benchmark
//     takes from Marendic et al. (sec. 6.2), and their absorption time
//     (Definitions 3.6, 3.8, 3.9): gonum has no resampling procedures and
//     neither test.
//
// They are pure functions of their arguments; the randomised ones take
// their generator.

// Median returns the median of x, the mean of the two middle values when
// len(x) is even, or NaN for an empty x. x is not modified.
func Median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return middle(s)
}

// middle returns the median of sorted values (at least one).
func middle(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// sortedMedian sorts x in place and returns its median.
func sortedMedian(x []float64) float64 {
	slices.Sort(x)
	return middle(x)
}

// Quantile returns the q-quantile of x (0 ≤ q ≤ 1) by gonum's
// stat.Quantile of kind stat.Empirical: the smallest value of x that at
// least the fraction q of x does not exceed (Hyndman and Fan's type 1, the
// inverse of the empirical distribution function; a value of the sample,
// never an interpolation). NaN for an empty x; q outside [0, 1] panics, as
// in stat.Quantile. x is not modified.
func Quantile(x []float64, q float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return stat.Quantile(q, stat.Empirical, s, nil)
}

// Mean returns the arithmetic mean of x (gonum's stat.Mean), or NaN for an
// empty x.
func Mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	return stat.Mean(x, nil)
}

// BootstrapMedianCI returns the percentile bootstrap confidence interval
// of the median of x at the given level (0.95 for 95%): the order
// statistics of the n resampled medians at the level's two tails (the
// Empirical quantiles of Quantile), each resample drawn from x with
// replacement by rng. An empty x gives NaN bounds.
func BootstrapMedianCI(x []float64, level float64, n int, rng *rand.Rand) (lo, hi float64) {
	if len(x) == 0 || n < 1 {
		return math.NaN(), math.NaN()
	}
	meds := make([]float64, n)
	buf := make([]float64, len(x))
	for b := range meds {
		for i := range buf {
			buf[i] = x[rng.IntN(len(x))]
		}
		meds[b] = sortedMedian(buf)
	}
	slices.Sort(meds)
	tail := (1 - level) / 2
	return stat.Quantile(tail, stat.Empirical, meds, nil), stat.Quantile(1-tail, stat.Empirical, meds, nil)
}

// PermutationTest compares the medians of samples a and b: it returns their
// ratio median(a)/median(b) and the two-sided p-value of the hypothesis
// that a and b come from one distribution, estimated from n random
// relabellings of the pooled samples drawn from rng: (1 + the number of
// relabellings whose ratio is at least as far from 1, on a logarithmic
// scale, as the observed one) / (n + 1). Identical samples give p = 1;
// well separated ones p = 1/(n+1). Samples must be positive (runtimes);
// an empty sample or a median ≤ 0 gives NaN for both.
func PermutationTest(a, b []float64, n int, rng *rand.Rand) (ratio, p float64) {
	if len(a) == 0 || len(b) == 0 {
		return math.NaN(), math.NaN()
	}
	ma, mb := Median(a), Median(b)
	if !(ma > 0 && mb > 0) {
		return math.NaN(), math.NaN()
	}
	ratio = ma / mb
	obs := math.Abs(math.Log(ratio))
	// A relative tolerance keeps relabellings that reproduce the observed
	// medians, up to rounding, counted as "at least as far".
	obs -= 1e-12 * max(1, obs)
	pool := append(slices.Clone(a), b...)
	na := len(a)
	count := 0
	for range n {
		// A uniform random subset of size na into pool[:na] (partial
		// Fisher–Yates, from whatever order the pool is in); the rest is
		// the other sample.
		for i := range na {
			j := i + rng.IntN(len(pool)-i)
			pool[i], pool[j] = pool[j], pool[i]
		}
		if math.Abs(math.Log(sortedMedian(pool[:na])/sortedMedian(pool[na:]))) >= obs {
			count++
		}
	}
	return ratio, float64(count+1) / float64(n+1)
}

// Runs is the outcome of the Wald–Wolfowitz runs test.
type Runs struct {
	// Runs is the number of runs of consecutive values on one side of the
	// median; Above and Below count the values above and below it (values
	// equal to the median are left out).
	Runs, Above, Below int
	// Z is the normal score of Runs: (Runs − μ)/σ with
	// μ = 2·Above·Below/n + 1 and σ² = (μ − 1)(μ − 2)/(n − 1), n =
	// Above + Below. Strongly negative Z means too few runs (positive
	// serial correlation, trends), strongly positive too many
	// (alternation).
	Z float64
	// P is the two-sided p-value of Z under the standard normal
	// distribution: below 0.05, the sample is serially correlated at the
	// 5% level. With no value on one side of the median, Z is 0 and P 1.
	P float64
}

// RunsTest runs the Wald–Wolfowitz runs test on the sequence x, values
// above and below its median being the two kinds.
func RunsTest(x []float64) Runs {
	var r Runs
	m := Median(x)
	prev := 0
	for _, v := range x {
		s := 0
		switch {
		case v > m:
			s = 1
			r.Above++
		case v < m:
			s = -1
			r.Below++
		default:
			continue
		}
		if s != prev {
			r.Runs++
			prev = s
		}
	}
	n := float64(r.Above + r.Below)
	if r.Above == 0 || r.Below == 0 {
		r.Z, r.P = 0, 1
		return r
	}
	mu := 2*float64(r.Above)*float64(r.Below)/n + 1
	sd := math.Sqrt((mu - 1) * (mu - 2) / (n - 1))
	if sd == 0 {
		r.Z, r.P = 0, 1
		return r
	}
	r.Z = (float64(r.Runs) - mu) / sd
	r.P = math.Erfc(math.Abs(r.Z) / math.Sqrt2)
	return r
}

// Absorption is how much of an arrival imbalance an algorithm absorbs
// (Marendic et al., Definitions 3.6, 3.8, 3.9), in the unit of its inputs.
type Absorption struct {
	// A = t(π) − t(ψ) + I(ψ): the balanced runtime minus the imbalanced
	// one plus the absolute imbalance. A = I(ψ) means no slowdown at all,
	// A = 0 a slowdown by the whole imbalance, A < 0 a slowdown beyond it.
	A float64
	// AN = A / t(π), the normalized absorption time.
	AN float64
	// IN = I(ψ) / t(π), the normalized absolute imbalance.
	IN float64
}

// AbsorptionOf returns the absorption of an algorithm whose runtime is
// balanced under balanced arrivals π and imbalanced under arrivals ψ of
// absolute imbalance imbalance (latest minus earliest arrival).
func AbsorptionOf(balanced, imbalanced, imbalance float64) Absorption {
	a := balanced - imbalanced + imbalance
	return Absorption{A: a, AN: a / balanced, IN: imbalance / balanced}
}
