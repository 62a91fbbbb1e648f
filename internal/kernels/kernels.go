// Package kernels holds scoll's element-wise reduction kernels: generic
// functions over Go's numeric types, and the one switch that maps a runtime
// element kind to an instantiation working on raw bytes.
package kernels

import (
	"math"
	"reflect"
	"time"
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

// String returns the operator's name ("sum", "prod", ...).
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "op?"
}

// Integer is the integer element types.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64
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

// sum is unrolled four ways: fewer loop branches per element, and a speed
// that depends less on where the build places the loop (a one-element loop
// measured 50 % slower in some builds than in others).
func sum[T Number](d, s []T) {
	s = s[:len(d)]
	i := 0
	for ; i+4 <= len(d); i += 4 {
		d[i] += s[i]
		d[i+1] += s[i+1]
		d[i+2] += s[i+2]
		d[i+3] += s[i+3]
	}
	for ; i < len(d); i++ {
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

// truth is 1 for true and 0 for false.
func truth[T Integer](b bool) T {
	if b {
		return 1
	}
	return 0
}

func land[T Integer](d, s []T) {
	s = s[:len(d)]
	for i := range d {
		d[i] = truth[T](d[i] != 0 && s[i] != 0)
	}
}

func lor[T Integer](d, s []T) {
	s = s[:len(d)]
	for i := range d {
		d[i] = truth[T](d[i] != 0 || s[i] != 0)
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

// ops are the kernels of every operator for one element type, indexed by
// Op (nil where the operator is not defined).
type ops struct {
	two   [Bxor + 1]Func
	three [Bxor + 1]Func3
}

// arithOps returns the kernels of the operators every element type has:
// sum, prod, min and max.
func arithOps[T Number]() *ops {
	o := &ops{}
	o.two[Sum], o.two[Prod], o.two[Min], o.two[Max] = wrap(sum[T]), wrap(prod[T]), wrap(minK[T]), wrap(maxK[T])
	o.three[Sum], o.three[Prod], o.three[Min], o.three[Max] = wrap3(sum3[T]), wrap3(prod3[T]), wrap3(min3[T]), wrap3(max3[T])
	return o
}

// integerOps returns arithOps and the logical and bitwise operators,
// whose three-address forms are built on their two-address ones.
func integerOps[T Integer]() *ops {
	o := arithOps[T]()
	o.two[Land], o.two[Lor], o.two[Band], o.two[Bor], o.two[Bxor] = wrap(land[T]), wrap(lor[T]), wrap(band[T]), wrap(bor[T]), wrap(bxor[T])
	for op := Land; op <= Bxor; op++ {
		o.three[op] = From2(o.two[op])
	}
	return o
}

// byKind is the one place that maps a runtime element kind to the
// kernels' instantiations.
var byKind = [reflect.Float64 + 1]*ops{
	reflect.Int: integerOps[int](), reflect.Uint: integerOps[uint](),
	reflect.Int8: integerOps[int8](), reflect.Int16: integerOps[int16](), reflect.Int32: integerOps[int32](), reflect.Int64: integerOps[int64](),
	reflect.Uint8: integerOps[uint8](), reflect.Uint16: integerOps[uint16](), reflect.Uint32: integerOps[uint32](), reflect.Uint64: integerOps[uint64](),
	reflect.Float32: arithOps[float32](), reflect.Float64: arithOps[float64](),
}

// Get returns the kernel of op for elements of kind k, or nil when op is not
// defined for k (logical and bitwise operators on floating point).
func Get(k reflect.Kind, op Op) Func {
	if k > reflect.Float64 || op > Bxor || byKind[k] == nil {
		return nil
	}
	return byKind[k].two[op]
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

// Get3 returns the three-address kernel of a built-in operator (all are
// commutative), or nil when op is not defined for kind k.
func Get3(k reflect.Kind, op Op) Func3 {
	if k > reflect.Float64 || op > Bxor || byKind[k] == nil {
		return nil
	}
	return byKind[k].three[op]
}

// MeasureGamma returns γ of this machine: the seconds per byte of the
// float32 sum kernel on 1 MiB, the best of at least five runs and of those
// that fit in a quarter of budget.
func MeasureGamma(budget time.Duration) float64 {
	const n = 1 << 20
	dst, src := make([]byte, n), make([]byte, n)
	f := Get(reflect.Float32, Sum)
	f(dst, src)
	best := math.Inf(1)
	start := time.Now()
	for i := 0; i < 5 || time.Since(start) < budget/4; i++ {
		t := time.Now()
		f(dst, src)
		best = min(best, time.Since(t).Seconds())
		if i > 10000 {
			break
		}
	}
	return best / n
}
