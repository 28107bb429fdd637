/* Ping-pong of known sizes between ranks 0 and 1 with blocking MPI_Send and
 * MPI_Recv, for the UCX layer test: under the UCX PML each MPI_Send becomes
 * tag sends beneath it.
 * usage: ucx_pingpong ITERS SIZE...   (sizes in bytes) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3 || size < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: ucx_pingpong ITERS SIZE... (on 2 or more ranks)\n");
        MPI_Finalize();
        return 2;
    }
    int iters = atoi(argv[1]);
    size_t max = 0;
    for (int a = 2; a < argc; a++)
        if ((size_t)atol(argv[a]) > max)
            max = (size_t)atol(argv[a]);
    char *buf = malloc(max ? max : 1);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(buf, rank, max ? max : 1);
    unsigned long check = 0;
    for (int a = 2; a < argc; a++) {
        int n = atoi(argv[a]);
        for (int i = 0; i < iters; i++) {
            if (rank == 0) {
                MPI_Send(buf, n, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
                MPI_Recv(buf, n, MPI_BYTE, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(buf, n, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, n, MPI_BYTE, 0, 8, MPI_COMM_WORLD);
            }
        }
        if (n > 0)
            check += (unsigned char)buf[n - 1];
    }
    if (rank == 0)
        printf("ucx_pingpong: %d sizes x %d round trips, check %lu\n", argc - 2, iters, check);
    free(buf);
    MPI_Finalize();
    return 0;
}
