/* A parent of 1 rank spawns 2 children of this same program; each job
 * sends one message inside it, so each profile has its own traffic. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Comm parent, inter;
    int rank, x = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (parent == MPI_COMM_NULL) {
        MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
        MPI_Barrier(inter);
        MPI_Comm_disconnect(&inter);
    } else {
        if (rank == 0)
            MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        else if (rank == 1)
            MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Barrier(parent);
        MPI_Comm_disconnect(&parent);
    }
    MPI_Finalize();
    return 0;
}
