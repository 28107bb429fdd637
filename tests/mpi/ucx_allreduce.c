/* MPI_Allreduce of a known vector, for the UCX layer test: the wire
 * messages beneath each call follow the algorithm Open MPI was told to use.
 * usage: ucx_allreduce CALLS BYTES   (BYTES a multiple of 8: doubles) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3) {
        if (rank == 0)
            fprintf(stderr, "usage: ucx_allreduce CALLS BYTES\n");
        MPI_Finalize();
        return 2;
    }
    int calls = atoi(argv[1]);
    int n = atoi(argv[2]) / (int)sizeof(double);
    double *in = malloc((size_t)(n ? n : 1) * sizeof(double));
    double *out = malloc((size_t)(n ? n : 1) * sizeof(double));
    if (!in || !out)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = 0; i < n; i++)
        in[i] = rank + i % 7;
    for (int c = 0; c < calls; c++)
        MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    /* every element is sum over ranks of (rank + i % 7) */
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += out[i] != size * (size - 1) / 2.0 + size * (double)(i % 7);
    if (rank == 0)
        printf("ucx_allreduce: %d calls of %d doubles on %d ranks, %s\n", calls, n, size, bad ? "WRONG" : "ok");
    free(in);
    free(out);
    MPI_Finalize();
    return bad != 0;
}
