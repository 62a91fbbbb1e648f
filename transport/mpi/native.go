//go:build mpi

package mpi

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/scoll/scoll/internal/errs"
)

// The Native methods call the MPI library's own blocking collectives on a
// duplicate of MPI_COMM_WORLD reserved for them, as references for
// benchmarks. Every rank must make the same calls in the same order. They
// hold the transport's lock for the whole call: point-to-point operations
// keep moving inside MPI meanwhile, but no header is matched and no
// operation completes or is posted until the collective returns, so a rank
// must not enter one while its peers wait for its point-to-point messages
// in order to reach the same collective.

// native runs call with the lock held unless the transport is closed.
func (t *Transport) native(what string, call func() C.int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.usable(); err != nil {
		return err
	}
	if rc := call(); rc != 0 {
		return mpiError(what, rc)
	}
	return nil
}

func checkCount(what string, n int) error {
	if n > math.MaxInt32 {
		return fmt.Errorf("%w: mpi: %s of %d elements exceeds MPI's int count", errs.InvalidArgument, what, n)
	}
	return nil
}

// NativeAllreduceSumFloat64 sets recv to the element-wise sum of every
// rank's send with MPI_Allreduce. send and recv have the same length; they
// may be the same slice (MPI_IN_PLACE), but must not overlap otherwise.
func (t *Transport) NativeAllreduceSumFloat64(send, recv []float64) error {
	if len(send) != len(recv) {
		return fmt.Errorf("%w: mpi: allreduce of %d elements into %d", errs.InvalidArgument, len(send), len(recv))
	}
	if err := checkCount("allreduce", len(send)); err != nil {
		return err
	}
	return t.native("MPI_Allreduce", func() C.int {
		return C.scoll_allreduce_sum_f64(t.s, (*C.double)(unsafe.Pointer(unsafe.SliceData(send))), (*C.double)(unsafe.Pointer(unsafe.SliceData(recv))), C.int(len(send)))
	})
}

// NativeAllgather gathers every rank's send into recv, rank r's at
// recv[r*len(send):], with MPI_Allgather. len(recv) must be
// Size()*len(send), and every rank's send must have the same length.
func (t *Transport) NativeAllgather(send, recv []byte) error {
	if len(recv) != t.size*len(send) {
		return fmt.Errorf("%w: mpi: allgather of %d bytes into %d (size %d)", errs.InvalidArgument, len(send), len(recv), t.size)
	}
	if err := checkCount("allgather", len(send)); err != nil {
		return err
	}
	return t.native("MPI_Allgather", func() C.int {
		return C.scoll_allgather(t.s, unsafe.Pointer(unsafe.SliceData(send)), unsafe.Pointer(unsafe.SliceData(recv)), C.int(len(send)))
	})
}

// NativeBcast copies root's buf into every rank's buf with MPI_Bcast.
// Every rank's buf must have the same length.
func (t *Transport) NativeBcast(buf []byte, root int) error {
	if root < 0 || root >= t.size {
		return fmt.Errorf("%w: mpi: bcast root %d out of range [0,%d)", errs.InvalidArgument, root, t.size)
	}
	if err := checkCount("bcast", len(buf)); err != nil {
		return err
	}
	return t.native("MPI_Bcast", func() C.int {
		return C.scoll_bcast(t.s, unsafe.Pointer(unsafe.SliceData(buf)), C.int(len(buf)), C.int(root))
	})
}

// NativeBarrier returns once every rank has called it (MPI_Barrier).
func (t *Transport) NativeBarrier() error {
	return t.native("MPI_Barrier", func() C.int { return C.scoll_barrier(t.s) })
}

// pingPong runs iters blocking MPI_Send/MPI_Recv round trips of len(buf)
// bytes between ranks 0 and 1 on the collective communicator (other ranks
// return at once): the reference the measurement test compares with.
func (t *Transport) pingPong(buf []byte, iters int) error {
	return t.native("ping-pong", func() C.int {
		return C.scoll_pingpong(t.s, unsafe.Pointer(unsafe.SliceData(buf)), C.int(len(buf)), C.int(iters))
	})
}
