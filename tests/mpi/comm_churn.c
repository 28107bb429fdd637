/* Communicator churn: N times MPI_Comm_dup, an allreduce of 8 bytes on the
 * duplicate, MPI_Comm_free; then K duplicates alive at once (more than the
 * first lookup table holds), an allreduce of 4 bytes on each, all freed.
 * Rank 0 prints its resident memory after N/20 and after N pairs. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "status_kb.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 20000, k = argc > 2 ? atoi(argv[2]) : 5000, rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double x = 1, y;
    long early = 0;
    for (int i = 0; i < n; i++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, c);
        MPI_Comm_free(&c);
        if (i + 1 == n / 20)
            early = status_kb("VmRSS:");
    }
    long late = status_kb("VmRSS:");
    MPI_Comm *live = malloc((size_t)k * sizeof(*live));
    float f = 1, g;
    for (int i = 0; i < k; i++)
        MPI_Comm_dup(MPI_COMM_WORLD, &live[i]);
    for (int i = 0; i < k; i++)
        MPI_Allreduce(&f, &g, 1, MPI_FLOAT, MPI_SUM, live[i]);
    for (int i = 0; i < k; i++)
        MPI_Comm_free(&live[i]);
    free(live);
    if (rank == 0)
        printf("rank 0 resident memory: %ld kB after %d dup/allreduce/free, %ld kB after %d (%+ld kB)\n", early,
               n / 20, late, n, late - early);
    MPI_Finalize();
    return 0;
}
