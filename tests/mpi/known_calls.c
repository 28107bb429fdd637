/* A job with a known set of calls: the test checks the profile's calls and
 * bytes per operation and communicator against tests/mpi/check_profile.py. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    int right = (rank + 1) % p, left = (rank + p - 1) % p;
    static int ibuf[4096], ibuf2[4096];
    static double dbuf[4096], dbuf2[4096];
    static char cbuf[8192];
    MPI_Status st;

    /* 10 blocking sends of 250 ints (1000 bytes) from 0 to 1 */
    for (int i = 0; i < 10; i++) {
        if (rank == 0)
            MPI_Send(ibuf, 250, MPI_INT, 1, 7, MPI_COMM_WORLD);
        else if (rank == 1)
            MPI_Recv(ibuf, 250, MPI_INT, 0, 7, MPI_COMM_WORLD, &st);
    }
    /* 5 nonblocking exchanges of 4096 bytes between 0 and 1 */
    for (int i = 0; i < 5 && rank < 2; i++) {
        MPI_Request r[2];
        int peer = 1 - rank;
        MPI_Irecv(cbuf, 4096, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(cbuf + 4096, 4096, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    }
    /* persistent: 4 starts of 512 bytes from 0 to 1 */
    if (rank < 2) {
        MPI_Request r;
        if (rank == 0)
            MPI_Send_init(cbuf, 512, MPI_BYTE, 1, 9, MPI_COMM_WORLD, &r);
        else
            MPI_Recv_init(cbuf, 512, MPI_BYTE, 0, 9, MPI_COMM_WORLD, &r);
        for (int i = 0; i < 4; i++) {
            MPI_Start(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        MPI_Request_free(&r);
    }
    /* ring sendrecv of 256 bytes */
    MPI_Sendrecv(cbuf, 256, MPI_BYTE, right, 1, cbuf + 256, 256, MPI_BYTE, left, 1, MPI_COMM_WORLD, &st);
    /* probe then receive: 0 sends 64 ints to 1 */
    if (rank == 0)
        MPI_Send(ibuf, 64, MPI_INT, 1, 11, MPI_COMM_WORLD);
    else if (rank == 1) {
        MPI_Probe(0, 11, MPI_COMM_WORLD, &st);
        MPI_Recv(ibuf, 64, MPI_INT, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    /* collectives on world */
    for (int i = 0; i < 7; i++)
        MPI_Allreduce(dbuf, dbuf2, 1024, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < 3; i++)
        MPI_Allgather(ibuf, 100, MPI_INT, ibuf2, 100, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < 2; i++)
        MPI_Alltoall(dbuf, 16, MPI_DOUBLE, dbuf2, 16, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int i = 0; i < 5; i++)
        MPI_Bcast(cbuf, 3000, MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_Gather(ibuf, 10, MPI_INT, ibuf2, 10, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Reduce_scatter_block(dbuf, dbuf2, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < 3; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 3; i++) {
        MPI_Request r;
        MPI_Iallreduce(dbuf, dbuf2, 512, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    /* a split communicator: even and odd ranks, 4 allreduces of 64 bytes */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    for (int i = 0; i < 4; i++)
        MPI_Allreduce(dbuf, dbuf2, 8, MPI_DOUBLE, MPI_SUM, half);
    MPI_Comm_free(&half);
    /* a duplicate of world: the same group, a different communicator */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Allreduce(dbuf, dbuf2, 2, MPI_DOUBLE, MPI_SUM, dup);
    MPI_Comm_free(&dup);

    MPI_Finalize();
    return 0;
}
