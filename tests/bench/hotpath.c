/* Cost of interception: tight loops of the calls a communication-heavy
 * code makes most.  Run with and without the plugin; tests/bench.sh prints
 * the difference per intercepted call.  Prints one line per loop:
 *   name calls_per_iteration ns_per_iteration
 * and the resident memory at the end (VmHWM, kB).
 * Arguments: SCALE (iterations x SCALE, default 1), REPS (repetitions of which
 * the best counts, default 5), SPLIT (iterations / SPLIT, default 1: many short
 * repetitions give a busy machine more chances of an undisturbed one). */
#include "../mpi/status_kb.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double best_of(int reps, long iters, void (*body)(long), long arg_unused)
{
    (void)arg_unused;
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        body(iters);
        double t = (MPI_Wtime() - t0) / (double)iters;
        /* the slowest rank's time is the loop's time */
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (t < best)
            best = t;
    }
    return best * 1e9;
}

static int rank, size;
static char buf[64], buf2[64];

static void proc_null(long n)
{
    for (long i = 0; i < n; i++)
        MPI_Send(buf, 8, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
}

static void pingpong(long n)
{
    int peer = rank ^ 1;
    if (peer >= size)
        return;
    for (long i = 0; i < n; i++) {
        if (rank & 1) {
            MPI_Recv(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        } else {
            MPI_Send(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
}

static void allreduce(long n)
{
    for (long i = 0; i < n; i++)
        MPI_Allreduce(buf, buf2, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

static void nonblocking(long n)
{
    int peer = rank ^ 1;
    if (peer >= size)
        return;
    for (long i = 0; i < n; i++) {
        MPI_Request r[2];
        MPI_Irecv(buf2, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(buf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long scale = argc > 1 ? atol(argv[1]) : 1;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    long split = argc > 3 ? atol(argv[3]) : 1;
    if (scale < 1 || reps < 1 || split < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: hotpath [SCALE [REPS [SPLIT]]], each a whole number >= 1\n");
        MPI_Finalize();
        return 2;
    }
    struct {
        const char *name;
        void (*fn)(long);
        long iters;
        int calls; /* intercepted calls per iteration on the busiest rank */
    } loops[] = {
        {"send_proc_null", proc_null, 200000, 1},
        {"pingpong_8B", pingpong, 20000, 2},
        {"allreduce_8B", allreduce, 20000, 1},
        {"isend_irecv_waitall", nonblocking, 20000, 3},
    };
    for (size_t i = 0; i < sizeof(loops) / sizeof(loops[0]); i++) {
        double ns = best_of(reps, loops[i].iters * scale / split, loops[i].fn, 0);
        if (rank == 0)
            printf("%s %d %.1f\n", loops[i].name, loops[i].calls, ns);
    }
    long hwm = status_kb("VmHWM:"), max_hwm;
    MPI_Allreduce(&hwm, &max_hwm, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("vmhwm_kb 0 %ld\n", max_hwm);
    MPI_Finalize();
    return 0;
}
