package scoll

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/scoll/scoll/exec"
	"github.com/scoll/scoll/internal/kernels"
)

// Number is the numeric element types: the integer types (int and uint
// too, whose size is the platform's: ranks of one job must agree on it)
// and the floating-point types.
type Number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// Element is the element types collectives accept: the Number types, and
// Loc pairs of a value and an index (for MinLoc and MaxLoc).
type Element interface {
	Number |
		Loc[int] | Loc[int8] | Loc[int16] | Loc[int32] | Loc[int64] |
		Loc[uint] | Loc[uint8] | Loc[uint16] | Loc[uint32] | Loc[uint64] | Loc[float32] | Loc[float64]
}

// Value is the types a Loc pairs with an index.
type Value interface {
	int | int8 | int16 | int32 | int64 | uint | uint8 | uint16 | uint32 | uint64 | float32 | float64
}

// Loc is a value with an index, the element of the MinLoc and MaxLoc
// reductions (MPI_MINLOC and MPI_MAXLOC's pair types, such as
// MPI_DOUBLE_INT): typically the value a rank holds and its rank, or an
// element and its position. Its padding bytes travel with it.
type Loc[T Value] struct {
	V T
	I int32
}

// Op is a reduction operator: one of the built-in values or one made by
// UserOp. The zero Op is invalid.
type Op struct {
	builtin     kernels.Op
	loc         int8 // MinLoc (−1), MaxLoc (+1)
	user        any  // func(inout, in []T)
	id          uint64
	commutative bool
}

// The built-in operators. Land, Lor, Band, Bor and Bxor are defined on integer
// types only; on floating-point types they fail with ErrInvalidArgument. Land
// and Lor yield 1 or 0. All built-ins are commutative; Sum and Prod on floats
// are treated as such (results may differ in the last bits between algorithms).
var (
	Sum  = Op{builtin: kernels.Sum, id: uint64(kernels.Sum), commutative: true}
	Prod = Op{builtin: kernels.Prod, id: uint64(kernels.Prod), commutative: true}
	Min  = Op{builtin: kernels.Min, id: uint64(kernels.Min), commutative: true}
	Max  = Op{builtin: kernels.Max, id: uint64(kernels.Max), commutative: true}
	Land = Op{builtin: kernels.Land, id: uint64(kernels.Land), commutative: true}
	Lor  = Op{builtin: kernels.Lor, id: uint64(kernels.Lor), commutative: true}
	Band = Op{builtin: kernels.Band, id: uint64(kernels.Band), commutative: true}
	Bor  = Op{builtin: kernels.Bor, id: uint64(kernels.Bor), commutative: true}
	Bxor = Op{builtin: kernels.Bxor, id: uint64(kernels.Bxor), commutative: true}
	// MinLoc and MaxLoc reduce Loc elements (and only those) to the least
	// or greatest value with its index; between equal values the lower
	// index wins, as in MPI. Both are commutative.
	MinLoc = Op{loc: -1, id: 90, commutative: true}
	MaxLoc = Op{loc: +1, id: 91, commutative: true}
)

// UserOp returns an operator that combines with fn. fn(inout, in) must set
// inout[i] = in[i] ⊕ inout[i] for every i, where in holds the contribution of
// lower ranks (the convention of MPI user functions). fn is called with slices
// of equal length, possibly empty, and must not keep them. When commutative is
// false, scoll combines contributions in rank order and refuses algorithms that
// cannot (ErrUnsupported). Every rank must pass an operator computing the same
// function; scoll can only check that all of them are user operators with the
// same commutativity.
func UserOp[T Element](fn func(inout, in []T), commutative bool) Op {
	id := uint64(100)
	if commutative {
		id++
	}
	return Op{user: fn, commutative: commutative, id: id}
}

// Commutative reports whether the operator is commutative.
func (o Op) Commutative() bool { return o.commutative }

// String returns the operator's name ("sum", ..., "user").
func (o Op) String() string {
	switch {
	case o.builtin != 0:
		return o.builtin.String()
	case o.loc < 0:
		return "minloc"
	case o.loc > 0:
		return "maxloc"
	case o.user != nil:
		return "user"
	}
	return "invalid"
}

// kernelFor returns the byte kernel of op for element type T.
func kernelFor[T Element](op Op) (exec.Kernel, error) {
	var z T
	es := int(reflect.TypeOf(z).Size())
	k := exec.Kernel{ElemSize: es}
	switch {
	case op.loc != 0:
		return locKernel[T](op)
	case op.builtin != 0:
		f := kernels.Get(kernels.KindOf[T](), op.builtin)
		if f == nil {
			return k, fmt.Errorf("%w: operator %s is not defined for %T", ErrInvalidArgument, op, z)
		}
		k.Reduce, k.ReduceLeft = f, f
		k.Combine = kernels.Get3(kernels.KindOf[T](), op.builtin)
		return k, nil
	case op.user != nil:
		fn, ok := op.user.(func(inout, in []T))
		if !ok || fn == nil {
			return k, fmt.Errorf("%w: user operator for %T used with %T elements", ErrInvalidArgument, op.user, z)
		}
		// dst = src ⊕ dst is fn's own form.
		k.ReduceLeft = func(dst, src []byte) { fn(kernels.As[T](dst), kernels.As[T](src)) }
		if op.commutative {
			k.Reduce = k.ReduceLeft
		} else {
			var tmp []T
			k.Reduce = func(dst, src []byte) {
				d := kernels.As[T](dst)
				tmp = append(tmp[:0], kernels.As[T](src)...)
				fn(tmp, d) // tmp = dst ⊕ src
				copy(d, tmp)
			}
		}
		var tmp []T
		k.Combine = func(dst, a, b []byte) { // dst = a ⊕ b
			d, x, y := kernels.As[T](dst), kernels.As[T](a), kernels.As[T](b)
			switch {
			case len(d) == 0:
			case &d[0] == &x[0] && op.commutative:
				fn(d, y)
			case &d[0] == &x[0]:
				tmp = append(tmp[:0], y...)
				fn(tmp, x)
				copy(d, tmp)
			default:
				if &d[0] != &y[0] {
					copy(d, y)
				}
				fn(d, x)
			}
		}
		return k, nil
	}
	return k, fmt.Errorf("%w: no operator (zero Op)", ErrInvalidArgument)
}

// locKernel returns MinLoc's or MaxLoc's kernel for T, which must be a
// Loc type.
func locKernel[T Element](op Op) (exec.Kernel, error) {
	var z T
	switch any(z).(type) {
	case Loc[int]:
		return locOf[int](op), nil
	case Loc[int8]:
		return locOf[int8](op), nil
	case Loc[int16]:
		return locOf[int16](op), nil
	case Loc[int32]:
		return locOf[int32](op), nil
	case Loc[int64]:
		return locOf[int64](op), nil
	case Loc[uint]:
		return locOf[uint](op), nil
	case Loc[uint8]:
		return locOf[uint8](op), nil
	case Loc[uint16]:
		return locOf[uint16](op), nil
	case Loc[uint32]:
		return locOf[uint32](op), nil
	case Loc[uint64]:
		return locOf[uint64](op), nil
	case Loc[float32]:
		return locOf[float32](op), nil
	case Loc[float64]:
		return locOf[float64](op), nil
	}
	return exec.Kernel{}, fmt.Errorf("%w: operator %s needs Loc elements, not %T", ErrInvalidArgument, op, z)
}

// locOf returns the kernel of MinLoc (op.loc < 0) or MaxLoc over Loc[V].
func locOf[V Value](op Op) exec.Kernel {
	better := func(a, b Loc[V]) Loc[V] { // the pair that wins of a and b
		switch {
		case a.V == b.V:
			if b.I < a.I {
				return b
			}
			return a
		case (a.V < b.V) == (op.loc < 0):
			return a
		}
		return b
	}
	two := func(dst, src []byte) {
		d, s := kernels.As[Loc[V]](dst), kernels.As[Loc[V]](src)
		for i := range d {
			d[i] = better(d[i], s[i])
		}
	}
	var z Loc[V]
	return exec.Kernel{ElemSize: int(unsafe.Sizeof(z)), Reduce: two, ReduceLeft: two,
		Combine: func(dst, a, b []byte) {
			d, x, y := kernels.As[Loc[V]](dst), kernels.As[Loc[V]](a), kernels.As[Loc[V]](b)
			for i := range d {
				d[i] = better(x[i], y[i])
			}
		}}
}
