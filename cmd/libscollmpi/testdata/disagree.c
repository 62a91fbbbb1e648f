// Ranks that disagree fail on every rank instead of waiting for ever:
// rank 0 passes MPI_Allreduce half the count the others pass. Under
// MPI_ERRORS_RETURN every rank must get an error back, and the program
// must end (scripts/dropin-test.sh runs it under a timeout, preloaded
// only: what the MPI library does with such a program is its own
// business). Prints "ok" from every rank that got its error.
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
	int rank, size, cls = -1;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	double s[64] = {1}, r[64];
	int rc = MPI_Allreduce(s, r, rank == 0 ? 4 : 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Error_class(rc, &cls);
	if (rc != MPI_SUCCESS) {
		printf("ok: rank %d: error class %d\n", rank, cls);
	} else {
		printf("FAIL: rank %d: no error\n", rank);
	}
	MPI_Finalize();
	return 0;
}
