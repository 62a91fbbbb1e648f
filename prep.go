package scoll

import (
	"context"
	"unsafe"

	"github.com/scoll/scoll/internal/comm"
	"github.com/scoll/scoll/internal/kernels"
	"github.com/scoll/scoll/internal/plan"
)

// The prep functions turn the public collectives' arguments into a call
// (api.go's forms share them): the checks, the plan and the way the call
// runs are package comm's; what is generic over the element type — the
// buffers, the operator's kernel — is here.

// elemSize returns the size in bytes of a T.
func elemSize[T Element]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

// bufOf describes s to the argument checks.
func bufOf[T any](s []T) plan.Buf { return plan.Buf{Len: len(s), Nil: s == nil} }

// prepare makes cl the call a on send and recv with op, blocking or not:
// the arguments as lengths, the buffers as bytes, the operator's kernel for
// T and the options go to comm.Prepare, which checks them and plans.
func prepare[T Element](cl *comm.Call, ctx context.Context, c *Comm, a plan.Args, send, recv []T, op Op, blocking bool, opts []CallOption) error {
	a.Send, a.Recv = bufOf(send), bufOf(recv)
	o := parseOptions(opts)
	var k comm.Op
	if a.Coll.Reduces() {
		k = opFor[T](op)
	}
	err := comm.Prepare(cl, ctx, c.core(), &a, kernels.Bytes(send), kernels.Bytes(recv), elemSize[T](), &k, &o, blocking)
	if err == nil && o.Chosen != nil {
		*o.Chosen = cl.Algorithm()
	}
	return err
}

// opFor returns op as a call on T elements needs it.
func opFor[T Element](op Op) comm.Op {
	k, err := kernelFor[T](op)
	grouped := floating[T]() && (op.id == Sum.id || op.id == Prod.id || op.user != nil)
	return comm.Op{Kernel: k, Err: err, ID: op.id, Commutative: op.commutative, Exact: !grouped}
}

// floating reports whether T is a floating-point type.
func floating[T Element]() bool {
	var z T
	switch any(z).(type) {
	case float32, float64:
		return true
	}
	return false
}
