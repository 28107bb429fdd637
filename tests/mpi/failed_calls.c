/* Calls that return an error move nothing: rank 0 sends to a rank that does
 * not exist (MPI_ERRORS_RETURN) three times, then sends 4 bytes to rank 1
 * once.  The profile must hold one 4-byte MPI_Send and three failed calls. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, x = 42, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (rank == 0) {
        for (int i = 0; i < 3; i++)
            bad += MPI_Send(&x, 1, MPI_INT, size + 7, 0, MPI_COMM_WORLD) != MPI_SUCCESS;
        MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        printf("failed sends: %d\n", bad);
    } else if (rank == 1) {
        MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return rank == 0 && bad != 3;
}
