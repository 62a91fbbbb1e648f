//go:build mpi

// The MPI functions the drop-in defines in front of the MPI library, and
// the point-to-point calls scoll makes, all through PMPI_ so that nothing
// recurses into the drop-in.

#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dropin.h"
#include "_cgo_export.h"

static MPI_Comm scoll_comm = MPI_COMM_NULL; // the drop-in's duplicate of MPI_COMM_WORLD
static int tag_ub = 32767;                  // MPI guarantees at least this

#define MAX_SLOTS 65536
static MPI_Request reqs[MAX_SLOTS];
static int slot_of[MAX_SLOTS]; // reqs[i] belongs to slot slot_of[i]
static int nreqs;              // active requests: reqs[0:nreqs]

// A predefined datatype scoll reduces, or DT_NONE.
static int dt_code(MPI_Datatype dt) {
	if (dt == MPI_INT8_T || dt == MPI_SIGNED_CHAR) return DT_INT8;
	if (dt == MPI_UINT8_T || dt == MPI_UNSIGNED_CHAR) return DT_UINT8;
	if (dt == MPI_INT16_T || (dt == MPI_SHORT && sizeof(short) == 2)) return DT_INT16;
	if (dt == MPI_UINT16_T || (dt == MPI_UNSIGNED_SHORT && sizeof(unsigned short) == 2)) return DT_UINT16;
	if (dt == MPI_INT32_T || (dt == MPI_INT && sizeof(int) == 4)) return DT_INT32;
	if (dt == MPI_UINT32_T || (dt == MPI_UNSIGNED && sizeof(unsigned) == 4)) return DT_UINT32;
	if (dt == MPI_INT64_T || (dt == MPI_LONG && sizeof(long) == 8) || (dt == MPI_LONG_LONG && sizeof(long long) == 8)) return DT_INT64;
	if (dt == MPI_UINT64_T || (dt == MPI_UNSIGNED_LONG && sizeof(unsigned long) == 8) ||
	    (dt == MPI_UNSIGNED_LONG_LONG && sizeof(unsigned long long) == 8)) return DT_UINT64;
	if (dt == MPI_FLOAT) return DT_FLOAT32;
	if (dt == MPI_DOUBLE) return DT_FLOAT64;
	return DT_NONE;
}

// A predefined operator scoll runs, or OP_NONE.
static int op_code(MPI_Op op) {
	if (op == MPI_SUM) return OP_SUM;
	if (op == MPI_PROD) return OP_PROD;
	if (op == MPI_MAX) return OP_MAX;
	if (op == MPI_MIN) return OP_MIN;
	return OP_NONE;
}

// The bytes of count elements of a predefined datatype, or -1 for a
// derived one (scoll moves predefined types only).
static int64_t named_bytes(MPI_Datatype dt, int count) {
	int ni, na, nd, combiner, size;
	if (PMPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner) != MPI_SUCCESS || combiner != MPI_COMBINER_NAMED) return -1;
	if (PMPI_Type_size(dt, &size) != MPI_SUCCESS) return -1;
	return (int64_t)size * count;
}

static int ready(MPI_Comm comm) { return scoll_comm != MPI_COMM_NULL && comm == MPI_COMM_WORLD; }

// fail reports an MPI error class through comm's error handler.
static int fail(MPI_Comm comm, int code) {
	PMPI_Comm_call_errhandler(comm, code);
	return code;
}

static void attach(void) {
	int *ub, flag = 0, rank, size;
	if (PMPI_Comm_dup(MPI_COMM_WORLD, &scoll_comm) != MPI_SUCCESS) {
		scoll_comm = MPI_COMM_NULL;
		return;
	}
	PMPI_Comm_set_errhandler(scoll_comm, MPI_ERRORS_RETURN); // scoll reports its errors itself
	if (PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag) == MPI_SUCCESS && flag) tag_ub = *ub;
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &size);
	if (scollmpi_init(rank, size) != 0) {
		PMPI_Comm_free(&scoll_comm);
		scoll_comm = MPI_COMM_NULL; // scoll stays out of the way
	}
}

int MPI_Init(int *argc, char ***argv) {
	int rc = PMPI_Init(argc, argv);
	if (rc == MPI_SUCCESS) attach();
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
	int rc = PMPI_Init_thread(argc, argv, required, provided);
	if (rc == MPI_SUCCESS) attach();
	return rc;
}

int MPI_Finalize(void) {
	if (scoll_comm != MPI_COMM_NULL) {
		scollmpi_finalize();
		PMPI_Comm_free(&scoll_comm);
		scoll_comm = MPI_COMM_NULL;
	}
	return PMPI_Finalize();
}

// reduction runs a reduction whose datatype and operator every rank
// passes alike (MPI requires it), or forwards it.
#define REDUCTION(COLL, CALL_PMPI, SEND, RECV, N, ROOT)                                          \
	do {                                                                                     \
		if (ready(comm) && (N) >= 0) {                                                   \
			int d = dt_code(dt), o = op_code(op);                                    \
			if (d != DT_NONE && o != OP_NONE) {                                      \
				int rc = scollmpi_reduction(COLL, (SEND) == MPI_IN_PLACE ? NULL : (void *)(SEND), (RECV), (N), d, o, (ROOT)); \
				if (rc == H_DONE) return MPI_SUCCESS;                            \
				if (rc != H_FORWARD) return fail(comm, rc);                      \
			}                                                                        \
		}                                                                                \
		scollmpi_forwarded(COLL);                                                        \
		return CALL_PMPI;                                                                \
	} while (0)

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
	REDUCTION(COLL_ALLREDUCE, PMPI_Allreduce(sendbuf, recvbuf, count, dt, op, comm), sendbuf, recvbuf, count, 0);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm) {
	int me = -1;
	PMPI_Comm_rank(comm, &me);
	// recvbuf matters at the root only.
	REDUCTION(COLL_REDUCE, PMPI_Reduce(sendbuf, recvbuf, count, dt, op, root, comm), sendbuf, me == root ? recvbuf : NULL, count, root);
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
	REDUCTION(COLL_SCAN, PMPI_Scan(sendbuf, recvbuf, count, dt, op, comm), sendbuf, recvbuf, count, 0);
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
	REDUCTION(COLL_EXSCAN, PMPI_Exscan(sendbuf, recvbuf, count, dt, op, comm), sendbuf, recvbuf, count, 0);
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
	REDUCTION(COLL_REDUCE_SCATTER_BLOCK, PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, dt, op, comm), sendbuf, recvbuf,
		  recvcount, 0);
}

// movement runs a collective that moves blocks of bytes, when both
// datatypes are predefined and a block has as many bytes sent as received.
#define MOVEMENT(COLL, CALL_PMPI)                                                                 \
	do {                                                                                      \
		if (ready(comm) && sendcount >= 0 && recvcount >= 0) {                             \
			int64_t rb = named_bytes(recvtype, recvcount);                             \
			int64_t sb = sendbuf == MPI_IN_PLACE ? rb : named_bytes(sendtype, sendcount); \
			if (rb >= 0 && sb == rb) {                                                 \
				int rc = scollmpi_movement(COLL, sendbuf == MPI_IN_PLACE ? NULL : (void *)sendbuf, recvbuf, rb); \
				if (rc == H_DONE) return MPI_SUCCESS;                              \
				if (rc != H_FORWARD) return fail(comm, rc);                        \
			}                                                                          \
		}                                                                                  \
		scollmpi_forwarded(COLL);                                                          \
		return CALL_PMPI;                                                                  \
	} while (0)

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
		  MPI_Comm comm) {
	MOVEMENT(COLL_ALLGATHER, PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
		 MPI_Comm comm) {
	MOVEMENT(COLL_ALLTOALL, PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
	if (ready(comm) && count >= 0) {
		int64_t n = named_bytes(dt, count);
		if (n >= 0) {
			int rc = scollmpi_bcast(buf, n, root);
			if (rc == H_DONE) return MPI_SUCCESS;
			if (rc != H_FORWARD) return fail(comm, rc);
		}
	}
	scollmpi_forwarded(COLL_BCAST);
	return PMPI_Bcast(buf, count, dt, root, comm);
}

int MPI_Barrier(MPI_Comm comm) {
	if (ready(comm)) {
		int rc = scollmpi_barrier();
		if (rc == H_DONE) return MPI_SUCCESS;
		if (rc != H_FORWARD) return fail(comm, rc);
	}
	scollmpi_forwarded(COLL_BARRIER);
	return PMPI_Barrier(comm);
}

int dropin_tag_ub(void) { return tag_ub; }
void dropin_yield(void) { sched_yield(); }

static int post(int rc, MPI_Request req, int slot) {
	if (rc != MPI_SUCCESS) return rc;
	if (nreqs == MAX_SLOTS) {
		PMPI_Cancel(&req);
		return MPI_ERR_NO_MEM;
	}
	reqs[nreqs] = req;
	slot_of[nreqs] = slot;
	nreqs++;
	return MPI_SUCCESS;
}

int dropin_isend(const void *buf, int64_t n, int peer, int tag, int slot) {
	MPI_Request req;
	if (n > 0x7fffffff) return MPI_ERR_COUNT;
	int rc = PMPI_Isend(buf, (int)n, MPI_BYTE, peer, tag, scoll_comm, &req);
	return post(rc, req, slot);
}

int dropin_irecv(void *buf, int64_t n, int peer, int tag, int slot) {
	MPI_Request req;
	if (n > 0x7fffffff) return MPI_ERR_COUNT;
	int rc = PMPI_Irecv(buf, (int)n, MPI_BYTE, peer, tag, scoll_comm, &req);
	return post(rc, req, slot);
}

int dropin_testsome(int *done, int64_t *counts, int max) {
	int k = 0;
	for (int i = 0; i < nreqs && k < max;) {
		int flag = 0;
		MPI_Status st;
		int rc = PMPI_Test(&reqs[i], &flag, &st);
		if (rc == MPI_SUCCESS && !flag) {
			i++;
			continue;
		}
		int bytes = 0;
		if (rc == MPI_SUCCESS) PMPI_Get_count(&st, MPI_BYTE, &bytes);
		done[k] = slot_of[i];
		counts[k] = rc == MPI_SUCCESS ? bytes : -(int64_t)rc - 1; // an error: its code
		k++;
		nreqs--;
		reqs[i] = reqs[nreqs];
		slot_of[i] = slot_of[nreqs];
	}
	return k;
}

int dropin_cancel(int slot) {
	for (int i = 0; i < nreqs; i++) {
		if (slot_of[i] == slot) {
			return PMPI_Cancel(&reqs[i]);
		}
	}
	return MPI_SUCCESS;
}

int dropin_world_rank(void) { int r; PMPI_Comm_rank(scoll_comm, &r); return r; }
int dropin_world_size(void) { int s; PMPI_Comm_size(scoll_comm, &s); return s; }
