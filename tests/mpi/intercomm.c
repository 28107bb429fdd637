/* An intercommunicator between a group of one rank and a group of the
 * others: both sides must name it alike, and a reduce_scatter on it reads
 * as many counts as the local group has (reading the remote group's size
 * would run past the end of the array). */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    int color = rank == 0 ? 0 : 1;
    MPI_Comm local, inter;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color == 0 ? 1 : 0, 7, &inter);
    int lsize;
    MPI_Comm_size(inter, &lsize);
    /* each group receives the reduction of the other group's 3 doubles,
     * scattered over its own members: the counts sum to 3 on both sides */
    int *counts = malloc((size_t)lsize * sizeof(int));
    for (int i = 0; i < lsize; i++)
        counts[i] = 3 / lsize;
    double in[3] = {1, 2, 3}, out[3];
    MPI_Reduce_scatter(in, out, counts, MPI_DOUBLE, MPI_SUM, inter);
    double x = rank, y;
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, inter);
    free(counts);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    MPI_Finalize();
    return 0;
}
