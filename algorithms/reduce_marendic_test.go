package algorithms

import (
	"errors"
	"slices"
	"testing"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/schedule"
)

// TestRadixKVectors proves radix-k with explicit radix vectors, a
// non-commutative operator and every root, and with WithRadix's uniform
// radix.
func TestRadixKVectors(t *testing.T) {
	in := mustLookup(t, schedule.Reduce, RadixK)
	for _, ks := range [][]int{{2}, {3}, {2, 2}, {4}, {2, 4}, {4, 2}, {2, 2, 2}, {8}, {3, 3}, {2, 3}, {3, 2}, {4, 4}, {2, 8}, {5, 3}} {
		P := 1
		for _, k := range ks {
			P *= k
		}
		for _, n := range []int{0, 1, 5, P, 3*P + 2} {
			for _, root := range rootedRoots(P) {
				for _, inPlace := range []bool{false, true} {
					spec := schedule.Spec{Coll: schedule.Reduce, Size: P, Root: root, Count: n, InPlace: inPlace}
					rootedVerify(t, in, Params{Spec: spec, RadixVector: ks, ElemSize: 4})
				}
			}
		}
	}
	for _, k := range []int{2, 3, 5} {
		for _, P := range []int{6, 12, 30, 45} {
			spec := schedule.Spec{Coll: schedule.Reduce, Size: P, Root: P / 3, Count: 2*P + 1}
			rootedVerify(t, in, Params{Spec: spec, Radix: k, ElemSize: 4})
		}
	}
}

func TestDefaultRadixVector(t *testing.T) {
	for _, c := range []struct {
		P, k int
		want []int
	}{
		{1, 0, nil}, {2, 0, []int{2}}, {4, 0, []int{4}}, {8, 0, []int{8}}, {16, 0, []int{4, 4}},
		{32, 0, []int{4, 8}}, {64, 0, []int{4, 4, 4}}, {128, 0, []int{4, 4, 8}}, {12, 0, []int{4, 3}},
		{6, 0, []int{2, 3}}, {17, 0, []int{17}}, {45, 0, []int{3, 3, 5}}, {4097, 0, []int{17, 241}},
		{128, 2, []int{2, 2, 2, 2, 2, 2, 2}}, {24, 3, []int{3, 8}}, {27, 3, []int{3, 3, 3}}, {10, 4, []int{2, 5}},
	} {
		got := DefaultRadixVector(c.P, c.k)
		if !slices.Equal(got, c.want) {
			t.Errorf("DefaultRadixVector(%d, %d) = %v, want %v", c.P, c.k, got, c.want)
		}
		if c.P > 1 && CheckRadixVector(got, c.P) != nil {
			t.Errorf("P=%d: default %v does not check", c.P, got)
		}
		for r := range c.P {
			if v := radixBlock(got, c.P, r); radixRank(got, c.P, v) != r || v < 0 || v >= c.P {
				t.Errorf("P=%d %v: rank %d holds block %d, which maps back to %d", c.P, got, r, v, radixRank(got, c.P, v))
			}
		}
	}
}

// TestRadixVectorCheck: Info.Check refuses a bad vector with
// errs.InvalidArgument, for radix-k and any other algorithm.
func TestRadixVectorCheck(t *testing.T) {
	for _, ks := range [][]int{{2, 2}, {1, 8}, {}, {3, 3}} {
		p := Params{Spec: schedule.Spec{Coll: schedule.Reduce, Size: 8, Count: 4}, RadixVector: ks, Commutative: true}
		for _, name := range []string{RadixK, Binomial} {
			if err := mustLookup(t, schedule.Reduce, name).Check(&p); !errors.Is(err, errs.InvalidArgument) {
				t.Errorf("%s with %v on 8 ranks: %v, want an invalid argument", name, ks, err)
			}
		}
	}
}

// TestMarendicCosts: the registered costs of the reductions of Marendic et
// al.'s Table 3 on a power of two ranks (model's tests compare them with
// the rows themselves).
func TestMarendicCosts(t *testing.T) {
	P, n := 128, 128*1024
	p := Params{Spec: schedule.Spec{Coll: schedule.Reduce, Size: P, Count: n}, Commutative: true, ElemSize: 4}
	N := float64(4 * n)
	f := float64(P-1) / float64(P)
	for _, c := range []struct {
		name string
		ks   []int
		want Cost
	}{
		{ParallelRing, nil, Cost{Alpha: 127 + 7, Beta: 2 * f * N, Gamma: f * N}},
		{RadixK, nil, Cost{Alpha: 3 + 3 + 7 + 7, Beta: 2 * f * N, Gamma: f * N}},
		{RadixK, []int{2, 2, 2, 2, 2, 2, 2}, Cost{Alpha: 14, Beta: 2 * f * N, Gamma: f * N}},
		{Rabenseifner, nil, Cost{Alpha: 14, Beta: 2 * f * N, Gamma: f * N}},
	} {
		q := p
		q.RadixVector = c.ks
		if got := mustLookup(t, schedule.Reduce, c.name).Cost(&q); got != c.want {
			t.Errorf("%s %v: cost %+v, want %+v", c.name, c.ks, got, c.want)
		}
	}
	// Linear pipeline: the default segment count is the optimum for P−1
	// hops, and a non-commutative operator with a root inside the chain
	// costs one hop more.
	lp := mustLookup(t, schedule.Reduce, LinearPipeline)
	S := OptSegments(P-1, N, InProcess)
	seg := rtOptSegment(&p, n, P-1)
	if want := (n + int(S+0.5) - 1) / int(S+0.5); seg != want {
		t.Errorf("linear-pipeline segment %d elements, want %d (N = %g)", seg, want, S)
	}
	q := p
	q.Root, q.Commutative = 5, false
	if a, want := lp.Cost(&p).Alpha, float64(P-1+rtSegs(n, seg)-1); a != want {
		t.Errorf("linear-pipeline: %g start-ups, want %g", a, want)
	}
	if a, want := lp.Cost(&q).Alpha, float64(P+rtSegs(n, rtOptSegment(&q, n, P))-1); a != want {
		t.Errorf("linear-pipeline relayed: %g start-ups, want %g", a, want)
	}
}
