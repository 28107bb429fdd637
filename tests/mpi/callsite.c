/* Call sites: MPI_Allreduce from two lines with different counts, from a
 * third whose count changes at every call, and a
 * Send/Recv pair; prints each call's line, count and bytes so the test
 * can hold the report's call sites against them; an MPI_Isend and its
 * MPI_Wait too. */
#include <mpi.h>
#include <stdio.h>

#define N1 10
#define N2 3
#define N3 48 /* a multiple of 3 */

int main(int argc, char **argv)
{
    double a[64] = {0}, b[64];
    int rank, size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < N1; i++) {
        MPI_Allreduce(a, b, 16, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); const int l1 = __LINE__;
        if (i == 0 && rank == 0)
            printf("site %d MPI_Allreduce %d %d\n", l1, N1 * size, N1 * size * 16 * 8);
    }
    for (int i = 0; i < N2; i++) {
        MPI_Allreduce(a, b, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); const int l2 = __LINE__;
        if (i == 0 && rank == 0)
            printf("site %d MPI_Allreduce %d %d\n", l2, N2 * size, N2 * size * 4 * 8);
    }
    /* one site whose count changes at every call: its memo, refilled now
     * and then, holds one of them at times, and each call is recorded */
    for (int i = 0; i < N3; i++) {
        MPI_Allreduce(a, b, 2 + (i % 3) * 5, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); const int l8 = __LINE__;
        if (i == 0 && rank == 0)
            printf("site %d MPI_Allreduce %d %d\n", l8, N3 * size, size * (N3 / 3) * (2 + 7 + 12) * 8);
    }
    if (rank == 0) /* the all-reduces per size, all ranks: what each size's record must hold */
        printf("size MPI_Allreduce 128 %d\nsize MPI_Allreduce 32 %d\nsize MPI_Allreduce 16 %d\n"
               "size MPI_Allreduce 56 %d\nsize MPI_Allreduce 96 %d\n",
               N1 * size, N2 * size, N3 / 3 * size, N3 / 3 * size, N3 / 3 * size);
    if (size >= 2 && rank < 2) {
        for (int i = 0; i < 5; i++) {
            if (rank == 0) {
                MPI_Send(a, 7, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD); const int l3 = __LINE__;
                if (i == 0)
                    printf("site %d MPI_Send 5 %d\n", l3, 5 * 7 * 8);
            } else {
                MPI_Recv(b, 64, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); const int l4 = __LINE__;
                if (i == 0)
                    printf("site %d MPI_Recv 5 %d\n", l4, 5 * 7 * 8);
            }
        }
    }
    if (size >= 2 && rank < 2) { /* a nonblocking send completed by MPI_Wait */
        MPI_Request rq;
        for (int i = 0; i < 2; i++) {
            if (rank == 0) {
                MPI_Isend(a, 9, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, &rq); const int l5 = __LINE__;
                MPI_Wait(&rq, MPI_STATUS_IGNORE); const int l6 = __LINE__;
                if (i == 0)
                    /* the Wait's bytes: what it completed, 0 when the send finished
                     * inside MPI_Isend (-1: as the profile's MPI_Wait record says) */
                    printf("site %d MPI_Isend 2 %d\nsite %d MPI_Wait 2 -1\n", l5, 2 * 9 * 8, l6);
            } else {
                MPI_Recv(b, 9, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); const int l7 = __LINE__;
                if (i == 0)
                    printf("site %d MPI_Recv 2 %d\n", l7, 2 * 9 * 8);
            }
        }
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
