/* Message matching for one-way times: several tags, wildcards, nonblocking
 * and persistent requests, receives posted out of order.  Every message is
 * within the first sampled ones, so every one must be matched. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    char buf[8][256];
    MPI_Status st;
    if (rank == 0) {
        /* tags 1, 2, 3 interleaved, received as ANY_TAG, ANY_SOURCE */
        for (int i = 0; i < 6; i++)
            MPI_Send(buf[0], 16 * (i + 1), MPI_BYTE, 1, 1 + i % 3, MPI_COMM_WORLD);
        /* nonblocking sends of tags 7 and 8, received in the opposite order */
        MPI_Request r[4];
        MPI_Isend(buf[1], 100, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(buf[2], 200, MPI_BYTE, 1, 8, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        /* persistent sends */
        MPI_Request ps;
        MPI_Send_init(buf[3], 64, MPI_BYTE, 1, 9, MPI_COMM_WORLD, &ps);
        for (int i = 0; i < 3; i++) {
            MPI_Start(&ps);
            MPI_Wait(&ps, MPI_STATUS_IGNORE);
        }
        MPI_Request_free(&ps);
    } else if (rank == 1) {
        for (int i = 0; i < 6; i++)
            MPI_Recv(buf[0], 256, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        MPI_Request r[2];
        MPI_Irecv(buf[2], 256, MPI_BYTE, 0, 8, MPI_COMM_WORLD, &r[1]);
        MPI_Irecv(buf[1], 256, MPI_BYTE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &r[0]);
        int idx;
        MPI_Waitany(2, r, &idx, &st);
        MPI_Waitany(2, r, &idx, &st);
        for (int i = 0; i < 3; i++)
            MPI_Recv(buf[3], 64, MPI_BYTE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    /* a ring of sendrecv on a duplicate communicator */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Sendrecv(buf[4], 32, MPI_BYTE, (rank + 1) % p, 5, buf[5], 32, MPI_BYTE, (rank + p - 1) % p, 5, dup, &st);
    MPI_Comm_free(&dup);
    MPI_Finalize();
    return 0;
}
