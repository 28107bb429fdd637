/* MPI corner cases the plugin must count right and never disturb:
 * MPI_PROC_NULL, count 0, derived datatypes, MPI_ANY_SOURCE with a short
 * message, MPI_STATUS(ES)_IGNORE, MPI_IN_PLACE, MPI_DATATYPE_NULL where the
 * standard says the argument is ignored.  Prints a checksum of every result
 * so a run with the plugin can be compared with one without. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint64_t sum_bytes(const void *buf, size_t n, uint64_t h)
{
    const unsigned char *b = buf;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    uint64_t h = 14695981039346656037ull;
    int ibuf[1024], ibuf2[1024];
    double d[10], d2[10];
    MPI_Status st;
    for (int i = 0; i < 1024; i++)
        ibuf[i] = rank * 1000 + i, ibuf2[i] = -1;
    for (int i = 0; i < 10; i++)
        d[i] = rank + i * 0.25, d2[i] = 0;

    /* MPI_PROC_NULL: completes at once, no data */
    MPI_Send(ibuf, 100, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    MPI_Recv(ibuf2, 100, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    h = sum_bytes(&st.MPI_SOURCE, sizeof(int), h);
    h = sum_bytes(&st.MPI_TAG, sizeof(int), h);
    /* a domain boundary: sendrecv and a nonblocking receive with MPI_PROC_NULL */
    MPI_Sendrecv(ibuf, 100, MPI_INT, MPI_PROC_NULL, 0, ibuf2, 100, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    MPI_Request rn;
    MPI_Irecv(ibuf2, 100, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rn);
    MPI_Wait(&rn, &st);
    h = sum_bytes(&st.MPI_SOURCE, sizeof(int), h);

    if (rank == 0) {
        /* count 0, twice */
        MPI_Send(ibuf, 0, MPI_INT, 1, 1, MPI_COMM_WORLD);
        MPI_Send(NULL, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        /* a derived type: 4 blocks of 2 ints, stride 3 -> 32 bytes */
        MPI_Datatype vec;
        MPI_Type_vector(4, 2, 3, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        MPI_Send(ibuf, 1, vec, 1, 2, MPI_COMM_WORLD);
        MPI_Type_free(&vec);
        /* 10 ints to a receive posted for 1000 from MPI_ANY_SOURCE */
        MPI_Send(ibuf, 10, MPI_INT, 1, 3, MPI_COMM_WORLD);
        /* 7 doubles to an Irecv posted for 1000 doubles */
        MPI_Send(d, 7, MPI_DOUBLE, 1, 4, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Recv(ibuf2, 0, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &st);
        int count = -1;
        MPI_Get_count(&st, MPI_BYTE, &count);
        h = sum_bytes(&count, sizeof(count), h);
        MPI_Recv(ibuf2, 8, MPI_INT, 0, 2, MPI_COMM_WORLD, &st);
        MPI_Recv(ibuf2 + 8, 1000, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &count);
        h = sum_bytes(&count, sizeof(count), h);
        h = sum_bytes(&st.MPI_SOURCE, sizeof(int), h);
        h = sum_bytes(&st.MPI_TAG, sizeof(int), h);
        static double big[1000];
        MPI_Request r;
        MPI_Irecv(big, 1000, MPI_DOUBLE, 0, 4, MPI_COMM_WORLD, &r);
        int flag = 0;
        while (!flag)
            MPI_Testall(1, &r, &flag, MPI_STATUSES_IGNORE);
        h = sum_bytes(big, 7 * sizeof(double), h);
    }
    h = sum_bytes(ibuf2, sizeof(ibuf2), h);

    /* MPI_IN_PLACE and a regular allreduce of 10 doubles */
    MPI_Allreduce(MPI_IN_PLACE, d, 10, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(d, d2, 10, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    h = sum_bytes(d, sizeof(d), h);
    h = sum_bytes(d2, sizeof(d2), h);

    /* gather with MPI_IN_PLACE at the root and MPI_DATATYPE_NULL where ignored */
    int g[64] = {0};
    g[rank * 2] = rank, g[rank * 2 + 1] = -rank;
    if (rank == 0)
        MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g, 2, MPI_INT, 0, MPI_COMM_WORLD);
    else
        MPI_Gather(&g[rank * 2], 2, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD);
    int s2[2];
    if (rank == 0)
        MPI_Scatter(g, 2, MPI_INT, s2, 2, MPI_INT, 0, MPI_COMM_WORLD);
    else
        MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, s2, 2, MPI_INT, 0, MPI_COMM_WORLD);
    h = sum_bytes(g, sizeof(g), h);
    h = sum_bytes(s2, sizeof(s2), h);
    /* arguments MPI says are ignored may hold anything, even an invalid
     * datatype: the receive side off the root of a gather, the send side
     * off the root of a scatter */
    MPI_Datatype junk = (MPI_Datatype)(uintptr_t)0x5a5a5a5a5a5aULL;
    int mine[2] = {g[0], g[1]}; /* MPI forbids the root's send buffer to alias its receive buffer */
    if (rank == 0)
        MPI_Gather(mine, 2, MPI_INT, g, 2, MPI_INT, 0, MPI_COMM_WORLD);
    else
        MPI_Gather(&g[rank * 2], 2, MPI_INT, NULL, 7, junk, 0, MPI_COMM_WORLD);
    if (rank == 0)
        MPI_Scatter(g, 2, MPI_INT, s2, 2, MPI_INT, 0, MPI_COMM_WORLD);
    else
        MPI_Scatter(NULL, 9, junk, s2, 2, MPI_INT, 0, MPI_COMM_WORLD);
    h = sum_bytes(g, sizeof(g), h);
    h = sum_bytes(s2, sizeof(s2), h);

    /* alltoall in place: one int per rank */
    int a[64];
    for (int i = 0; i < p; i++)
        a[i] = rank * 100 + i;
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, 1, MPI_INT, MPI_COMM_WORLD);
    h = sum_bytes(a, (size_t)p * sizeof(int), h);

    /* allgatherv with rank r contributing r+1 ints, in place */
    int counts[64], displs[64], v[64 * 65 / 2] = {0}, off = 0;
    for (int i = 0; i < p; i++)
        counts[i] = i + 1, displs[i] = off, off += i + 1;
    for (int i = 0; i <= rank; i++)
        v[displs[rank] + i] = rank * 10 + i;
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, v, counts, displs, MPI_INT, MPI_COMM_WORLD);
    h = sum_bytes(v, (size_t)off * sizeof(int), h);

    /* a broadcast of nothing */
    MPI_Bcast(NULL, 0, MPI_INT, 0, MPI_COMM_WORLD);

    /* completion calls on null requests */
    MPI_Request nul = MPI_REQUEST_NULL;
    MPI_Wait(&nul, MPI_STATUS_IGNORE);

    static char big_out[2][65536], big_in[65536], small_in[32];
    /* an exchange of 64 KiB (past the eager limits: no send completes
     * inside its post) completed while recording is paused
     * (MPI_Pcontrol(0)): its requests stay in the profiler's table, their
     * completion unseen, which is not the program leaving them */
    /* then one posted before a pause and completed after it, recorded as
     * any other; and a persistent send made before the pause, started after
     * it and left pending to MPI_Finalize (rank 1 receives it) */
    MPI_Request ps = MPI_REQUEST_NULL;
    if (rank < 2) {
        MPI_Request r[2];
        MPI_Irecv(big_in, 65536, MPI_BYTE, 1 - rank, 95, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(big_out[0], 65536, MPI_BYTE, 1 - rank, 95, MPI_COMM_WORLD, &r[1]);
        MPI_Pcontrol(0);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        MPI_Pcontrol(1);
        MPI_Irecv(big_in, 65536, MPI_BYTE, 1 - rank, 93, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(big_out[0], 65536, MPI_BYTE, 1 - rank, 93, MPI_COMM_WORLD, &r[1]);
        if (rank == 0)
            MPI_Send_init(big_out[1], 65536, MPI_BYTE, 1, 92, MPI_COMM_WORLD, &ps);
        MPI_Pcontrol(0);
        MPI_Pcontrol(1);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        if (rank == 0)
            MPI_Start(&ps);
        else
            MPI_Recv(big_in, 65536, MPI_BYTE, 0, 92, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    /* requests the program never completes, each still a call MPI made: a
     * send of 64 KiB (past the eager limits, so it cannot complete inside
     * its post) freed while active, another left pending to MPI_Finalize,
     * and a receive freed before its message comes */
    if (rank == 0) {
        MPI_Request r[2];
        MPI_Isend(big_out[0], 65536, MPI_BYTE, 1, 97, MPI_COMM_WORLD, &r[0]);
        MPI_Request_free(&r[0]);
        MPI_Isend(big_out[1], 65536, MPI_BYTE, 1, 96, MPI_COMM_WORLD, &r[1]);
    } else if (rank == 1) {
        MPI_Request r;
        MPI_Irecv(small_in, 8, MPI_INT, 0, 98, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
        /* and one cancelled, then freed: whether the cancel took is not known */
        MPI_Irecv(small_in + 16, 4, MPI_INT, MPI_ANY_SOURCE, 94, MPI_COMM_WORLD, &r);
        MPI_Cancel(&r);
        MPI_Request_free(&r);
        MPI_Recv(big_in, 65536, MPI_BYTE, 0, 97, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(big_in, 65536, MPI_BYTE, 0, 96, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* the receive freed before its message was sent */
    if (rank == 0)
        MPI_Send(ibuf, 8, MPI_INT, 1, 98, MPI_COMM_WORLD);

    uint64_t all[64];
    MPI_Gather(&h, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int i = 0; i < p; i++)
            printf("rank %d checksum %016llx\n", i, (unsigned long long)all[i]);
    MPI_Finalize();
    return 0;
}
