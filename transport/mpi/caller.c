//go:build mpi

#include <mpi.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "caller.h"

struct scoll_caller {
	MPI_Comm comm;
	int tag_ub;
	// The posted requests reqs[0:n], of slots slot_of[i]; recv_of[i]: a
	// receive (a send's status is undefined: MPICH leaves it unwritten).
	MPI_Request *reqs;
	int *slot_of;
	char *recv_of;
	int n, cap;
	// The control channel's receive and its buffer.
	MPI_Request ctrl;
	uint64_t ctrl_buf[2];
	// The request channel's receive and its buffer (a 16-byte key, then
	// at most SCOLL_CALLER_MAX_REQUEST bytes).
	MPI_Request req;
	char req_buf[16 + SCOLL_CALLER_MAX_REQUEST];
	// A notice or request completed (tested by scoll_caller_testsome, taken
	// by scoll_caller_ctrl_test and scoll_caller_req_test), with its sender
	// and the request's size.
	int ctrl_ready, ctrl_src, req_ready, req_src, req_n;
};

#define CTRL_TAG(c) ((c)->tag_ub)

static void ctrl_post(scoll_caller *c) {
	PMPI_Irecv(c->ctrl_buf, 2, MPI_UINT64_T, MPI_ANY_SOURCE, CTRL_TAG(c), c->comm, &c->ctrl);
}

static void req_post(scoll_caller *c) {
	PMPI_Irecv(c->req_buf, (int)sizeof c->req_buf, MPI_BYTE, MPI_ANY_SOURCE, SCOLL_CALLER_REQ_TAG(c->tag_ub), c->comm, &c->req);
}

int scoll_caller_open(int fcomm, scoll_caller **out, int *rank, int *size, int *tag_ub) {
	scoll_caller *c = calloc(1, sizeof *c);
	int *ub, flag = 0;
	int rc = PMPI_Comm_dup(MPI_Comm_f2c(fcomm), &c->comm);
	if (rc != MPI_SUCCESS) {
		free(c);
		return rc;
	}
	PMPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN); // errors come back to Go
	c->tag_ub = 32767;                                    // MPI guarantees at least this
	if (PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag) == MPI_SUCCESS && flag) c->tag_ub = *ub;
	PMPI_Comm_rank(c->comm, rank);
	PMPI_Comm_size(c->comm, size);
	*tag_ub = c->tag_ub;
	c->ctrl = MPI_REQUEST_NULL;
	ctrl_post(c);
	req_post(c);
	*out = c;
	return MPI_SUCCESS;
}

void scoll_caller_close(scoll_caller *c) {
	MPI_Request *rs[] = {&c->ctrl, &c->req};
	for (int i = 0; i < 2; i++) {
		if (*rs[i] != MPI_REQUEST_NULL) {
			PMPI_Cancel(rs[i]);
			PMPI_Wait(rs[i], MPI_STATUS_IGNORE);
		}
	}
	PMPI_Comm_free(&c->comm);
	free(c->reqs);
	free(c->slot_of);
	free(c->recv_of);
	free(c);
}

static int post(scoll_caller *c, int rc, MPI_Request req, int slot, int recv) {
	if (rc != MPI_SUCCESS) return rc;
	if (c->n == c->cap) {
		int cap = c->cap ? 2 * c->cap : 64;
		c->reqs = realloc(c->reqs, sizeof(MPI_Request) * cap);
		c->slot_of = realloc(c->slot_of, sizeof(int) * cap);
		c->recv_of = realloc(c->recv_of, cap);
		c->cap = cap;
	}
	c->reqs[c->n] = req;
	c->slot_of[c->n] = slot;
	c->recv_of[c->n] = (char)recv;
	c->n++;
	return MPI_SUCCESS;
}

int scoll_caller_isend(scoll_caller *c, const void *buf, int64_t n, int peer, int tag, int slot) {
	MPI_Request req;
	if (n > 0x7fffffff) return MPI_ERR_COUNT;
	int rc = PMPI_Isend(buf, (int)n, MPI_BYTE, peer, tag, c->comm, &req); // posted before req is read
	return post(c, rc, req, slot, 0);
}

int scoll_caller_irecv(scoll_caller *c, void *buf, int64_t n, int peer, int tag, int slot) {
	MPI_Request req;
	if (n > 0x7fffffff) return MPI_ERR_COUNT;
	int rc = PMPI_Irecv(buf, (int)n, MPI_BYTE, peer, tag, c->comm, &req);
	return post(c, rc, req, slot, 1);
}

int scoll_caller_testsome(scoll_caller *c, int *done, int64_t *counts, int max, int *events) {
	int k = 0, flag = 0;
	MPI_Status st;
	if (!c->ctrl_ready && c->ctrl != MPI_REQUEST_NULL && PMPI_Test(&c->ctrl, &flag, &st) == MPI_SUCCESS && flag) {
		c->ctrl_ready = 1;
		c->ctrl_src = st.MPI_SOURCE;
	}
	flag = 0;
	if (!c->req_ready && c->req != MPI_REQUEST_NULL && PMPI_Test(&c->req, &flag, &st) == MPI_SUCCESS && flag) {
		c->req_ready = 1;
		c->req_src = st.MPI_SOURCE;
		PMPI_Get_count(&st, MPI_BYTE, &c->req_n);
	}
	*events = c->ctrl_ready | c->req_ready << 1;
	for (int i = 0; i < c->n && k < max;) {
		int flag = 0, bytes = 0;
		MPI_Status st;
		int rc = PMPI_Test(&c->reqs[i], &flag, &st);
		if (rc == MPI_SUCCESS && !flag) {
			i++;
			continue;
		}
		if (rc == MPI_SUCCESS && c->recv_of[i]) PMPI_Get_count(&st, MPI_BYTE, &bytes);
		done[k] = c->slot_of[i];
		counts[k] = rc == MPI_SUCCESS ? bytes : -(int64_t)rc - 1;
		k++;
		c->n--;
		c->reqs[i] = c->reqs[c->n];
		c->slot_of[i] = c->slot_of[c->n];
		c->recv_of[i] = c->recv_of[c->n];
	}
	return k;
}

int scoll_caller_cancel(scoll_caller *c, int slot) {
	for (int i = 0; i < c->n; i++) {
		if (c->slot_of[i] == slot) return PMPI_Cancel(&c->reqs[i]);
	}
	return MPI_SUCCESS;
}

int scoll_caller_ctrl_test(scoll_caller *c, uint64_t *out, int *src) {
	if (!c->ctrl_ready) return 0;
	out[0] = c->ctrl_buf[0];
	out[1] = c->ctrl_buf[1];
	*src = c->ctrl_src;
	c->ctrl_ready = 0;
	ctrl_post(c);
	return 1;
}

int scoll_caller_req_test(scoll_caller *c, void *out, int *n, int *src) {
	if (!c->req_ready) return 0;
	*n = c->req_n;
	memcpy(out, c->req_buf, *n);
	*src = c->req_src;
	c->req_ready = 0;
	req_post(c);
	return 1;
}

void scoll_caller_ctrl_send(scoll_caller *c, int peer, uint64_t comm, uint64_t seq) {
	uint64_t msg[2] = {comm, seq};
	PMPI_Send(msg, 2, MPI_UINT64_T, peer, CTRL_TAG(c), c->comm); // two words: sent eagerly
}

void scoll_caller_yield(void) { sched_yield(); }

int scoll_caller_native(scoll_caller *c, int coll, const void *send, void *recv, int n, int root) {
	switch (coll) {
	case SCOLL_NATIVE_ALLREDUCE:
		return PMPI_Allreduce(send, recv, n, MPI_DOUBLE, MPI_SUM, c->comm);
	case SCOLL_NATIVE_BCAST:
		return PMPI_Bcast(recv, n, MPI_BYTE, root, c->comm);
	case SCOLL_NATIVE_ALLGATHER:
		return PMPI_Allgather(send, n, MPI_BYTE, recv, n, MPI_BYTE, c->comm);
	case SCOLL_NATIVE_REDUCE_SCATTER_BLOCK:
		return PMPI_Reduce_scatter_block(send, recv, n, MPI_DOUBLE, MPI_SUM, c->comm);
	case SCOLL_NATIVE_ALLTOALL:
		return PMPI_Alltoall(send, n, MPI_BYTE, recv, n, MPI_BYTE, c->comm);
	case SCOLL_NATIVE_BARRIER:
		return PMPI_Barrier(c->comm);
	}
	return MPI_ERR_ARG;
}

double scoll_caller_wtime(void) { return PMPI_Wtime(); }

int scoll_caller_world_f(void) { return (int)MPI_Comm_c2f(MPI_COMM_WORLD); }
