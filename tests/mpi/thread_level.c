/* thread_level.c - the thread level a job asked for holds through
 * MPI_Finalize: a delete callback on MPI_COMM_SELF, which MPI_Finalize
 * runs first, prints what MPI_Query_thread says there next to what
 * MPI_Init_thread provided.  (The profiler reads the library's control
 * variables at finalize, where blocking messages of two sizes make a fit
 * the limits serve; under Open MPI a tool-interface start at another level
 * would change the library's.) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int provided;

static int at_finalize(MPI_Comm comm, int key, void *val, void *extra)
{
    int level = -1, rank = -1;
    (void)comm;
    (void)key;
    (void)val;
    (void)extra;
    MPI_Query_thread(&level);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("rank %d provided %d at_finalize %d\n", rank, provided, level);
    fflush(stdout);
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int key;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &key, NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *buf = calloc(1, 65536);
    for (int n = 8; buf && size > 1 && rank < 2 && n <= 65536; n *= 8192)
        if (rank == 0)
            MPI_Send(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        else
            MPI_Recv(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
