/* The UCP paths beneath less common MPI calls, for the UCX layer test:
 * synchronous and buffered sends, a send request freed while in flight, a
 * matched probe and receive, a cancelled receive, persistent requests,
 * one-sided puts and gets, and sends of a non-contiguous datatype.  Each
 * counted call moves SIZE bytes (the strided sends SIZE/2).
 * usage: ucx_corners SIZE   (2 ranks or more; ranks 0 and 1 talk) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define K 5 /* calls of each kind */

int main(int argc, char **argv)
{
    int rank, size, n = argc > 1 ? atoi(argv[1]) : 1024;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *buf = calloc(1, (size_t)n), *rbuf = calloc(1, (size_t)n);
    int bsize = K * (n + MPI_BSEND_OVERHEAD);
    char *bbuf = malloc((size_t)bsize);
    if (size < 2 || !buf || !rbuf || !bbuf) {
        fprintf(stderr, "ucx_corners: needs 2 ranks and memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int peer = rank == 0 ? 1 : 0, talk = rank < 2;
    MPI_Buffer_attach(bbuf, bsize);
    for (int i = 0; talk && i < K; i++) {
        MPI_Request r;
        MPI_Message m;
        MPI_Status st;
        if (rank == 0) {
            MPI_Ssend(buf, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            MPI_Bsend(buf, n, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
            MPI_Isend(buf, n, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &r);
            MPI_Request_free(&r); /* completes unseen; the barrier below orders the buffer's reuse */
            MPI_Send(buf, n, MPI_BYTE, peer, 4, MPI_COMM_WORLD);
        } else {
            MPI_Recv(rbuf, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(rbuf, n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(rbuf, n, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Mprobe(peer, 4, MPI_COMM_WORLD, &m, &st);
            MPI_Mrecv(rbuf, n, MPI_BYTE, &m, MPI_STATUS_IGNORE);
        }
    }
    /* a receive that never matches, cancelled */
    MPI_Request c;
    MPI_Irecv(rbuf, n, MPI_BYTE, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &c);
    MPI_Cancel(&c);
    MPI_Wait(&c, MPI_STATUS_IGNORE);
    /* persistent requests */
    MPI_Request pr;
    if (talk && rank == 0)
        MPI_Send_init(buf, n, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &pr);
    else if (talk)
        MPI_Recv_init(rbuf, n, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &pr);
    for (int i = 0; talk && i < K; i++) {
        MPI_Start(&pr);
        MPI_Wait(&pr, MPI_STATUS_IGNORE);
    }
    if (talk)
        MPI_Request_free(&pr);
    MPI_Barrier(MPI_COMM_WORLD);
    /* one-sided */
    MPI_Win win;
    char *wbuf;
    MPI_Win_allocate(n, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &wbuf, &win);
    MPI_Win_fence(0, win);
    for (int i = 0; talk && i < K; i++) {
        if (rank == 0)
            MPI_Put(buf, n, MPI_BYTE, peer, 0, n, MPI_BYTE, win);
        MPI_Win_fence(0, win);
        if (rank == 1)
            MPI_Get(rbuf, n, MPI_BYTE, peer, 0, n, MPI_BYTE, win);
        MPI_Win_fence(0, win);
    }
    for (int i = 0; !talk && i < 2 * K; i++)
        MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    /* a strided type: every other 4 bytes of buf, SIZE/2 bytes packed */
    MPI_Datatype vec;
    MPI_Type_vector(n / 8, 4, 8, MPI_BYTE, &vec);
    MPI_Type_commit(&vec);
    for (int i = 0; talk && i < K; i++) {
        if (rank == 0)
            MPI_Send(buf, 1, vec, peer, 6, MPI_COMM_WORLD);
        else
            MPI_Recv(rbuf, n / 8 * 4, MPI_BYTE, peer, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Type_free(&vec);
    void *b;
    MPI_Buffer_detach(&b, &bsize);
    if (rank == 0)
        printf("ucx_corners: %d calls of each kind, %d bytes\n", K, n);
    free(buf);
    free(rbuf);
    free(bbuf);
    MPI_Finalize();
    return 0;
}
