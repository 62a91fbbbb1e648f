package model_test

import (
	"math"
	"testing"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/model"
	"github.com/scoll/scoll/schedule"
)

// hm are the parameters of the hand-worked Hoefler–Moor cases:
// L = 2, o = 3, G = 0.5 per byte, e = 7, E = 0.25 per byte, d = 10.
var hm = model.Params{L: 2, O: 3, GPerByte: 0.5, EMsg: 7, EByte: 0.25, MemDesc: 10}

func TestHoeflerMoorForms(t *testing.T) {
	const s = 4 // bytes; sG = 2, sE = 1
	for _, tc := range []struct {
		name string
		got  model.Estimate
		want model.Estimate
	}{
		// T = L + oP + sG(P−1) = 2 + 12 + 6; D = 3(7+1); M = 3d
		{"FT P=4", model.FlatTree(hm, 4, s), model.Estimate{Time: 20, Dynamic: 24, Memory: 30}},
		// T = (L + k(o+sG) + o)⌊log_k P⌋ = (2 + 10 + 3)·3; D = 7·8; M = 2d
		{"KT k=2 P=8", model.KaryTree(hm, 8, 2, s), model.Estimate{Time: 45, Dynamic: 56, Memory: 20}},
		// (2 + 15 + 3)·2; D = 8·8; M = 3d
		{"KT k=3 P=9", model.KaryTree(hm, 9, 3, s), model.Estimate{Time: 40, Dynamic: 64, Memory: 30}},
		// ⌊log_3 8⌋ = 1 level in their form
		{"KT k=3 P=8", model.KaryTree(hm, 8, 3, s), model.Estimate{Time: 20, Dynamic: 56, Memory: 30}},
		// T = (L + ko)·2 + sGP = 22 + 18; D = P(e + sE·2) = 9·9; M = 3d
		{"K~T k=3 P=9", model.KaryTreePersonal(hm, 9, 3, s), model.Estimate{Time: 40, Dynamic: 81, Memory: 30}},
		// T = (L + 2o + sG)·3 = 30; D = 7·8; M = 3d
		{"BT P=8", model.BinomialTree(hm, 8, s), model.Estimate{Time: 30, Dynamic: 56, Memory: 30}},
		// T = (2o + L)·3 + sG·7 = 24 + 14; D = 7·7 + sE·4·3 = 49 + 12
		{"B~T P=8", model.BinomialTreePersonal(hm, 8, s), model.Estimate{Time: 38, Dynamic: 61, Memory: 30}},
		// N = 2: (s/N)G = 1: T = 2(3+1)·2 + 2 + 3 + (3 + 8 + 2)·2 = 47;
		// D = 7·(7 + 0.5)·2 = 105; M = 2dN = 40
		{"PBT P=8 N=2", model.PipelinedBinaryTree(hm, 8, s, 2), model.Estimate{Time: 47, Dynamic: 105, Memory: 40}},
		// N = 1 is the binary tree: T as KT k=2
		{"PBT P=8 N=1", model.PipelinedBinaryTree(hm, 8, s, 1), model.Estimate{Time: 45, Dynamic: 56, Memory: 20}},
		// PBT(s/2 = 2, N = 2): (s/N)G = 0.5: T = 14 + 5 + 12·2 = 43,
		// D = 7·7.25·2 = 101.5; DT: T = (2 + 9 + 2) + 43 = 56,
		// D = 2(7 + 0.5) + 203 = 218, M = 2dN = 40
		{"DT P=8 N=2", model.DoubleTree(hm, 8, s, 2), model.Estimate{Time: 56, Dynamic: 218, Memory: 40}},
		// (s/2)G = 1: T = (2 + 2·4 + 3)·3 + 6 + 2 + 1 = 48; D = 2(7 + 0.5)·7 = 105; M = 3d
		{"SB P=8", model.SplitBinaryTree(hm, 8, s), model.Estimate{Time: 48, Dynamic: 105, Memory: 30}},
		// T = L + (P−1)(o + sG) = 2 + 15; D = 4·3·8; M = 3d
		{"DS P=4", model.DirectSend(hm, 4, s), model.Estimate{Time: 17, Dynamic: 96, Memory: 30}},
		// T = (2o + sG + L)·3 = 30; D = 8·8·3; M = 3d
		{"BF P=8", model.Butterfly(hm, 8, s), model.Estimate{Time: 30, Dynamic: 192, Memory: 30}},
		// T = (2o + L)·3 + Gs·7 = 24 + 14; D = 7·8·3 + 1·7·8 = 168 + 56
		{"B~F P=8", model.ButterflyPersonal(hm, 8, s), model.Estimate{Time: 38, Dynamic: 224, Memory: 30}},
		{"2xBT P=8", model.UpDown(model.BinomialTree(hm, 8, s)), model.Estimate{Time: 60, Dynamic: 112, Memory: 60}},
		// lg P rounded up for P not a power of two: ⌈lg 5⌉ = 3
		{"BF P=5", model.Butterfly(hm, 5, 0), model.Estimate{Time: 24, Dynamic: 105, Memory: 30}},
		{"FT P=1", model.FlatTree(hm, 1, s), model.Estimate{}},
		{"DT P=0", model.DoubleTree(hm, 0, s, 3), model.Estimate{}},
	} {
		if !near(tc.got.Time, tc.want.Time) || !near(tc.got.Dynamic, tc.want.Dynamic) || !near(tc.got.Memory, tc.want.Memory) {
			t.Errorf("%s = %+v, want %+v", tc.name, tc.got, tc.want)
		}
	}
	for name, e := range map[string]model.Estimate{
		"KT k=1":  model.KaryTree(hm, 8, 1, s),
		"K~T k=0": model.KaryTreePersonal(hm, 8, 0, s),
		"PBT N=0": model.PipelinedBinaryTree(hm, 8, s, 0),
		"DT N=-1": model.DoubleTree(hm, 8, s, -1),
	} {
		if !math.IsNaN(e.Time) || !math.IsNaN(e.Dynamic) || !math.IsNaN(e.Memory) {
			t.Errorf("%s = %+v, want NaN", name, e)
		}
	}
}

func TestMappingsAreRegistered(t *testing.T) {
	ms := model.Mappings()
	if len(ms) == 0 {
		t.Fatal("no mappings")
	}
	for _, m := range ms {
		if _, ok := algorithms.Lookup(m.Coll, m.Algorithm); !ok {
			t.Errorf("mapping %s/%s → %s names no registered algorithm", m.Coll, m.Algorithm, m.Form)
		}
		if m.Form == "" {
			t.Errorf("mapping %s/%s has no form", m.Coll, m.Algorithm)
		}
	}
	ap := algorithms.Params{Spec: schedule.Spec{Coll: schedule.Allreduce, Size: 8, Count: 2}, ElemSize: 4}
	if _, _, ok := model.HoeflerMoor("ring", callOf(&ap), hm); ok {
		t.Error("allreduce/ring has no Hoefler–Moor form")
	}
	form, e, ok := model.HoeflerMoor("recursive-doubling", callOf(&ap), hm)
	if !ok || form != "BF" || e != model.Butterfly(hm, 8, 8) {
		t.Errorf("allreduce/recursive-doubling → %q %+v %v, want BF with s = 8 bytes", form, e, ok)
	}
	// Segments: 64 KiB by default, a.Segment elements when set.
	big := algorithms.Params{Spec: schedule.Spec{Coll: schedule.Bcast, Size: 8, Count: 3 << 16}, ElemSize: 4}
	if _, e, _ := model.HoeflerMoor("binary", callOf(&big), hm); e != model.PipelinedBinaryTree(hm, 8, 3<<18, 12) {
		t.Errorf("bcast/binary of 768 KiB: %+v, want PBT with N = 12", e)
	}
	big.Segment = 1 << 16
	if _, e, _ := model.HoeflerMoor("two-tree", callOf(&big), hm); e != model.DoubleTree(hm, 8, 3<<18, 2) {
		t.Errorf("bcast/two-tree with segments of 64Ki elements: %+v, want DT with N = 2", e)
	}
}

// TestCountedLogGPMatchesForms checks the counted LogGP time and dynamic
// energy against the Hoefler–Moor forms of the algorithms documented as
// matching, on power-of-two sizes, and the critical-path LogGP time with
// G = 0 (it charges (s−1)·G per message where the forms charge s·G) on
// powers of two (elsewhere an eager sender's later sends start after its
// overhead, not after a round of L + 2o, and trees finish earlier than the
// forms' ⌈log P⌉ rounds).
func TestCountedLogGPMatchesForms(t *testing.T) {
	p := model.Params{L: 1.5e-6, O: 2e-6, GPerByte: 1e-9, EMsg: 1e-8, EByte: 1e-11, MemDesc: 32}
	for _, tc := range []struct {
		coll schedule.Collective
		name string
		any  bool // every size, not only powers of two
	}{
		{schedule.Bcast, "linear", true},
		{schedule.Bcast, "binomial", true},
		{schedule.Scatter, "linear", true},
		{schedule.Gather, "linear", true},
		{schedule.Gather, "binomial", false},
		{schedule.Scatter, "binomial", false},
		{schedule.Reduce, "binomial", false},
		{schedule.Allreduce, "recursive-doubling", false},
		{schedule.Allreduce, "reduce-bcast", false},
		{schedule.Allreduce, "allgather-reduce", true},
		{schedule.Allgather, "recursive-doubling", false},
		{schedule.Allgather, "bruck", true},
		{schedule.Barrier, "dissemination", true},
		{schedule.Barrier, "recursive-doubling", false},
	} {
		for _, P := range []int{2, 3, 4, 5, 8, 12, 16, 32} {
			if !tc.any && P&(P-1) != 0 {
				continue
			}
			n := 960
			if tc.coll == schedule.Barrier {
				n = 0
			}
			c := count(t, tc.coll, tc.name, P, n)
			ap := algorithms.Params{Spec: schedule.Spec{Coll: tc.coll, Size: P, Count: n}, ElemSize: 4}
			form, e, ok := model.HoeflerMoor(tc.name, callOf(&ap), p)
			if !ok {
				t.Fatalf("%s/%s: no form", tc.coll, tc.name)
			}
			if got := model.LogGP(c, p); !near(got, e.Time) {
				t.Errorf("%s/%s (%s) P=%d: counted LogGP %g, form %g", tc.coll, tc.name, form, P, got, e.Time)
			}
			if got := model.Energy(c, p, 0); !near(got, e.Dynamic) {
				t.Errorf("%s/%s (%s) P=%d: counted dynamic energy %g, form %g", tc.coll, tc.name, form, P, got, e.Dynamic)
			}
			if P&(P-1) != 0 {
				continue
			}
			p0 := p
			p0.GPerByte = 0
			_, e0, _ := model.HoeflerMoor(tc.name, callOf(&ap), p0)
			cp, err := model.CriticalPath(P, 4, gen(t, tc.coll, tc.name, P, n), p0)
			if err != nil {
				t.Fatal(err)
			}
			if !near(cp.LogGP, e0.Time) {
				t.Errorf("%s/%s (%s) P=%d: critical-path LogGP %g, form %g at G = 0", tc.coll, tc.name, form, P, cp.LogGP, e0.Time)
			}
		}
	}
	// Direct send: the form leaves out the receive overhead of the last
	// message, the count does not.
	for _, coll := range []schedule.Collective{schedule.Allgather, schedule.Alltoall} {
		name := "linear"
		if coll == schedule.Alltoall {
			name = "direct"
		}
		c := count(t, coll, name, 6, 100)
		ap := algorithms.Params{Spec: schedule.Spec{Coll: coll, Size: 6, Count: 100}, ElemSize: 4}
		_, e, _ := model.HoeflerMoor(name, callOf(&ap), p)
		if got := model.LogGP(c, p); !near(got, e.Time+p.O) {
			t.Errorf("%s/%s: counted LogGP %g, want the D~S form %g plus o", coll, name, got, e.Time)
		}
		if got := model.Memory(c, p); got != e.Memory {
			t.Errorf("%s/%s: memory %g, form %g", coll, name, got, e.Memory)
		}
	}
}

// TestMarendicTable3 checks the rows against hand-worked values.
func TestMarendicTable3(t *testing.T) {
	// α = 4, β = 0.5, γ = 0.25, m = 8, P = 8 (n = 3)
	p := model.Params{Alpha: 4, Beta: 0.5, Gamma: 0.25}
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"binomial", model.MarendicBinomialTree(p, 8, 8), 3 * (4 + 4 + 2)},                // n(α + βm + γm)
		{"butterfly", model.MarendicButterfly(p, 8, 8), 24 + 7 + 1.75},                    // 2αn + 2(7/8)mβ + (7/8)mγ
		{"parallel ring", model.MarendicParallelRing(p, 8, 8), 10*4 + 7*1.25},             // (P−1+n)α + (7/8)m(2β+γ)
		{"radix-k [2 4]", model.MarendicRadixK(p, 8, 8, []int{2, 4}), (1+3+3)*4 + 7*1.25}, // (Σ(k−1) + n)α + …
		{"radix-k [2 2 2]", model.MarendicRadixK(p, 8, 8, []int{2, 2, 2}), 24 + 7 + 1.75}, // = butterfly
		{"linear pipeline", model.MarendicLinearPipeline(p, 8, 8), 24 + 2*12 + 4 + 2},     // 6α + 2√24·√6 + βm + γm
		{"two-tree", model.MarendicTwoTree(p, 8, 8), 4*8 + 4*4 + 4 + 4},                   // 4·2α + 4√8·√2 + mβ + 2mγ
		{"P=1", model.MarendicClairvoyant(p, 1, 8), 0},
		{"pipeline P=2", model.MarendicLinearPipeline(p, 2, 8), 6}, // one message: βm + γm
	} {
		if !near(tc.got, tc.want) {
			t.Errorf("%s = %g, want %g", tc.name, tc.got, tc.want)
		}
	}
	for _, k := range [][]int{{2, 2}, {4, 4}, {1, 8}, {}} {
		if got := model.MarendicRadixK(p, 8, 8, k); !math.IsNaN(got) {
			t.Errorf("radix vector %v for P = 8: %g, want NaN", k, got)
		}
	}
	// Clairvoyant and N_opt: α = 6, β = 0.5, γ = 1, m = 8, P = 8 (n = 3):
	// (n−1)α = 12, m(β+γ) = 12: 12 + 2·12 + 4 + 8 = 48, N_opt = √(2·8·1.5/6) = 2.
	q := model.Params{Alpha: 6, Beta: 0.5, Gamma: 1}
	if got := model.MarendicClairvoyant(q, 8, 8); !near(got, 48) {
		t.Errorf("Clairvoyant = %g, want 48", got)
	}
	nopt := model.NOpt(3, 8, 6, 0.5, 1)
	if !near(nopt, 2) {
		t.Errorf("NOpt = %g, want 2", nopt)
	}
	// Their Eq. (1) at N_opt is the Clairvoyant row, and N_opt minimises it.
	eq1 := func(N float64) float64 { return 2*6 + 2*(8/N)*1.5 + N*6 + 8*1.5 }
	if got := eq1(nopt); !near(got, 48) {
		t.Errorf("Eq. 1 at N_opt = %g, want 48", got)
	}
	if eq1(nopt*0.9) <= eq1(nopt) || eq1(nopt*1.1) <= eq1(nopt) {
		t.Error("N_opt does not minimise Eq. 1")
	}
	if got := model.NOpt(1, 8, 6, 0.5, 1); got != 0 {
		t.Errorf("NOpt with n = 1: %g, want 0", got)
	}
	if got := model.NOpt(3, 8, 0, 0.5, 1); !math.IsInf(got, 1) {
		t.Errorf("NOpt with α = 0: %g, want +Inf", got)
	}
	for alg, row := range map[string]string{"binomial": "Binomial Tree", "rabenseifner": "Butterfly",
		"parallel-ring": "Parallel Ring", "radix-k": "Radix-k", "linear-pipeline": "Linear pipeline", "two-tree": "Two-tree"} {
		if got, _, ok := model.Marendic(alg, p, 8, 8, 2, 4); !ok || got != row {
			t.Errorf("Marendic(%q) = %q, %v; want %q", alg, got, ok, row)
		}
		if _, ok := algorithms.Lookup(schedule.Reduce, alg); !ok {
			t.Errorf("reduce/%s is not registered", alg)
		}
	}
	for _, alg := range []string{"linear", "pipeline", "radix-k"} { // radix-k: no vector
		if _, _, ok := model.Marendic(alg, p, 8, 8); ok {
			t.Errorf("reduce/%s: a Table 3 row without a vector or with none", alg)
		}
	}
}

func TestBcastLowerBound(t *testing.T) {
	for _, tc := range []struct {
		alpha, beta float64
		p           int
		s, want     float64
	}{
		{2, 0.5, 5, 8, 16},  // (√(2·2) + √4)²
		{3, 0.5, 9, 8, 25},  // (√(3·3) + √4)²
		{2, 0.5, 2, 8, 6},   // one message: α + βs
		{2, 0.5, 1, 8, 0},   // nothing to send
		{2, 0.5, 0, 8, 0},   // nothing to send
		{2, 0.5, 17, 0, 8},  // α·log2(16)
		{0, 0.5, 100, 8, 4}, // β·s
	} {
		if got := model.BcastLowerBound(tc.alpha, tc.beta, tc.p, tc.s); !near(got, tc.want) {
			t.Errorf("BcastLowerBound(%g, %g, %d, %g) = %g, want %g", tc.alpha, tc.beta, tc.p, tc.s, got, tc.want)
		}
	}
	// No registered broadcast whose root sends every packet once beats the
	// bound (its registered cost).
	const alpha, beta = 2e-6, 1e-9
	for _, name := range []string{"pipeline", "two-tree", "split-binary"} {
		in, ok := algorithms.Lookup(schedule.Bcast, name)
		if !ok {
			t.Fatalf("no bcast/%s", name)
		}
		for _, P := range []int{2, 3, 4, 7, 8, 13, 64, 1000} {
			for _, n := range []int{1, 250, 1 << 16, 1 << 22} {
				ap := algorithms.Params{Spec: schedule.Spec{Coll: schedule.Bcast, Size: P, Count: n}, ElemSize: 4}
				lb := model.BcastLowerBound(alpha, beta, P, float64(4*n))
				if got := in.Cost(&ap).Time(alpha, beta, 0); got < lb*(1-1e-12) {
					t.Errorf("bcast/%s P=%d n=%d: registered %g below the bound %g", name, P, n, got, lb)
				}
			}
		}
	}
	// The documented example: a binomial tree, whose root sends the message
	// twice, beats the formula.
	in, _ := algorithms.Lookup(schedule.Bcast, "binomial")
	ap := algorithms.Params{Spec: schedule.Spec{Coll: schedule.Bcast, Size: 4, Count: 250}, ElemSize: 4}
	if got, lb := in.Cost(&ap).Time(alpha, beta, 0), model.BcastLowerBound(alpha, beta, 4, 1000); !near(got, 6e-6) || lb < 7.7e-6 {
		t.Errorf("binomial P=4 of 1000 B: %g against the formula's %g; documented 6 µs against 7.7 µs", got, lb)
	}
}

// callOf is the model's description of the call ap.
func callOf(ap *algorithms.Params) model.Call {
	return model.Call{Coll: ap.Coll, Size: ap.Size, Count: ap.Count, ElemSize: ap.ElemSize, Segment: ap.Segment}
}
