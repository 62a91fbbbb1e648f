/* mpisplit: the MPI library's MPI_Comm_split, timed the way "scoll split"
 * times Comm.Split: per repetition, a barrier, one split, its free; the
 * repetition's time is the slowest rank's split; the median, fastest and
 * slowest repetition are reported, in milliseconds.
 *
 *   mpicc -O2 -o mpisplit scripts/mpisplit.c
 *   mpirun -np 8 ./mpisplit 1 random 5
 *
 * Arguments: colors (1, a number K for rank mod K, or unique), keys (random,
 * same, reverse or rank), repetitions. Output: one CSV line:
 *   np,colors,keys,reps,median_ms,min_ms,max_ms
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc != 4) {
        if (rank == 0)
            fprintf(stderr, "usage: mpisplit COLORS KEYS REPS\n");
        MPI_Finalize();
        return 2;
    }
    const char *colors = argv[1], *keys = argv[2];
    int reps = atoi(argv[3]);
    int color = 0, key = 0;
    if (strcmp(colors, "unique") == 0)
        color = rank;
    else if (atoi(colors) > 1)
        color = rank % atoi(colors);
    srand(1 + rank);
    if (strcmp(keys, "random") == 0)
        key = rand();
    else if (strcmp(keys, "reverse") == 0)
        key = np - rank;
    else if (strcmp(keys, "rank") == 0)
        key = rank;
    double *t = malloc(sizeof(double) * (reps > 0 ? reps : 1));
    for (int i = 0; i < reps; i++) {
        MPI_Comm sub;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_Comm_split(MPI_COMM_WORLD, color, key, &sub);
        double el = MPI_Wtime() - t0, worst;
        MPI_Comm_free(&sub);
        MPI_Allreduce(&el, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        t[i] = worst * 1e3;
    }
    if (rank == 0 && reps > 0) {
        qsort(t, reps, sizeof(double), cmp);
        double med = reps % 2 ? t[reps / 2] : (t[reps / 2 - 1] + t[reps / 2]) / 2;
        printf("%d,%s,%s,%d,%.4f,%.4f,%.4f\n", np, colors, keys, reps, med, t[0], t[reps - 1]);
    }
    free(t);
    MPI_Finalize();
    return 0;
}
