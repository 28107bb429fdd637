/* Point-to-point patterns whose communication matrix is known: each rank
 * prints what it sent, "sent SRC DST MESSAGES BYTES COMM" per destination
 * (world ranks) and communicator (world, cart, dup, split), for the test to
 * hold the profile's matrix to.
 *   matrix ring   each rank sends 10 messages of (rank + 1) x 100 bytes to
 *                 its right neighbour (MPI_Sendrecv) and 5 of 64 bytes to
 *                 its left one (MPI_Isend)
 *   matrix halo   a 2-D grid (MPI_Cart_create, not periodic): 20 steps of
 *                 Isend/Irecv with the four neighbours, 800 bytes along
 *                 dimension 1, 1600 along dimension 2; MPI_PROC_NULL at the
 *                 edges sends nothing
 *   matrix comms  on world 3 messages of (rank + 1) x 100 bytes to the right
 *                 (MPI_Sendrecv); on a dup of world named "mydup" 7 of 256
 *                 bytes to the left (MPI_Isend); on a split of world by
 *                 rank % 2 (two ranks each with 4 ranks) 4 of 512 bytes to
 *                 the other member (MPI_Send); and an MPI_Allreduce of 1024
 *                 doubles and an MPI_Bcast of 1024 bytes on world, 5 each,
 *                 which are no point-to-point messages */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

enum { C_WORLD, C_CART, C_DUP, C_SPLIT, C_COUNT };
static const char *const comm_kind[C_COUNT] = {"world", "cart", "dup", "split"};
static long long sent_msgs[C_COUNT][64], sent_bytes[C_COUNT][64];

static void note_on(int comm, int dst_world, int bytes)
{
    sent_msgs[comm][dst_world]++;
    sent_bytes[comm][dst_world] += bytes;
}

static void note(int dst_world, int bytes)
{
    note_on(C_WORLD, dst_world, bytes);
}

/* The world rank of rank r of comm. */
static int world_of(MPI_Comm comm, int r)
{
    MPI_Group wg, cg;
    int w;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(comm, &cg);
    MPI_Group_translate_ranks(cg, 1, &r, wg, &w);
    MPI_Group_free(&wg);
    MPI_Group_free(&cg);
    return w;
}

static void comms(int rank, int size)
{
    char buf[1024], in[1024];
    double x[1024], y[1024];
    int right = (rank + 1) % size, left = (rank + size - 1) % size, srank;
    MPI_Comm dup, split;
    MPI_Request req[7];
    memset(buf, 3, sizeof(buf));
    for (int i = 0; i < 1024; i++)
        x[i] = rank + i;
    for (int i = 0; i < 3; i++) {
        MPI_Sendrecv(buf, (rank + 1) * 100, MPI_BYTE, right, 1, in, sizeof(in), MPI_BYTE, left, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        note_on(C_WORLD, right, (rank + 1) * 100);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_name(dup, "mydup");
    for (int i = 0; i < 7; i++) {
        MPI_Isend(buf, 256, MPI_BYTE, left, 2, dup, &req[i]);
        note_on(C_DUP, left, 256);
    }
    for (int i = 0; i < 7; i++)
        MPI_Recv(in, sizeof(in), MPI_BYTE, right, 2, dup, MPI_STATUS_IGNORE);
    MPI_Waitall(7, req, MPI_STATUSES_IGNORE);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &split);
    MPI_Comm_rank(split, &srank);
    for (int i = 0; i < 4; i++) {
        int other = 1 - srank;
        if (srank == 0) {
            MPI_Send(buf, 512, MPI_BYTE, other, 3, split);
            MPI_Recv(in, sizeof(in), MPI_BYTE, other, 3, split, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(in, sizeof(in), MPI_BYTE, other, 3, split, MPI_STATUS_IGNORE);
            MPI_Send(buf, 512, MPI_BYTE, other, 3, split);
        }
        note_on(C_SPLIT, world_of(split, other), 512);
    }
    for (int i = 0; i < 5; i++) {
        MPI_Allreduce(x, y, 1024, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Bcast(buf, sizeof(buf), MPI_BYTE, 0, MPI_COMM_WORLD);
    }
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
}

static void ring(int rank, int size)
{
    char buf[2000], in[2000];
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Request req[5];
    memset(buf, 1, sizeof(buf));
    for (int i = 0; i < 10; i++) {
        MPI_Sendrecv(buf, (rank + 1) * 100, MPI_BYTE, right, 1, in, sizeof(in), MPI_BYTE, left, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        note(right, (rank + 1) * 100);
    }
    for (int i = 0; i < 5; i++) {
        MPI_Isend(buf, 64, MPI_BYTE, left, 2, MPI_COMM_WORLD, &req[i]);
        note(left, 64);
    }
    for (int i = 0; i < 5; i++)
        MPI_Recv(in, sizeof(in), MPI_BYTE, right, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Waitall(5, req, MPI_STATUSES_IGNORE);
}

static void halo(int size)
{
    int dims[2] = {0, 0}, periods[2] = {0, 0}, bytes[2] = {800, 1600};
    char out[4][1600], in[4][1600];
    MPI_Comm cart;
    MPI_Dims_create(size, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart);
    memset(out, 2, sizeof(out));
    for (int step = 0; step < 20; step++) {
        MPI_Request req[8];
        int n = 0;
        for (int d = 0; d < 2; d++) {
            int lo, hi;
            MPI_Cart_shift(cart, d, 1, &lo, &hi);
            int nb[2] = {lo, hi};
            for (int s = 0; s < 2; s++) {
                MPI_Irecv(in[2 * d + s], bytes[d], MPI_BYTE, nb[s], d, cart, &req[n++]);
                MPI_Isend(out[2 * d + s], bytes[d], MPI_BYTE, nb[s], d, cart, &req[n++]);
                if (nb[s] != MPI_PROC_NULL)
                    note_on(C_CART, world_of(cart, nb[s]), bytes[d]);
            }
        }
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    }
    MPI_Comm_free(&cart);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || size > 64 || size % 2 ||
        (strcmp(argv[1], "ring") != 0 && strcmp(argv[1], "halo") != 0 && strcmp(argv[1], "comms") != 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: matrix ring|halo|comms (an even number of ranks, at most 64)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (strcmp(argv[1], "ring") == 0)
        ring(rank, size);
    else if (strcmp(argv[1], "halo") == 0)
        halo(size);
    else
        comms(rank, size);
    for (int c = 0; c < C_COUNT; c++)
        for (int d = 0; d < size; d++)
            if (sent_msgs[c][d])
                printf("sent %d %d %lld %lld %s\n", rank, d, sent_msgs[c][d], sent_bytes[c][d], comm_kind[c]);
    MPI_Finalize();
    return 0;
}
