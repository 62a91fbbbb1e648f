/* mpibench: the MPI library's own collectives, timed the way "scoll bench"
 * times scoll's: per size, warm-up calls, a barrier, back-to-back timed
 * calls; the reported latency is the mean over ranks of each rank's average
 * per call, in microseconds.
 *
 *   mpicc -O2 -o mpibench scripts/mpibench.c
 *   mpirun -np 2 --mca btl self,tcp ./mpibench allreduce 1048576 16777216
 *
 * Operations: allreduce (MPI_DOUBLE, MPI_SUM), allgather (bytes per rank),
 * bcast (bytes, root 0), barrier (sizes ignored: one line, bytes 0).
 * Output: one CSV line per size:
 *   op,np,bytes,iters,avg_us
 * MPIBENCH_SMALL_ITERS sets the timed and the warm-up calls of sizes up to
 * 8 KiB (default 1000 and 100), as scoll bench's --iters and --warmup do;
 * MPIBENCH_BUDGET the seconds one size may take (default 1: fewer calls).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double timed(const char *op, char *send, char *recv, long bytes, int iters) {
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (strcmp(op, "allreduce") == 0)
            MPI_Allreduce(send, recv, (int)(bytes / 8), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        else if (strcmp(op, "allgather") == 0)
            MPI_Allgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
        else if (strcmp(op, "barrier") == 0)
            MPI_Barrier(MPI_COMM_WORLD);
        else
            MPI_Bcast(send, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 3 || (strcmp(argv[1], "allreduce") && strcmp(argv[1], "allgather") && strcmp(argv[1], "bcast") && strcmp(argv[1], "barrier"))) {
        if (rank == 0)
            fprintf(stderr, "usage: mpibench allreduce|allgather|bcast|barrier BYTES...\n");
        MPI_Finalize();
        return 2;
    }
    const char *op = argv[1];
    /* MPIBENCH_BUDGET: seconds a size may take (default 1; counting
     * scripts that need exact call counts set it high). */
    double budget = getenv("MPIBENCH_BUDGET") ? atof(getenv("MPIBENCH_BUDGET")) : 1.0;
    int barrier = strcmp(op, "barrier") == 0;
    for (int a = 2; a < (barrier ? 3 : argc); a++) {
        long bytes = barrier ? 0 : atol(argv[a]);
        long rbytes = strcmp(op, "allgather") == 0 ? bytes * np : bytes;
        char *send = malloc(bytes > 0 ? bytes : 1), *recv = malloc(rbytes > 0 ? rbytes : 1);
        memset(send, 1, bytes);
        memset(recv, 0, rbytes);
        int warm = bytes > 8192 ? 10 : 100, iters = bytes > 8192 ? 100 : 1000;
        /* MPIBENCH_SMALL_ITERS: timed calls up to 8 KiB (scoll bench --iters). */
        const char *small = getenv("MPIBENCH_SMALL_ITERS");
        if (small != NULL && bytes <= 8192 && atoi(small) > 0)
            warm = iters = atoi(small);
        /* Bound each size to about a second, as scoll bench's budget does,
         * from the slowest rank's time of a call after a first one (which
         * opens the connections of lazily connecting transports: Open
         * MPI's TCP takes milliseconds for it). */
        timed(op, send, recv, bytes, 1);
        double one = timed(op, send, recv, bytes, 1), worst;
        MPI_Allreduce(&one, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (worst * iters > budget)
            iters = worst > budget ? 1 : (int)(budget / worst);
        timed(op, send, recv, bytes, warm < iters ? warm : iters);
        MPI_Barrier(MPI_COMM_WORLD);
        double per = timed(op, send, recv, bytes, iters) / iters, sum;
        MPI_Reduce(&per, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("%s,%d,%ld,%d,%.2f\n", op, np, bytes, iters, sum / np * 1e6);
        free(send);
        free(recv);
    }
    MPI_Finalize();
    return 0;
}
