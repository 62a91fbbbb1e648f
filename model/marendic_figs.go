package model

import "math"

// The curves of Marendic et al.'s Figs. 10 and 6, from Table 3.

// MarendicClairvoyantN is the Clairvoyant reduction's time with N segments
// and balanced arrivals: (⌈lg P⌉ + N − 1)(α + (m/N)(β + γ)), rounds of one
// segment each (their Eq. 1 before optimising N). P ≤ 1 gives 0.
func MarendicClairvoyantN(p Params, P int, m float64, N int) float64 {
	if P <= 1 {
		return 0
	}
	return float64(ceilLog2(P)+N-1) * (p.Alpha + m/float64(N)*(p.Beta+p.Gamma))
}

// MarendicTwoWay is the optimal time of the two-way reduction of m bytes,
// the better of their sec. 5.3's strategies: reduce-scatter then gather,
// 2α + mβ + mγ/2, or one message and the root combining, α + mβ + mγ.
func MarendicTwoWay(p Params, m float64) float64 {
	return min(2*p.Alpha+m*p.Beta+m*p.Gamma/2, p.Alpha+m*p.Beta+m*p.Gamma)
}

// MarendicAbsorption is the normalised absorption of the Clairvoyant
// reduction with N segments on P processes that Fig. 6 plots:
// (t(P) − t(2))/t(P), t the time of MarendicClairvoyantN.
func MarendicAbsorption(p Params, P int, m float64, N int) float64 {
	t := MarendicClairvoyantN(p, P, m, N)
	if t == 0 {
		return 0
	}
	return (t - MarendicClairvoyantN(p, 2, m, N)) / t
}

// MarendicMaxAbsorption is the bound of their Proposition 3.7 on the
// normalised absorption of the optimally segmented Clairvoyant reduction
// (Fig. 6's black curve): (t(P) − t_O(2))/t(P), t the Table 3 row and t_O(2)
// MarendicTwoWay.
func MarendicMaxAbsorption(p Params, P int, m float64) float64 {
	t := MarendicClairvoyant(p, P, m)
	if t == 0 {
		return 0
	}
	return (t - MarendicTwoWay(p, m)) / t
}

// MarendicRows are Table 3's rows by name, for P processes, m bytes and the
// radix vector k of Radix-k (Fig. 10's curves; Clairvoyant included).
func MarendicRows(p Params, P int, m float64, k []int) map[string]float64 {
	return map[string]float64{
		"Binomial Tree":   MarendicBinomialTree(p, P, m),
		"Butterfly":       MarendicButterfly(p, P, m),
		"Parallel Ring":   MarendicParallelRing(p, P, m),
		"Radix-k":         MarendicRadixK(p, P, m, k),
		"Linear pipeline": MarendicLinearPipeline(p, P, m),
		"Two-tree":        MarendicTwoTree(p, P, m),
		"Clairvoyant":     MarendicClairvoyant(p, P, m),
	}
}

// MarendicRange is where one Table 3 row is at most Clairvoyant's: its
// least ratio to Clairvoyant and the size there, and the sizes [Lo, Hi]
// between which the ratio is at most 1 (Lo = Hi = 0 when it never is).
type MarendicRange struct {
	MinRatio, MinAt float64
	Lo, Hi          float64
}

// MarendicBeats finds where row (a name of MarendicRows) runs at most as
// long as Clairvoyant for sizes in [lo, hi] bytes: a log-spaced scan of
// 4,096 points, with the ends of the range refined by bisection. It
// assumes one interval, as the rows give for the paper's parameters.
func MarendicBeats(row string, p Params, P int, k []int, lo, hi float64) MarendicRange {
	ratio := func(m float64) float64 {
		rows := MarendicRows(p, P, m, k)
		return rows[row] / rows["Clairvoyant"]
	}
	const n = 4096
	r := MarendicRange{MinRatio: math.Inf(1)}
	prev, prevM := math.NaN(), 0.0
	for i := 0; i <= n; i++ {
		m := lo * math.Pow(hi/lo, float64(i)/n)
		q := ratio(m)
		if q < r.MinRatio {
			r.MinRatio, r.MinAt = q, m
		}
		if i > 0 && (prev > 1) != (q > 1) {
			edge := bisect(func(x float64) bool { return ratio(x) > 1 }, prevM, m, prev > 1)
			if q <= 1 {
				r.Lo = edge
			} else {
				r.Hi = edge
			}
		}
		prev, prevM = q, m
	}
	if r.Lo != 0 && r.Hi == 0 {
		r.Hi = hi
	}
	if r.Hi != 0 && r.Lo == 0 && ratio(lo) <= 1 {
		r.Lo = lo
	}
	return r
}

// bisect returns the point in [a, b] where above changes from aboveAtA.
func bisect(above func(float64) bool, a, b float64, aboveAtA bool) float64 {
	for range 100 {
		mid := (a + b) / 2
		if above(mid) == aboveAtA {
			a = mid
		} else {
			b = mid
		}
	}
	return (a + b) / 2
}
