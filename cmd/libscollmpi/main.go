// Command libscollmpi is scoll's drop-in library for unmodified MPI
// programs: built as a shared library, it defines MPI's collectives in
// front of the MPI library (the profiling interface, PMPI) and runs them
// with scoll's algorithms, forwarding to PMPI_ what it does not handle.
//
//	go build -tags mpi -buildmode=c-shared -o libscollmpi.so ./cmd/libscollmpi
//	mpirun -np 4 -x LD_PRELOAD=$PWD/libscollmpi.so ./app
//
// What it intercepts so far: MPI_Init, MPI_Init_thread and MPI_Finalize;
// MPI_Comm_split and MPI_Comm_dup (scoll's split or dup, then an MPI
// communicator of the same members and rank order, made among them with
// MPI_Comm_create_group; an attribute holds its scoll communicator, which
// MPI_Comm_free releases); and on MPI_COMM_WORLD and the communicators
// derived so, MPI_Allreduce, MPI_Reduce, MPI_Scan, MPI_Exscan,
// MPI_Reduce_scatter_block and MPI_Reduce_scatter with predefined datatypes
// and the operators MPI_SUM, MPI_PROD, MPI_MAX and MPI_MIN (MPI_MINLOC and
// MPI_MAXLOC with the pair types); MPI_Bcast, MPI_Allgather, MPI_Alltoall,
// MPI_Gather, MPI_Scatter, MPI_Allgatherv and MPI_Alltoallv with any
// datatypes (derived ones whose elements are not packed in memory travel as
// a packed copy, so ranks passing equal type signatures through different
// handles decide alike); MPI_Barrier (MPI_IN_PLACE included). Every other
// call, communicator, datatype or operator goes to the MPI library
// unchanged. SCOLL_MPI_REPORT=FILE makes every rank append one JSON line of
// what it handled and forwarded to FILE at MPI_Finalize. scoll's errors
// reach the program as MPI error classes (MPI_ERR_ROOT, MPI_ERR_ARG,
// MPI_ERR_OTHER) through the communicator's error handler; SCOLL_VERBOSE=1
// also prints them.
//
// Inside an intercepted call scoll calls MPI only on the application's
// calling thread and only through PMPI_ functions (dropin.c): no goroutine
// of its own calls MPI, so every thread level works.
//
// Without the mpi build tag the command is empty.
package main

func main() {}
