package model

import (
	"math"
	"math/bits"

	"github.com/scoll/scoll/schedule"
)

// Estimate is a closed-form prediction in Hoefler and Moor's models for P
// processes and messages of s bytes.
type Estimate struct {
	// Time is the LogGP runtime in seconds: the finishing time of the last
	// process.
	Time float64
	// Dynamic is the dynamic energy D in joules, summed over processes.
	// Static energy is not included; Energy explains how it is charged.
	Dynamic float64
	// Memory is the descriptor memory in bytes of the process that needs the
	// most.
	Memory float64
}

// The forms below are the rows of Hoefler and Moor's Table 1 (rooted
// collectives, trees) and Table 2 (unrooted collectives, distribution
// patterns), in the exact form their sec. 3.1 derives where the text gives
// one, else the table's form with minor terms dropped (marked "simplified").
// They use P for the number of processes, s for the message size in bytes
// (each process's block for personalized operations), and from p: L, o, G
// (p.GPerByte), e (p.EMsg), E (p.EByte) and d (p.MemDesc); g is never
// charged (they assume o > g). lg P is ⌈log2 P⌉ where they assume P a power
// of two. P ≤ 1 gives the zero Estimate; invalid shapes (k < 2, N < 1) give
// NaN.

// FlatTree is the flat tree FT (and its personalized form, which has the
// same costs; sec. 3.1.1): the root sends to every other process directly.
//
//	T = L + oP + sG(P−1)   D = (P−1)(e + sE)   M = d(P−1)
func FlatTree(p Params, P int, s float64) Estimate {
	if P <= 1 {
		return Estimate{}
	}
	n := float64(P)
	return Estimate{
		Time:    p.L + p.O*n + s*p.GPerByte*(n-1),
		Dynamic: (n - 1) * (p.EMsg + s*p.EByte),
		Memory:  p.MemDesc * (n - 1),
	}
}

// KaryTree is the regular k-ary tree KT, non-personalized (sec. 3.1.2):
//
//	T = (L + k(o + sG) + o)·⌊log_k P⌋   D = (P−1)(e + sE)   M = kd
//
// ⌊log_k P⌋ is Hoefler and Moor's depth term; it is the depth of a complete
// k-ary tree of P nodes for k = 2 and can fall one short for larger k.
func KaryTree(p Params, P, k int, s float64) Estimate {
	if P <= 1 {
		return Estimate{}
	}
	if k < 2 {
		return nanEstimate()
	}
	n, kk := float64(P), float64(k)
	return Estimate{
		Time:    (p.L + kk*(p.O+s*p.GPerByte) + p.O) * float64(floorLog(P, k)),
		Dynamic: (n - 1) * (p.EMsg + s*p.EByte),
		Memory:  kk * p.MemDesc,
	}
}

// KaryTreePersonal is the personalized k-ary tree K̃T (sec. 3.1.2), in the
// simplified form of Table 1 (the exact sum is not legible in our copy):
//
//	T = (L + ko)·⌈log_k P⌉ + sGP   D = P(e + sE·⌈log_k P⌉)   M = kd
func KaryTreePersonal(p Params, P, k int, s float64) Estimate {
	if P <= 1 {
		return Estimate{}
	}
	if k < 2 {
		return nanEstimate()
	}
	n, kk, h := float64(P), float64(k), float64(ceilLog(P, k))
	return Estimate{
		Time:    (p.L+kk*p.O)*h + s*p.GPerByte*n,
		Dynamic: n * (p.EMsg + s*p.EByte*h),
		Memory:  kk * p.MemDesc,
	}
}

// BinomialTree is the non-personalized binomial tree BT (sec. 3.1.3):
//
//	T = (L + 2o + sG)·lg P   D = (P−1)(e + sE)   M = d·lg P
func BinomialTree(p Params, P int, s float64) Estimate {
	return lgForm(p, P, func(n, lg float64) (T, D float64) {
		return (p.L + 2*p.O + s*p.GPerByte) * lg, (n - 1) * (p.EMsg + s*p.EByte)
	})
}

// BinomialTreePersonal is the personalized binomial tree B̃T (sec. 3.1.3),
// as used by scatter and gather:
//
//	T = (2o + L)·lg P + sG(P−1)   D = e(P−1) + sE·(P/2)·lg P   M = d·lg P
func BinomialTreePersonal(p Params, P int, s float64) Estimate {
	return lgForm(p, P, func(n, lg float64) (T, D float64) {
		return (2*p.O+p.L)*lg + s*p.GPerByte*(n-1), p.EMsg*(n-1) + s*p.EByte*n/2*lg
	})
}

// PipelinedBinaryTree is the non-personalized pipelined binary tree PBT
// (sec. 3.1.4) with the message cut into N pieces; send and receive
// overheads overlap:
//
//	T = 2(o + (s/N)G)·N + L + o + (o + 2(o + (s/N)G) + L)·(⌊lg P⌋ − 1)
//	D = (P−1)(e + (s/N)E)·N   M = 2dN
//
// With N = 1 the time equals KaryTree's for k = 2.
func PipelinedBinaryTree(p Params, P int, s float64, N int) Estimate {
	if P <= 1 {
		return Estimate{}
	}
	if N < 1 {
		return nanEstimate()
	}
	n, nn := float64(P), float64(N)
	seg := s / nn * p.GPerByte
	return Estimate{
		Time:    2*(p.O+seg)*nn + p.L + p.O + (p.O+2*(p.O+seg)+p.L)*float64(floorLog2(P)-1),
		Dynamic: (n - 1) * (p.EMsg + s/nn*p.EByte) * nn,
		Memory:  2 * p.MemDesc * nn,
	}
}

// DoubleTree is Sanders and Träff's double tree DT (sec. 3.1.5): two
// pipelined binary trees, each carrying half the message in N pieces:
//
//	T = (L + 3o + sG) + T_PBT(s/2)   D = 2(e + (s/2)E) + 2·D_PBT(s/2)   M = 2dN
func DoubleTree(p Params, P int, s float64, N int) Estimate {
	if P <= 1 {
		return Estimate{}
	}
	if N < 1 {
		return nanEstimate()
	}
	half := PipelinedBinaryTree(p, P, s/2, N)
	return Estimate{
		Time:    p.L + 3*p.O + s*p.GPerByte + half.Time,
		Dynamic: 2*(p.EMsg+s/2*p.EByte) + 2*half.Dynamic,
		Memory:  2 * p.MemDesc * float64(N),
	}
}

// SplitBinaryTree is Pjesivac-Grbovic et al.'s split binary tree SB
// (sec. 3.1.2; in the text, not in Table 1): each half of the message goes
// down one subtree of a binary tree, then counterparts swap halves:
//
//	T = (L + 2(o + (s/2)G) + o)·⌊lg P⌋ + 2o + L + (s/2)G
//	D = 2(e + (s/2)E)(P−1)   M = 3d
func SplitBinaryTree(p Params, P int, s float64) Estimate {
	if P <= 1 {
		return Estimate{}
	}
	n := float64(P)
	h := s / 2 * p.GPerByte
	return Estimate{
		Time:    (p.L+2*(p.O+h)+p.O)*float64(floorLog2(P)) + 2*p.O + p.L + h,
		Dynamic: 2 * (p.EMsg + s/2*p.EByte) * (n - 1),
		Memory:  3 * p.MemDesc,
	}
}

// DirectSend is direct send DS and D̃S (sec. 3.1.6), a flat tree rooted at
// every process (alltoall, linear allgather):
//
//	T = L + (P−1)(o + sG)   D = P(P−1)(e + sE)   M = (P−1)d
func DirectSend(p Params, P int, s float64) Estimate {
	if P <= 1 {
		return Estimate{}
	}
	n := float64(P)
	return Estimate{
		Time:    p.L + (n-1)*(p.O+s*p.GPerByte),
		Dynamic: n * (n - 1) * (p.EMsg + s*p.EByte),
		Memory:  (n - 1) * p.MemDesc,
	}
}

// Butterfly is the non-personalized butterfly BF (sec. 3.1.7): lg P
// pairwise exchanges of the whole message (recursive-doubling allreduce,
// dissemination and recursive-doubling barriers with s = 0):
//
//	T = (2o + sG + L)·lg P   D = (e + sE)·P·lg P   M = d·lg P
func Butterfly(p Params, P int, s float64) Estimate {
	return lgForm(p, P, func(n, lg float64) (T, D float64) {
		return (2*p.O + s*p.GPerByte + p.L) * lg, (p.EMsg + s*p.EByte) * n * lg
	})
}

// ButterflyPersonal is the personalized butterfly B̃F (sec. 3.1.7):
// recursive doubling and Bruck's allgather, local shuffles ignored:
//
//	T = (2o + L)·lg P + Gs(P−1)   D = eP·lg P + sE(P−1)P   M = d·lg P
func ButterflyPersonal(p Params, P int, s float64) Estimate {
	return lgForm(p, P, func(n, lg float64) (T, D float64) {
		return (2*p.O+p.L)*lg + p.GPerByte*s*(n-1), p.EMsg*n*lg + s*p.EByte*(n-1)*n
	})
}

// UpDown is a tree used twice, up to reduce towards a root and down to
// broadcast from it: Table 2's 2×KT, 2×K̃T and 2×PBT columns, and 2×BT of
// their Fig. 5. Time, dynamic energy and memory all double.
func UpDown(e Estimate) Estimate {
	return Estimate{Time: 2 * e.Time, Dynamic: 2 * e.Dynamic, Memory: 2 * e.Memory}
}

// lgForm is a form of lg P rounds with one descriptor a round, M = d·lg P
// (the binomial trees and the butterflies): f gives T and D from n = P and
// lg = ⌈log2 P⌉, written as the paper prints them.
func lgForm(p Params, P int, f func(n, lg float64) (T, D float64)) Estimate {
	if P <= 1 {
		return Estimate{}
	}
	n, lg := float64(P), float64(ceilLog2(P))
	t, d := f(n, lg)
	return Estimate{Time: t, Dynamic: d, Memory: p.MemDesc * lg}
}

func nanEstimate() Estimate { return Estimate{math.NaN(), math.NaN(), math.NaN()} }

// Mapping says which Hoefler–Moor form models a registered algorithm.
type Mapping struct {
	Coll      schedule.Collective
	Algorithm string
	// Form is the form's abbreviation as in the paper ("BT", "2xBT", ...).
	Form string
	// Note says how the algorithm's parameters enter the form.
	Note string
	eval func(p Params, P int, s float64, a *Call) Estimate
}

// Call is the collective call a form is evaluated for: Size ranks, Count
// elements of ElemSize bytes per rank (the message s of the paper is
// Count·ElemSize bytes), pipelined in segments of Segment elements (0: the
// registry's default of 64 KiB worth).
type Call struct {
	Coll                           schedule.Collective
	Size, Count, ElemSize, Segment int
}

// segments returns the pieces of n elements in segments of a's segment
// length: a.Segment elements, or 64 KiB worth as the registry's pipelined
// tree algorithms default to.
func segments(a *Call, n int) int {
	seg := a.Segment
	if seg <= 0 {
		seg = max(64<<10/max(a.ElemSize, 1), 1)
	}
	return max((n+seg-1)/seg, 1)
}

func flat(p Params, P int, s float64, _ *Call) Estimate { return FlatTree(p, P, s) }
func binomial(p Params, P int, s float64, _ *Call) Estimate {
	return BinomialTree(p, P, s)
}
func binomialPersonal(p Params, P int, s float64, _ *Call) Estimate {
	return BinomialTreePersonal(p, P, s)
}
func pbt(p Params, P int, s float64, a *Call) Estimate {
	return PipelinedBinaryTree(p, P, s, segments(a, a.Count))
}
func direct(p Params, P int, s float64, _ *Call) Estimate { return DirectSend(p, P, s) }
func bfly(p Params, P int, s float64, _ *Call) Estimate   { return Butterfly(p, P, s) }
func bflyPersonal(p Params, P int, s float64, _ *Call) Estimate {
	return ButterflyPersonal(p, P, s)
}
func barrierBfly(p Params, P int, _ float64, _ *Call) Estimate {
	return Butterfly(p, P, 0)
}

// mappings is the table behind HoeflerMoor and Mappings. (Its rows are
// alike in shape, one per modelled algorithm, as a data table's are.)
var mappings = []Mapping{
	{schedule.Bcast, "linear", "FT", "", flat},
	{schedule.Bcast, "binomial", "BT", "", binomial},
	{schedule.Bcast, "binary", "PBT", "N = segments of the message", pbt},
	{schedule.Bcast, "split-binary", "SB", "unsegmented in the paper; equal for one segment per half",
		func(p Params, P int, s float64, _ *Call) Estimate { return SplitBinaryTree(p, P, s) }},
	{schedule.Bcast, "two-tree", "DT", "N = segments of half the message",
		func(p Params, P int, s float64, a *Call) Estimate {
			return DoubleTree(p, P, s, segments(a, (a.Count+1)/2))
		}},
	{schedule.Reduce, "linear", "FT", "computation free", flat},
	{schedule.Reduce, "binomial", "BT", "computation free", binomial},
	{schedule.Reduce, "in-order-binary", "PBT", "N = segments of the message; computation free", pbt},
	{schedule.Gather, "linear", "F~T", "", flat},
	{schedule.Gather, "binomial", "B~T", "", binomialPersonal},
	{schedule.Scatter, "linear", "F~T", "", flat},
	{schedule.Scatter, "binomial", "B~T", "", binomialPersonal},
	{schedule.Allgather, "linear", "D~S", "", direct},
	{schedule.Allgather, "recursive-doubling", "B~F", "", bflyPersonal},
	{schedule.Allgather, "bruck", "B~F", "", bflyPersonal},
	{schedule.Alltoall, "direct", "D~S", "", direct},
	{schedule.Allreduce, "recursive-doubling", "BF", "computation free", bfly},
	{schedule.Allreduce, "reduce-bcast", "2xBT", "computation free",
		func(p Params, P int, s float64, _ *Call) Estimate { return UpDown(BinomialTree(p, P, s)) }},
	{schedule.Allreduce, "allgather-reduce", "B~F", "s = the whole vector; computation free", bflyPersonal},
	{schedule.Barrier, "dissemination", "BF", "s = 0", barrierBfly},
	{schedule.Barrier, "recursive-doubling", "BF", "s = 0", barrierBfly},
	{schedule.Barrier, "tree", "2xBT", "s = 0",
		func(p Params, P int, _ float64, _ *Call) Estimate { return UpDown(BinomialTree(p, P, 0)) }},
}

// Mappings lists the registered algorithms that a Hoefler–Moor form models,
// in the order of the package documentation's table.
func Mappings() []Mapping {
	out := make([]Mapping, len(mappings))
	copy(out, mappings)
	return out
}

// HoeflerMoor returns the Hoefler–Moor form that models registered
// algorithm alg on call a, its name and its estimate; ok is false when no
// form models alg. The mapping is listed in the package documentation.
func HoeflerMoor(alg string, a Call, p Params) (form string, e Estimate, ok bool) {
	for _, m := range mappings {
		if m.Coll == a.Coll && m.Algorithm == alg {
			s := float64(a.Count) * float64(max(a.ElemSize, 1))
			return m.Form, m.eval(p, a.Size, s, &a), true
		}
	}
	return "", Estimate{}, false
}

// ceilLog2 returns ⌈log2 p⌉ (0 for p ≤ 1).
func ceilLog2(p int) int {
	if p <= 1 {
		return 0
	}
	return bits.Len(uint(p - 1))
}

// floorLog2 returns ⌊log2 p⌋ (0 for p ≤ 1).
func floorLog2(p int) int {
	if p <= 1 {
		return 0
	}
	return bits.Len(uint(p)) - 1
}

// floorLog returns ⌊log_k p⌋ for k ≥ 2 (0 for p ≤ 1), in integers.
func floorLog(p, k int) int {
	n := 0
	for q := k; q <= p; q *= k {
		n++
		if q > p/k { // next q*k would exceed p (and must not overflow)
			break
		}
	}
	return n
}

// ceilLog returns ⌈log_k p⌉ for k ≥ 2 (0 for p ≤ 1), in integers.
func ceilLog(p, k int) int {
	n := 0
	for q := 1; q < p; n++ {
		if q > (p-1)/k { // q*k ≥ p
			return n + 1
		}
		q *= k
	}
	return n
}
