package algorithms

import (
	"math"
	"testing"

	"github.com/scoll/scoll/schedule"
)

// TestNotesScanForm: the butterfly scan (Heath–Solomonik sec. 5.2.4,
// Algorithm 2) costs T(s, p) = T(s/2, p/2) + 2(α + βs/2): solved exactly,
// 2α·log₂p + 2βs(1 − 1/p), whose limit is the notes' 2(α log₂p + βs).
func TestNotesScanForm(t *testing.T) {
	in := mustLookup(t, schedule.Scan, Butterfly)
	for _, P := range []int{2, 4, 16, 256} {
		for _, n := range []int{1, 1000} {
			p := Params{Spec: schedule.Spec{Coll: schedule.Scan, Size: P, Count: n}, ElemSize: 4, Commutative: true}
			c := in.Cost(&p)
			s := float64(4 * n)
			var rec func(s float64, p int) float64 // the notes' recurrence, β part
			rec = func(s float64, p int) float64 {
				if p == 1 {
					return 0
				}
				return rec(s/2, p/2) + 2*s/2
			}
			lg := math.Log2(float64(P))
			if c.Alpha != 2*lg || math.Abs(c.Beta-rec(s, P)) > 1e-9*s || math.Abs(c.Beta-2*s*(1-1/float64(P))) > 1e-9*s {
				t.Errorf("P=%d n=%d: α %g β %g, want %g and %g", P, n, c.Alpha, c.Beta, 2*lg, rec(s, P))
			}
		}
	}
}

// TestNotesAlltoallForms: the butterfly alltoall (sec. 5.2.5, Fig. 19)
// costs α log₂p + βs·log₂p/2 for s bytes per rank (s/p per pair), the
// same α and β terms as bruck on a power of two ranks though another
// schedule; sending directly costs about αp + βs (pairwise: (p−1) rounds
// of one block).
func TestNotesAlltoallForms(t *testing.T) {
	bf, br, pw := mustLookup(t, schedule.Alltoall, Butterfly), mustLookup(t, schedule.Alltoall, Bruck), mustLookup(t, schedule.Alltoall, Pairwise)
	for _, P := range []int{2, 8, 64} {
		const n = 100 // elements per pair
		p := Params{Spec: schedule.Spec{Coll: schedule.Alltoall, Size: P, Count: n}, ElemSize: 4}
		s := float64(4 * n * P)
		lg := math.Log2(float64(P))
		c := bf.Cost(&p)
		if c.Alpha != lg || c.Beta != s*lg/2 {
			t.Errorf("butterfly P=%d: α %g β %g, want %g and %g", P, c.Alpha, c.Beta, lg, s*lg/2)
		}
		if b := br.Cost(&p); b.Alpha != c.Alpha || b.Beta != c.Beta {
			t.Errorf("bruck P=%d: α %g β %g, butterfly %g %g", P, b.Alpha, b.Beta, c.Alpha, c.Beta)
		}
		if d := pw.Cost(&p); d.Alpha != float64(P-1) || math.Abs(d.Beta-s*float64(P-1)/float64(P)) > 1e-9 {
			t.Errorf("pairwise P=%d: α %g β %g, want %d and %g", P, d.Alpha, d.Beta, P-1, s*float64(P-1)/float64(P))
		}
	}
	// The schedules differ: rank 1's first partner is 0 (XOR) in the
	// butterfly, 2 (r + 1) in bruck.
	first := func(in *Info) int {
		p := Params{Spec: schedule.Spec{Coll: schedule.Alltoall, Size: 4, Count: 1}, ElemSize: 4, Rank: 1}
		s, err := in.Schedule(&p)
		if err != nil {
			t.Fatal(err)
		}
		for _, rd := range s.Rounds {
			for _, op := range rd {
				if op.Kind == schedule.OpSend {
					return op.Peer
				}
			}
		}
		return -1
	}
	if a, b := first(bf), first(br); a != 0 || b != 2 {
		t.Errorf("first partners of rank 1: butterfly %d, bruck %d; want 0 and 2", a, b)
	}
}
