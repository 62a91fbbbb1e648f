// Command libscollmpi is scoll's drop-in library for unmodified MPI
// programs: built as a shared library, it defines MPI's collectives in
// front of the MPI library (the profiling interface, PMPI) and runs them
// with scoll's algorithms, forwarding to PMPI_ what it does not handle.
//
//	go build -tags mpi -buildmode=c-shared -o libscollmpi.so ./cmd/libscollmpi
//	mpirun -np 4 -x LD_PRELOAD=$PWD/libscollmpi.so ./app
//
// It intercepts MPI_Init, MPI_Init_thread and MPI_Finalize; MPI_Comm_split
// and MPI_Comm_dup (scoll's split or dup, then an MPI communicator of the
// same members and rank order, made among them with MPI_Comm_create_group),
// MPI_Comm_split_type and MPI_Comm_create (the MPI library's communicator,
// given a scoll communicator by scoll's split), MPI_Comm_free; and on
// MPI_COMM_WORLD and those communicators MPI_Allreduce, MPI_Reduce,
// MPI_Scan, MPI_Exscan, MPI_Reduce_scatter_block and MPI_Reduce_scatter
// with predefined datatypes and operators (MPI_MINLOC and MPI_MAXLOC with
// the pair types), MPI_Bcast, MPI_Allgather(v), MPI_Gather(v),
// MPI_Scatter(v) and MPI_Alltoall(v) with any datatypes, and MPI_Barrier
// (MPI_IN_PLACE included). Per call it runs scoll's algorithm or forwards
// to the MPI library, from tuning rules (SCOLL_TUNING; scoll tune --mpi
// writes them; built-in ones otherwise), deciding from what MPI requires
// to agree across ranks, with every rank taking rank 0's configuration.
// SCOLL_TOPOLOGY describes the network for the stage model's choice,
// SCOLL_ALGORITHM_REDUCE=clairvoyant predicts arrivals per call site, and
// SCOLL_MPI_REPORT=FILE makes every rank append what it handled (by
// algorithm) and forwarded to FILE at MPI_Finalize. scoll's errors reach
// the program as MPI error classes through the communicator's error
// handler. docs/dropin.md has the details.
//
// Inside an intercepted call scoll calls MPI only on the application's
// calling thread and only through PMPI_ functions (dropin.c and
// transport/mpi.Caller): no goroutine of its own calls MPI, so every
// thread level works.
//
// Without the mpi build tag the command is empty.
package main

func main() {}
