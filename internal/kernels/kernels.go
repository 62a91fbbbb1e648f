// Package kernels holds scoll's element-wise reduction kernels: generic
// functions over Go's numeric types, and the one switch that maps a runtime
// element kind to an instantiation working on raw bytes.
package kernels

import (
	"reflect"
	"unsafe"
)

// Op names a built-in operator.
type Op uint8

// The built-in operators.
const (
	Sum Op = iota + 1
	Prod
	Min
	Max
	Land
	Lor
	Band
	Bor
	Bxor
)

var opNames = [...]string{"", "sum", "prod", "min", "max", "land", "lor", "band", "bor", "bxor"}

func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "op?"
}

// Integer is the integer element types.
type Integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// Float is the floating-point element types.
type Float interface{ ~float32 | ~float64 }

// Number is every element type scoll reduces.
type Number interface{ Integer | Float }

// Func combines src into dst element-wise: dst[i] = dst[i] ⊕ src[i]. dst and
// src have the same length in bytes, a multiple of the element size.
type Func func(dst, src []byte)

// As reinterprets b as a slice of T. b's length must be a multiple of T's
// size and its start aligned for T.
func As[T any](b []byte) []T {
	var z T
	n := len(b) / int(unsafe.Sizeof(z))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// Bytes reinterprets s as bytes.
func Bytes[T any](s []T) []byte {
	var z T
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
}

func sum[T Number](d, s []T) {
	s = s[:len(d)]
	for i := range d {
		d[i] += s[i]
	}
}

func prod[T Number](d, s []T) {
	s = s[:len(d)]
	for i := range d {
		d[i] *= s[i]
	}
}

func minK[T Number](d, s []T) {
	s = s[:len(d)]
	for i := range d {
		if s[i] < d[i] {
			d[i] = s[i]
		}
	}
}

func maxK[T Number](d, s []T) {
	s = s[:len(d)]
	for i := range d {
		if s[i] > d[i] {
			d[i] = s[i]
		}
	}
}

func land[T Integer](d, s []T) {
	s = s[:len(d)]
	for i := range d {
		if d[i] != 0 && s[i] != 0 {
			d[i] = 1
		} else {
			d[i] = 0
		}
	}
}

func lor[T Integer](d, s []T) {
	s = s[:len(d)]
	for i := range d {
		if d[i] != 0 || s[i] != 0 {
			d[i] = 1
		} else {
			d[i] = 0
		}
	}
}

func band[T Integer](d, s []T) {
	s = s[:len(d)]
	for i := range d {
		d[i] &= s[i]
	}
}

func bor[T Integer](d, s []T) {
	s = s[:len(d)]
	for i := range d {
		d[i] |= s[i]
	}
}

func bxor[T Integer](d, s []T) {
	s = s[:len(d)]
	for i := range d {
		d[i] ^= s[i]
	}
}

func wrap[T any](f func(d, s []T)) Func {
	return func(d, s []byte) { f(As[T](d), As[T](s)) }
}

func numeric[T Number](op Op) Func {
	switch op {
	case Sum:
		return wrap(sum[T])
	case Prod:
		return wrap(prod[T])
	case Min:
		return wrap(minK[T])
	case Max:
		return wrap(maxK[T])
	}
	return nil
}

func integer[T Integer](op Op) Func {
	switch op {
	case Land:
		return wrap(land[T])
	case Lor:
		return wrap(lor[T])
	case Band:
		return wrap(band[T])
	case Bor:
		return wrap(bor[T])
	case Bxor:
		return wrap(bxor[T])
	}
	return numeric[T](op)
}

var table = func() (t [reflect.Float64 + 1][Bxor + 1]Func) {
	for k := reflect.Int8; k <= reflect.Float64; k++ {
		for op := Sum; op <= Bxor; op++ {
			t[k][op] = get(k, op)
		}
	}
	return t
}()

// Get returns the kernel of op for elements of kind k, or nil when op is not
// defined for k (logical and bitwise operators on floating point).
func Get(k reflect.Kind, op Op) Func {
	if k > reflect.Float64 || op > Bxor {
		return nil
	}
	return table[k][op]
}

func get(k reflect.Kind, op Op) Func {
	switch k {
	case reflect.Int8:
		return integer[int8](op)
	case reflect.Int16:
		return integer[int16](op)
	case reflect.Int32:
		return integer[int32](op)
	case reflect.Int64:
		return integer[int64](op)
	case reflect.Uint8:
		return integer[uint8](op)
	case reflect.Uint16:
		return integer[uint16](op)
	case reflect.Uint32:
		return integer[uint32](op)
	case reflect.Uint64:
		return integer[uint64](op)
	case reflect.Float32:
		return numeric[float32](op)
	case reflect.Float64:
		return numeric[float64](op)
	}
	return nil
}

// KindOf returns the reflect.Kind of T.
func KindOf[T any]() reflect.Kind {
	var z T
	return reflect.TypeOf(z).Kind()
}

// Func3 sets dst[i] = a[i] ⊕ b[i]. dst may be a or b itself; otherwise it
// overlaps neither.
type Func3 func(dst, a, b []byte)

func sum3[T Number](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = a[i] + b[i]
	}
}

func prod3[T Number](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = a[i] * b[i]
	}
}

func min3[T Number](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = min(a[i], b[i])
	}
}

func max3[T Number](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = max(a[i], b[i])
	}
}

func wrap3[T any](f func(d, a, b []T)) Func3 {
	return func(d, a, b []byte) { f(As[T](d), As[T](a), As[T](b)) }
}

func numeric3[T Number](op Op) Func3 {
	switch op {
	case Sum:
		return wrap3(sum3[T])
	case Prod:
		return wrap3(prod3[T])
	case Min:
		return wrap3(min3[T])
	case Max:
		return wrap3(max3[T])
	}
	return nil
}

// same reports whether two byte slices start at the same address.
func same(x, y []byte) bool {
	return len(x) > 0 && len(y) > 0 && unsafe.SliceData(x) == unsafe.SliceData(y)
}

// From2 builds a three-address kernel from a two-address kernel f of a
// commutative operator.
func From2(f Func) Func3 {
	return func(d, a, b []byte) {
		switch {
		case same(d, a):
			f(d, b)
		case same(d, b):
			f(d, a)
		default:
			copy(d, a)
			f(d, b)
		}
	}
}

var table3 = func() (t [reflect.Float64 + 1][Bxor + 1]Func3) {
	for k := reflect.Int8; k <= reflect.Float64; k++ {
		for op := Sum; op <= Bxor; op++ {
			var f Func3
			switch k {
			case reflect.Int8:
				f = numeric3[int8](op)
			case reflect.Int16:
				f = numeric3[int16](op)
			case reflect.Int32:
				f = numeric3[int32](op)
			case reflect.Int64:
				f = numeric3[int64](op)
			case reflect.Uint8:
				f = numeric3[uint8](op)
			case reflect.Uint16:
				f = numeric3[uint16](op)
			case reflect.Uint32:
				f = numeric3[uint32](op)
			case reflect.Uint64:
				f = numeric3[uint64](op)
			case reflect.Float32:
				f = numeric3[float32](op)
			case reflect.Float64:
				f = numeric3[float64](op)
			}
			if f == nil && table[k][op] != nil {
				f = From2(table[k][op])
			}
			t[k][op] = f
		}
	}
	return t
}()

// Get3 returns the three-address kernel of a built-in operator (all are
// commutative), or nil when op is not defined for kind k.
func Get3(k reflect.Kind, op Op) Func3 {
	if k > reflect.Float64 || op > Bxor {
		return nil
	}
	return table3[k][op]
}
