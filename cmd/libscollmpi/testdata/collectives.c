// The drop-in's own test: every intercepted collective, handled (predefined
// types and operators on MPI_COMM_WORLD, in place and not) and forwarded
// (a derived datatype, a user operator, another communicator), checked
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
	int counts[] = {0, 1, 7, 1000, 100003};
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
	MPI_Comm_free(&half);

	for (int i = 0; i < 10; i++) CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "barrier rc");

	int bad = failures, all = 0;
	MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0) printf("%s: %d failures\n", all ? "FAIL" : "ok", all);
	MPI_Finalize();
	return all ? 1 : 0;
}
