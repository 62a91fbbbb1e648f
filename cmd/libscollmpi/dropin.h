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
enum { OP_NONE = 0, OP_SUM, OP_PROD, OP_MAX, OP_MIN, OP_MINLOC, OP_MAXLOC, OP_LAND, OP_LOR, OP_BAND, OP_BOR, OP_BXOR };

// The collectives, as the report names them.
enum {
	COLL_ALLREDUCE = 0, COLL_BCAST, COLL_BARRIER, COLL_REDUCE, COLL_SCAN, COLL_EXSCAN,
	COLL_REDUCE_SCATTER_BLOCK, COLL_ALLGATHER, COLL_ALLTOALL, COLL_GATHER, COLL_SCATTER, COLL_SPLIT, COLL_DUP, COLL_ALLGATHERV, COLL_REDUCE_SCATTER, COLL_ALLTOALLV,
	COLL_GATHERV, COLL_SCATTERV, COLL_SPLIT_TYPE, COLL_CREATE, COLL_FREE, NUM_COLLS
};

// Why a call was forwarded (the report's forwarded_by).
enum { WHY_RULE = 0, WHY_COMM, WHY_INTER, WHY_OP, WHY_TYPE, WHY_SIZE, WHY_ARG, NUM_WHY };

// What a Go handler returns: done, forward to PMPI_, or an MPI error class.
enum { H_DONE = 0, H_FORWARD = -1 };

// The Fortran handle of MPI_COMM_WORLD (scoll's transport duplicates it).
int dropin_world_f(void);
int64_t dropin_forwarded(int coll, int reason);
int dropin_elem_size(int dt);
// dropin_set_rules sets the rules of collective coll on communicator h:
// from mins[i] bytes on (increasing), calls go to the MPI library when
// native[i] is set. n = 0: scoll runs them all.
void dropin_set_rules(int h, int coll, int n, const int64_t *mins, const char *native);
// dropin_bcast broadcasts n bytes from rank 0 of the drop-in's communicator.
int dropin_bcast(void *buf, int n);
// dropin_site writes the call site of return address ret (the module's
// file name and the offset in it: alike in every process of one program)
// to buf.
void dropin_site(void *ret, char *buf, int n);

#endif
