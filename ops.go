package scoll

import (
	"fmt"
	"reflect"

	"github.com/scoll/scoll/exec"
	"github.com/scoll/scoll/internal/kernels"
)

// Number is the element types collectives accept: the integer types
// (int and uint too, whose size is the platform's: ranks of one job must
// agree on it) and the floating-point types.
type Number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// Op is a reduction operator: one of the built-in values or one made by
// UserOp. The zero Op is invalid.
type Op struct {
	builtin     kernels.Op
	user        any // func(inout, in []T)
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
)

// UserOp returns an operator that combines with fn. fn(inout, in) must set
// inout[i] = in[i] ⊕ inout[i] for every i, where in holds the contribution of
// lower ranks (the convention of MPI user functions). fn is called with slices
// of equal length, possibly empty, and must not keep them. When commutative is
// false, scoll combines contributions in rank order and refuses algorithms that
// cannot (ErrUnsupported). Every rank must pass an operator computing the same
// function; scoll can only check that all of them are user operators with the
// same commutativity.
func UserOp[T Number](fn func(inout, in []T), commutative bool) Op {
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
	case o.user != nil:
		return "user"
	}
	return "invalid"
}

// kernelFor returns the byte kernel of op for element type T.
func kernelFor[T Number](op Op) (exec.Kernel, error) {
	var z T
	es := int(reflect.TypeOf(z).Size())
	k := exec.Kernel{ElemSize: es}
	switch {
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
