package kernels

import (
	"reflect"
	"testing"
)

// ref is the scalar reference of every built-in operator on int64 values.
func ref(op Op, a, b int64) int64 {
	switch op {
	case Sum:
		return a + b
	case Prod:
		return a * b
	case Min:
		return min(a, b)
	case Max:
		return max(a, b)
	case Land:
		if a != 0 && b != 0 {
			return 1
		}
		return 0
	case Lor:
		if a != 0 || b != 0 {
			return 1
		}
		return 0
	case Band:
		return a & b
	case Bor:
		return a | b
	case Bxor:
		return a ^ b
	}
	panic("op")
}

func check[T Number](t *testing.T, float bool) {
	k := KindOf[T]()
	const n = 37 // odd, not a multiple of any vector width
	for op := Sum; op <= Bxor; op++ {
		f, f3 := Get(k, op), Get3(k, op)
		if float && op >= Land {
			if f != nil || f3 != nil {
				t.Errorf("%v %v: defined on floating point", k, op)
			}
			continue
		}
		if f == nil || f3 == nil {
			t.Fatalf("%v %v: missing kernel", k, op)
		}
		a, b := make([]T, n), make([]T, n)
		for i := range n {
			a[i], b[i] = T(i%7), T((i*3)%5)
		}
		want := make([]T, n)
		for i := range n {
			want[i] = T(ref(op, int64(a[i]), int64(b[i])))
		}
		d := append([]T(nil), a...)
		f(Bytes(d), Bytes(b))
		if !reflect.DeepEqual(d, want) {
			t.Errorf("%v %v two-address: %v, want %v", k, op, d, want)
		}
		d3 := make([]T, n)
		f3(Bytes(d3), Bytes(a), Bytes(b))
		if !reflect.DeepEqual(d3, want) {
			t.Errorf("%v %v three-address: %v, want %v", k, op, d3, want)
		}
		// aliasing: dst is the first or the second operand
		x := append([]T(nil), a...)
		f3(Bytes(x), Bytes(x), Bytes(b))
		y := append([]T(nil), b...)
		f3(Bytes(y), Bytes(a), Bytes(y))
		if !reflect.DeepEqual(x, want) || !reflect.DeepEqual(y, want) {
			t.Errorf("%v %v aliased three-address: %v %v, want %v", k, op, x, y, want)
		}
	}
}

func TestKernels(t *testing.T) {
	check[int](t, false)
	check[uint](t, false)
	check[int8](t, false)
	check[int16](t, false)
	check[int32](t, false)
	check[int64](t, false)
	check[uint8](t, false)
	check[uint16](t, false)
	check[uint32](t, false)
	check[uint64](t, false)
	check[float32](t, true)
	check[float64](t, true)
	if Get(reflect.String, Sum) != nil || Get3(reflect.Int32, Op(99)) != nil {
		t.Error("kernel for an unsupported kind or operator")
	}
}

func TestAsBytes(t *testing.T) {
	s := []float64{1.5, -2}
	if got := As[float64](Bytes(s)); !reflect.DeepEqual(got, s) {
		t.Fatalf("round trip: %v", got)
	}
	if As[int32](nil) != nil || Bytes([]int32(nil)) != nil {
		t.Fatal("empty slices")
	}
}
