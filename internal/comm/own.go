package comm

import (
	"context"

	"github.com/scoll/scoll/exec"
	"github.com/scoll/scoll/internal/kernels"
	"github.com/scoll/scoll/internal/plan"
)

// The collectives the communicator runs for itself (agreements on context
// ids and machine models, call sites' measurements): blocking calls of
// int64 or float64 buffers with a built-in operator.

// Int64s runs the blocking collective a on send and recv with op (0 for
// collectives that do not reduce) and algorithm alg ("": the default
// choice).
func (c *Comm) Int64s(ctx context.Context, a plan.Args, send, recv []int64, op kernels.Op, alg string) error {
	return own(ctx, c, a, send, recv, op, alg, 0)
}

// Float64s is Int64s for float64 buffers.
func (c *Comm) Float64s(ctx context.Context, a plan.Args, send, recv []float64, op kernels.Op, alg string) error {
	return own(ctx, c, a, send, recv, op, alg, 0)
}

// own runs a collective of the library's own, with signature kind kind
// (plan.Options.SigKind). Its errors are not wrapped as a public call's:
// the public call that made it does that.
func own[T int64 | float64](ctx context.Context, c *Comm, a plan.Args, send, recv []T, op kernels.Op, alg string, kind uint8) error {
	a.Send, a.Recv = plan.Buf{Len: len(send), Nil: send == nil}, plan.Buf{Len: len(recv), Nil: recv == nil}
	o := plan.Options{Alg: alg, SigKind: kind}
	k := Op{Kernel: exec.Kernel{ElemSize: 8}, ID: uint64(op), Commutative: true, Exact: true}
	if op != 0 {
		f := kernels.Get(kernels.KindOf[T](), op)
		k.Kernel.Reduce, k.Kernel.ReduceLeft = f, f
		k.Kernel.Combine = kernels.Get3(kernels.KindOf[T](), op)
	}
	var cl Call
	err := Prepare(&cl, ctx, c, &a, kernels.Bytes(send), kernels.Bytes(recv), 8, &k, &o, true)
	return blocking(ctx, c, &cl, err)
}
