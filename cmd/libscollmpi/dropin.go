//go:build mpi

package main

/*
#cgo pkg-config: mpi
#include <mpi.h>
#include "dropin.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"unsafe"

	"github.com/scoll/scoll"
)

// The drop-in's state: the scoll communicator over MPI_COMM_WORLD and what
// it handled. Only the application's thread that calls MPI runs this code
// (MPI's thread levels are the application's business), one call at a
// time per process but for MPI_THREAD_MULTIPLE programs, which the C side
// does not yet serialise.
var (
	world *scoll.Comm
	ep    *endpoint
	count [C.NUM_COLLS]struct{ handled, forwarded int }
)

var collNames = [C.NUM_COLLS]string{C.COLL_ALLREDUCE: "allreduce", C.COLL_BCAST: "bcast", C.COLL_BARRIER: "barrier"}

var ops = map[C.int]scoll.Op{C.OP_SUM: scoll.Sum, C.OP_PROD: scoll.Prod, C.OP_MAX: scoll.Max, C.OP_MIN: scoll.Min}

//export scollmpi_init
func scollmpi_init(rank, size C.int) C.int {
	ep = newEndpoint(int(rank), int(size))
	world = scoll.NewComm(ep)
	return 0
}

//export scollmpi_finalize
func scollmpi_finalize() {
	if file := os.Getenv("SCOLL_MPI_REPORT"); file != "" {
		if err := writeReport(file, ep.rank); err != nil {
			fmt.Fprintf(os.Stderr, "scoll: rank %d: SCOLL_MPI_REPORT: %v\n", ep.rank, err)
		}
	}
	world.Close()
	ep.Close()
}

//export scollmpi_forwarded
func scollmpi_forwarded(coll C.int) {
	if world != nil {
		count[coll].forwarded++
	}
}

//export scollmpi_allreduce
func scollmpi_allreduce(send, recv unsafe.Pointer, n, dt, op C.int) C.int {
	o := ops[op]
	var err error
	switch dt {
	case C.DT_INT8:
		err = allreduce[int8](send, recv, int(n), o)
	case C.DT_UINT8:
		err = allreduce[uint8](send, recv, int(n), o)
	case C.DT_INT16:
		err = allreduce[int16](send, recv, int(n), o)
	case C.DT_UINT16:
		err = allreduce[uint16](send, recv, int(n), o)
	case C.DT_INT32:
		err = allreduce[int32](send, recv, int(n), o)
	case C.DT_UINT32:
		err = allreduce[uint32](send, recv, int(n), o)
	case C.DT_INT64:
		err = allreduce[int64](send, recv, int(n), o)
	case C.DT_UINT64:
		err = allreduce[uint64](send, recv, int(n), o)
	case C.DT_FLOAT32:
		err = allreduce[float32](send, recv, int(n), o)
	case C.DT_FLOAT64:
		err = allreduce[float64](send, recv, int(n), o)
	default:
		return C.H_FORWARD
	}
	return result(C.COLL_ALLREDUCE, err)
}

// allreduce runs scoll's Allreduce on n elements of type T; a nil send is
// MPI_IN_PLACE (the input is in recv).
func allreduce[T scoll.Number](send, recv unsafe.Pointer, n int, op scoll.Op) error {
	var s []T
	if send != nil {
		s = unsafe.Slice((*T)(send), n)
	}
	return scoll.Allreduce(context.Background(), world, s, unsafe.Slice((*T)(recv), n), op)
}

//export scollmpi_bcast
func scollmpi_bcast(buf unsafe.Pointer, n C.int64_t, root C.int) C.int {
	err := scoll.Bcast(context.Background(), world, unsafe.Slice((*byte)(buf), int(n)), int(root))
	return result(C.COLL_BCAST, err)
}

//export scollmpi_barrier
func scollmpi_barrier() C.int {
	return result(C.COLL_BARRIER, scoll.Barrier(context.Background(), world))
}

// result counts a handled call and turns its error into an MPI error
// class (H_DONE without one).
func result(coll C.int, err error) C.int {
	count[coll].handled++
	if err == nil {
		return C.H_DONE
	}
	fmt.Fprintf(os.Stderr, "scoll: %v\n", err)
	switch {
	case errors.Is(err, scoll.ErrInvalidArgument) && strings.Contains(err.Error(), "root"):
		return C.MPI_ERR_ROOT
	case errors.Is(err, scoll.ErrInvalidArgument):
		return C.MPI_ERR_ARG
	}
	return C.MPI_ERR_OTHER
}

// report is the line SCOLL_MPI_REPORT appends for a rank.
type report struct {
	Rank      int                       `json:"rank"`
	Handled   int                       `json:"handled"`
	Forwarded int                       `json:"forwarded"`
	Calls     map[string]map[string]int `json:"calls"`
}

// writeReport appends this rank's report to file (one write, so that the
// ranks' lines do not interleave).
func writeReport(file string, rank int) error {
	r := report{Rank: rank, Calls: map[string]map[string]int{}}
	for c, n := range count {
		r.Handled += n.handled
		r.Forwarded += n.forwarded
		if n.handled+n.forwarded > 0 {
			r.Calls[collNames[c]] = map[string]int{"handled": n.handled, "forwarded": n.forwarded}
		}
	}
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
