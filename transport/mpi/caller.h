// The C side of Caller, the transport that calls MPI only from the
// goroutine that waits: its own duplicate of a communicator, the table of
// posted requests, and the control channel on which a rank whose call
// failed tells the others. Every MPI call is a PMPI_ one, so a library
// that defines MPI's functions in front of MPI (scoll's drop-in) can use
// it from inside them without recursing.

#ifndef SCOLL_CALLER_H
#define SCOLL_CALLER_H

#include <stdint.h>

typedef struct scoll_caller scoll_caller;

// scoll_caller_open duplicates the communicator whose Fortran handle is
// fcomm (MPI_Comm_c2f: the same type under every MPI ABI). Collective.
int scoll_caller_open(int fcomm, scoll_caller **c, int *rank, int *size, int *tag_ub);
// scoll_caller_close withdraws the control receive and frees the
// duplicate. Collective.
void scoll_caller_close(scoll_caller *c);
int scoll_caller_isend(scoll_caller *c, const void *buf, int64_t n, int peer, int tag, int slot);
int scoll_caller_irecv(scoll_caller *c, void *buf, int64_t n, int peer, int tag, int slot);
// scoll_caller_testsome tests the posted requests; it writes the completed
// ones' slots to done (and each receive's byte count, or −code−1 for an
// error, to counts) and returns how many. It tests the control and
// request channels too: events has bit 0 set when a notice waits for
// scoll_caller_ctrl_test, bit 1 when a request waits for
// scoll_caller_req_test (one cgo call per poll when nothing arrived).
int scoll_caller_testsome(scoll_caller *c, int *done, int64_t *counts, int max, int *events);
int scoll_caller_cancel(scoll_caller *c, int slot);
// scoll_caller_ctrl_test returns 1 and a notice (a failed call's
// communicator id and sequence number) and its sender when one arrived;
// scoll_caller_ctrl_send sends one.
int scoll_caller_ctrl_test(scoll_caller *c, uint64_t *out, int *src);
void scoll_caller_ctrl_send(scoll_caller *c, int peer, uint64_t comm, uint64_t seq);
void scoll_caller_yield(void);

// The request channel: requests to a rank's services and point-to-point
// messages (a key's Seq 0, its Tag below transport.ReplyTag) travel as one
// message of a 16-byte key (communicator id, tag) and at most
// SCOLL_CALLER_MAX_REQUEST bytes on tag SCOLL_CALLER_REQ_TAG, received
// by a receive the caller keeps posted. scoll_caller_req_test returns 1
// and one such message (copied to out, n bytes) and its sender when one
// arrived.
#define SCOLL_CALLER_MAX_REQUEST 4096
#define SCOLL_CALLER_REQ_TAG(tag_ub) ((tag_ub) - 1)
int scoll_caller_req_test(scoll_caller *c, void *out, int *n, int *src);

// The MPI library's own collectives on the caller's communicator, for
// benchmarks: coll is one of the SCOLL_NATIVE_ constants; reductions sum
// doubles (n of them per rank, per block for reduce-scatter-block), the
// others move n bytes per block.
enum { SCOLL_NATIVE_ALLREDUCE, SCOLL_NATIVE_BCAST, SCOLL_NATIVE_ALLGATHER, SCOLL_NATIVE_REDUCE_SCATTER_BLOCK, SCOLL_NATIVE_ALLTOALL,
       SCOLL_NATIVE_BARRIER };
int scoll_caller_native(scoll_caller *c, int coll, const void *send, void *recv, int n, int root);
double scoll_caller_wtime(void);
int scoll_caller_world_f(void); // MPI_Comm_c2f(MPI_COMM_WORLD)

#endif
