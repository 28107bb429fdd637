/* A parent of 1 rank spawns 2 children of this same program; each job
 * sends one message inside it, so each profile has its own traffic.  The
 * parent then disconnects a duplicate and duplicates world again with
 * MPI_Comm_idup: an allreduce of 4 bytes on the first, of 8 on the second. */
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
        /* a disconnected communicator's handle may come back from
         * MPI_Comm_idup: the calls on the new one are its own */
        MPI_Comm a, b;
        MPI_Request req;
        int v[2] = {1, 2}, w[2];
        MPI_Comm_dup(MPI_COMM_WORLD, &a);
        MPI_Allreduce(v, w, 1, MPI_INT, MPI_SUM, a);
        MPI_Comm_disconnect(&a);
        MPI_Comm_idup(MPI_COMM_WORLD, &b, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Allreduce(v, w, 2, MPI_INT, MPI_SUM, b);
        MPI_Comm_free(&b);
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
