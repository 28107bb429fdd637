/* One MPI_Waitall over more requests than the plugin's fixed scratch holds
 * (4096): rank 0 posts 5000 sends of 4 bytes to rank 1, rank 1 5000
 * receives, each side waits for all of them in one call. */
#include <mpi.h>
#include <stdlib.h>

#define N 5000

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int *buf = calloc(N, sizeof(int));
    MPI_Request *req = malloc(N * sizeof(*req));
    if (!buf || !req)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (rank < 2) {
        for (int i = 0; i < N; i++) {
            if (rank == 0)
                MPI_Isend(&buf[i], 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &req[i]);
            else
                MPI_Irecv(&buf[i], 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &req[i]);
        }
        MPI_Waitall(N, req, MPI_STATUSES_IGNORE);
    }
    free(req);
    free(buf);
    MPI_Finalize();
    return 0;
}
