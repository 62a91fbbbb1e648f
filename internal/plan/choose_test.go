package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/schedule"
)

func params(coll schedule.Collective, size, count int) *algorithms.Params {
	return &algorithms.Params{Spec: schedule.Spec{Coll: coll, Size: size, Count: count}, Commutative: true, ElemSize: 8}
}

func TestChooseNamed(t *testing.T) {
	for _, in := range algorithms.List(schedule.Allreduce) {
		p := params(schedule.Allreduce, 8, 64)
		if in.Check(p) != nil {
			continue
		}
		got, err := Choose(p, in.Name, algorithms.InProcess, algorithms.Caps{})
		if err != nil || got != in {
			t.Errorf("%s: got %v, %v", in.Name, got, err)
		}
	}
}

func TestChooseUnknown(t *testing.T) {
	_, err := Choose(params(schedule.Barrier, 4, 0), "no-such", algorithms.InProcess, algorithms.Caps{})
	if !errors.Is(err, errs.InvalidArgument) {
		t.Fatalf("error %v, want %v", err, errs.InvalidArgument)
	}
	var names []string
	for _, in := range algorithms.List(schedule.Barrier) {
		names = append(names, in.Name)
	}
	want := `scoll: invalid argument: unknown algorithm "no-such" for barrier (valid: ` + strings.Join(names, ", ") + ")"
	if err.Error() != want {
		t.Errorf("error\n %q, want\n %q", err, want)
	}
}

func TestChooseRefused(t *testing.T) {
	// A commutative-only algorithm with a non-commutative operator, a
	// power-of-two one on 3 ranks: the registry's own errors.
	for _, in := range algorithms.List(schedule.Allreduce) {
		if in.Requires&algorithms.NeedsCommutative == 0 {
			continue
		}
		p := params(schedule.Allreduce, 4, 8)
		p.Commutative = false
		_, err := Choose(p, in.Name, algorithms.InProcess, algorithms.Caps{})
		if want := in.Check(p); err == nil || err.Error() != want.Error() || !errors.Is(err, errs.Unsupported) {
			t.Errorf("%s: error %v, want %v", in.Name, err, want)
		}
	}
	for _, in := range algorithms.List(schedule.Allgather) {
		if in.Requires&algorithms.NeedsPowerOfTwo == 0 {
			continue
		}
		_, err := Choose(params(schedule.Allgather, 3, 2), in.Name, algorithms.InProcess, algorithms.Caps{})
		if !errors.Is(err, errs.Unsupported) {
			t.Errorf("%s on 3 ranks: error %v", in.Name, err)
		}
	}
}

// TestChooseDefault checks the default choice against the registry's cost
// model on every collective, for sizes, counts, operators and machines,
// and that in-place-ness does not change it.
func TestChooseDefault(t *testing.T) {
	slow := algorithms.Machine{Alpha: 50e-6, Beta: 1.0 / 1e9, Gamma: 1.0 / 4e9}
	for coll := range schedule.NumCollectives {
		if coll.Vector() {
			continue
		}
		for _, size := range []int{1, 2, 5, 8, 64} {
			for _, count := range []int{0, 1, 1000, 1 << 20} {
				for _, m := range []algorithms.Machine{algorithms.InProcess, slow} {
					for _, comm := range []bool{true, false} {
						p := params(coll, size, count)
						p.Commutative = comm
						want := algorithms.Select(p, m, algorithms.Caps{})
						got, err := Choose(p, "", m, algorithms.Caps{})
						if want == nil {
							if !errors.Is(err, errs.Unsupported) {
								t.Errorf("%s size %d count %d: got %v, %v; want unsupported", coll, size, count, got, err)
							}
							continue
						}
						if err != nil || got != want {
							t.Errorf("%s size %d count %d: got %v, %v; want %s", coll, size, count, got, err, want.Name)
						}
						p.InPlace = true
						if got, _ := Choose(p, "", m, algorithms.Caps{}); got != want {
							t.Errorf("%s size %d count %d in place: got %v, want %s", coll, size, count, got, want.Name)
						}
					}
				}
			}
		}
	}
}

func TestNewSignature(t *testing.T) {
	d := &Defaults{Machine: algorithms.InProcess}
	base := Call{Spec: schedule.Spec{Coll: schedule.Allreduce, Size: 4, Count: 100}, ElemSize: 8, Commutative: true, OpID: 1}
	sig := func(c Call, o Options, d *Defaults) uint64 {
		e, err := New(&c, &o, d)
		if err != nil {
			t.Fatal(err)
		}
		if e.Plan == nil || e.Info == nil {
			t.Fatalf("no plan: %+v", e)
		}
		return e.Sig
	}
	s0 := sig(base, Options{}, d)
	inPlace := base
	inPlace.Spec.InPlace = true
	other := base
	other.Rank = 3
	if sig(inPlace, Options{}, d) != s0 || sig(other, Options{}, d) != s0 {
		t.Error("the signature depends on the rank or on in-place-ness")
	}
	count := base
	count.Spec.Count = 101
	op := base
	op.OpID = 2
	grid := &Defaults{Machine: d.Machine, Grid: []int{2, 2}}
	for name, s := range map[string]uint64{
		"count":         sig(count, Options{}, d),
		"operator":      sig(op, Options{}, d),
		"algorithm":     sig(base, Options{Alg: "ring"}, d),
		"radix":         sig(base, Options{Alg: "ring", Knobs: knobs(algorithms.RadixKnob, 3)}, d),
		"segment":       sig(base, Options{Knobs: knobs(algorithms.SegmentKnob, 64)}, d),
		"default grid":  sig(base, Options{}, grid),
		"call's grid":   sig(base, Options{Grid: []int{4, 1}}, d),
		"call's places": sig(base, Options{Place: &algorithms.Placement{Machine: []int{4, 2}, Nodes: []int{0, 2, 4, 6}}}, d),
	} {
		if s == s0 {
			t.Errorf("%s: same signature", name)
		}
	}
	// The v-collectives sign their counts (all but Alltoallv, whose rows
	// differ between ranks).
	v := Call{Spec: schedule.Spec{Coll: schedule.Allgatherv, Size: 2, Counts: []int{1, 2}}, ElemSize: 4, Commutative: true}
	v2 := v
	v2.Spec.Counts = []int{2, 1}
	if sig(v, Options{}, d) == sig(v2, Options{}, d) {
		t.Error("allgatherv: counts not signed")
	}
}

func TestNewBadDefaultGrid(t *testing.T) {
	// Options.Check leaves a communicator's grid alone (it was checked
	// when the communicator was made); the named algorithm still refuses
	// one that does not hold the ranks.
	c := Call{Spec: schedule.Spec{Coll: schedule.Allgather, Size: 4, Count: 2}, ElemSize: 4, Commutative: true}
	_, err := New(&c, &Options{Alg: "bucket"}, &Defaults{Machine: algorithms.InProcess, Grid: []int{3, 3}})
	if !errors.Is(err, errs.InvalidArgument) {
		t.Fatalf("error %v, want %v", err, errs.InvalidArgument)
	}
}
