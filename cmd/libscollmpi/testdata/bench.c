// The drop-in's benchmark: the time per call of one MPI collective at a
// list of sizes, the same program run natively and with libscollmpi.so
// preloaded (scripts/dropin-bench.sh runs it both ways side by side).
//
//	bench COLL SIZES [REPS [TARGET_MS]]
//
// COLL: allreduce, bcast, allgather, reduce_scatter_block, alltoall;
// split (MPI_Comm_split of MPI_COMM_WORLD, two colors, keys reversing the
// rank order; SIZES is ignored and the line says size 0); forward
// (MPI_Allreduce with MPI_BAND on MPI_UINT64_T: an operator the drop-in
// does not run, so what it costs over native is the forwarding).
//
// SIZES: bytes, comma-separated, with an optional K or M suffix (powers
// of two): 8,64,1K,16M. What a size counts, as the OSU micro-benchmarks
// count it where they have the collective:
//
//	allreduce, forward      the vector, on every rank (8 bytes: one element)
//	bcast                   the message
//	allgather               the block each rank contributes (receive: P blocks)
//	alltoall                the block each rank sends to each rank (P blocks each way)
//	reduce_scatter_block    the block each rank receives (recvcount; the
//	                        input is P blocks). osu_reduce_scatter counts
//	                        the whole input instead: its size is P times this.
//
// Reductions are MPI_DOUBLE with MPI_SUM (a size is a multiple of 8), the
// others MPI_BYTE; bcast's root is rank 0.
//
// Per size: a first call checked on every rank against the expected
// result, a warm-up that doubles its calls until a batch takes TARGET_MS/5
// on rank 0, then REPS (default 1) timed batches of back-to-back calls,
// as many as rank 0's warm-up says take TARGET_MS (default 100) and
// broadcast so that every rank makes the same number, each batch's result
// checked again. A batch's time per call is the maximum over the ranks;
// rank 0 prints the median over the batches, one line per size:
//
//	COLL SIZE USEC
//
// or COLL SIZE - error when a call returned an error on some rank
// (MPI_COMM_WORLD's error handler is MPI_ERRORS_RETURN), COLL SIZE - wrong
// when a result was wrong; what went wrong goes to stderr. A rank whose
// call failed while others still wait in it aborts the job (exit code 3).
// The benchmark's own messages (the iteration count, the barrier before a
// batch, the times, the verdicts) go through PMPI_ functions: with the
// drop-in preloaded, only the measured calls reach it (its
// SCOLL_MPI_REPORT counts them alone).
#include <math.h>
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ALLREDUCE, BCAST, ALLGATHER, REDUCE_SCATTER_BLOCK, ALLTOALL, SPLIT, FORWARD };
static const char *names[] = {"allreduce", "bcast", "allgather", "reduce_scatter_block", "alltoall", "split", "forward"};

// bad counts this rank's failures at the current size (errors and wrong
// results), errs its MPI errors alone; anyerr says whether agreed saw an
// MPI error on some rank.
static int coll, rank, size, bad, errs, anyerr;
static size_t bytes;           // the size being measured (see the table above)
static char *sendbuf, *recvbuf; // sized for the largest size

static void fail(const char *what, int rc) {
	if (bad++ == 0) {
		char msg[MPI_MAX_ERROR_STRING] = "";
		int n = 0;
		if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &n);
		fprintf(stderr, "bench: rank %d: %s %zu: %s %s\n", rank, names[coll], bytes, what, msg);
	}
}

// Inputs and expected results: small integers (exact in a double) and
// bytes, different on every rank and at every index.
static double din(int r, size_t i) { return (double)((r * 7 + i * 13) % 23); }
static char bin(int r, size_t i) { return (char)(r * 131 + i * 7 + 1); }
static char ain(int from, int to, size_t i) { return (char)(from * 37 + to * 101 + i * 7 + 3); }
static uint64_t uin(int r, size_t i) { return (i * 0x9E3779B97F4A7C15u) | ~(1ull << ((r + i) % 64)); }

// fill writes this rank's input for the current size.
static void fill(void) {
	size_t n = bytes / 8;
	switch (coll) {
	case ALLREDUCE:
		for (size_t i = 0; i < n; i++) ((double *)sendbuf)[i] = din(rank, i);
		break;
	case REDUCE_SCATTER_BLOCK:
		for (size_t i = 0; i < n * size; i++) ((double *)sendbuf)[i] = din(rank, i);
		break;
	case FORWARD:
		for (size_t i = 0; i < n; i++) ((uint64_t *)sendbuf)[i] = uin(rank, i);
		break;
	case BCAST:
		if (rank == 0)
			for (size_t i = 0; i < bytes; i++) recvbuf[i] = bin(0, i);
		break;
	case ALLGATHER:
		for (size_t i = 0; i < bytes; i++) sendbuf[i] = bin(rank, i);
		break;
	case ALLTOALL:
		for (int d = 0; d < size; d++)
			for (size_t i = 0; i < bytes; i++) sendbuf[d * bytes + i] = ain(rank, d, i);
		break;
	}
}

// clear zeroes what the call writes (bcast: away from the root), so that a
// call that writes nothing fails check.
static void clear(void) {
	switch (coll) {
	case ALLREDUCE:
	case FORWARD:
	case REDUCE_SCATTER_BLOCK:
		memset(recvbuf, 0, bytes);
		break;
	case BCAST:
		if (rank != 0) memset(recvbuf, 0, bytes);
		break;
	case ALLGATHER:
	case ALLTOALL:
		memset(recvbuf, 0, bytes * size);
		break;
	}
}

// check compares the last call's result with the expected one.
static void check(void) {
	size_t n = bytes / 8;
	switch (coll) {
	case ALLREDUCE:
	case REDUCE_SCATTER_BLOCK: {
		size_t off = coll == ALLREDUCE ? 0 : rank * n; // this rank's block of the input
		for (size_t i = 0; i < n; i++) {
			double want = 0;
			for (int r = 0; r < size; r++) want += din(r, off + i);
			if (((double *)recvbuf)[i] != want) {
				fail("wrong result", MPI_SUCCESS);
				return;
			}
		}
		break;
	}
	case FORWARD:
		for (size_t i = 0; i < n; i++) {
			uint64_t want = ~0ull;
			for (int r = 0; r < size; r++) want &= uin(r, i);
			if (((uint64_t *)recvbuf)[i] != want) {
				fail("wrong result", MPI_SUCCESS);
				return;
			}
		}
		break;
	case BCAST:
		for (size_t i = 0; i < bytes; i++)
			if (recvbuf[i] != bin(0, i)) {
				fail("wrong result", MPI_SUCCESS);
				return;
			}
		break;
	case ALLGATHER:
		for (int r = 0; r < size; r++)
			for (size_t i = 0; i < bytes; i++)
				if (recvbuf[r * bytes + i] != bin(r, i)) {
					fail("wrong result", MPI_SUCCESS);
					return;
				}
		break;
	case ALLTOALL:
		for (int r = 0; r < size; r++)
			for (size_t i = 0; i < bytes; i++)
				if (recvbuf[r * bytes + i] != ain(r, rank, i)) {
					fail("wrong result", MPI_SUCCESS);
					return;
				}
		break;
	}
}

// split runs one MPI_Comm_split, checks the new communicator's size and
// this rank's rank in it, frees it and returns the time in MPI_Comm_split.
static double split(void) {
	MPI_Comm c;
	double t0 = MPI_Wtime();
	int rc = MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &c);
	double t = MPI_Wtime() - t0;
	if (rc != MPI_SUCCESS) {
		errs++;
		fail("MPI_Comm_split", rc);
		return t;
	}
	// Color rank%2 holds the ranks of this rank's parity; the keys put
	// them in decreasing rank order: this rank's rank is the number of
	// them above it.
	int n = -1, me = -1;
	MPI_Comm_size(c, &n);
	MPI_Comm_rank(c, &me);
	int above = 0;
	for (int r = rank + 2; r < size; r += 2) above++;
	if (n != (size - rank % 2 + 1) / 2 || me != above) fail("wrong communicator", MPI_SUCCESS);
	MPI_Comm_free(&c);
	return t;
}

// call makes one call of the collective at the current size.
static void call(void) {
	int rc = MPI_SUCCESS;
	int n = (int)(bytes / 8), b = (int)bytes;
	switch (coll) {
	case ALLREDUCE:
		rc = MPI_Allreduce(sendbuf, recvbuf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		break;
	case FORWARD:
		rc = MPI_Allreduce(sendbuf, recvbuf, n, MPI_UINT64_T, MPI_BAND, MPI_COMM_WORLD);
		break;
	case REDUCE_SCATTER_BLOCK:
		rc = MPI_Reduce_scatter_block(sendbuf, recvbuf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		break;
	case BCAST:
		rc = MPI_Bcast(recvbuf, b, MPI_BYTE, 0, MPI_COMM_WORLD);
		break;
	case ALLGATHER:
		rc = MPI_Allgather(sendbuf, b, MPI_BYTE, recvbuf, b, MPI_BYTE, MPI_COMM_WORLD);
		break;
	case ALLTOALL:
		rc = MPI_Alltoall(sendbuf, b, MPI_BYTE, recvbuf, b, MPI_BYTE, MPI_COMM_WORLD);
		break;
	}
	if (rc != MPI_SUCCESS) {
		errs++;
		fail("call", rc);
	}
}

// batch makes iters calls back to back and returns their time on this
// rank (split: the time in MPI_Comm_split only, not in MPI_Comm_free). It
// stops at an MPI error.
static double batch(long iters) {
	if (coll == SPLIT) {
		double t = 0;
		for (long k = 0; k < iters && !errs; k++) t += split();
		return t;
	}
	double t0 = MPI_Wtime();
	for (long k = 0; k < iters && !errs; k++) call();
	return MPI_Wtime() - t0;
}

// agreed reports whether no rank has failed at the current size. A rank
// whose call returned an error comes here at once: when the other ranks
// also got errors they come too, and the benchmark goes on with the next
// size; when some are still inside the collective, waiting for this rank,
// they never will, and after 10 seconds this rank aborts the job.
static int agreed(void) {
	int mine[2] = {bad, errs}, any[2] = {0, 0}, done = 0;
	MPI_Request req;
	PMPI_Iallreduce(mine, any, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req);
	if (!errs) {
		PMPI_Wait(&req, MPI_STATUS_IGNORE);
		anyerr = any[1];
		return any[0] == 0;
	}
	double end = MPI_Wtime() + 10;
	while (PMPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) {
		if (MPI_Wtime() > end) {
			fprintf(stderr, "bench: rank %d: %s %zu: the other ranks did not finish the call: aborting\n", rank, names[coll], bytes);
			MPI_Abort(MPI_COMM_WORLD, 3);
		}
		sched_yield();
	}
	anyerr = any[1];
	return any[0] == 0;
}

static int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

// measure prints the line of the current size.
static void measure(int reps, double target) {
	bad = errs = 0;
	fill();
	if (coll == SPLIT) {
		split();
	} else {
		clear();
		call();
		if (!errs) check();
	}
	if (!agreed()) goto failed;
	// Warm-up: batches doubling (8-fold while under a millisecond) until
	// one takes target/5 on rank 0.
	long iters = 1, max = 100000000;
	double t;
	for (;;) {
		PMPI_Barrier(MPI_COMM_WORLD);
		t = batch(iters);
		if (errs) break; // to the verdict
		PMPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		if (t >= target / 5 || iters >= max) break;
		iters *= t < 1e-3 ? 8 : 2;
	}
	if (errs) {
		agreed(); // false: this rank failed
		goto failed;
	}
	iters = (long)ceil(target / (t > 0 ? t / iters : 1e-9));
	iters = iters < 1 ? 1 : iters > max ? max : iters;
	double *per = malloc(sizeof(double) * reps);
	for (int k = 0; k < reps; k++) {
		if (coll != SPLIT) clear();
		PMPI_Barrier(MPI_COMM_WORLD);
		double mine = batch(iters) / iters, worst = 0;
		if (errs) break;
		if (coll != SPLIT) check();
		PMPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
		per[k] = worst;
	}
	int ok = agreed();
	if (ok && rank == 0) {
		qsort(per, reps, sizeof(double), cmp);
		double med = reps % 2 ? per[reps / 2] : (per[reps / 2 - 1] + per[reps / 2]) / 2;
		printf("%s %zu %.3f\n", names[coll], coll == SPLIT ? 0 : bytes, med * 1e6);
		fflush(stdout);
	}
	free(per);
	if (ok) return;
failed:
	if (rank == 0) {
		printf("%s %zu - %s\n", names[coll], coll == SPLIT ? 0 : bytes, anyerr ? "error" : "wrong");
		fflush(stdout);
	}
}

static size_t parse_size(const char *s) {
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end == 'K' || *end == 'k') v <<= 10, end++;
	else if (*end == 'M' || *end == 'm') v <<= 20, end++;
	if (end == s || *end != '\0') return (size_t)-1;
	return (size_t)v;
}

static void usage(const char *msg) {
	if (rank == 0) fprintf(stderr, "bench: %s\nusage: bench COLL SIZES [REPS [TARGET_MS]]\n", msg);
	MPI_Finalize();
	exit(2);
}

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (argc < 3 || argc > 5) usage("wrong number of arguments");
	coll = -1;
	for (int c = 0; c < (int)(sizeof names / sizeof *names); c++)
		if (strcmp(argv[1], names[c]) == 0) coll = c;
	if (coll < 0) usage("unknown collective");
	int reps = argc > 3 ? atoi(argv[3]) : 1;
	double target = (argc > 4 ? atof(argv[4]) : 100) / 1e3;
	if (reps < 1 || target <= 0) usage("bad REPS or TARGET_MS");

	size_t sizes[64], nsizes = 0, most = 0;
	char *list = strdup(argv[2]);
	for (char *s = strtok(list, ","); s && nsizes < 64; s = strtok(NULL, ",")) {
		size_t b = parse_size(s);
		if (b == (size_t)-1 || (coll != SPLIT && b == 0)) usage("bad size");
		if ((coll == ALLREDUCE || coll == FORWARD || coll == REDUCE_SCATTER_BLOCK) && b % 8) usage("a reduction's size is a multiple of 8");
		if (b > (size_t)1 << 30) usage("size over 1 GiB");
		sizes[nsizes++] = b;
		most = b > most ? b : most;
	}
	free(list);
	if (coll == SPLIT) nsizes = 1; // one line, size 0
	size_t in = coll == ALLTOALL || coll == REDUCE_SCATTER_BLOCK ? most * size : most;
	size_t out = coll == ALLTOALL || coll == ALLGATHER ? most * size : most;
	sendbuf = malloc(in + 1);
	recvbuf = malloc(out + 1);
	if (!sendbuf || !recvbuf) usage("out of memory");
	for (size_t k = 0; k < nsizes; k++) {
		bytes = sizes[k];
		measure(reps, target);
	}
	free(sendbuf);
	free(recvbuf);
	MPI_Finalize();
	return 0;
}
