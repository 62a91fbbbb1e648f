package model

import "math"

// The rows of Marendic et al.'s Table 3: the time in seconds for the last
// process to finish a reduction of m bytes per process over P processes, in
// the linear (α-β-γ) model of their sec. 5.1, on a homogeneous, fully
// connected, full-duplex network with balanced arrival times. As in the
// paper, n = ⌈log2 P⌉ and the segmented algorithms (linear pipeline,
// two-tree, Clairvoyant) are charged with their optimal number of segments.
// P ≤ 1 gives 0.

// MarendicBinomialTree is the binomial tree row: n(α + βm + γm).
func MarendicBinomialTree(p Params, P int, m float64) float64 {
	if P <= 1 {
		return 0
	}
	return float64(ceilLog2(P)) * (p.Alpha + p.Beta*m + p.Gamma*m)
}

// MarendicButterfly is the butterfly row (reduce-scatter by recursive
// halving, then a gather; P a power of two):
// 2αn + 2((P−1)/P)mβ + ((P−1)/P)mγ.
func MarendicButterfly(p Params, P int, m float64) float64 {
	if P <= 1 {
		return 0
	}
	n, f := float64(ceilLog2(P)), float64(P-1)/float64(P)
	return 2*p.Alpha*n + 2*f*m*p.Beta + f*m*p.Gamma
}

// MarendicParallelRing is the parallel ring row (commutative operators only):
// (P − 1 + n)α + ((P−1)/P)·m(2β + γ).
func MarendicParallelRing(p Params, P int, m float64) float64 {
	if P <= 1 {
		return 0
	}
	n, f := float64(ceilLog2(P)), float64(P-1)/float64(P)
	return (float64(P-1)+n)*p.Alpha + f*m*(2*p.Beta+p.Gamma)
}

// MarendicRadixK is the Radix-k row for the radix vector k, whose product
// must be P: (Σ(k_i − 1) + n)α + ((P−1)/P)·m(2β + γ). With k = [2, …, 2] it
// equals the butterfly row. A vector whose product is not P, or with an
// entry below 2, gives NaN.
func MarendicRadixK(p Params, P int, m float64, k []int) float64 {
	if P <= 1 {
		return 0
	}
	prod, sum := 1, 0
	for _, ki := range k {
		if ki < 2 || prod > P/ki {
			return math.NaN()
		}
		prod *= ki
		sum += ki - 1
	}
	if prod != P {
		return math.NaN()
	}
	n, f := float64(ceilLog2(P)), float64(P-1)/float64(P)
	return (float64(sum)+n)*p.Alpha + f*m*(2*p.Beta+p.Gamma)
}

// MarendicLinearPipeline is the linear pipeline row, optimally segmented:
// (P−2)α + 2√((P−2)α)·√(m(β+γ)) + βm + γm.
func MarendicLinearPipeline(p Params, P int, m float64) float64 {
	if P <= 1 {
		return 0
	}
	q := float64(P-2) * p.Alpha
	return q + 2*math.Sqrt(q)*math.Sqrt(m*(p.Beta+p.Gamma)) + p.Beta*m + p.Gamma*m
}

// MarendicTwoTree is the two-tree row, optimally segmented:
// 4(n−1)α + 4√((n−1)α)·√(βm/2) + mβ + 2mγ. It is the bound of their source
// (Sanders, Speck, Träff), not the time of a schedule: the registered
// reduce two-tree takes (D + S − 1)·2(α + sβ + sγ) for S segments of s
// bytes a half and trees of depth D = n on a power of two ranks, which at
// its best S is 2(n−1)α + 2√(2(n−1)α·m(β+γ)) + m(β+γ): below the row in α
// and γ, above it in the root term, which carries γ too.
func MarendicTwoTree(p Params, P int, m float64) float64 {
	if P <= 1 {
		return 0
	}
	q := float64(ceilLog2(P)-1) * p.Alpha
	return 4*q + 4*math.Sqrt(q)*math.Sqrt(p.Beta*m/2) + m*p.Beta + 2*m*p.Gamma
}

// MarendicClairvoyant is the Clairvoyant row, the optimal equi-segmenting
// reduction of their Eq. (2) (commutative operators only):
// (n−1)α + 2√((n−1)α)·√(m(β+γ)) + mβ + mγ.
func MarendicClairvoyant(p Params, P int, m float64) float64 {
	if P <= 1 {
		return 0
	}
	q := float64(ceilLog2(P)-1) * p.Alpha
	return q + 2*math.Sqrt(q)*math.Sqrt(m*(p.Beta+p.Gamma)) + m*p.Beta + m*p.Gamma
}

// Marendic returns the Table 3 row that models the registered reduce
// algorithm alg for P processes and m bytes: binomial (Binomial Tree),
// rabenseifner (Butterfly: the same schedule on a power of two ranks),
// parallel-ring (Parallel Ring), radix-k (Radix-k, for the radix vector k,
// which the caller passes: algorithms.RadixVector gives the algorithm's),
// linear-pipeline (Linear pipeline) and two-tree (Two-tree); the segmented
// rows are charged with the optimal segment count, as in the paper. ok is
// false for other algorithms, and for radix-k without a vector. (The
// registered reduce pipeline runs two chains, one from each end; no row
// models it.)
func Marendic(alg string, p Params, P int, m float64, k ...int) (row string, t float64, ok bool) {
	switch alg {
	case "binomial":
		return "Binomial Tree", MarendicBinomialTree(p, P, m), true
	case "rabenseifner":
		return "Butterfly", MarendicButterfly(p, P, m), true
	case "parallel-ring":
		return "Parallel Ring", MarendicParallelRing(p, P, m), true
	case "radix-k":
		if len(k) == 0 {
			return "", 0, false
		}
		return "Radix-k", MarendicRadixK(p, P, m, k), true
	case "linear-pipeline":
		return "Linear pipeline", MarendicLinearPipeline(p, P, m), true
	case "two-tree":
		return "Two-tree", MarendicTwoTree(p, P, m), true
	}
	return "", 0, false
}

// NOpt returns the optimal number of segments of an equi-segmenting
// reduction (Marendic et al., sec. 5.2):
//
//	N_opt = √((n−1)·m·(β+γ)/α)
//
// where n is the number of rounds the first segment needs to reach the root
// — the paper's n = ⌈log2 P⌉ for P processes — and m is the problem size,
// the bytes each process contributes; α, β, γ are the linear model's
// latency, time per byte sent and time per byte combined. It minimises
// T(N) = (n−1)α + (n−1)(m/N)(β+γ) + Nα + m(β+γ), the time of n + N − 1
// rounds of one segment each (their Eq. 1). The result is real; callers
// round it and keep it within [1, m/element size]. It is 0 when
// (n−1)·m·(β+γ) is 0 (one segment is best) and +Inf when only α is 0.
func NOpt(n int, m, alpha, beta, gamma float64) float64 {
	num := float64(n-1) * m * (beta + gamma)
	if num == 0 {
		return 0
	}
	return math.Sqrt(num / alpha)
}

// BcastLowerBound returns the lower bound on the time of broadcasting s
// bytes from one of p processes with a fixed packet size, in the α-β model
// (Heath and Solomonik's notes, sec. 5.2.3):
//
//	T ≥ (√(α·log2(p−1)) + √(β·s))²
//
// The notes derive it from (1) the time the root takes to send out all k
// packets of s/k bytes, k(α + βs/k), and (2) the time the last packet then
// needs to reach the other p−1 processes, log2(p−1) steps of α + βs/k,
// minimised over k. Step (2) lets the last packet spread from one holder
// among the p−1 others, so the bound holds for protocols whose root sends
// every packet once — chain and tree pipelines, two-tree, split-binary
// tree. A root that sends the same data again takes part in step (2), and
// such protocols can beat the formula when β·s is small against α: the
// binomial tree, log2(p)·(α + βs), does whenever β·s < 4α·lg p/(lg p − 1)²
// (p = 4, α = 2 µs, β = 1 ns/B, s = 1000 B: 6 µs against a "bound" of
// 7.7 µs). Letting the root keep forwarding gives log2(p) − 1 steps in (2)
// instead, and (√(α·(log2 p − 1)) + √(β·s))² bounds those protocols too.
//
// For p = 2 the formula degenerates to β·s: the minimisation lets the number
// of packets fall below one. A broadcast to one other process needs at least
// one message, and one message of s bytes is optimal, so the bound returned
// is α + β·s. (For p ≥ 3 the formula likewise assumes the best packet count
// √(log2(p−1)·βs/α), which is below one when β·s < α/log2(p−1); the bound is
// then valid but not tight.) For p ≤ 1 nothing is sent and the bound is 0.
func BcastLowerBound(alpha, beta float64, p int, s float64) float64 {
	switch {
	case p <= 1:
		return 0
	case p == 2:
		return alpha + beta*s
	}
	a := math.Sqrt(alpha * math.Log2(float64(p-1)))
	b := math.Sqrt(beta * s)
	return (a + b) * (a + b)
}

// BcastRoundOptimal returns the round-optimal pipelined bound on
// broadcasting s bytes from one of p processes in the α-β model, for
// protocols that send one packet per process and round (single-port): n
// packets need at least n + ⌈log₂ p⌉ − 1 rounds, each at least α + βs/n,
// so T ≥ min over n ≥ 1 of (n + ⌈log₂ p⌉ − 1)(α + βs/n). It returns the
// bound and the n that attains it. Unlike BcastLowerBound it holds for
// every such protocol, the binomial tree (n = 1) included; p ≤ 1 gives 0.
func BcastRoundOptimal(alpha, beta float64, p int, s float64) (t float64, n int) {
	if p <= 1 {
		return 0, 1
	}
	L := float64(ceilLog2(p))
	f := func(n float64) float64 { return (n + L - 1) * (alpha + beta*s/n) }
	best := 1.0
	if alpha > 0 && L > 1 {
		best = math.Max(1, math.Sqrt((L-1)*beta*s/alpha))
	} else if alpha == 0 && beta*s > 0 && L > 1 {
		best = math.Max(1, s) // as many packets as bytes: the bound tends to βs
	}
	lo, hi := math.Max(1, math.Floor(best)), math.Max(1, math.Ceil(best))
	if f(hi) < f(lo) {
		lo = hi
	}
	return f(lo), int(lo)
}
