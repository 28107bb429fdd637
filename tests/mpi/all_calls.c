/* Every communication call commfit wraps beyond the basic ones: matched
 * probes, cancel, local reduction, neighbourhood collectives, MPI-IO in
 * all its forms, one-sided transfers and synchronisation, and, with an
 * MPI-4 library, the large-count, persistent collective, Isendrecv and
 * partitioned calls.  Each rank keeps its own tally of calls and payload
 * (the convention of docs/recording.md, "What is recorded") and prints it as
 *   TALLY rank op calls bytes
 * for tests/mpi/check_profile.py to hold against the profile.
 * usage: all_calls DIR   (DIR: where the files of the MPI-IO part go) */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OPS 256
static struct {
    const char *op;
    long calls;
    long long bytes;
} tally_tab[MAX_OPS];
static int ntally;
static int rank, p, failures;

static void tally(const char *op, long long bytes)
{
    int i;
    for (i = 0; i < ntally && strcmp(tally_tab[i].op, op) != 0; i++)
        ;
    if (i == ntally) {
        if (ntally == MAX_OPS)
            abort();
        tally_tab[ntally++].op = op;
    }
    tally_tab[i].calls++;
    tally_tab[i].bytes += bytes;
}

static void expect(const char *what, long long got, long long want)
{
    if (got != want) {
        fprintf(stderr, "rank %d: %s: got %lld, want %lld\n", rank, what, got, want);
        failures++;
    }
}

static long long got_bytes(const MPI_Status *st)
{
    int n;
    MPI_Get_count(st, MPI_BYTE, &n);
    return n;
}

static void point_to_point(void)
{
    int right = (rank + 1) % p, left = (rank + p - 1) % p;
    static int buf[1000];
    MPI_Status st;
    MPI_Message msg;
    MPI_Request r;

    MPI_Sendrecv_replace(buf, 100, MPI_INT, right, 5, left, 5, MPI_COMM_WORLD, &st);
    tally("MPI_Sendrecv_replace", 400);

    /* matched probe and receive: even ranks send 300 bytes to the next */
    if (rank % 2 == 0 && rank + 1 < p) {
        MPI_Send(buf, 75, MPI_INT, rank + 1, 6, MPI_COMM_WORLD);
        MPI_Send(buf, 50, MPI_INT, rank + 1, 7, MPI_COMM_WORLD);
        MPI_Send(buf, 16, MPI_INT, rank + 1, 8, MPI_COMM_WORLD);
    } else if (rank % 2 == 1) {
        MPI_Mprobe(rank - 1, 6, MPI_COMM_WORLD, &msg, &st);
        tally("MPI_Mprobe", 300);
        MPI_Mrecv(buf, 75, MPI_INT, &msg, MPI_STATUS_IGNORE);
        tally("MPI_Mrecv", 300);
        int flag = 0;
        while (!flag) {
            MPI_Improbe(rank - 1, 7, MPI_COMM_WORLD, &flag, &msg, &st);
            tally("MPI_Improbe", flag ? 200 : 0);
        }
        MPI_Imrecv(buf, 50, MPI_INT, &msg, &r);
        tally("MPI_Imrecv", 200);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        /* a receive of 64 bytes that completes */
        MPI_Irecv(buf, 16, MPI_INT, rank - 1, 8, MPI_COMM_WORLD, &r);
        tally("MPI_Irecv", 64);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    /* the message nobody sends: posted, cancelled, not a transfer */
    MPI_Irecv(buf, 1000, MPI_INT, rank, 99, MPI_COMM_WORLD, &r);
    MPI_Cancel(&r);
    tally("MPI_Cancel", 0);
    MPI_Wait(&r, &st);
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    expect("receive cancelled", cancelled, 1);
    /* probe of no process */
    MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st);
    tally("MPI_Mprobe", 0);
    MPI_Mrecv(buf, 10, MPI_INT, &msg, &st);
    tally("MPI_Mrecv", 0);

    double in[50] = {0}, inout[50] = {0};
    for (int i = 0; i < 3; i++) {
        MPI_Reduce_local(in, inout, 50, MPI_DOUBLE, MPI_SUM);
        tally("MPI_Reduce_local", 400);
    }
}

/* a periodic ring: 2 neighbours each (the same rank twice on 2 ranks) */
static void neighbours(void)
{
    MPI_Comm ring;
    int dims[1] = {p}, periods[1] = {1};
    static int ib[64], ob[64];
    static double db[64], dr[64];
    MPI_Request r;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);

    int rc2[2] = {10, 10}, d2[2] = {0, 10};
    int sc[2] = {3, 5}, sd[2] = {0, 3}, rcv[2] = {3, 5};
    int wc[2] = {2, 4};
    MPI_Aint wd[2] = {0, 64};
    MPI_Datatype wt[2] = {MPI_INT, MPI_DOUBLE}, wrt[2] = {MPI_DOUBLE, MPI_INT};
    int wrc[2] = {4, 2};
    for (int nb = 0; nb < 2; nb++) {
        if (nb)
            MPI_Ineighbor_allgather(ib, 10, MPI_INT, ob, 10, MPI_INT, ring, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
        else
            MPI_Neighbor_allgather(ib, 10, MPI_INT, ob, 10, MPI_INT, ring);
        tally(nb ? "MPI_Ineighbor_allgather" : "MPI_Neighbor_allgather", 2 * 40);
        /* allgatherv: 10 ints from each neighbour */
        if (nb)
            MPI_Ineighbor_allgatherv(ib, 10, MPI_INT, ob, rc2, d2, MPI_INT, ring, &r),
                MPI_Wait(&r, MPI_STATUS_IGNORE);
        else
            MPI_Neighbor_allgatherv(ib, 10, MPI_INT, ob, rc2, d2, MPI_INT, ring);
        tally(nb ? "MPI_Ineighbor_allgatherv" : "MPI_Neighbor_allgatherv", 20 * 4);
        if (nb)
            MPI_Ineighbor_alltoall(db, 8, MPI_DOUBLE, dr, 8, MPI_DOUBLE, ring, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
        else
            MPI_Neighbor_alltoall(db, 8, MPI_DOUBLE, dr, 8, MPI_DOUBLE, ring);
        tally(nb ? "MPI_Ineighbor_alltoall" : "MPI_Neighbor_alltoall", 2 * 64);
        /* alltoallv: 3 ints to the lower neighbour, 5 to the upper; receive 5 from the lower, 3 from
         * the upper (what they send this way) */
        rcv[0] = 5, rcv[1] = 3;
        int rd[2] = {0, 5};
        if (p == 2)
            sc[0] = sc[1] = rcv[0] = rcv[1] = 4, sd[1] = rd[1] = 4;
        if (nb)
            MPI_Ineighbor_alltoallv(ib, sc, sd, MPI_INT, ob, rcv, rd, MPI_INT, ring, &r),
                MPI_Wait(&r, MPI_STATUS_IGNORE);
        else
            MPI_Neighbor_alltoallv(ib, sc, sd, MPI_INT, ob, rcv, rd, MPI_INT, ring);
        tally(nb ? "MPI_Ineighbor_alltoallv" : "MPI_Neighbor_alltoallv", 4LL * (sc[0] + sc[1]));
        /* alltoallw: 2 ints to the lower neighbour, 4 doubles to the upper (on 2 ranks, where
         * both are one rank, 2 ints each way) */
        if (p == 2)
            wt[1] = wrt[0] = MPI_INT, wc[1] = wrc[0] = 2;
        if (nb)
            MPI_Ineighbor_alltoallw(ib, wc, wd, wt, ob, wrc, wd, wrt, ring, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
        else
            MPI_Neighbor_alltoallw(ib, wc, wd, wt, ob, wrc, wd, wrt, ring);
        tally(nb ? "MPI_Ineighbor_alltoallw" : "MPI_Neighbor_alltoallw", p == 2 ? 16 : 8 + 32);
    }
#if MPI_VERSION >= 4
    MPI_Neighbor_allgather_init(ib, 10, MPI_INT, ob, 10, MPI_INT, ring, MPI_INFO_NULL, &r);
    for (int i = 0; i < 2; i++) {
        MPI_Start(&r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        tally("MPI_Neighbor_allgather_init", 2 * 40);
    }
    MPI_Request_free(&r);
    MPI_Neighbor_alltoall_c(db, 8, MPI_DOUBLE, dr, 8, MPI_DOUBLE, ring);
    tally("MPI_Neighbor_alltoall_c", 2 * 64);
#endif
    MPI_Comm_free(&ring);
}

#define BLOCK 4096
static void file_io(const char *dir)
{
    char path[4096];
    MPI_File fh;
    MPI_Status st;
    MPI_Request r;
    static char buf[4 * BLOCK];
    MPI_Offset mine = (MPI_Offset)rank * 8 * BLOCK; /* this rank's region of the first file */

    /* fresh files: Open MPI's shared file pointer can hang on ones left by a run of another size */
    const char *names[2] = {"all_calls.dat", "all_calls_shared.dat"};
    for (int i = 0; i < 2 && rank == 0; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        MPI_File_delete(path, MPI_INFO_NULL);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    snprintf(path, sizeof(path), "%s/all_calls.dat", dir);
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    tally("MPI_File_open", 0);
    MPI_File_preallocate(fh, (MPI_Offset)p * 8 * BLOCK);
    tally("MPI_File_preallocate", 0);
    MPI_File_set_size(fh, (MPI_Offset)p * 8 * BLOCK);
    tally("MPI_File_set_size", 0);
    MPI_File_set_view(fh, mine, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    tally("MPI_File_set_view", 0);

    /* individual file pointer, from the start of this rank's view */
    MPI_File_write(fh, buf, 100, MPI_BYTE, &st), tally("MPI_File_write", 100);
    MPI_File_write_all(fh, buf, 200, MPI_BYTE, &st), tally("MPI_File_write_all", 200);
    MPI_File_iwrite(fh, buf, 300, MPI_BYTE, &r), MPI_Wait(&r, &st), tally("MPI_File_iwrite", 300);
    MPI_File_iwrite_all(fh, buf, 400, MPI_BYTE, &r), MPI_Wait(&r, &st), tally("MPI_File_iwrite_all", 400);
    MPI_File_write_all_begin(fh, buf, 500, MPI_BYTE), tally("MPI_File_write_all_begin", 500);
    MPI_File_write_all_end(fh, buf, &st), tally("MPI_File_write_all_end", 0);
    /* explicit offsets, in the view */
    MPI_File_write_at(fh, 2000, buf, 10, MPI_INT, &st), tally("MPI_File_write_at", 40);
    MPI_File_write_at_all(fh, 2100, buf, 20, MPI_INT, &st), tally("MPI_File_write_at_all", 80);
    MPI_File_iwrite_at(fh, 2200, buf, 30, MPI_INT, &r), MPI_Wait(&r, &st), tally("MPI_File_iwrite_at", 120);
    MPI_File_iwrite_at_all(fh, 2400, buf, 40, MPI_INT, &r), MPI_Wait(&r, &st),
        tally("MPI_File_iwrite_at_all", 160);
    MPI_File_write_at_all_begin(fh, 3000, buf, 1024, MPI_BYTE), tally("MPI_File_write_at_all_begin", 1024);
    MPI_File_write_at_all_end(fh, buf, &st), tally("MPI_File_write_at_all_end", 0);
    MPI_File_sync(fh), tally("MPI_File_sync", 0);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh), tally("MPI_File_sync", 0);

    MPI_File_seek(fh, 0, MPI_SEEK_SET);
    MPI_File_read(fh, buf, 100, MPI_BYTE, &st), tally("MPI_File_read", 100);
    MPI_File_read_all(fh, buf, 200, MPI_BYTE, &st), tally("MPI_File_read_all", 200);
    MPI_File_iread(fh, buf, 300, MPI_BYTE, &r), MPI_Wait(&r, &st), tally("MPI_File_iread", 300);
    MPI_File_iread_all(fh, buf, 400, MPI_BYTE, &r), MPI_Wait(&r, &st), tally("MPI_File_iread_all", 400);
    MPI_File_read_all_begin(fh, buf, 500, MPI_BYTE), tally("MPI_File_read_all_begin", 500);
    MPI_File_read_all_end(fh, buf, &st), tally("MPI_File_read_all_end", 0);
    MPI_File_read_at(fh, 2000, buf, 10, MPI_INT, &st), tally("MPI_File_read_at", 40);
    MPI_File_read_at_all(fh, 2100, buf, 20, MPI_INT, &st), tally("MPI_File_read_at_all", 80);
    MPI_File_iread_at(fh, 2200, buf, 30, MPI_INT, &r), MPI_Wait(&r, &st), tally("MPI_File_iread_at", 120);
    MPI_File_iread_at_all(fh, 2400, buf, 40, MPI_INT, &r), MPI_Wait(&r, &st), tally("MPI_File_iread_at_all", 160);
    MPI_File_read_at_all_begin(fh, 3000, buf, 1024, MPI_BYTE), tally("MPI_File_read_at_all_begin", 1024);
    MPI_File_read_at_all_end(fh, buf, &st), tally("MPI_File_read_at_all_end", 0);
    MPI_File_close(&fh), tally("MPI_File_close", 0);

    /* shared file pointer and ordered accesses, in a file of their own; a
     * read past the end gets what is there: the status says how much */
    snprintf(path, sizeof(path), "%s/all_calls_shared.dat", dir);
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    tally("MPI_File_open", 0);
    MPI_File_write_shared(fh, buf, 64, MPI_BYTE, &st), tally("MPI_File_write_shared", 64);
    MPI_File_iwrite_shared(fh, buf, 32, MPI_BYTE, &r), MPI_Wait(&r, &st), tally("MPI_File_iwrite_shared", 32);
    MPI_File_write_ordered(fh, buf, 128, MPI_BYTE, &st), tally("MPI_File_write_ordered", 128);
    MPI_File_write_ordered_begin(fh, buf, 256, MPI_BYTE), tally("MPI_File_write_ordered_begin", 256);
    MPI_File_write_ordered_end(fh, buf, &st), tally("MPI_File_write_ordered_end", 0);
    MPI_File_sync(fh), tally("MPI_File_sync", 0);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh), tally("MPI_File_sync", 0);
    MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
    MPI_File_read_ordered(fh, buf, 128, MPI_BYTE, &st), tally("MPI_File_read_ordered", 128);
    MPI_File_read_ordered_begin(fh, buf, 256, MPI_BYTE), tally("MPI_File_read_ordered_begin", 256);
    MPI_File_read_ordered_end(fh, buf, &st), tally("MPI_File_read_ordered_end", 0);
    MPI_File_read_shared(fh, buf, 64, MPI_BYTE, &st), tally("MPI_File_read_shared", got_bytes(&st));
    MPI_File_iread_shared(fh, buf, 32, MPI_BYTE, &r), MPI_Wait(&r, &st),
        tally("MPI_File_iread_shared", got_bytes(&st));
    MPI_Offset size;
    MPI_File_get_size(fh, &size);
    expect("shared file size", (long long)size, (long long)p * (64 + 32 + 128 + 256));
    MPI_File_read_at(fh, size - 100, buf, 1000, MPI_BYTE, &st);
    expect("short read", got_bytes(&st), 100);
    tally("MPI_File_read_at", 100);
#if MPI_VERSION >= 4
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has the size before the file grows */
    MPI_File_write_at_c(fh, size, buf, 50, MPI_BYTE, &st), tally("MPI_File_write_at_c", 50);
    MPI_File_iread_at_c(fh, 0, buf, 60, MPI_BYTE, &r), MPI_Wait(&r, &st), tally("MPI_File_iread_at_c", 60);
#endif
    MPI_File_close(&fh), tally("MPI_File_close", 0);
}

static void one_sided(void)
{
    int right = (rank + 1) % p, left = (rank + p - 1) % p;
    static double base[1024], ob[64], rb[64];
    long lo = 1, lc = 0, lr;
    MPI_Win win;
    MPI_Request r;

    MPI_Win_create(base, sizeof(base), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    tally("MPI_Win_create", 0);
    /* active target, fence */
    MPI_Win_fence(0, win), tally("MPI_Win_fence", 0);
    MPI_Put(ob, 10, MPI_DOUBLE, right, 0, 10, MPI_DOUBLE, win), tally("MPI_Put", 80);
    MPI_Get(rb, 20, MPI_DOUBLE, left, 100, 20, MPI_DOUBLE, win), tally("MPI_Get", 160);
    MPI_Put(ob, 10, MPI_DOUBLE, MPI_PROC_NULL, 0, 10, MPI_DOUBLE, win), tally("MPI_Put", 0);
    MPI_Win_fence(0, win), tally("MPI_Win_fence", 0);
    MPI_Accumulate(ob, 5, MPI_DOUBLE, right, 200, 5, MPI_DOUBLE, MPI_SUM, win), tally("MPI_Accumulate", 40);
    MPI_Win_fence(0, win), tally("MPI_Win_fence", 0);
    MPI_Get_accumulate(ob, 4, MPI_DOUBLE, rb, 4, MPI_DOUBLE, right, 300, 4, MPI_DOUBLE, MPI_SUM, win);
    tally("MPI_Get_accumulate", 32);
    MPI_Win_fence(0, win), tally("MPI_Win_fence", 0);
    MPI_Win_free(&win), tally("MPI_Win_free", 0);

    /* passive target on a window of longs */
    static long lbase[256];
    MPI_Win_create(lbase, sizeof(lbase), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    tally("MPI_Win_create", 0);
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), tally("MPI_Win_lock", 0);
    MPI_Fetch_and_op(&lo, &lr, MPI_LONG, right, 0, MPI_SUM, win), tally("MPI_Fetch_and_op", 8);
    MPI_Win_flush(right, win), tally("MPI_Win_flush", 0);
    MPI_Compare_and_swap(&lo, &lc, &lr, MPI_LONG, right, 1, win), tally("MPI_Compare_and_swap", 8);
    MPI_Win_flush_local(right, win), tally("MPI_Win_flush_local", 0);
    static long lob[64], lrb[64];
    MPI_Rput(lob, 16, MPI_LONG, right, 10, 16, MPI_LONG, win, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    tally("MPI_Rput", 128);
    MPI_Rget(lrb, 8, MPI_LONG, right, 40, 8, MPI_LONG, win, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    tally("MPI_Rget", 64);
    MPI_Raccumulate(lob, 3, MPI_LONG, right, 60, 3, MPI_LONG, MPI_SUM, win, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    tally("MPI_Raccumulate", 24);
    MPI_Rget_accumulate(lob, 2, MPI_LONG, lrb, 2, MPI_LONG, right, 70, 2, MPI_LONG, MPI_SUM, win, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    tally("MPI_Rget_accumulate", 16);
    MPI_Win_unlock(right, win), tally("MPI_Win_unlock", 0);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win), tally("MPI_Win_lock_all", 0);
    MPI_Put(lob, 6, MPI_LONG, left, 100, 6, MPI_LONG, win), tally("MPI_Put", 48);
    MPI_Win_flush_all(win), tally("MPI_Win_flush_all", 0);
    MPI_Win_flush_local_all(win), tally("MPI_Win_flush_local_all", 0);
    MPI_Win_sync(win), tally("MPI_Win_sync", 0);
    MPI_Win_unlock_all(win), tally("MPI_Win_unlock_all", 0);
    MPI_Barrier(MPI_COMM_WORLD);

    /* general active target: expose to the left neighbour, access the right one */
    MPI_Group world, from, to;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &left, &from);
    MPI_Group_incl(world, 1, &right, &to);
    MPI_Win_post(from, 0, win), tally("MPI_Win_post", 0);
    MPI_Win_start(to, 0, win), tally("MPI_Win_start", 0);
    MPI_Put(lob, 12, MPI_LONG, right, 120, 12, MPI_LONG, win), tally("MPI_Put", 96);
    MPI_Win_complete(win), tally("MPI_Win_complete", 0);
    int flag = 0;
    while (!flag)
        MPI_Win_test(win, &flag), tally("MPI_Win_test", 0);
    MPI_Win_post(from, 0, win), tally("MPI_Win_post", 0);
    MPI_Win_start(to, 0, win), tally("MPI_Win_start", 0);
    MPI_Win_complete(win), tally("MPI_Win_complete", 0);
    MPI_Win_wait(win), tally("MPI_Win_wait", 0);
    MPI_Group_free(&from);
    MPI_Group_free(&to);
    MPI_Group_free(&world);
    MPI_Win_free(&win), tally("MPI_Win_free", 0);

    /* the other constructors */
    double *mem;
    MPI_Win_allocate(512, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win), tally("MPI_Win_allocate", 0);
    MPI_Win_fence(0, win), tally("MPI_Win_fence", 0);
    MPI_Put(ob, 2, MPI_DOUBLE, right, 0, 2, MPI_DOUBLE, win), tally("MPI_Put", 16);
#if MPI_VERSION >= 4
    MPI_Put_c(ob, 3, MPI_DOUBLE, right, 10, 3, MPI_DOUBLE, win), tally("MPI_Put_c", 24);
#endif
    MPI_Win_fence(0, win), tally("MPI_Win_fence", 0);
    MPI_Win_free(&win), tally("MPI_Win_free", 0);
    MPI_Win_allocate_shared(256, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    tally("MPI_Win_allocate_shared", 0);
    MPI_Win_free(&win), tally("MPI_Win_free", 0);
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win), tally("MPI_Win_create_dynamic", 0);
    MPI_Win_free(&win), tally("MPI_Win_free", 0);
}

#if MPI_VERSION >= 4
static void mpi4(void)
{
    int right = (rank + 1) % p, left = (rank + p - 1) % p;
    static double a[1000], b[1000];
    MPI_Request r;
    MPI_Status st;

    MPI_Isendrecv(a, 100, MPI_DOUBLE, right, 1, b, 50, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    tally("MPI_Isendrecv", 800);
    MPI_Isendrecv_replace(a, 30, MPI_DOUBLE, right, 2, left, 2, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    tally("MPI_Isendrecv_replace", 240);
    if (rank == 0) {
        MPI_Send_c(a, 70, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD), tally("MPI_Send_c", 560);
    } else if (rank == 1) {
        MPI_Recv_c(a, 100, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD, &st), tally("MPI_Recv_c", 560);
    }
    MPI_Bcast_c(a, 25, MPI_DOUBLE, 0, MPI_COMM_WORLD), tally("MPI_Bcast_c", 200);
    MPI_Allreduce_init(a, b, 16, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    for (int i = 0; i < 3; i++) {
        MPI_Start(&r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        tally("MPI_Allreduce_init", 128);
    }
    MPI_Request_free(&r);
    MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MPI_Start(&r), MPI_Wait(&r, MPI_STATUS_IGNORE), tally("MPI_Barrier_init", 0);
    MPI_Request_free(&r);
    double in[8] = {0}, io[8] = {0};
    MPI_Reduce_local_c(in, io, 8, MPI_DOUBLE, MPI_SUM), tally("MPI_Reduce_local_c", 64);
    /* partitioned: 4 partitions of 10 doubles from 0 to 1, twice */
    if (rank < 2) {
        if (rank == 0)
            MPI_Psend_init(a, 4, 10, MPI_DOUBLE, 1, 4, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
        else
            MPI_Precv_init(b, 4, 10, MPI_DOUBLE, 0, 4, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
        for (int i = 0; i < 2; i++) {
            MPI_Start(&r);
            if (rank == 0)
                for (int k = 0; k < 4; k++)
                    MPI_Pready(k, r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            tally(rank == 0 ? "MPI_Psend_init" : "MPI_Precv_init", 320);
        }
        MPI_Request_free(&r);
    }
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: all_calls DIR\n");
        MPI_Finalize();
        return 2;
    }
    point_to_point();
    neighbours();
    file_io(argv[1]);
    one_sided();
#if MPI_VERSION >= 4
    mpi4();
#endif
    for (int i = 0; i < ntally; i++)
        printf("TALLY %d %s %ld %lld\n", rank, tally_tab[i].op, tally_tab[i].calls, tally_tab[i].bytes);
    fflush(stdout);
    MPI_Finalize();
    return failures ? 1 : 0;
}
