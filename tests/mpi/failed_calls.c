/* Calls that return an error move nothing (MPI_ERRORS_RETURN).  On 2 ranks:
 *   rank 0: 3 MPI_Send and 2 MPI_Isend to a rank that does not exist,
 *           1 MPI_Recv from one, then 1 real 4-byte MPI_Send to rank 1;
 *   rank 1: the matching 4-byte MPI_Recv;
 *   both:   MPI_Bcast with root 99, MPI_Bcast on MPI_COMM_NULL (a negative
 *           count is not portable: MPICH without argument checks crashes).
 * The profile must hold one 4-byte MPI_Send, one 4-byte MPI_Recv, no
 * MPI_Isend or MPI_Bcast record and no record on communicator 0, and 10
 * failed calls by operation and error class.  Every
 * rank prints the error class of each failed call, so that the test can
 * compare them with and without the profiler: it must not change them. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *class_name(int rc)
{
    int c = 0;
    MPI_Error_class(rc, &c);
    return c == MPI_SUCCESS ? "MPI_SUCCESS" : c == MPI_ERR_RANK ? "MPI_ERR_RANK" : c == MPI_ERR_ROOT ? "MPI_ERR_ROOT"
         : c == MPI_ERR_COMM ? "MPI_ERR_COMM" : c == MPI_ERR_COUNT ? "MPI_ERR_COUNT" : "other";
}

static int failed;
static void note(int rank, const char *what, int rc)
{
    failed += rc != MPI_SUCCESS;
    printf("rank %d %s %s\n", rank, what, class_name(rc));
}

int main(int argc, char **argv)
{
    int rank, size, x = 42, buf[4] = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (rank == 0) {
        for (int i = 0; i < 3; i++)
            note(rank, "MPI_Send", MPI_Send(&x, 1, MPI_INT, size + 7, 0, MPI_COMM_WORLD));
        for (int i = 0; i < 2; i++) {
            MPI_Request r = MPI_REQUEST_NULL;
            note(rank, "MPI_Isend", MPI_Isend(&x, 1, MPI_INT, size + 7, 0, MPI_COMM_WORLD, &r));
        }
        note(rank, "MPI_Recv", MPI_Recv(&x, 1, MPI_INT, size + 7, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        note(rank, "MPI_Send", MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD));
    } else if (rank == 1) {
        note(rank, "MPI_Recv", MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    note(rank, "MPI_Bcast", MPI_Bcast(buf, 4, MPI_INT, 99, MPI_COMM_WORLD));
    note(rank, "MPI_Bcast", MPI_Bcast(buf, 4, MPI_INT, 0, MPI_COMM_NULL));
    if (argc > 1 && strcmp(argv[1], "exit") == 0) {
        /* a job that ends without MPI_Finalize: its parts hold the same */
        fflush(stdout);
        MPI_Barrier(MPI_COMM_WORLD);
        exit(failed != (rank == 0 ? 8 : 2) ? 1 : 3);
    }
    MPI_Finalize();
    return failed != (rank == 0 ? 8 : 2);
}
