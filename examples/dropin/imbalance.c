// An unmodified MPI program that scoll's drop-in library improves without
// a change to its source: an iterative solver whose ranks reach each
// step's MPI_Reduce at different times (rank r computes r*DELAY µs longer
// than rank 0, the same every step), and a block exchange with
// MPI_Allgather. It prints the mean time per step of each phase on rank 0.
//
//	mpicc -O2 -o imbalance examples/dropin/imbalance.c
//	mpirun -np 8 ./imbalance                                  # the MPI library's collectives
//	mpirun -np 8 -x LD_PRELOAD=$PWD/libscollmpi.so -x SCOLL_ALGORITHM_REDUCE=clairvoyant ./imbalance
//	mpirun -np 8 -x LD_PRELOAD=$PWD/libscollmpi.so -x SCOLL_TOPOLOGY=torus:2x2x2 ./imbalance
//
// The first runs the MPI library's collectives; the second scoll's, the
// reduce predicting each rank's arrival per call site (the Clairvoyant
// reduction of Marendic et al.); the third scoll's, each chosen by the
// stage model for that network (Sack's algorithms on a torus).
//
// examples/dropin/run.sh runs the three and shows what scoll ran.
// Arguments: steps (default 50), delay per rank in µs (default 200),
// reduce elements (default 65536 doubles), allgather bytes per rank
// (default 65536).
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

// work spins for us microseconds (a stand-in for the step's computation).
static void work(double us) {
	double end = MPI_Wtime() + us * 1e-6;
	while (MPI_Wtime() < end) {
	}
}

int main(int argc, char **argv) {
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int steps = argc > 1 ? atoi(argv[1]) : 50;
	double delay = argc > 2 ? atof(argv[2]) : 200;
	int n = argc > 3 ? atoi(argv[3]) : 65536;
	int block = argc > 4 ? atoi(argv[4]) : 65536;
	double *x = malloc(sizeof(double) * n), *sum = malloc(sizeof(double) * n);
	char *mine = malloc(block), *all = malloc((size_t)block * size);
	for (int i = 0; i < n; i++) x[i] = rank + i % 7;
	for (int i = 0; i < block; i++) mine[i] = (char)(rank + i);
	double treduce = 0, tgather = 0;
	int bad = 0;
	for (int s = 0; s < steps; s++) {
		work(rank * delay);
		double t0 = MPI_Wtime();
		MPI_Reduce(x, sum, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
		double t1 = MPI_Wtime();
		MPI_Allgather(mine, block, MPI_CHAR, all, block, MPI_CHAR, MPI_COMM_WORLD);
		double t2 = MPI_Wtime();
		treduce += t1 - t0;
		tgather += t2 - t1;
		// Check the results: a fast wrong answer is no answer.
		if (rank == 0)
			for (int i = 0; i < n; i += 97) bad |= sum[i] != (double)size * (size - 1) / 2 + (double)size * (i % 7);
		for (int q = 0; q < size; q++) bad |= all[(size_t)q * block + block - 1] != (char)(q + block - 1);
	}
	double t[2] = {treduce / steps, tgather / steps}, tmax[2];
	int anybad = 0;
	// The slowest rank's view, and whether any rank saw a wrong result.
	MPI_Reduce(t, tmax, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		printf("%s: %d ranks, %d steps: reduce %.1f us/step (arrivals %g us apart), allgather %.1f us/step\n", anybad ? "WRONG" : "ok",
		       size, steps, tmax[0] * 1e6, delay, tmax[1] * 1e6);
	}
	free(x);
	free(sum);
	free(mine);
	free(all);
	MPI_Finalize();
	return anybad;
}
