//go:build mpi

// The MPI functions the drop-in defines in front of the MPI library, and
// the point-to-point calls scoll makes, all through PMPI_ so that nothing
// recurses into the drop-in.

#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dropin.h"
#include "_cgo_export.h"

static MPI_Comm scoll_comm = MPI_COMM_NULL; // the drop-in's duplicate of MPI_COMM_WORLD

// The calls forwarded to PMPI_, by collective and reason (the report's
// "forwarded" and "forwarded_by"). why is the reason of the call being
// decided, when it is not the rules' (WHY_RULE) or the communicator's.
static int64_t forwarded[NUM_COLLS][NUM_WHY];
static int why = WHY_RULE;
int64_t dropin_forwarded(int coll, int reason) { return forwarded[coll][reason]; }

static int handle(MPI_Comm comm);

// The tuning rules' choice per communicator handle and collective, as the
// Go side sets it (dropin_set_rules): from mins[i] bytes on, native[i]
// says whether calls go to the MPI library. Deciding here spares the
// calls that go to the MPI library a call into Go.
#define MAX_SEGS 64
typedef struct {
	int n;
	int64_t mins[MAX_SEGS];
	char native[MAX_SEGS];
} segs_t;
static segs_t (*rules)[NUM_COLLS]; // by handle
static int nrules;

void dropin_set_rules(int h, int coll, int n, const int64_t *mins, const char *native) {
	if (h >= nrules) {
		int m = h + 16;
		rules = realloc(rules, sizeof *rules * m);
		memset(rules + nrules, 0, sizeof *rules * (m - nrules));
		nrules = m;
	}
	segs_t *g = &rules[h][coll];
	g->n = n < MAX_SEGS ? n : MAX_SEGS;
	for (int i = 0; i < g->n; i++) {
		g->mins[i] = mins[i];
		g->native[i] = native[i];
	}
}

// native reports whether the rules send a call of coll on handle h
// moving bytes (package tuning's message size) to the MPI library.
static int native(int h, int coll, int64_t bytes) {
	if (h >= nrules || rules[h][coll].n == 0) return 0;
	segs_t *g = &rules[h][coll];
	int i = 0;
	while (i + 1 < g->n && g->mins[i + 1] <= bytes) i++;
	return g->native[i];
}

// forward counts a call of coll on comm that goes to PMPI_.
static void forward(int coll, MPI_Comm comm) {
	int inter = 0;
	if (handle(comm) < 0) {
		if (comm != MPI_COMM_NULL) PMPI_Comm_test_inter(comm, &inter);
		why = inter ? WHY_INTER : WHY_COMM;
	}
	forwarded[coll][why]++;
	why = WHY_RULE;
}

// skip returns 0 (forward) with reason r.
static int skip(int r) {
	why = r;
	return 0;
}


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
	if (dt == MPI_FLOAT_INT) return DT_FLOAT_INT;
	if (dt == MPI_DOUBLE_INT) return DT_DOUBLE_INT;
	if (dt == MPI_LONG_INT && sizeof(long) == 8) return DT_LONG_INT;
	if (dt == MPI_2INT && sizeof(int) == 4) return DT_2INT;
	if (dt == MPI_SHORT_INT && sizeof(short) == 2) return DT_SHORT_INT;
	return DT_NONE;
}

// The size in bytes of an element of type code d (dt_code's).
int dropin_elem_size(int d) {
	static const int sizes[] = {[DT_INT8] = 1, [DT_UINT8] = 1, [DT_INT16] = 2, [DT_UINT16] = 2, [DT_INT32] = 4, [DT_UINT32] = 4,
				    [DT_INT64] = 8, [DT_UINT64] = 8, [DT_FLOAT32] = 4, [DT_FLOAT64] = 8, [DT_FLOAT_INT] = 8,
				    [DT_DOUBLE_INT] = 16, [DT_LONG_INT] = 16, [DT_2INT] = 8, [DT_SHORT_INT] = 8};
	return d > 0 && d < (int)(sizeof sizes / sizeof sizes[0]) ? sizes[d] : 0;
}

// A predefined operator scoll runs, or OP_NONE.
static int op_code(MPI_Op op) {
	if (op == MPI_SUM) return OP_SUM;
	if (op == MPI_PROD) return OP_PROD;
	if (op == MPI_MAX) return OP_MAX;
	if (op == MPI_MIN) return OP_MIN;
	if (op == MPI_MINLOC) return OP_MINLOC;
	if (op == MPI_MAXLOC) return OP_MAXLOC;
	if (op == MPI_LAND) return OP_LAND;
	if (op == MPI_LOR) return OP_LOR;
	if (op == MPI_BAND) return OP_BAND;
	if (op == MPI_BOR) return OP_BOR;
	if (op == MPI_BXOR) return OP_BXOR;
	return OP_NONE; // MPI_LXOR, MPI_REPLACE, MPI_NO_OP, user operators
}

// integral reports whether d is an integer element type (the logical and
// bitwise operators take those only).
static int integral(int d) { return d >= DT_INT8 && d <= DT_UINT64; }

static int type_size(MPI_Datatype dt) {
	int s = 0;
	PMPI_Type_size(dt, &s);
	return s;
}

// A buffer of count elements of dt, as scoll sees it: the user's memory
// when dt lays its elements out packed from the buffer's start, else a
// packed copy (MPI_Pack order: the type signature's order).
typedef struct {
	void *user, *packed;
	int count;
	MPI_Datatype dt;
	int64_t bytes;
} stage_t;

static int contiguous(MPI_Datatype dt) {
	MPI_Aint lb, extent, tlb, textent;
	int size;
	PMPI_Type_size(dt, &size);
	PMPI_Type_get_extent(dt, &lb, &extent);
	PMPI_Type_get_true_extent(dt, &tlb, &textent);
	return lb == 0 && tlb == 0 && extent == size && textent == size;
}

// stage prepares user (count elements of dt; NULL: none on this rank),
// copying its contents into the packed copy when in is set.
static void stage(stage_t *s, const void *user, int count, MPI_Datatype dt, int in) {
	int size = 0;
	PMPI_Type_size(dt, &size);
	*s = (stage_t){.user = (void *)user, .count = count, .dt = dt, .bytes = (int64_t)size * count};
	if (user == NULL || s->bytes == 0 || s->bytes > 0x7fffffff || contiguous(dt)) return;
	s->packed = malloc(s->bytes);
	if (in) {
		int pos = 0;
		PMPI_Pack(user, count, dt, s->packed, (int)s->bytes, &pos, MPI_COMM_WORLD);
	}
}

static void *at(stage_t *s) { return s->packed ? s->packed : s->user; }

// unstage copies the packed copy back to the user's memory when out is set.
static void unstage(stage_t *s, int out) {
	if (!s->packed) return;
	if (out) {
		int pos = 0;
		PMPI_Unpack(s->packed, (int)s->bytes, &pos, s->user, s->count, s->dt, MPI_COMM_WORLD);
	}
	free(s->packed);
}

static void adopt(MPI_Comm comm, MPI_Comm newcomm, int coll);
static void adopt_dup(MPI_Comm comm, MPI_Comm newcomm, int coll);

static int keyval = MPI_KEYVAL_INVALID; // the attribute that holds a communicator's scoll handle

// handle returns the scoll communicator of comm, or -1 when it has none
// (the same on every rank of comm: the drop-in makes them collectively).
static int handle(MPI_Comm comm) {
	void *v;
	int flag = 0;
	if (scoll_comm == MPI_COMM_NULL) return -1;
	if (comm == MPI_COMM_WORLD) return 0;
	if (PMPI_Comm_get_attr(comm, keyval, &v, &flag) != MPI_SUCCESS || !flag) return -1;
	return (int)(intptr_t)v;
}

static int release(MPI_Comm comm, int kv, void *v, void *extra) {
	scollmpi_free((int)(intptr_t)v);
	return MPI_SUCCESS;
}

// fail reports an MPI error class through comm's error handler.
static int fail(MPI_Comm comm, int code) {
	PMPI_Comm_call_errhandler(comm, code);
	return code;
}

static void attach(void) {
	int rank, size;
	if (PMPI_Comm_dup(MPI_COMM_WORLD, &scoll_comm) != MPI_SUCCESS) {
		scoll_comm = MPI_COMM_NULL;
		return;
	}
	PMPI_Comm_set_errhandler(scoll_comm, MPI_ERRORS_RETURN); // scoll reports its errors itself
	PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, release, &keyval, NULL);
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
		PMPI_Comm_free_keyval(&keyval);
		PMPI_Comm_free(&scoll_comm);
		scoll_comm = MPI_COMM_NULL;
	}
	return PMPI_Finalize();
}

// reduction runs a reduction with scoll when every rank decides so from
// what MPI requires to agree: the communicator, the operator and the
// datatype, which MPI's predefined operators take predefined only (equal
// handles such as MPI_INT and MPI_INT32_T, or MPI_LONG and MPI_INT64_T,
// decide alike; a derived datatype goes to the MPI library, which reports
// its error). count elements per rank (per block for
// MPI_Reduce_scatter_block; in all, with counts per rank, for
// MPI_Reduce_scatter) go from sendbuf (or recvbuf in place) into recvbuf
// (NULL where MPI ignores it): a predefined datatype lies in memory as
// Go's element type does (the pair types with their padding: Loc[T]), so
// scoll works on the user's buffers. ret is the caller's return address
// (the call site of arrival predictions). It returns the MPI return code
// and sets *done, or leaves *done unset for the caller to forward.
static int reduction(int coll, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root, const int *counts,
		     MPI_Comm comm, void *ret, int *done) {
	int d = dt_code(dt), o = op_code(op), h = handle(comm);
	*done = 0;
	if (h < 0) return 0;
	if (count < 0) return skip(WHY_ARG);
	if (o == OP_NONE) return skip(WHY_OP);
	if (d == DT_NONE) return skip(WHY_TYPE);
	if ((o == OP_MINLOC || o == OP_MAXLOC) != (d >= DT_FLOAT_INT)) return skip(WHY_ARG); // MPI's error, from MPI
	if (o >= OP_LAND && !integral(d)) return skip(WHY_TYPE);                             // the same (or C's bool types)
	int size = 1;
	if (coll == COLL_REDUCE_SCATTER_BLOCK) PMPI_Comm_size(comm, &size);
	if (coll != COLL_REDUCE_SCATTER && native(h, coll, (int64_t)count * dropin_elem_size(d) * size)) return 0;
	int rc = scollmpi_reduction(h, coll, sendbuf == MPI_IN_PLACE ? NULL : (void *)sendbuf, recvbuf, count, d, o, root, (int *)counts, ret);
	if (rc == H_FORWARD) return 0;
	*done = 1;
	return rc == H_DONE ? MPI_SUCCESS : fail(comm, rc);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
	int done, rc = reduction(COLL_ALLREDUCE, sendbuf, recvbuf, count, dt, op, 0, NULL, comm, __builtin_return_address(0), &done);
	if (done) return rc;
	forward(COLL_ALLREDUCE, comm);
	return PMPI_Allreduce(sendbuf, recvbuf, count, dt, op, comm);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm) {
	int me = -1, done;
	PMPI_Comm_rank(comm, &me);
	// recvbuf matters at the root only.
	int rc = reduction(COLL_REDUCE, sendbuf, me == root ? recvbuf : NULL, count, dt, op, root, NULL, comm, __builtin_return_address(0), &done);
	if (done) return rc;
	forward(COLL_REDUCE, comm);
	return PMPI_Reduce(sendbuf, recvbuf, count, dt, op, root, comm);
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
	int done, rc = reduction(COLL_SCAN, sendbuf, recvbuf, count, dt, op, 0, NULL, comm, __builtin_return_address(0), &done);
	if (done) return rc;
	forward(COLL_SCAN, comm);
	return PMPI_Scan(sendbuf, recvbuf, count, dt, op, comm);
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
	int done, rc = reduction(COLL_EXSCAN, sendbuf, recvbuf, count, dt, op, 0, NULL, comm, __builtin_return_address(0), &done);
	if (done) return rc;
	forward(COLL_EXSCAN, comm);
	return PMPI_Exscan(sendbuf, recvbuf, count, dt, op, comm);
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
	int size = 0, done;
	PMPI_Comm_size(comm, &size);
	int rc = reduction(COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount, dt, op, 0, NULL, comm, __builtin_return_address(0), &done);
	if (done) return rc;
	forward(COLL_REDUCE_SCATTER_BLOCK, comm);
	return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, dt, op, comm);
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
	int size = 0, me = 0, done;
	PMPI_Comm_size(comm, &size);
	PMPI_Comm_rank(comm, &me);
	int64_t total = 0, bad = 0;
	for (int i = 0; i < size; i++) {
		total += recvcounts[i];
		bad |= recvcounts[i] < 0;
	}
	done = 0;
	int rc = bad || total > INT_MAX ? 0 : reduction(COLL_REDUCE_SCATTER, sendbuf, recvbuf, (int)total, dt, op, 0, recvcounts, comm, __builtin_return_address(0), &done);
	if (done) return rc;
	forward(COLL_REDUCE_SCATTER, comm);
	return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, dt, op, comm);
}

// vstage packs a v-buffer (block i: counts[i] elements of dt at
// displs[i] extents from buf) into a new buffer of blocks in rank order,
// block i at bdispls[i], bcounts[i] bytes; copy says whether to copy the
// contents. It returns NULL when a count is negative or the whole exceeds
// what MPI_Pack takes.
static void vpack(char *packed, const void *buf, const int *counts, const int *displs, MPI_Datatype dt, int i, const int64_t *bcounts,
		  const int64_t *bdispls, MPI_Comm comm);

static char *vstage(const void *buf, const int *counts, const int *displs, MPI_Datatype dt, int n, int64_t *bcounts, int64_t *bdispls,
		    int copy, MPI_Comm comm) {
	int size;
	PMPI_Type_size(dt, &size);
	int64_t total = 0;
	for (int i = 0; i < n; i++) {
		if (counts[i] < 0) return NULL;
		bcounts[i] = (int64_t)counts[i] * size;
		bdispls[i] = total;
		total += bcounts[i];
	}
	if (total > 0x7fffffff) return NULL;
	char *packed = malloc(total + 1);
	for (int i = 0; copy && i < n; i++) vpack(packed, buf, counts, displs, dt, i, bcounts, bdispls, comm);
	return packed;
}

// vpack packs block i of a v-buffer (as vstage describes it) into its
// place in packed.
static void vpack(char *packed, const void *buf, const int *counts, const int *displs, MPI_Datatype dt, int i, const int64_t *bcounts,
		  const int64_t *bdispls, MPI_Comm comm) {
	MPI_Aint lb, ext;
	int pos = 0;
	PMPI_Type_get_extent(dt, &lb, &ext);
	PMPI_Pack((const char *)buf + displs[i] * ext, counts[i], dt, packed + bdispls[i], (int)bcounts[i], &pos, comm);
}

// vunstage unpacks what vstage packed back to the v-buffer, and frees it.
static void vunstage(char *packed, void *buf, const int *counts, const int *displs, MPI_Datatype dt, int n, const int64_t *bcounts,
		     const int64_t *bdispls, MPI_Comm comm) {
	MPI_Aint lb, ext;
	PMPI_Type_get_extent(dt, &lb, &ext);
	for (int i = 0; i < n; i++) {
		int pos = 0;
		PMPI_Unpack(packed + bdispls[i], (int)bcounts[i], &pos, (char *)buf + displs[i] * ext, counts[i], dt, comm);
	}
	free(packed);
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
		  const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
	int h = handle(comm), size = 0;
	if (h >= 0) {
		PMPI_Comm_size(comm, &size);
		int64_t *b = malloc(sizeof(int64_t) * 4 * size), *sbc = b, *sbd = b + size, *rbc = b + 2 * size, *rbd = b + 3 * size;
		int inplace = sendbuf == MPI_IN_PLACE;
		// In place: what to send is in recvbuf, laid out as the receives.
		char *s = inplace ? vstage(recvbuf, recvcounts, rdispls, recvtype, size, sbc, sbd, 1, comm)
				  : vstage(sendbuf, sendcounts, sdispls, sendtype, size, sbc, sbd, 1, comm);
		char *r = vstage(recvbuf, recvcounts, rdispls, recvtype, size, rbc, rbd, 0, comm);
		if (s && r) {
			int rc = scollmpi_alltoallv(h, s, sbc, sbd, r, rbc, rbd);
			free(s);
			if (rc == H_DONE) {
				vunstage(r, recvbuf, recvcounts, rdispls, recvtype, size, rbc, rbd, comm);
			} else {
				free(r);
			}
			free(b);
			if (rc == H_DONE) return MPI_SUCCESS;
			if (rc != H_FORWARD) return fail(comm, rc);
		} else {
			free(s);
			free(r);
			free(b);
			why = WHY_SIZE; // or a negative count: MPI's error
		}
	}
	forward(COLL_ALLTOALLV, comm);
	return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[],
		   MPI_Datatype recvtype, MPI_Comm comm) {
	int h = handle(comm), size = 0, me = 0, ssize = 0;
	if (h >= 0) {
		PMPI_Comm_size(comm, &size);
		PMPI_Comm_rank(comm, &me);
		int inplace = sendbuf == MPI_IN_PLACE;
		if (!inplace) PMPI_Type_size(sendtype, &ssize);
		// The blocks, packed in rank order: rank i's at bdispls[i].
		int64_t *bcounts = malloc(sizeof(int64_t) * 2 * size), *bdispls = bcounts + size;
		char *packed = vstage(recvbuf, recvcounts, displs, recvtype, size, bcounts, bdispls, 0, comm);
		if (packed != NULL && (inplace || (int64_t)ssize * sendcount == bcounts[me])) {
			stage_t in = {0};
			if (inplace) {
				vpack(packed, recvbuf, recvcounts, displs, recvtype, me, bcounts, bdispls, comm);
			} else {
				stage(&in, sendbuf, sendcount, sendtype, 1);
			}
			int rc = scollmpi_allgatherv(h, inplace ? NULL : at(&in), bcounts[me], packed, bcounts, bdispls);
			if (!inplace) unstage(&in, 0);
			if (rc == H_DONE) {
				vunstage(packed, recvbuf, recvcounts, displs, recvtype, size, bcounts, bdispls, comm);
			} else {
				free(packed);
			}
			free(bcounts);
			if (rc == H_DONE) return MPI_SUCCESS;
			if (rc != H_FORWARD) return fail(comm, rc);
		} else {
			free(packed);
			free(bcounts);
			why = WHY_SIZE; // or counts MPI refuses
		}
	}
	forward(COLL_ALLGATHERV, comm);
	return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}

// movement runs, with scoll, a collective that moves blocks between every
// pair of ranks (allgather: one block per rank; alltoall: size blocks):
// any datatypes, as bytes in signature order, when a block has as many
// bytes sent as received (MPI requires it of matching signatures).
static int movement(int coll, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		    MPI_Datatype recvtype, int sblocks, MPI_Comm comm, int *done) {
	int size = 0, ssize = 0, rsize = 0, h = handle(comm);
	*done = 0;
	int inplace = sendbuf == MPI_IN_PLACE; // MPI then ignores sendcount and sendtype
	if (h < 0) return 0;
	if ((!inplace && sendcount < 0) || recvcount < 0) return skip(WHY_ARG);
	PMPI_Comm_size(comm, &size);
	PMPI_Type_size(recvtype, &rsize);
	if (!inplace) PMPI_Type_size(sendtype, &ssize);
	int64_t block = (int64_t)rsize * recvcount;
	if (!inplace && (int64_t)ssize * sendcount != block) return skip(WHY_ARG);
	if (block * size > INT_MAX) return skip(WHY_SIZE); // beyond what MPI_Pack takes
	if (native(h, coll, block)) return 0;
	stage_t in, out;
	stage(&out, recvbuf, recvcount * size, recvtype, inplace);
	if (!inplace) stage(&in, sendbuf, sendcount * sblocks, sendtype, 1);
	int rc = scollmpi_movement(h, coll, inplace ? NULL : at(&in), at(&out), block, 0);
	if (!inplace) unstage(&in, 0);
	unstage(&out, rc == H_DONE);
	if (rc == H_FORWARD) return 0;
	*done = 1;
	return rc == H_DONE ? MPI_SUCCESS : fail(comm, rc);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
		  MPI_Comm comm) {
	int done, rc = movement(COLL_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 1, comm, &done);
	if (done) return rc;
	forward(COLL_ALLGATHER, comm);
	return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
		 MPI_Comm comm) {
	int size = 0, done;
	PMPI_Comm_size(comm, &size);
	int rc = movement(COLL_ALLTOALL, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, size, comm, &done);
	if (done) return rc;
	forward(COLL_ALLTOALL, comm);
	return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

// rooted runs a gather (scatter when scatter is set) with scoll. It
// decides from what every rank passes alike (the communicator) and reads
// only what MPI makes significant on this rank: the root's blocks (recvbuf
// of a gather, sendbuf of a scatter; the other buffer is MPI_IN_PLACE or
// this rank's own block) and one block elsewhere.
static int rooted(int scatter, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		  MPI_Datatype recvtype, int root, MPI_Comm comm, int *done) {
	int me = -1, size = 0, bsize = 0, h = handle(comm);
	*done = 0;
	if (h < 0) return 0;
	PMPI_Comm_rank(comm, &me);
	PMPI_Comm_size(comm, &size);
	int isroot = me == root;
	// The root's many blocks and this rank's one: (buffer, count, type) each.
	const void *many = scatter ? sendbuf : recvbuf, *one = scatter ? recvbuf : sendbuf;
	int manycount = scatter ? sendcount : recvcount, onecount = scatter ? recvcount : sendcount;
	MPI_Datatype manytype = scatter ? sendtype : recvtype, onetype = scatter ? recvtype : sendtype;
	int inplace = isroot && one == MPI_IN_PLACE;
	if (isroot ? manycount < 0 : onecount < 0) return skip(WHY_ARG); // MPI's own error
	PMPI_Type_size(isroot ? manytype : onetype, &bsize);
	int64_t block = (int64_t)bsize * (isroot ? manycount : onecount);
	if (block * size > INT_MAX) return skip(WHY_SIZE); // beyond what MPI_Pack takes
	if (native(h, scatter ? COLL_SCATTER : COLL_GATHER, block)) return 0;
	stage_t m = {0}, o = {0};
	if (isroot) stage(&m, many, manycount * size, manytype, scatter || inplace);
	if (!inplace) stage(&o, one, onecount, onetype, !scatter);
	void *mp = isroot ? at(&m) : NULL, *op = inplace ? NULL : at(&o);
	int rc = scollmpi_movement(h, scatter ? COLL_SCATTER : COLL_GATHER, scatter ? mp : op, scatter ? op : mp, block, root);
	if (isroot) unstage(&m, rc == H_DONE && !scatter);
	if (!inplace) unstage(&o, rc == H_DONE && scatter);
	if (rc == H_FORWARD) return 0;
	*done = 1;
	return rc == H_DONE ? MPI_SUCCESS : fail(comm, rc);
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
	       MPI_Comm comm) {
	int done, rc = rooted(0, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, &done);
	if (done) return rc;
	forward(COLL_GATHER, comm);
	return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
		MPI_Comm comm) {
	int done, rc = rooted(1, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, &done);
	if (done) return rc;
	forward(COLL_SCATTER, comm);
	return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

// rootedv runs a gatherv (scatterv when scatter is set) with scoll: the
// root's blocks (many: counts[i] elements of manytype at displs[i]
// extents, one per rank) travel packed in rank order, and every rank's own
// block (one; MPI_IN_PLACE at the root) packed when its datatype does not
// pack it. Only the root knows every count: the Go side broadcasts them
// (and the root's verdict, forward or not) before it decides, so that the
// ranks decide alike.
static int rootedv(int scatter, const void *many, const int *counts, const int *displs, MPI_Datatype manytype, const void *one,
		   int onecount, MPI_Datatype onetype, int root, MPI_Comm comm, int *done) {
	int me = -1, size = 0, h = handle(comm);
	*done = 0;
	if (h < 0) return 0;
	PMPI_Comm_rank(comm, &me);
	PMPI_Comm_size(comm, &size);
	int isroot = me == root, inplace = isroot && one == MPI_IN_PLACE;
	int64_t *bc = malloc(sizeof(int64_t) * 2 * (size + 1)), *bd = bc + size + 1;
	char *packed = NULL;
	if (isroot) {
		packed = vstage(many, counts, displs, manytype, size, bc, bd, scatter, comm);
		if (packed != NULL && inplace && !scatter) { // the root's own block is already in place
			vpack(packed, many, counts, displs, manytype, me, bc, bd, comm);
		}
	}
	stage_t o = {0};
	if (!inplace) stage(&o, one, onecount < 0 ? 0 : onecount, onetype, !scatter);
	int64_t onebytes = inplace ? 0 : (onecount < 0 ? -1 : o.bytes);
	int rc = scollmpi_rootedv(h, scatter, packed, isroot ? (packed ? bc : NULL) : NULL, inplace ? NULL : at(&o), onebytes, root);
	if (!inplace) unstage(&o, rc == H_DONE && scatter);
	if (packed != NULL) {
		if (rc == H_DONE && !scatter) {
			vunstage(packed, (void *)many, counts, displs, manytype, size, bc, bd, comm);
		} else {
			free(packed);
		}
	}
	free(bc);
	if (rc == H_FORWARD) return 0;
	*done = 1;
	return rc == H_DONE ? MPI_SUCCESS : fail(comm, rc);
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[],
		MPI_Datatype recvtype, int root, MPI_Comm comm) {
	int done, rc = rootedv(0, recvbuf, recvcounts, displs, recvtype, sendbuf, sendcount, sendtype, root, comm, &done);
	if (done) return rc;
	forward(COLL_GATHERV, comm);
	return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount,
		 MPI_Datatype recvtype, int root, MPI_Comm comm) {
	int done, rc = rootedv(1, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, &done);
	if (done) return rc;
	forward(COLL_SCATTERV, comm);
	return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
	int h = handle(comm);
	if (h >= 0 && (count < 0 || (int64_t)count * type_size(dt) > INT_MAX)) why = count < 0 ? WHY_ARG : WHY_SIZE;
	if (h >= 0 && count >= 0 && (int64_t)count * type_size(dt) <= INT_MAX && !native(h, COLL_BCAST, (int64_t)count * type_size(dt))) {
		int me = -1;
		PMPI_Comm_rank(comm, &me);
		stage_t b;
		stage(&b, buf, count, dt, me == root);
		int rc = scollmpi_bcast(h, at(&b), b.bytes, root);
		unstage(&b, rc == H_DONE && me != root);
		if (rc == H_DONE) return MPI_SUCCESS;
		if (rc != H_FORWARD) return fail(comm, rc);
	}
	forward(COLL_BCAST, comm);
	return PMPI_Bcast(buf, count, dt, root, comm);
}

// derive makes the MPI communicator of a scoll communicator the Go side
// derived from comm: the group of its members (ranks in comm, in its rank
// order), made with MPI_Comm_create_group among the members only, with the
// scoll handle as an attribute.
static int derive(MPI_Comm comm, int rc, int *ranks, int n, int h, MPI_Comm *newcomm) {
	*newcomm = MPI_COMM_NULL;
	if (rc != H_DONE) {
		free(ranks);
		return fail(comm, rc);
	}
	if (h >= 0) {
		MPI_Group parent, group;
		PMPI_Comm_group(comm, &parent);
		PMPI_Group_incl(parent, n, ranks, &group);
		rc = PMPI_Comm_create_group(comm, group, 0x5c011, newcomm);
		PMPI_Group_free(&group);
		PMPI_Group_free(&parent);
		if (rc == MPI_SUCCESS) {
			PMPI_Comm_set_attr(*newcomm, keyval, (void *)(intptr_t)h);
		} else {
			scollmpi_free(h);
		}
	}
	free(ranks);
	return rc == H_DONE ? MPI_SUCCESS : rc;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
	int size = 0, n = 0, nh = -1, h = handle(comm);
	if (h < 0) {
		forward(COLL_SPLIT, comm);
		return PMPI_Comm_split(comm, color, key, newcomm);
	}
	PMPI_Comm_size(comm, &size);
	int *ranks = malloc(sizeof(int) * (size + 1));
	int rc = scollmpi_split(h, color == MPI_UNDEFINED ? -1 : color, key, ranks, &n, &nh);
	return derive(comm, rc, ranks, n, nh, newcomm);
}

// MPI_Comm_dup is the MPI library's (it copies the attributes and info,
// which MPI requires), given scoll's duplicate of comm's scoll
// communicator.
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
	int rc = PMPI_Comm_dup(comm, newcomm);
	if (rc == MPI_SUCCESS) adopt_dup(comm, *newcomm, COLL_DUP);
	return rc;
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm) {
	int rc = PMPI_Comm_dup_with_info(comm, info, newcomm);
	if (rc == MPI_SUCCESS) adopt_dup(comm, *newcomm, COLL_DUP);
	return rc;
}

// adopt gives newcomm, which the MPI library made from comm (MPI_COMM_NULL
// on ranks that are in none), a scoll communicator: scoll's split of
// comm's with the same members in the same order — color the rank in comm
// of newcomm's rank 0, key the rank in newcomm. It is collective over
// comm, as the constructors that call it are. A split that fails leaves
// newcomm without one on every rank (its calls are forwarded).
static void adopt(MPI_Comm comm, MPI_Comm newcomm, int coll) {
	int h = handle(comm), color = -1, key = 0, zero = 0, inter = 0;
	if (h < 0) {
		forward(coll, comm);
		return;
	}
	if (newcomm != MPI_COMM_NULL) {
		MPI_Group g, parent;
		PMPI_Comm_test_inter(newcomm, &inter);
		PMPI_Comm_group(newcomm, &g);
		PMPI_Comm_group(comm, &parent);
		PMPI_Group_translate_ranks(g, 1, &zero, parent, &color);
		PMPI_Comm_rank(newcomm, &key);
		PMPI_Group_free(&g);
		PMPI_Group_free(&parent);
	}
	int nh = scollmpi_adopt(h, coll, inter ? -1 : color, key);
	if (nh >= 0) PMPI_Comm_set_attr(newcomm, keyval, (void *)(intptr_t)nh);
}

// adopt_dup gives newcomm, the MPI library's duplicate of comm, scoll's
// duplicate of comm's scoll communicator. Collective over comm.
static void adopt_dup(MPI_Comm comm, MPI_Comm newcomm, int coll) {
	int h = handle(comm);
	if (h < 0) {
		forward(coll, comm);
		return;
	}
	int nh = scollmpi_dup(h);
	if (nh >= 0) PMPI_Comm_set_attr(newcomm, keyval, (void *)(intptr_t)nh);
}

// The communicators with a topology are intracommunicators like any
// other: their collectives are scoll's too.
int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm *newcomm) {
	int rc = PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm);
	if (rc == MPI_SUCCESS) adopt(comm, *newcomm, COLL_CREATE);
	return rc;
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm) {
	int rc = PMPI_Cart_sub(comm, remain_dims, newcomm);
	if (rc == MPI_SUCCESS) adopt(comm, *newcomm, COLL_CREATE);
	return rc;
}

int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder, MPI_Comm *newcomm) {
	int rc = PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm);
	if (rc == MPI_SUCCESS) adopt(comm, *newcomm, COLL_CREATE);
	return rc;
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[], const int sourceweights[], int outdegree,
				   const int destinations[], const int destweights[], MPI_Info info, int reorder, MPI_Comm *newcomm) {
	int rc = PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree, destinations, destweights, info, reorder,
						 newcomm);
	if (rc == MPI_SUCCESS) adopt(comm, *newcomm, COLL_CREATE);
	return rc;
}

int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[], const int destinations[], const int weights[],
			  MPI_Info info, int reorder, MPI_Comm *newcomm) {
	int rc = PMPI_Dist_graph_create(comm, n, sources, degrees, destinations, weights, info, reorder, newcomm);
	if (rc == MPI_SUCCESS) adopt(comm, *newcomm, COLL_CREATE);
	return rc;
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm) {
	int rc = PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
	if (rc == MPI_SUCCESS) adopt(comm, *newcomm, COLL_SPLIT_TYPE);
	return rc;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) {
	int rc = PMPI_Comm_create(comm, group, newcomm);
	if (rc == MPI_SUCCESS) adopt(comm, *newcomm, COLL_CREATE);
	return rc;
}

// MPI_Comm_free frees the communicator; the attribute's delete callback
// (release) frees its scoll communicator.
int MPI_Comm_free(MPI_Comm *comm) {
	if (comm != NULL && *comm != MPI_COMM_NULL && handle(*comm) > 0) {
		scollmpi_handled(COLL_FREE);
	} else {
		forward(COLL_FREE, comm != NULL ? *comm : MPI_COMM_NULL);
	}
	return PMPI_Comm_free(comm);
}

int MPI_Barrier(MPI_Comm comm) {
	int h = handle(comm);
	if (h >= 0 && !native(h, COLL_BARRIER, 0)) {
		int rc = scollmpi_barrier(h);
		if (rc == H_DONE) return MPI_SUCCESS;
		if (rc != H_FORWARD) return fail(comm, rc);
	}
	forward(COLL_BARRIER, comm);
	return PMPI_Barrier(comm);
}

int dropin_world_f(void) { return (int)MPI_Comm_c2f(MPI_COMM_WORLD); }

int dropin_bcast(void *buf, int n) { return PMPI_Bcast(buf, n, MPI_BYTE, 0, scoll_comm); }

void dropin_site(void *ret, char *buf, int n) {
	Dl_info info;
	if (dladdr(ret, &info) && info.dli_fname != NULL) {
		const char *name = strrchr(info.dli_fname, '/');
		snprintf(buf, n, "%s+%#lx", name ? name + 1 : info.dli_fname, (unsigned long)((char *)ret - (char *)info.dli_fbase));
	} else {
		snprintf(buf, n, "%p", ret);
	}
}
