// The C side of the drop-in: MPI's handles, macros and PMPI_ calls stay in
// C; Go sees integers and pointers only.
#ifndef SCOLL_DROPIN_H
#define SCOLL_DROPIN_H

#include <stddef.h>
#include <stdint.h>

// Element types scoll handles (a predefined datatype maps to one of them).
enum {
	DT_NONE = 0,
	DT_INT8, DT_INT16, DT_INT32, DT_INT64,
	DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64,
	DT_FLOAT32, DT_FLOAT64,
	// The pair types of MPI_MINLOC and MPI_MAXLOC: a value and an int.
	DT_FLOAT_INT, DT_DOUBLE_INT, DT_LONG_INT, DT_2INT, DT_SHORT_INT,
};

// Operators scoll handles.
enum { OP_NONE = 0, OP_SUM, OP_PROD, OP_MAX, OP_MIN, OP_MINLOC, OP_MAXLOC };

// The collectives, as the report names them.
enum {
	COLL_ALLREDUCE = 0, COLL_BCAST, COLL_BARRIER, COLL_REDUCE, COLL_SCAN, COLL_EXSCAN,
	COLL_REDUCE_SCATTER_BLOCK, COLL_ALLGATHER, COLL_ALLTOALL, COLL_GATHER, COLL_SCATTER, COLL_SPLIT, COLL_DUP, COLL_ALLGATHERV, COLL_REDUCE_SCATTER, COLL_ALLTOALLV, NUM_COLLS
};

// What a Go handler returns: done, forward to PMPI_, or an MPI error class.
enum { H_DONE = 0, H_FORWARD = -1 };

// Point-to-point over the drop-in's own duplicate of MPI_COMM_WORLD,
// through PMPI_ only. Requests are slots in a table the Go side indexes.
int dropin_world_rank(void);
int dropin_world_size(void);
int dropin_isend(const void *buf, int64_t n, int peer, int tag, int slot);
int dropin_irecv(void *buf, int64_t n, int peer, int tag, int slot);
// dropin_testsome tests the active slots; it writes the completed slots'
// indices to done (and each receive's byte count to counts) and returns
// how many, or a negative MPI error code.
int dropin_testsome(int *done, int64_t *counts, int max);
int dropin_cancel(int slot);
int dropin_tag_ub(void);
void dropin_yield(void);

#endif
