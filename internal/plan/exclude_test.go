package plan

import (
	"errors"
	"testing"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/schedule"
)

// TestExclude: the default choice skips excluded names (and changes its
// key), a named algorithm ignores no exclusion but may not be excluded,
// and unknown names are refused.
func TestExclude(t *testing.T) {
	c := &Call{Spec: schedule.Spec{Coll: schedule.Allreduce, Size: 8, Count: 1 << 16}, ElemSize: 4, Commutative: true}
	d := &Defaults{Machine: algorithms.InProcess}
	base, err := New(c, &Options{}, d)
	if err != nil {
		t.Fatal(err)
	}
	o := &Options{Exclude: []string{base.Info.Name}}
	if err := o.Check(c.Spec.Coll, 8); err != nil {
		t.Fatal(err)
	}
	other, err := New(c, o, d)
	if err != nil {
		t.Fatal(err)
	}
	if other.Info.Name == base.Info.Name || other.Info.Path != algorithms.Messages {
		t.Errorf("excluding %s chose %s (%s)", base.Info.Name, other.Info.Name, other.Info.Path)
	}
	if KeyOf(c, o) == KeyOf(c, &Options{}) {
		t.Error("the exclusion is not in the key")
	}
	for _, bad := range []*Options{
		{Exclude: []string{"no-such"}},
		{Alg: "ring", Exclude: []string{"ring"}},
	} {
		if err := bad.Check(c.Spec.Coll, 8); !errors.Is(err, errs.InvalidArgument) {
			t.Errorf("%+v: %v, want InvalidArgument", bad, err)
		}
	}
	var all []string
	for _, in := range algorithms.List(schedule.Allreduce) {
		all = append(all, in.Name)
	}
	if _, err := New(c, &Options{Exclude: all}, d); !errors.Is(err, errs.Unsupported) {
		t.Errorf("everything excluded: %v, want Unsupported", err)
	}
}
