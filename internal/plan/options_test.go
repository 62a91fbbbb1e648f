package plan

import (
	"errors"
	"reflect"
	"testing"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/schedule"
)

func TestOptionsCheck(t *testing.T) {
	cases := []struct {
		o    Options
		only string // CheckOnly's algorithm ("": Check)
		want string // "" for none
	}{
		{Options{}, "", ""},
		{Options{Alg: "no-such", Knobs: two(8, 2), Grid: []int{2, 2}}, "", ""},
		{Options{Knobs: knobs(algorithms.SegmentKnob, -8)}, "", "scoll: invalid argument: segment -8 (want ≥ 1)"},
		{Options{Knobs: knobs(algorithms.RadixKnob, 1)}, "", "scoll: invalid argument: radix 1 (want ≥ 2)"},
		{Options{Knobs: knobs(algorithms.RadixKnob, -3)}, "", "scoll: invalid argument: radix -3 (want ≥ 2)"},
		{Options{Grid: []int{3, 2}}, "", "scoll: invalid argument: process grid [3 2] does not hold 4 ranks"},
		{Options{Place: &algorithms.Placement{Machine: []int{4, 4}, Nodes: []int{0, 1, 1, 2}}}, "",
			"scoll: invalid argument: ranks 1 and 2 placed on the same node 1"},
		{Options{Alg: "chain"}, "chain", ""},
		{Options{Alg: "ring"}, "chain", `scoll: invalid argument: unknown algorithm "ring" for bcast (valid: chain)`},
		{Options{Knobs: knobs(algorithms.RadixKnob, 1)}, "chain", "scoll: invalid argument: radix 1 (want ≥ 2)"},
		{Options{RadixVector: []int{2, 2}}, "", ""},
		{Options{RadixVector: []int{4}}, "", ""},
		{Options{RadixVector: []int{2, 2}, Knobs: knobs(algorithms.RadixKnob, 2)}, "", "scoll: invalid argument: radix 2 together with radix vector [2 2] (give one)"},
		{Options{RadixVector: []int{2, 3}}, "", "scoll: invalid argument: radix vector [2 3]: product 6, want 4 ranks"},
		{Options{RadixVector: []int{1, 4}}, "", "scoll: invalid argument: radix vector [1 4]: entry 1 (want ≥ 2)"},
		{Options{RadixVector: []int{}}, "", "scoll: invalid argument: radix vector []: product 1, want 4 ranks"},
		{Options{RadixVector: []int{1 << 40, 1 << 40}}, "", "scoll: invalid argument: radix vector [1099511627776 1099511627776]: product overflows, want 4 ranks"},
	}
	for _, c := range cases {
		var err error
		if c.only == "" {
			err = c.o.Check(schedule.Bcast, 4)
		} else {
			err = c.o.CheckOnly(schedule.Bcast, 4, c.only)
		}
		if c.want == "" {
			if err != nil {
				t.Errorf("%+v: %v", c.o, err)
			}
			continue
		}
		if err == nil || err.Error() != c.want || !errors.Is(err, errs.InvalidArgument) {
			t.Errorf("%+v: error\n %v, want\n %s", c.o, err, c.want)
		}
	}
}

func TestSegmentKnob(t *testing.T) {
	for _, c := range []struct{ bytes, elem, want int }{
		{1, 8, 1}, {8, 8, 1}, {17, 8, 2}, {1024, 4, 256}, {5, 0, 5},
	} {
		p := algorithms.Params{ElemSize: c.elem}
		algorithms.SegmentKnob.Apply(&p, c.bytes)
		if p.Segment != c.want {
			t.Errorf("%d bytes of %d-byte elements: %d, want %d", c.bytes, c.elem, p.Segment, c.want)
		}
	}
}

// two returns the segment knob set to seg and the radix to radix.
func two(seg, radix int) algorithms.KnobValues {
	kv := knobs(algorithms.SegmentKnob, seg)
	kv[algorithms.RadixKnob.Index()] = radix
	return kv
}

func TestHash(t *testing.T) {
	h := NewHash()
	if uint64(h) != 14695981039346656037 {
		t.Fatalf("offset basis %d", h)
	}
	h.Add(1)
	basis, prime := uint64(14695981039346656037), uint64(1099511628211)
	if want := (basis ^ 1) * prime; uint64(h) != want {
		t.Errorf("one word: %d, want %d", h, want)
	}
	a, b := NewHash(), NewHash()
	a.Ints([]int{1})
	b.Ints([]int{1, 0})
	if a == b {
		t.Error("[1] and [1 0] hash alike")
	}
	a, b = NewHash(), NewHash()
	a.Ints(nil)
	b.Ints([]int{})
	if a != b {
		t.Error("nil and empty hash differently")
	}
	a, b = NewHash(), NewHash()
	a.Str("ab")
	b.Add('a', 'b')
	if a != b {
		t.Error("Str is not a word per byte")
	}
}

// TestIsSimple: every field of Options but Simple and Alg makes options
// not simple, so that a new option cannot slip past the small plan key
// (Cache.Last) unnoticed.
func TestIsSimple(t *testing.T) {
	if o := (Options{Alg: "ring"}); !o.IsSimple() {
		t.Fatal("options naming only an algorithm are not simple")
	}
	typ := reflect.TypeFor[Options]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Name == "Simple" || f.Name == "Alg" {
			continue
		}
		var o Options
		v := reflect.ValueOf(&o).Elem().Field(i)
		switch v.Kind() {
		case reflect.String:
			v.SetString("x")
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Int, reflect.Int64:
			v.SetInt(1)
		case reflect.Uint8:
			v.SetUint(1)
		case reflect.Slice:
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		case reflect.Array:
			v.Index(0).SetInt(1)
		case reflect.Pointer:
			v.Set(reflect.New(v.Type().Elem()))
		case reflect.Func:
			v.Set(reflect.MakeFunc(v.Type(), func([]reflect.Value) []reflect.Value {
				return []reflect.Value{reflect.Zero(v.Type().Out(0))}
			}))
		default:
			t.Fatalf("field %s of kind %s: teach this test to set it", f.Name, v.Kind())
		}
		if o.IsSimple() {
			t.Errorf("options with %s set count as simple", f.Name)
		}
	}
}
