//go:build mpi

package main

/*
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
	"runtime"
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
	// comms are the scoll communicators of the MPI communicators the
	// drop-in made (an attribute on each holds its handle); 0 is
	// MPI_COMM_WORLD's.
	comms      = map[C.int]*scoll.Comm{}
	nextHandle C.int
)

// collNames are the collectives' names in the report, in the order of
// dropin.h's COLL_ constants (the conversion fails at load time if the
// counts differ).
var collNames = [C.NUM_COLLS]string(strings.Fields(`allreduce bcast barrier reduce scan exscan
	reduce_scatter_block allgather alltoall gather scatter comm_split comm_dup allgatherv reduce_scatter alltoallv`))

var ops = map[C.int]scoll.Op{C.OP_SUM: scoll.Sum, C.OP_PROD: scoll.Prod, C.OP_MAX: scoll.Max, C.OP_MIN: scoll.Min,
	C.OP_MINLOC: scoll.MinLoc, C.OP_MAXLOC: scoll.MaxLoc}

// native marks the collectives SCOLL_ALGORITHM_<COLL>=native leaves to the
// MPI library.
var native [C.NUM_COLLS]bool

//export scollmpi_init
func scollmpi_init(rank, size C.int) C.int {
	// One rank per core is MPI's usual layout, and the drop-in runs on the
	// application's thread: the Go runtime needs no more than one CPU
	// (its collector's helpers included) unless GOMAXPROCS says otherwise.
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	// SCOLL_ALGORITHM_<COLL>=native forwards that collective; the variable
	// is removed so that scoll does not read "native" as an algorithm.
	for c, name := range collNames {
		v := "SCOLL_ALGORITHM_" + strings.ToUpper(strings.ReplaceAll(name, "_", ""))
		if strings.EqualFold(os.Getenv(v), "native") {
			native[c] = true
			os.Unsetenv(v)
		}
	}
	ep = newEndpoint(int(rank), int(size))
	world = scoll.NewComm(ep)
	comms[0], nextHandle = world, 1
	return 0
}

//export scollmpi_finalize
func scollmpi_finalize() {
	if file := os.Getenv("SCOLL_MPI_REPORT"); file != "" {
		if err := writeReport(file, ep.rank); err != nil {
			fmt.Fprintf(os.Stderr, "scoll: rank %d: SCOLL_MPI_REPORT: %v\n", ep.rank, err)
		}
	}
	for h, c := range comms {
		if h != 0 {
			c.Close()
		}
	}
	world.Close()
	ep.Close()
}

//export scollmpi_native
func scollmpi_native(coll C.int) C.int {
	if native[coll] {
		return 1
	}
	return 0
}

//export scollmpi_forwarded
func scollmpi_forwarded(coll C.int) {
	if world != nil {
		count[coll].forwarded++
	}
}

//export scollmpi_reduction
func scollmpi_reduction(h, coll C.int, send, recv unsafe.Pointer, n, dt, op, root C.int, counts *C.int) C.int {
	c := comms[h]
	cs := ints(counts, c.Size())
	var err error
	switch dt {
	case C.DT_INT8:
		err = reduction[int8](c, coll, send, recv, int(n), ops[op], int(root), cs)
	case C.DT_UINT8:
		err = reduction[uint8](c, coll, send, recv, int(n), ops[op], int(root), cs)
	case C.DT_INT16:
		err = reduction[int16](c, coll, send, recv, int(n), ops[op], int(root), cs)
	case C.DT_UINT16:
		err = reduction[uint16](c, coll, send, recv, int(n), ops[op], int(root), cs)
	case C.DT_INT32:
		err = reduction[int32](c, coll, send, recv, int(n), ops[op], int(root), cs)
	case C.DT_UINT32:
		err = reduction[uint32](c, coll, send, recv, int(n), ops[op], int(root), cs)
	case C.DT_INT64:
		err = reduction[int64](c, coll, send, recv, int(n), ops[op], int(root), cs)
	case C.DT_UINT64:
		err = reduction[uint64](c, coll, send, recv, int(n), ops[op], int(root), cs)
	case C.DT_FLOAT32:
		err = reduction[float32](c, coll, send, recv, int(n), ops[op], int(root), cs)
	case C.DT_FLOAT64:
		err = reduction[float64](c, coll, send, recv, int(n), ops[op], int(root), cs)
	case C.DT_FLOAT_INT:
		err = reduction[scoll.Loc[float32]](c, coll, send, recv, int(n), ops[op], int(root), cs)
	case C.DT_DOUBLE_INT:
		err = reduction[scoll.Loc[float64]](c, coll, send, recv, int(n), ops[op], int(root), cs)
	case C.DT_LONG_INT:
		err = reduction[scoll.Loc[int64]](c, coll, send, recv, int(n), ops[op], int(root), cs)
	case C.DT_2INT:
		err = reduction[scoll.Loc[int32]](c, coll, send, recv, int(n), ops[op], int(root), cs)
	case C.DT_SHORT_INT:
		err = reduction[scoll.Loc[int16]](c, coll, send, recv, int(n), ops[op], int(root), cs)
	default:
		return C.H_FORWARD
	}
	return result(coll, err)
}

// slice is the n elements of type T at p (nil for a nil p: MPI_IN_PLACE,
// or a buffer MPI does not read on this rank).
func slice[T any](p unsafe.Pointer, n int) []T {
	if p == nil {
		return nil
	}
	return unsafe.Slice((*T)(p), n)
}

// reduction runs the reduction coll on elements of type T (a number, or
// the value-and-index pair of MPI_MINLOC and MPI_MAXLOC, laid out as C's
// struct { T value; int index; }): n elements per rank
// (MPI_Reduce_scatter_block: n per block, Size() blocks of input;
// MPI_Reduce_scatter: n in all, counts per rank). A nil send is
// MPI_IN_PLACE.
func reduction[T scoll.Element](c *scoll.Comm, coll C.int, send, recv unsafe.Pointer, n int, op scoll.Op, root int, counts []int) error {
	ctx := context.Background()
	switch coll {
	case C.COLL_ALLREDUCE:
		return scoll.Allreduce(ctx, c, slice[T](send, n), slice[T](recv, n), op)
	case C.COLL_REDUCE:
		return scoll.Reduce(ctx, c, slice[T](send, n), slice[T](recv, n), op, root)
	case C.COLL_SCAN:
		return scoll.Scan(ctx, c, slice[T](send, n), slice[T](recv, n), op)
	case C.COLL_EXSCAN:
		return scoll.Exscan(ctx, c, slice[T](send, n), slice[T](recv, n), op)
	case C.COLL_REDUCE_SCATTER_BLOCK:
		if send == nil {
			return scoll.ReduceScatterBlock(ctx, c, nil, slice[T](recv, n*c.Size()), op)
		}
		return scoll.ReduceScatterBlock(ctx, c, slice[T](send, n*c.Size()), slice[T](recv, n), op)
	case C.COLL_REDUCE_SCATTER: // n: the sum of counts
		if send == nil {
			return scoll.ReduceScatter(ctx, c, nil, slice[T](recv, n), counts, op)
		}
		return scoll.ReduceScatter(ctx, c, slice[T](send, n), slice[T](recv, counts[c.Rank()]), counts, op)
	}
	return fmt.Errorf("%w: collective %d", scoll.ErrUnsupported, coll)
}

//export scollmpi_movement
func scollmpi_movement(h, coll C.int, send, recv unsafe.Pointer, n C.int64_t, root C.int) C.int {
	ctx, c := context.Background(), comms[h]
	b, p := int(n), c.Size() // bytes per block, blocks
	var err error
	switch coll {
	case C.COLL_ALLGATHER:
		err = scoll.Allgather(ctx, c, slice[byte](send, b), slice[byte](recv, b*p))
	case C.COLL_ALLTOALL:
		err = scoll.Alltoall(ctx, c, slice[byte](send, b*p), slice[byte](recv, b*p))
	case C.COLL_GATHER: // recv: the root's only; send nil: in place at the root
		err = scoll.Gather(ctx, c, slice[byte](send, b), slice[byte](recv, b*p), int(root))
	case C.COLL_SCATTER: // send: the root's only; recv nil: in place at the root
		err = scoll.Scatter(ctx, c, slice[byte](send, b*p), slice[byte](recv, b), int(root))
	default:
		return C.H_FORWARD
	}
	return result(coll, err)
}

// ints copies n C ints at p (nil for a nil p).
func ints(p *C.int, n int) []int {
	if p == nil {
		return nil
	}
	out := make([]int, n)
	for i, v := range unsafe.Slice(p, n) {
		out[i] = int(v)
	}
	return out
}

// blocks returns p byte counts and displacements from C, and the length
// of the buffer they span.
func blocks(counts, displs *C.int64_t, p int) (cs, ds []int, span int) {
	cs, ds = make([]int, p), make([]int, p)
	for i := range p {
		cs[i] = int(unsafe.Slice(counts, p)[i])
		ds[i] = int(unsafe.Slice(displs, p)[i])
		span = max(span, ds[i]+cs[i])
	}
	return cs, ds, span
}

//export scollmpi_allgatherv
func scollmpi_allgatherv(h C.int, send unsafe.Pointer, sendn C.int64_t, recv unsafe.Pointer, counts, displs *C.int64_t) C.int {
	c := comms[h]
	cs, ds, span := blocks(counts, displs, c.Size())
	err := scoll.Allgatherv(context.Background(), c, slice[byte](send, int(sendn)), slice[byte](recv, span), cs, ds)
	return result(C.COLL_ALLGATHERV, err)
}

//export scollmpi_alltoallv
func scollmpi_alltoallv(h C.int, send unsafe.Pointer, scounts, sdispls *C.int64_t, recv unsafe.Pointer, rcounts, rdispls *C.int64_t) C.int {
	c := comms[h]
	sc, sd, sspan := blocks(scounts, sdispls, c.Size())
	rc, rd, rspan := blocks(rcounts, rdispls, c.Size())
	err := scoll.Alltoallv(context.Background(), c, slice[byte](send, sspan), sc, sd, slice[byte](recv, rspan), rc, rd)
	return result(C.COLL_ALLTOALLV, err)
}

//export scollmpi_bcast
func scollmpi_bcast(h C.int, buf unsafe.Pointer, n C.int64_t, root C.int) C.int {
	err := scoll.Bcast(context.Background(), comms[h], unsafe.Slice((*byte)(buf), int(n)), int(root))
	return result(C.COLL_BCAST, err)
}

//export scollmpi_barrier
func scollmpi_barrier(h C.int) C.int {
	return result(C.COLL_BARRIER, scoll.Barrier(context.Background(), comms[h]))
}

//export scollmpi_split
func scollmpi_split(h, color, key C.int, ranks *C.int, n, handle *C.int) C.int {
	c := int(color)
	if c < 0 {
		c = scoll.Undefined
	}
	sub, err := comms[h].Split(context.Background(), c, int(key))
	return derived(h, C.COLL_SPLIT, sub, err, ranks, n, handle)
}

//export scollmpi_dup
func scollmpi_dup(h C.int, ranks *C.int, n, handle *C.int) C.int {
	d, err := comms[h].Dup(context.Background())
	return derived(h, C.COLL_DUP, d, err, ranks, n, handle)
}

// derived registers a communicator derived from comms[h] (nil: this rank
// is in none), and writes its members' ranks in comms[h] into ranks, in
// its own rank order, for the MPI side to make the same group.
func derived(h, coll C.int, d *scoll.Comm, err error, ranks *C.int, n, handle *C.int) C.int {
	*handle, *n = -1, 0
	if err != nil || d == nil {
		return result(coll, err)
	}
	all := make([]int, d.Size())
	for i := range all {
		all[i] = i
	}
	in, err := d.TranslateRanks(all, comms[h])
	if err != nil {
		d.Close()
		return result(coll, err)
	}
	out := unsafe.Slice(ranks, len(in))
	for i, r := range in {
		out[i] = C.int(r)
	}
	*n, *handle = C.int(len(in)), nextHandle
	comms[nextHandle] = d
	nextHandle++
	return result(coll, nil)
}

//export scollmpi_free
func scollmpi_free(h C.int) {
	if c := comms[h]; c != nil && h != 0 {
		c.Close()
		delete(comms, h)
	}
}

// result counts a handled call and turns its error into an MPI error
// class (H_DONE without one).
func result(coll C.int, err error) C.int {
	count[coll].handled++
	if err == nil {
		return C.H_DONE
	}
	if os.Getenv("SCOLL_VERBOSE") != "" {
		fmt.Fprintln(os.Stderr, err) // the error handler decides what the program sees
	}
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
