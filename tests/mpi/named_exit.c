/* Communicators named with MPI_Comm_set_name, then argv[1]: "exit" ends
 * every rank with status 7 without MPI_Finalize, "finish" finalizes.  A
 * split of world (colour rank % 2) named "halo <x>", a dup of world named
 * on rank 0 only, 3 allreduces on each. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm halo, dup;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &halo);
    MPI_Comm_set_name(halo, "halo <x>");
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    if (rank == 0)
        MPI_Comm_set_name(dup, "solver");
    double x = 1, y;
    for (int i = 0; i < 3; i++) {
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, halo);
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, dup);
    }
    if (!strcmp(argv[1], "exit"))
        exit(7);
    MPI_Finalize();
    return 0;
}
