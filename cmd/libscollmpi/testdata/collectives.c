// The drop-in's own test: every intercepted collective, handled (predefined
// types and operators on MPI_COMM_WORLD, in place and not; derived and
// mixed datatype handles where MPI allows them; communicators split and
// duplicated) and forwarded (a user operator), checked
// against a reference every rank computes itself. Exits 1 on a wrong
// result. Run natively and with the drop-in preloaded (scripts/dropin-test.sh).
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures;

#define CHECK(cond, ...)                                         \
	do {                                                     \
		if (!(cond)) {                                   \
			if (failures++ < 10) {                   \
				fprintf(stderr, "rank %d: ", rank); \
				fprintf(stderr, __VA_ARGS__);    \
				fprintf(stderr, "\n");           \
			}                                        \
		}                                                \
	} while (0)

// in(r, i) is rank r's input element i: small integers, exact in every type.
static long in(int r, int i) { return (r * 7 + i * 13) % 23 - 11; }

#define ALLREDUCE_TEST(T, DT, NAME)                                                              \
	static void allreduce_##NAME(int n, MPI_Op op, int inplace) {                            \
		T *s = malloc(sizeof(T) * (n + 1)), *r = malloc(sizeof(T) * (n + 1));            \
		for (int i = 0; i < n; i++) s[i] = r[i] = (T)in(rank, i);                        \
		int rc = MPI_Allreduce(inplace ? MPI_IN_PLACE : s, r, n, DT, op, MPI_COMM_WORLD); \
		CHECK(rc == MPI_SUCCESS, "allreduce " #NAME ": rc %d", rc);                       \
		for (int i = 0; i < n; i++) {                                                    \
			T want = (T)in(0, i);                                                    \
			for (int q = 1; q < size; q++) {                                         \
				T v = (T)in(q, i);                                               \
				if (op == MPI_SUM) want += v;                                    \
				else if (op == MPI_MAX) want = v > want ? v : want;              \
				else if (op == MPI_MIN) want = v < want ? v : want;              \
				else if (op == MPI_PROD) want *= v;                              \
			}                                                                        \
			CHECK(r[i] == want, "allreduce " #NAME " n=%d inplace=%d: element %d", n, inplace, i); \
		}                                                                                \
		free(s);                                                                         \
		free(r);                                                                         \
	}

ALLREDUCE_TEST(int, MPI_INT, int)
ALLREDUCE_TEST(long, MPI_LONG, long)
ALLREDUCE_TEST(double, MPI_DOUBLE, double)
ALLREDUCE_TEST(float, MPI_FLOAT, float)
ALLREDUCE_TEST(int16_t, MPI_SHORT, short)

static void user_sum(void *in_, void *inout_, int *len, MPI_Datatype *dt) {
	int *a = in_, *b = inout_;
	for (int i = 0; i < *len; i++) b[i] += a[i];
}

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int counts[] = {0, 1, 7, 1000, 20011};
	MPI_Op ops[] = {MPI_SUM, MPI_MAX, MPI_MIN};
	for (int c = 0; c < 5; c++) {
		for (int o = 0; o < 3; o++) {
			for (int ip = 0; ip < 2; ip++) {
				allreduce_int(counts[c], ops[o], ip);
				allreduce_long(counts[c], ops[o], ip);
				allreduce_double(counts[c], ops[o], ip);
				allreduce_float(counts[c], ops[o], ip);
				allreduce_short(counts[c], ops[o], ip);
			}
		}
	}
	allreduce_int(5, MPI_PROD, 0);

	// Bcast from several roots, of a predefined and a derived type.
	for (int c = 0; c < 5; c++) {
		int n = counts[c];
		int roots[] = {0, size - 1, size / 2};
		for (int k = 0; k < 3; k++) {
			int root = roots[k];
			double *b = malloc(sizeof(double) * (n + 1));
			for (int i = 0; i < n; i++) b[i] = rank == root ? (double)in(root, i) : -99;
			CHECK(MPI_Bcast(b, n, MPI_DOUBLE, root, MPI_COMM_WORLD) == MPI_SUCCESS, "bcast rc");
			for (int i = 0; i < n; i++) CHECK(b[i] == (double)in(root, i), "bcast n=%d root=%d: element %d", n, root, i);
			free(b);
		}
	}
	MPI_Datatype pair;
	MPI_Type_contiguous(2, MPI_INT, &pair);
	MPI_Type_commit(&pair);
	int pb[8];
	for (int i = 0; i < 8; i++) pb[i] = rank == 0 ? i : -1;
	CHECK(MPI_Bcast(pb, 4, pair, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "bcast derived rc");
	for (int i = 0; i < 8; i++) CHECK(pb[i] == i, "bcast derived: element %d", i);
	MPI_Type_free(&pair);

	// Equal type signatures through different handles decide alike: in a
	// reduction MPI_INT and MPI_INT32_T; in a bcast and an allgather even
	// ranks pass MPI_INTs, odd ranks pairs (a contiguous type) or MPI_INTs
	// strided in memory (a vector type).
	MPI_Datatype two, strided;
	MPI_Type_contiguous(2, MPI_INT, &two);
	MPI_Type_commit(&two);
	MPI_Type_vector(6, 1, 2, MPI_INT, &strided);
	MPI_Type_commit(&strided);
	for (int round = 0; round < 2; round++) {
		int sv[12], rv[12];
		for (int i = 0; i < 6; i++) sv[i] = (int)in(rank, i);
		CHECK(MPI_Allreduce(sv, rv, 6, rank % 2 ? MPI_INT32_T : MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS, "int/int32 rc");
		for (int i = 0; i < 6; i++) {
			int want = 0;
			for (int q = 0; q < size; q++) want += (int)in(q, i);
			CHECK(rv[i] == want, "int/int32: element %d = %d, want %d", i, rv[i], want);
		}
		for (int i = 0; i < 12; i++) rv[i] = rank == 0 ? (int)in(0, i) : -1;
		if (rank % 2 == 0) {
			CHECK(MPI_Bcast(rv, 6, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "bcast mixed rc");
		} else if (round == 0) {
			CHECK(MPI_Bcast(rv, 3, two, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "bcast mixed rc");
		} else {
			CHECK(MPI_Bcast(rv, 1, strided, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "bcast mixed rc");
		}
		for (int i = 0; i < 6; i++) {
			int got = rank % 2 == 1 && round == 1 ? rv[2 * i] : rv[i];
			CHECK(got == (int)in(0, i), "bcast mixed round %d: element %d = %d", round, i, got);
			if (rank % 2 == 1 && round == 1) CHECK(rv[2 * i + 1] == -1, "bcast strided: gap %d written", i);
		}
		// The same for an allgather of 2 MPI_INTs per rank.
		int ag[64 * 2 * 2];
		for (int i = 0; i < 4 * size; i++) ag[i] = -1;
		int mine[4] = {rank, rank * 10, -1, -1};
		CHECK(MPI_Allgather(mine, 2, MPI_INT, ag, rank % 2 ? 1 : 2, rank % 2 ? two : MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS,
		      "allgather mixed rc");
		for (int q = 0; q < size && size <= 64; q++) CHECK(ag[2 * q] == q && ag[2 * q + 1] == q * 10, "allgather mixed: block %d", q);
	}
	MPI_Type_free(&two);
	MPI_Type_free(&strided);

	// A user operator and another communicator: forwarded.
	MPI_Op mine;
	MPI_Op_create(user_sum, 1, &mine);
	int x = rank + 1, y = 0;
	MPI_Allreduce(&x, &y, 1, MPI_INT, mine, MPI_COMM_WORLD);
	CHECK(y == size * (size + 1) / 2, "user op: %d", y);
	MPI_Op_free(&mine);
	MPI_Comm half;
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	x = 1, y = 0;
	MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, half);
	CHECK(y == (size + 1 - rank % 2) / 2, "split allreduce: %d", y);
	// Reversed order within the halves: a key that reverses the ranks.
	MPI_Comm rev, dup;
	MPI_Comm_split(half, 0, -rank, &rev);
	int hr, hs, rr;
	MPI_Comm_rank(half, &hr);
	MPI_Comm_size(half, &hs);
	MPI_Comm_rank(rev, &rr);
	CHECK(rr == hs - 1 - hr, "split by reversed key: rank %d in half, %d in rev", hr, rr);
	x = rank, y = -1;
	MPI_Bcast(&x, 1, MPI_INT, 0, rev);
	y = x;
	CHECK(y % 2 == rank % 2, "bcast in rev: %d from rank %d's half", y, rank);
	MPI_Comm_dup(rev, &dup);
	int dx = 1, dy = 0;
	MPI_Allreduce(&dx, &dy, 1, MPI_INT, MPI_SUM, dup);
	CHECK(dy == hs, "allreduce in dup: %d", dy);
	MPI_Comm none;
	MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &none);
	CHECK((rank == 0) == (none != MPI_COMM_NULL), "split with MPI_UNDEFINED");
	if (none != MPI_COMM_NULL) {
		MPI_Barrier(none);
		MPI_Comm_free(&none);
	}
	MPI_Comm_free(&dup);
	MPI_Comm_free(&rev);
	MPI_Comm_free(&half);

	for (int i = 0; i < 10; i++) CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "barrier rc");

	for (int c = 0; c < 5; c++) {
		int n = counts[c];
		long *s = malloc(sizeof(long) * ((size_t)n * size + 1)), *r = malloc(sizeof(long) * ((size_t)n * size + 1));
		// Reduce to several roots, in place at the root and not.
		int roots[] = {0, size - 1};
		for (int k = 0; k < 2; k++) {
			for (int ip = 0; ip < 2; ip++) {
				int root = roots[k];
				for (int i = 0; i < n; i++) s[i] = r[i] = in(rank, i);
				int rc = MPI_Reduce(ip && rank == root ? MPI_IN_PLACE : s, r, n, MPI_LONG, MPI_SUM, root, MPI_COMM_WORLD);
				CHECK(rc == MPI_SUCCESS, "reduce rc");
				for (int i = 0; i < n && rank == root; i++) {
					long want = 0;
					for (int q = 0; q < size; q++) want += in(q, i);
					CHECK(r[i] == want, "reduce n=%d root=%d inplace=%d: element %d", n, root, ip, i);
				}
			}
		}
		// Scan and Exscan.
		for (int ip = 0; ip < 2; ip++) {
			for (int i = 0; i < n; i++) s[i] = r[i] = in(rank, i);
			CHECK(MPI_Scan(ip ? MPI_IN_PLACE : s, r, n, MPI_LONG, MPI_MAX, MPI_COMM_WORLD) == MPI_SUCCESS, "scan rc");
			for (int i = 0; i < n; i++) {
				long want = in(0, i);
				for (int q = 1; q <= rank; q++) want = in(q, i) > want ? in(q, i) : want;
				CHECK(r[i] == want, "scan n=%d inplace=%d: element %d", n, ip, i);
			}
			for (int i = 0; i < n; i++) s[i] = r[i] = in(rank, i);
			CHECK(MPI_Exscan(ip ? MPI_IN_PLACE : s, r, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS, "exscan rc");
			for (int i = 0; i < n && rank > 0; i++) {
				long want = 0;
				for (int q = 0; q < rank; q++) want += in(q, i);
				CHECK(r[i] == want, "exscan n=%d inplace=%d: element %d", n, ip, i);
			}
		}
		// Reduce_scatter_block: block b of the sum of every rank's size*n elements.
		for (int ip = 0; ip < 2; ip++) {
			for (int i = 0; i < n * size; i++) s[i] = r[i] = in(rank, i);
			CHECK(MPI_Reduce_scatter_block(ip ? MPI_IN_PLACE : s, r, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS, "rsb rc");
			for (int i = 0; i < n; i++) {
				long want = 0;
				for (int q = 0; q < size; q++) want += in(q, rank * n + i);
				CHECK(r[i] == want, "reduce_scatter_block n=%d inplace=%d: element %d", n, ip, i);
			}
		}
		// Allgather and Alltoall, in place and not.
		for (int ip = 0; ip < 2; ip++) {
			for (int i = 0; i < n; i++) s[i] = in(rank, i);
			for (int i = 0; i < n * size; i++) r[i] = -99;
			if (ip) for (int i = 0; i < n; i++) r[rank * n + i] = in(rank, i);
			CHECK(MPI_Allgather(ip ? MPI_IN_PLACE : s, n, MPI_LONG, r, n, MPI_LONG, MPI_COMM_WORLD) == MPI_SUCCESS, "allgather rc");
			for (int q = 0; q < size; q++)
				for (int i = 0; i < n; i++) CHECK(r[q * n + i] == in(q, i), "allgather n=%d inplace=%d: block %d element %d", n, ip, q, i);
			for (int i = 0; i < n * size; i++) s[i] = r[i] = in(rank, i) * 1000 + i;
			CHECK(MPI_Alltoall(ip ? MPI_IN_PLACE : s, n, MPI_LONG, r, n, MPI_LONG, MPI_COMM_WORLD) == MPI_SUCCESS, "alltoall rc");
			for (int q = 0; q < size; q++)
				for (int i = 0; i < n; i++)
					CHECK(r[q * n + i] == in(q, rank * n + i) * 1000 + rank * n + i, "alltoall n=%d inplace=%d: block %d element %d", n, ip, q, i);
		}
		// Gather and Scatter to and from several roots, in place at the root and not.
		for (int k = 0; k < 2; k++) {
			for (int ip = 0; ip < 2; ip++) {
				int root = roots[k];
				for (int i = 0; i < n; i++) s[i] = in(rank, i);
				for (int i = 0; i < n * size; i++) r[i] = -99;
				if (ip && rank == root) for (int i = 0; i < n; i++) r[root * n + i] = in(root, i);
				CHECK(MPI_Gather(ip && rank == root ? MPI_IN_PLACE : s, n, MPI_LONG, r, n, MPI_LONG, root, MPI_COMM_WORLD) == MPI_SUCCESS,
				      "gather rc");
				for (int q = 0; q < size && rank == root; q++)
					for (int i = 0; i < n; i++) CHECK(r[q * n + i] == in(q, i), "gather n=%d root=%d inplace=%d: block %d element %d", n, root, ip, q, i);
				for (int i = 0; i < n * size; i++) s[i] = rank == root ? in(root, i) : -5;
				for (int i = 0; i < n; i++) r[i] = -99;
				CHECK(MPI_Scatter(s, n, MPI_LONG, ip && rank == root ? MPI_IN_PLACE : r, n, MPI_LONG, root, MPI_COMM_WORLD) == MPI_SUCCESS,
				      "scatter rc");
				for (int i = 0; i < n && !(ip && rank == root); i++) CHECK(r[i] == in(root, rank * n + i), "scatter n=%d root=%d inplace=%d: element %d", n, root, ip, i);
			}
		}
		free(s);
		free(r);
	}

	// Reduce_scatter with uneven counts (some zero) and Allgatherv with
	// gaps between the blocks, in place and not.
	{
		int *rc = malloc(sizeof(int) * size), *dis = malloc(sizeof(int) * size), total = 0, ext = 0;
		for (int q = 0; q < size; q++) {
			rc[q] = (q * 5 + 3) % 4; // 3, 0, 1, 2, ...
			dis[q] = ext + 1;        // one element of gap before each block
			total += rc[q];
			ext = dis[q] + rc[q];
		}
		for (int ip = 0; ip < 2; ip++) {
			long *s = malloc(sizeof(long) * (total + 1)), *r = malloc(sizeof(long) * (total + ext + 1));
			for (int i = 0; i < total; i++) s[i] = r[i] = in(rank, i);
			CHECK(MPI_Reduce_scatter(ip ? MPI_IN_PLACE : s, r, rc, MPI_LONG, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS, "reduce_scatter rc");
			int off = 0;
			for (int q = 0; q < rank; q++) off += rc[q];
			for (int i = 0; i < rc[rank]; i++) {
				long want = 0;
				for (int q = 0; q < size; q++) want += in(q, off + i);
				CHECK(r[i] == want, "reduce_scatter inplace=%d: element %d", ip, i);
			}
			for (int i = 0; i < ext; i++) r[i] = -99;
			for (int i = 0; i < rc[rank]; i++) s[i] = in(rank, i);
			if (ip) for (int i = 0; i < rc[rank]; i++) r[dis[rank] + i] = in(rank, i);
			CHECK(MPI_Allgatherv(ip ? MPI_IN_PLACE : s, rc[rank], MPI_LONG, r, rc, dis, MPI_LONG, MPI_COMM_WORLD) == MPI_SUCCESS,
			      "allgatherv rc");
			for (int q = 0; q < size; q++) {
				CHECK(r[dis[q] - 1] == -99, "allgatherv inplace=%d: the gap before block %d written", ip, q);
				for (int i = 0; i < rc[q]; i++) CHECK(r[dis[q] + i] == in(q, i), "allgatherv inplace=%d: block %d element %d", ip, q, i);
			}
			free(s);
			free(r);
		}
		free(rc);
		free(dis);
	}

	// Alltoallv: rank r sends (r+j)%3 elements to rank j (a symmetric
	// pattern, so in place works too), with gaps in both buffers.
	for (int ip = 0; ip < 2; ip++) {
		int *sc = malloc(sizeof(int) * size * 4), *sd = sc + size, *rcn = sc + 2 * size, *rd = sc + 3 * size, se = 0, re = 0;
		for (int j = 0; j < size; j++) {
			sc[j] = rcn[j] = (rank + j) % 3;
			sd[j] = se + 2;
			se = sd[j] + sc[j];
			rd[j] = re + 1;
			re = rd[j] + rcn[j];
		}
		long *s = malloc(sizeof(long) * (se + 1)), *r = malloc(sizeof(long) * (re + 1));
		for (int i = 0; i < re; i++) r[i] = -99;
		for (int j = 0; j < size; j++)
			for (int k = 0; k < sc[j]; k++) {
				s[sd[j] + k] = in(rank, j * 100 + k);
				if (ip) r[rd[j] + k] = in(rank, j * 100 + k);
			}
		CHECK(MPI_Alltoallv(ip ? MPI_IN_PLACE : s, sc, sd, MPI_LONG, r, rcn, rd, MPI_LONG, MPI_COMM_WORLD) == MPI_SUCCESS, "alltoallv rc");
		for (int i = 0; i < size; i++) {
			CHECK(r[rd[i] - 1] == -99, "alltoallv inplace=%d: the gap before block %d written", ip, i);
			for (int k = 0; k < rcn[i]; k++) CHECK(r[rd[i] + k] == in(i, rank * 100 + k), "alltoallv inplace=%d: block %d element %d", ip, i, k);
		}
		free(s);
		free(r);
		free(sc);
	}

	// MPI_MINLOC and MPI_MAXLOC on pair types; equal values (they repeat
	// across ranks) keep the lower index, as MPI says.
	for (int ip = 0; ip < 2; ip++) {
		struct { double v; int i; } ds[50], dr[50];
		struct { int v; int i; } is[50], ir[50];
		for (int k = 0; k < 50; k++) {
			ds[k].v = dr[k].v = (double)in(rank, k);
			ds[k].i = dr[k].i = rank;
			is[k].v = ir[k].v = (int)in(rank, k) % 5;
			is[k].i = ir[k].i = rank;
		}
		CHECK(MPI_Allreduce(ip ? MPI_IN_PLACE : ds, dr, 50, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD) == MPI_SUCCESS, "minloc rc");
		CHECK(MPI_Allreduce(ip ? MPI_IN_PLACE : is, ir, 50, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD) == MPI_SUCCESS, "maxloc rc");
		for (int k = 0; k < 50; k++) {
			int wmin = 0, wmax = 0;
			for (int q = 1; q < size; q++) {
				if (in(q, k) < in(wmin, k)) wmin = q;
				if ((int)in(q, k) % 5 > (int)in(wmax, k) % 5) wmax = q;
			}
			CHECK(dr[k].v == (double)in(wmin, k) && dr[k].i == wmin, "minloc inplace=%d: element %d = (%g, %d), want (%g, %d)", ip, k,
			      dr[k].v, dr[k].i, (double)in(wmin, k), wmin);
			CHECK(ir[k].v == (int)in(wmax, k) % 5 && ir[k].i == wmax, "maxloc inplace=%d: element %d = (%d, %d), want (%d, %d)", ip, k,
			      ir[k].v, ir[k].i, (int)in(wmax, k) % 5, wmax);
		}
	}

	// Gatherv and Scatterv: uneven counts (some zero) with gaps at the
	// root, to and from several roots, in place at the root and not.
	{
		int *vc = malloc(sizeof(int) * size), *vd = malloc(sizeof(int) * size), ext = 0;
		for (int q = 0; q < size; q++) {
			vc[q] = (q * 3 + 2) % 5; // 2, 0, 3, 1, 4, ...
			vd[q] = ext + 2;
			ext = vd[q] + vc[q];
		}
		long *all = malloc(sizeof(long) * (ext + 1)), own[8];
		int roots[] = {0, size - 1, size / 2};
		for (int k = 0; k < 3; k++) {
			for (int ip = 0; ip < 2; ip++) {
				int root = roots[k], inplace = ip && rank == root;
				for (int i = 0; i < ext; i++) all[i] = -99;
				for (int i = 0; i < vc[rank]; i++) own[i] = in(rank, i);
				if (inplace) for (int i = 0; i < vc[rank]; i++) all[vd[rank] + i] = in(rank, i);
				CHECK(MPI_Gatherv(inplace ? MPI_IN_PLACE : own, vc[rank], MPI_LONG, all, vc, vd, MPI_LONG, root, MPI_COMM_WORLD) ==
					      MPI_SUCCESS,
				      "gatherv rc");
				for (int q = 0; q < size && rank == root; q++) {
					CHECK(all[vd[q] - 1] == -99, "gatherv root=%d inplace=%d: the gap before block %d written", root, ip, q);
					for (int i = 0; i < vc[q]; i++) CHECK(all[vd[q] + i] == in(q, i), "gatherv root=%d inplace=%d: block %d element %d", root, ip, q, i);
				}
				for (int q = 0; q < size; q++)
					for (int i = 0; i < vc[q]; i++) all[vd[q] + i] = rank == root ? in(q, 50 + i) : -5;
				for (int i = 0; i < 8; i++) own[i] = -99;
				CHECK(MPI_Scatterv(all, vc, vd, MPI_LONG, inplace ? MPI_IN_PLACE : own, vc[rank], MPI_LONG, root, MPI_COMM_WORLD) == MPI_SUCCESS,
				      "scatterv rc");
				for (int i = 0; i < vc[rank] && !inplace; i++) CHECK(own[i] == in(rank, 50 + i), "scatterv root=%d: element %d", root, i);
				if (!inplace) CHECK(own[vc[rank]] == -99, "scatterv root=%d: wrote past the block", root);
			}
		}
		free(all);
		free(vc);
		free(vd);
	}

	// Communicators the MPI library makes: by shared memory (all of them
	// here) and from a group (the even ranks).
	{
		MPI_Comm node, even;
		MPI_Group world, evens;
		CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) == MPI_SUCCESS, "split_type rc");
		int ns = 0, nx = 1, ny = 0;
		MPI_Comm_size(node, &ns);
		CHECK(MPI_Allreduce(&nx, &ny, 1, MPI_INT, MPI_SUM, node) == MPI_SUCCESS && ny == ns, "allreduce on the node: %d of %d", ny, ns);
		int *ranks = malloc(sizeof(int) * size), ne = 0;
		for (int q = 0; q < size; q += 2) ranks[ne++] = q;
		MPI_Comm_group(MPI_COMM_WORLD, &world);
		MPI_Group_incl(world, ne, ranks, &evens);
		CHECK(MPI_Comm_create(MPI_COMM_WORLD, evens, &even) == MPI_SUCCESS, "comm_create rc");
		CHECK((rank % 2 == 0) == (even != MPI_COMM_NULL), "comm_create: rank %d's communicator", rank);
		if (even != MPI_COMM_NULL) {
			int er = -1, v = rank;
			MPI_Comm_rank(even, &er);
			CHECK(er == rank / 2, "comm_create: rank %d is %d", rank, er);
			CHECK(MPI_Bcast(&v, 1, MPI_INT, ne - 1, even) == MPI_SUCCESS && v == ranks[ne - 1], "bcast on the evens: %d", v);
			MPI_Comm_free(&even);
		}
		MPI_Group_free(&evens);
		MPI_Group_free(&world);
		MPI_Comm_free(&node);
		free(ranks);
	}

	// Logical and bitwise operators on integers; an in-place allgather
	// whose ignored send count and type are -1 and MPI_DATATYPE_NULL.
	{
		int v = rank + 1, band = 0;
		CHECK(MPI_Allreduce(&v, &band, 1, MPI_INT, MPI_BAND, MPI_COMM_WORLD) == MPI_SUCCESS, "band rc");
		int zero = rank == size - 1, any = 0;
		CHECK(MPI_Allreduce(&zero, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD) == MPI_SUCCESS, "lor rc");
		int want = 1;
		for (int q = 0; q < size; q++) want = q == 0 ? 1 : want & (q + 1);
		CHECK(band == want && any == 1, "band %d (want %d), lor %d", band, want, any);
		int *ag = malloc(sizeof(int) * size);
		for (int q = 0; q < size; q++) ag[q] = q == rank ? 10 * q : -1;
		CHECK(MPI_Allgather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, ag, 1, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS, "allgather in place rc");
		for (int q = 0; q < size; q++) CHECK(ag[q] == 10 * q, "allgather in place (send count -1): block %d = %d", q, ag[q]);
		free(ag);
	}

	// MPI_Comm_dup copies the attributes (MPI's copy callbacks); a
	// Cartesian communicator's collectives are scoll's too.
	{
		int kv, flag = 0, *got = NULL;
		static int value = 42;
		MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kv, NULL);
		MPI_Comm_set_attr(MPI_COMM_WORLD, kv, &value);
		MPI_Comm dup, cart;
		MPI_Comm_dup(MPI_COMM_WORLD, &dup);
		MPI_Comm_get_attr(dup, kv, &got, &flag);
		CHECK(flag && got == &value, "MPI_Comm_dup did not copy an attribute");
		int dims[1] = {size}, periods[1] = {1}, x = 1, y = 0;
		MPI_Cart_create(dup, 1, dims, periods, 0, &cart);
		CHECK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, cart) == MPI_SUCCESS && y == size, "allreduce on a cartesian communicator: %d", y);
		// The other constructors with a topology, and a dup with info: a
		// barrier on each.
		MPI_Comm sub, graph, dgraph, adj, dupi;
		int remain[1] = {1};
		MPI_Cart_sub(cart, remain, &sub);
		int *index = malloc(sizeof(int) * size), *edges = malloc(sizeof(int) * size);
		for (int q = 0; q < size; q++) index[q] = q + 1, edges[q] = (q + 1) % size; // a ring
		MPI_Graph_create(dup, size, index, edges, 0, &graph);
		int next = (rank + 1) % size, prev = (rank + size - 1) % size, one = 1;
		MPI_Dist_graph_create_adjacent(dup, 1, &prev, MPI_UNWEIGHTED, 1, &next, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &adj);
		MPI_Dist_graph_create(dup, 1, &rank, &one, &next, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dgraph);
		MPI_Comm_dup_with_info(dup, MPI_INFO_NULL, &dupi);
		MPI_Comm made[] = {sub, graph, adj, dgraph, dupi};
		for (int i = 0; i < 5; i++) {
			CHECK(MPI_Barrier(made[i]) == MPI_SUCCESS, "barrier on constructed communicator %d", i);
			MPI_Comm_free(&made[i]);
		}
		free(index);
		free(edges);
		MPI_Comm_free(&cart);
		MPI_Comm_free(&dup);
		MPI_Comm_delete_attr(MPI_COMM_WORLD, kv);
		MPI_Comm_free_keyval(&kv);
	}

	// Errors through the communicator's error handler: MPI_ERRORS_RETURN
	// returns the class (a root out of range: MPI_ERR_ROOT) on every rank.
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int eb = 0, cls = -1;
	int erc = MPI_Bcast(&eb, 1, MPI_INT, size + 3, MPI_COMM_WORLD);
	MPI_Error_class(erc, &cls);
	CHECK(erc != MPI_SUCCESS && cls == MPI_ERR_ROOT, "bcast to root %d: rc %d, class %d, want MPI_ERR_ROOT", size + 3, erc, cls);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

	int bad = failures, all = 0;
	MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0) printf("%s: %d failures\n", all ? "FAIL" : "ok", all);
	MPI_Finalize();
	return all ? 1 : 0;
}
