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
