/* Point-to-point patterns whose communication matrix is known: each rank
 * prints what it sent, "sent SRC DST MESSAGES BYTES" per destination (world
 * ranks), for the test to hold the profile's matrix to.
 *   matrix ring   each rank sends 10 messages of (rank + 1) x 100 bytes to
 *                 its right neighbour (MPI_Sendrecv) and 5 of 64 bytes to
 *                 its left one (MPI_Isend)
 *   matrix halo   a 2-D grid (MPI_Cart_create, not periodic): 20 steps of
 *                 Isend/Irecv with the four neighbours, 800 bytes along
 *                 dimension 1, 1600 along dimension 2; MPI_PROC_NULL at the
 *                 edges sends nothing */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static long long sent_msgs[64], sent_bytes[64];

static void note(int dst_world, int bytes)
{
    sent_msgs[dst_world]++;
    sent_bytes[dst_world] += bytes;
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
    MPI_Group wg, cg;
    MPI_Dims_create(size, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(cart, &cg);
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
                if (nb[s] != MPI_PROC_NULL) {
                    int w;
                    MPI_Group_translate_ranks(cg, 1, &nb[s], wg, &w);
                    note(w, bytes[d]);
                }
            }
        }
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    }
    MPI_Group_free(&wg);
    MPI_Group_free(&cg);
    MPI_Comm_free(&cart);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || size > 64 || (strcmp(argv[1], "ring") != 0 && strcmp(argv[1], "halo") != 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: matrix ring|halo (at most 64 ranks)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (strcmp(argv[1], "ring") == 0)
        ring(rank, size);
    else
        halo(size);
    for (int d = 0; d < size; d++)
        if (sent_msgs[d])
            printf("sent %d %d %lld %lld\n", rank, d, sent_msgs[d], sent_bytes[d]);
    MPI_Finalize();
    return 0;
}
