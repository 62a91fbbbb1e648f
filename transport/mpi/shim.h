// Thin wrappers around the MPI calls the transport makes, so that the Go code
// never touches MPI's handle types or macros (MPI_Comm is a pointer in Open
// MPI and an int in MPICH; MPI_COMM_WORLD and MPI_REQUEST_NULL are macros).
//
// Every function returns an MPI error code (MPI_SUCCESS on success) unless
// stated otherwise. None of them keeps a pointer it was passed after it
// returns, except the buffers given to scoll_isend and scoll_irecv, which MPI
// owns until the request completes.

#ifndef SCOLL_MPI_SHIM_H
#define SCOLL_MPI_SHIM_H

#include <stddef.h>

// Communicators of a scoll_mpi, by index.
enum { SCOLL_HDR = 0, SCOLL_DATA = 1, SCOLL_COLL = 2, SCOLL_EXCH = 3, SCOLL_NCOMM = 4 };

// scoll_status is what the transport needs from an MPI_Status.
typedef struct {
	int source;
	int error;
	long long count; // bytes received
} scoll_status;

// scoll_mpi is the transport's C-side state: its communicators and the
// request table that scoll_testsome scans. The Go side indexes reqs by slot.
typedef struct scoll_mpi scoll_mpi;

int scoll_init_thread(int want, int *provided);
int scoll_finalize(void);
// scoll_state returns 1 when MPI is initialised, 2 when it is finalized,
// 0 before initialisation.
int scoll_state(void);

// scoll_open duplicates MPI_COMM_WORLD into the transport's communicators
// (errors returned, not fatal) and reports rank, size and MPI_TAG_UB.
int scoll_open(scoll_mpi **s, int *rank, int *size, long long *tag_ub);
// scoll_close frees the communicators and the request table.
void scoll_close(scoll_mpi *s);
// scoll_grow makes room for n request slots (new slots hold null requests).
int scoll_grow(scoll_mpi *s, int n);

int scoll_isend(scoll_mpi *s, int slot, const void *buf, int count, int dst, int tag, int comm);
// scoll_irecv receives from any source when src < 0.
int scoll_irecv(scoll_mpi *s, int slot, void *buf, int count, int src, int tag, int comm);
// scoll_testsome tests slots [0, n) and returns the number of requests
// that completed, or minus an MPI error code. The completed slots' indices
// and statuses are then in the arrays scoll_indices and scoll_statuses
// return (owned by s; they move when s grows).
int scoll_testsome(scoll_mpi *s, int n);
int *scoll_indices(scoll_mpi *s);
scoll_status *scoll_statuses(scoll_mpi *s);
// scoll_cancel cancels the request in slot, waits for it, and sets
// *cancelled to 1 when it was cancelled rather than completed.
int scoll_cancel(scoll_mpi *s, int slot, int *cancelled);
// scoll_test tests one slot; *done is set to 1 when it has completed.
int scoll_test(scoll_mpi *s, int slot, int *done);
// scoll_active reports whether slot holds a request.
int scoll_active(scoll_mpi *s, int slot);

// Exchanges: one MPI_Iallgather of n-byte records at a time on the exchange
// communicator (persistent where the library has persistent collectives:
// then rec, all and n must be the same at every call). scoll_xstart posts it (rec to all, which has room for size
// records) and then tests it up to spins times; scoll_xtest tests the
// posted one up to spins times. Both return 1 once it has completed, 0 while
// it has not, and minus an MPI error code when MPI fails; they keep rec and
// all until it completes.
int scoll_xstart(scoll_mpi *s, const void *rec, void *all, int n, int spins);
int scoll_xtest(scoll_mpi *s, int spins);

int scoll_allreduce_sum_f64(scoll_mpi *s, const double *send, double *recv, int count);
int scoll_allgather(scoll_mpi *s, const void *send, void *recv, int count);
int scoll_bcast(scoll_mpi *s, void *buf, int count, int root);
int scoll_barrier(scoll_mpi *s);

// Reference loops for measurements: iters round trips of count bytes
// between ranks 0 and 1 with blocking MPI_Send/MPI_Recv on the collective
// communicator; other ranks return at once.
int scoll_pingpong(scoll_mpi *s, void *buf, int count, int iters);

// scoll_error_string writes MPI's description of code into buf.
void scoll_error_string(int code, char *buf, int len);
void scoll_library_version(char *buf, int len);

#endif
