/* Sends in flight together that complete inside their post: rank 0 posts
 * 32 MPI_Isend of 8, 16, ... 256 bytes (eager: under Open MPI's UCX PML
 * each returns the PML's one shared handle of completed sends) to rank 1,
 * which posts the 32 matching MPI_Irecv; both wait for all of them in one
 * MPI_Waitall; ITERS times (argv[1], 10).  Rank 0 sends sum 8 i, i = 1..32,
 * = 4224 bytes an iteration. */
#include <mpi.h>
#include <stdlib.h>

#define N 32

int main(int argc, char **argv)
{
    static char buf[N][8 * N];
    MPI_Request req[N];
    int rank, iters = argc > 1 ? atoi(argv[1]) : 10;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int it = 0; it < iters && rank < 2; it++) {
        for (int i = 0; i < N; i++) {
            if (rank == 0)
                MPI_Isend(buf[i], 8 * (i + 1), MPI_CHAR, 1, i, MPI_COMM_WORLD, &req[i]);
            else
                MPI_Irecv(buf[i], 8 * (i + 1), MPI_CHAR, 0, i, MPI_COMM_WORLD, &req[i]);
        }
        MPI_Waitall(N, req, MPI_STATUSES_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
