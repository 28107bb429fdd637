/* Cost of the end of a run: a workload of collectives of 12 sizes and a
 * ring of messages, then MPI_Finalize timed on every rank (the merge and
 * the profile when preloaded).  Rank 0 prints the slowest rank's finalize
 * time and its own peak resident memory before and after. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "../mpi/status_kb.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 20;
    char *a = calloc(1, 1 << 16), *b = calloc(1, 1 << 16);
    for (int it = 0; it < iters; it++) {
        for (int s = 8; s <= (1 << 16); s *= 2)
            MPI_Allreduce(a, b, s / 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Sendrecv(a, 1024, MPI_BYTE, (rank + 1) % size, 0, b, 1024, MPI_BYTE, (rank + size - 1) % size, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Bcast(a, 4096, MPI_BYTE, it % size, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long before = status_kb("VmHWM:");
    /* MPI is gone after MPI_Finalize: every rank prints its own time and the
     * script takes the largest */
    double t0 = now();
    MPI_Finalize();
    double t1 = now();
    long after = status_kb("VmHWM:");
    printf("finalize %d %.6f %ld %ld\n", rank, t1 - t0, before, after);
    free(a);
    free(b);
    return 0;
}
