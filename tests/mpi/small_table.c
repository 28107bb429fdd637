/* Tables too small for a rank's records: rank 0 makes 80 distinct records
 * (a message to itself in each of 80 regions), rank 1 makes 20, then both
 * an allreduce and a barrier.  With COMMFIT_TABLE_SIZE=64 (63 records per
 * table) rank 0 keeps its first 63 and drops the rest, the allreduce and the
 * barrier among them; rank 1 keeps everything. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double x = 1, y;
    for (int k = 0; k < (rank == 0 ? 80 : 20); k++) {
        char name[16];
        snprintf(name, sizeof(name), "r%d", k);
        MPI_Pcontrol(1, name);
        MPI_Sendrecv(&x, 1, MPI_DOUBLE, rank, 0, &y, 1, MPI_DOUBLE, rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Pcontrol(-1, name);
    }
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
