/* Polled completions whose requests change between polls, on 2 ranks:
 * rank 1 posts receives and polls them with MPI_Testall, MPI_Testsome and
 * MPI_Testany while rank 0 holds its sends back until told ("go", 4 bytes
 * on tag 100), so every poll before a go finds its requests pending.
 *   A  8 receives of 1000 B, each post followed by a Testall over all so far
 *   B  2 receives of 2000 B polled; the first completed by MPI_Wait and its
 *      place taken by a receive of 3000 B (MPI may hand back the same
 *      handle), polled again
 *   C  a persistent receive of 500 B, started, polled, completed, started
 *      again a second later and polled to its completion: each start's
 *      time from its own start, under a second
 *   D  a receive of 700 B polled, cancelled, and polled to its completion
 *   E  4 receives of 1200 B, two sent first: MPI_Testsome until both are
 *      in, MPI_Testany over all four, then the other two
 * Rank 1's receives: MPI_Irecv 15 calls, 19800 B (the cancelled one is no
 * traffic); MPI_Recv_init 2 calls, 1000 B.  Rank 0's sends: 17 calls,
 * 20800 B, and rank 1's 7 go messages: MPI_Send 24 calls, 20828 B;
 * MPI_Recv 7 calls, 28 B. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char buf[16][4096], out[4096];

static void go(int rank)
{
    int x = 1;
    if (rank == 1)
        MPI_Send(&x, 1, MPI_INT, 0, 100, MPI_COMM_WORLD);
    else
        MPI_Recv(&x, 1, MPI_INT, 1, 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void pending(int flag, const char *what)
{
    if (flag) {
        fprintf(stderr, "poll_reuse: %s completed before its go\n", what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void poll_all(int n, MPI_Request *r)
{
    int flag = 0;
    while (!flag)
        MPI_Testall(n, r, &flag, MPI_STATUSES_IGNORE);
}

int main(int argc, char **argv)
{
    int rank, size, flag;
    MPI_Request r[8];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "poll_reuse: run on 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    /* A */
    if (rank == 1) {
        for (int i = 0; i < 8; i++) {
            MPI_Irecv(buf[i], 1000, MPI_BYTE, 0, 1 + i, MPI_COMM_WORLD, &r[i]);
            MPI_Testall(i + 1, r, &flag, MPI_STATUSES_IGNORE);
            pending(flag, "A");
        }
        go(rank);
        poll_all(8, r);
    } else {
        go(rank);
        for (int i = 0; i < 8; i++)
            MPI_Send(out, 1000, MPI_BYTE, 1, 1 + i, MPI_COMM_WORLD);
    }
    /* B */
    if (rank == 1) {
        MPI_Irecv(buf[0], 2000, MPI_BYTE, 0, 20, MPI_COMM_WORLD, &r[0]);
        MPI_Irecv(buf[1], 2000, MPI_BYTE, 0, 21, MPI_COMM_WORLD, &r[1]);
        MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE);
        pending(flag, "B");
        go(rank);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        MPI_Irecv(buf[2], 3000, MPI_BYTE, 0, 22, MPI_COMM_WORLD, &r[0]);
        MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE);
        pending(flag, "B, the second time");
        go(rank);
        poll_all(2, r);
    } else {
        go(rank);
        MPI_Send(out, 2000, MPI_BYTE, 1, 20, MPI_COMM_WORLD);
        go(rank);
        MPI_Send(out, 2000, MPI_BYTE, 1, 21, MPI_COMM_WORLD);
        MPI_Send(out, 3000, MPI_BYTE, 1, 22, MPI_COMM_WORLD);
    }
    /* C */
    if (rank == 1) {
        MPI_Request p;
        MPI_Recv_init(buf[3], 500, MPI_BYTE, 0, 30, MPI_COMM_WORLD, &p);
        for (int k = 0; k < 2; k++) {
            if (k == 1) /* the second start's time excludes this */
                usleep(1000000);
            MPI_Start(&p);
            MPI_Testall(1, &p, &flag, MPI_STATUSES_IGNORE);
            pending(flag, "C");
            go(rank);
            poll_all(1, &p);
        }
        MPI_Request_free(&p);
    } else {
        for (int k = 0; k < 2; k++) {
            go(rank);
            MPI_Send(out, 500, MPI_BYTE, 1, 30, MPI_COMM_WORLD);
        }
    }
    /* D: no partner */
    if (rank == 1) {
        MPI_Status st;
        int cancelled = 0;
        MPI_Irecv(buf[4], 700, MPI_BYTE, 0, 40, MPI_COMM_WORLD, &r[0]);
        MPI_Testall(1, r, &flag, MPI_STATUSES_IGNORE);
        pending(flag, "D");
        MPI_Cancel(&r[0]);
        flag = 0;
        while (!flag)
            MPI_Testall(1, r, &flag, &st);
        MPI_Test_cancelled(&st, &cancelled);
        if (!cancelled) {
            fprintf(stderr, "poll_reuse: the receive was not cancelled\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    /* E */
    if (rank == 1) {
        int outcount, idx[4], done = 0, index;
        for (int i = 0; i < 4; i++)
            MPI_Irecv(buf[5 + i], 1200, MPI_BYTE, 0, 50 + i, MPI_COMM_WORLD, &r[i]);
        MPI_Testsome(4, r, &outcount, idx, MPI_STATUSES_IGNORE);
        pending(outcount > 0, "E");
        go(rank);
        while (done < 2) {
            MPI_Testsome(4, r, &outcount, idx, MPI_STATUSES_IGNORE);
            done += outcount == MPI_UNDEFINED ? 0 : outcount;
        }
        MPI_Testany(4, r, &index, &flag, MPI_STATUS_IGNORE);
        pending(flag && index != MPI_UNDEFINED, "E, the last two");
        go(rank);
        MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
    } else {
        go(rank);
        MPI_Send(out, 1200, MPI_BYTE, 1, 50, MPI_COMM_WORLD);
        MPI_Send(out, 1200, MPI_BYTE, 1, 51, MPI_COMM_WORLD);
        go(rank);
        MPI_Send(out, 1200, MPI_BYTE, 1, 52, MPI_COMM_WORLD);
        MPI_Send(out, 1200, MPI_BYTE, 1, 53, MPI_COMM_WORLD);
    }
    if (rank == 1)
        printf("poll_reuse: done\n");
    MPI_Finalize();
    return 0;
}
