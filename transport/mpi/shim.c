//go:build mpi

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

// Persistent allgather for exchanges where the library has one: built
// once, started per exchange (Open MPI 4's pcollreq extension, MPI 4).
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define SCOLL_ALLGATHER_INIT MPIX_Allgather_init
#elif MPI_VERSION >= 4
#define SCOLL_ALLGATHER_INIT MPI_Allgather_init
#endif

struct scoll_mpi {
	MPI_Comm comm[SCOLL_NCOMM];
	MPI_Request *reqs;
	MPI_Status *mst;
	scoll_status *st;
	int *idx;
	int cap;
	MPI_Request xreq; // the exchange's allgather (persistent where available)
	int xactive;      // xreq has been started and has not completed
};

int scoll_init_thread(int want, int *provided) {
	static const int levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE};
	int got = MPI_THREAD_SINGLE;
	int rc = MPI_Init_thread(NULL, NULL, levels[want], &got);
	*provided = 0;
	for (int i = 0; i < 4; i++) {
		if (levels[i] == got) {
			*provided = i;
		}
	}
	return rc;
}

int scoll_finalize(void) { return MPI_Finalize(); }

int scoll_state(void) {
	int init = 0, fin = 0;
	MPI_Initialized(&init);
	MPI_Finalized(&fin);
	return fin ? 2 : (init ? 1 : 0);
}

int scoll_open(scoll_mpi **out, int *rank, int *size, long long *tag_ub) {
	scoll_mpi *s = calloc(1, sizeof *s);
	if (s == NULL) {
		return MPI_ERR_NO_MEM;
	}
	int rc;
	for (int i = 0; i < SCOLL_NCOMM; i++) {
		s->comm[i] = MPI_COMM_NULL;
	}
	s->xreq = MPI_REQUEST_NULL;
	for (int i = 0; i < SCOLL_NCOMM; i++) {
		rc = MPI_Comm_dup(MPI_COMM_WORLD, &s->comm[i]);
		if (rc != MPI_SUCCESS) {
			goto fail;
		}
		rc = MPI_Comm_set_errhandler(s->comm[i], MPI_ERRORS_RETURN);
		if (rc != MPI_SUCCESS) {
			goto fail;
		}
	}
	rc = MPI_Comm_rank(s->comm[0], rank);
	if (rc == MPI_SUCCESS) {
		rc = MPI_Comm_size(s->comm[0], size);
	}
	if (rc != MPI_SUCCESS) {
		goto fail;
	}
	int *ub = NULL, flag = 0;
	rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
	if (rc != MPI_SUCCESS) {
		goto fail;
	}
	*tag_ub = (flag && ub != NULL) ? *ub : 32767; // 32767 is the standard's minimum
	*out = s;
	return MPI_SUCCESS;
fail:
	scoll_close(s);
	return rc;
}

void scoll_close(scoll_mpi *s) {
	if (s->xreq != MPI_REQUEST_NULL && !s->xactive) {
		MPI_Request_free(&s->xreq);
	}
	for (int i = 0; i < SCOLL_NCOMM; i++) {
		if (s->comm[i] != MPI_COMM_NULL) {
			MPI_Comm_free(&s->comm[i]);
		}
	}
	free(s->reqs);
	free(s->mst);
	free(s->st);
	free(s->idx);
	free(s);
}

int scoll_grow(scoll_mpi *s, int n) {
	if (n <= s->cap) {
		return MPI_SUCCESS;
	}
	MPI_Request *reqs = realloc(s->reqs, n * sizeof *reqs);
	if (reqs == NULL) {
		return MPI_ERR_NO_MEM;
	}
	s->reqs = reqs;
	for (int i = s->cap; i < n; i++) {
		reqs[i] = MPI_REQUEST_NULL;
	}
	MPI_Status *mst = realloc(s->mst, n * sizeof *mst);
	scoll_status *st = realloc(s->st, n * sizeof *st);
	int *idx = realloc(s->idx, n * sizeof *idx);
	if (mst != NULL) {
		s->mst = mst;
	}
	if (st != NULL) {
		s->st = st;
	}
	if (idx != NULL) {
		s->idx = idx;
	}
	if (mst == NULL || st == NULL || idx == NULL) {
		return MPI_ERR_NO_MEM;
	}
	s->cap = n;
	return MPI_SUCCESS;
}

int scoll_isend(scoll_mpi *s, int slot, const void *buf, int count, int dst, int tag, int comm) {
	return MPI_Isend(buf, count, MPI_BYTE, dst, tag, s->comm[comm], &s->reqs[slot]);
}

int scoll_irecv(scoll_mpi *s, int slot, void *buf, int count, int src, int tag, int comm) {
	if (src < 0) {
		src = MPI_ANY_SOURCE;
	}
	return MPI_Irecv(buf, count, MPI_BYTE, src, tag, s->comm[comm], &s->reqs[slot]);
}

static void convert(scoll_status *dst, MPI_Status *src, int rc) {
	dst->source = src->MPI_SOURCE;
	dst->error = rc == MPI_ERR_IN_STATUS ? src->MPI_ERROR : rc;
	int n = 0;
	if (MPI_Get_count(src, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED) {
		n = 0;
	}
	dst->count = n;
}

int scoll_testsome(scoll_mpi *s, int n) {
	if (n == 0) {
		return 0;
	}
	int k = 0;
	int rc = MPI_Testsome(n, s->reqs, &k, s->idx, s->mst);
	if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
		return rc > 0 ? -rc : -1;
	}
	if (k == MPI_UNDEFINED) {
		k = 0;
	}
	for (int i = 0; i < k; i++) {
		convert(&s->st[i], &s->mst[i], rc);
		if (rc != MPI_ERR_IN_STATUS) {
			s->st[i].error = MPI_SUCCESS;
		}
	}
	return k;
}

int *scoll_indices(scoll_mpi *s) { return s->idx; }

scoll_status *scoll_statuses(scoll_mpi *s) { return s->st; }

int scoll_cancel(scoll_mpi *s, int slot, int *cancelled) {
	*cancelled = 0;
	if (s->reqs[slot] == MPI_REQUEST_NULL) {
		return MPI_SUCCESS;
	}
	int rc = MPI_Cancel(&s->reqs[slot]);
	if (rc != MPI_SUCCESS) {
		return rc;
	}
	MPI_Status st;
	rc = MPI_Wait(&s->reqs[slot], &st);
	if (rc != MPI_SUCCESS) {
		return rc;
	}
	return MPI_Test_cancelled(&st, cancelled);
}

int scoll_test(scoll_mpi *s, int slot, int *done) {
	*done = 0;
	if (s->reqs[slot] == MPI_REQUEST_NULL) {
		*done = 1;
		return MPI_SUCCESS;
	}
	return MPI_Test(&s->reqs[slot], done, MPI_STATUS_IGNORE);
}

int scoll_active(scoll_mpi *s, int slot) { return s->reqs[slot] != MPI_REQUEST_NULL; }

int scoll_xtest(scoll_mpi *s, int spins) {
	if (!s->xactive) {
		return 1;
	}
	for (int i = 0; i < spins; i++) {
		int done = 0;
		int rc = MPI_Test(&s->xreq, &done, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS) {
			return rc > 0 ? -rc : -1;
		}
		if (done) {
			s->xactive = 0;
			return 1;
		}
	}
	return 0;
}

int scoll_xstart(scoll_mpi *s, const void *rec, void *all, int n, int spins) {
	int rc;
#ifdef SCOLL_ALLGATHER_INIT
	// rec, all and n are the same at every exchange of a transport.
	if (s->xreq == MPI_REQUEST_NULL) {
		rc = SCOLL_ALLGATHER_INIT(rec, n, MPI_BYTE, all, n, MPI_BYTE, s->comm[SCOLL_EXCH], MPI_INFO_NULL, &s->xreq);
		if (rc != MPI_SUCCESS) {
			return rc > 0 ? -rc : -1;
		}
	}
	rc = MPI_Start(&s->xreq);
#else
	rc = MPI_Iallgather(rec, n, MPI_BYTE, all, n, MPI_BYTE, s->comm[SCOLL_EXCH], &s->xreq);
#endif
	if (rc != MPI_SUCCESS) {
		return rc > 0 ? -rc : -1;
	}
	s->xactive = 1;
	return scoll_xtest(s, spins);
}

int scoll_allreduce_sum_f64(scoll_mpi *s, const double *send, double *recv, int count) {
	const void *in = send == recv ? MPI_IN_PLACE : send;
	return MPI_Allreduce(in, recv, count, MPI_DOUBLE, MPI_SUM, s->comm[SCOLL_COLL]);
}

int scoll_allgather(scoll_mpi *s, const void *send, void *recv, int count) {
	return MPI_Allgather(send, count, MPI_BYTE, recv, count, MPI_BYTE, s->comm[SCOLL_COLL]);
}

int scoll_bcast(scoll_mpi *s, void *buf, int count, int root) {
	return MPI_Bcast(buf, count, MPI_BYTE, root, s->comm[SCOLL_COLL]);
}

int scoll_barrier(scoll_mpi *s) { return MPI_Barrier(s->comm[SCOLL_COLL]); }

int scoll_pingpong(scoll_mpi *s, void *buf, int count, int iters) {
	MPI_Comm c = s->comm[SCOLL_COLL];
	int rank = 0, rc = MPI_SUCCESS;
	MPI_Comm_rank(c, &rank);
	if (rank > 1) {
		return MPI_SUCCESS;
	}
	int peer = 1 - rank;
	for (int i = 0; i < iters && rc == MPI_SUCCESS; i++) {
		if (rank == 0) {
			rc = MPI_Send(buf, count, MPI_BYTE, peer, 0, c);
			if (rc == MPI_SUCCESS) {
				rc = MPI_Recv(buf, count, MPI_BYTE, peer, 0, c, MPI_STATUS_IGNORE);
			}
		} else {
			rc = MPI_Recv(buf, count, MPI_BYTE, peer, 0, c, MPI_STATUS_IGNORE);
			if (rc == MPI_SUCCESS) {
				rc = MPI_Send(buf, count, MPI_BYTE, peer, 0, c);
			}
		}
	}
	return rc;
}

void scoll_error_string(int code, char *buf, int len) {
	char msg[MPI_MAX_ERROR_STRING];
	int n = 0;
	if (MPI_Error_string(code, msg, &n) != MPI_SUCCESS) {
		n = 0;
	}
	if (n >= len) {
		n = len - 1;
	}
	memcpy(buf, msg, n);
	buf[n] = 0;
}

void scoll_library_version(char *buf, int len) {
	char v[MPI_MAX_LIBRARY_VERSION_STRING];
	int n = 0;
	if (MPI_Get_library_version(v, &n) != MPI_SUCCESS) {
		n = 0;
	}
	if (n >= len) {
		n = len - 1;
	}
	memcpy(buf, v, n);
	buf[n] = 0;
}
