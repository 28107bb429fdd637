/* Instructions per intercepted call: one loop of MPI calls, chosen by
 * name, run twice (N1 then N2 iterations) between callgrind's counter
 * dumps, so that MPI_Init, MPI_Finalize and the first calls (tables
 * filling, caches warming) stay out of the difference.  One rank; run as
 *   valgrind --tool=callgrind --instr-atstart=no ./ir_loops LOOP[,LOOP...] [N1 N2]
 * (tests/bench_ir.sh): the loops one after the other, two dumps each.
 * Prints per loop "LOOP CALLS1 CALLS2": the intercepted calls each of its
 * two runs made. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_DUMP_STATS_AT
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(s) ((void)(s))
#endif

#define MANY 64 /* requests of the waitall and testall loops */

static double dbuf[MANY], dres[MANY];

/* Each loop runs n iterations and returns the intercepted calls it made. */
static long send_null(long n)
{
    for (long i = 0; i < n; i++)
        MPI_Send(dbuf, 8, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    return n;
}

/* the same call with a count that alternates: its site's memo (the
 * count of its last call) never holds, the full path every time */
static long send_vary(long n)
{
    for (long i = 0; i < n; i++)
        MPI_Send(dbuf, 8 + (int)(i & 1), MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    return n;
}

/* a message to self: Irecv, Isend, and a Wait for each */
static long self_p2p(long n)
{
    MPI_Request r[2];
    for (long i = 0; i < n; i++) {
        MPI_Irecv(dres, 1, MPI_DOUBLE, 0, 1, MPI_COMM_SELF, &r[0]);
        MPI_Isend(dbuf, 1, MPI_DOUBLE, 0, 1, MPI_COMM_SELF, &r[1]);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    }
    return 4 * n;
}

static long allreduce(long n)
{
    for (long i = 0; i < n; i++)
        MPI_Allreduce(dbuf, dres, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
    return n;
}

static long iallreduce(long n)
{
    MPI_Request r;
    for (long i = 0; i < n; i++) {
        MPI_Iallreduce(dbuf, dres, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    return 2 * n;
}

static long waitall3(long n)
{
    MPI_Request r[2];
    for (long i = 0; i < n; i++) {
        MPI_Irecv(dres, 1, MPI_DOUBLE, 0, 2, MPI_COMM_SELF, &r[0]);
        MPI_Isend(dbuf, 1, MPI_DOUBLE, 0, 2, MPI_COMM_SELF, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    }
    return 3 * n;
}

/* MANY / 2 receives and as many sends, completed by one call; an
 * iteration makes MANY + 1 calls, so these run n / 8 iterations */
static long many(long n, int test)
{
    MPI_Request r[MANY];
    long calls = 0;
    for (long i = 0; i < n / 8; i++) {
        for (int j = 0; j < MANY / 2; j++) {
            MPI_Irecv(&dres[j], 1, MPI_DOUBLE, 0, j, MPI_COMM_SELF, &r[j]);
            MPI_Isend(&dbuf[j], 1, MPI_DOUBLE, 0, j, MPI_COMM_SELF, &r[MANY / 2 + j]);
        }
        calls += MANY;
        if (test) {
            int flag = 0;
            while (!flag) {
                MPI_Testall(MANY, r, &flag, MPI_STATUSES_IGNORE);
                calls++;
            }
        } else {
            MPI_Waitall(MANY, r, MPI_STATUSES_IGNORE);
            calls++;
        }
    }
    return calls;
}
/* The hooks of an overlapped trainer: a receive posted at a time (a
 * gradient), each followed by a Testall over all posted so far that does
 * not complete them (the partner's sends come after), then the sends and
 * the two Waitalls; GROW receives: 3 GROW + 2 calls an iteration */
#define GROW 32
static long testall_grow(long n)
{
    MPI_Request r[GROW], s[GROW];
    long calls = 0;
    for (long i = 0; i < n / (3 * GROW + 2); i++) {
        for (int j = 0; j < GROW; j++) {
            int flag = 0;
            MPI_Irecv(&dres[j], 1, MPI_DOUBLE, 0, j, MPI_COMM_SELF, &r[j]);
            MPI_Testall(j + 1, r, &flag, MPI_STATUSES_IGNORE);
        }
        for (int j = 0; j < GROW; j++)
            MPI_Isend(&dbuf[j], 1, MPI_DOUBLE, 0, j, MPI_COMM_SELF, &s[j]);
        MPI_Waitall(GROW, r, MPI_STATUSES_IGNORE);
        MPI_Waitall(GROW, s, MPI_STATUSES_IGNORE);
        calls += 3 * GROW + 2;
    }
    return calls;
}
static long waitall64(long n) { return many(n, 0); }
static long testall64(long n) { return many(n, 1); }

/* the send loop, from a thread that is not the one that called MPI_Init */
static long thread_n, thread_calls;
static void *thread_body(void *arg)
{
    (void)arg;
    thread_calls = send_null(thread_n);
    return NULL;
}
static long thread_send(long n)
{
    pthread_t th;
    thread_n = n;
    if (pthread_create(&th, NULL, thread_body, NULL) != 0 || pthread_join(th, NULL) != 0) {
        fprintf(stderr, "ir_loops: no thread\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return thread_calls;
}

static const struct {
    const char *name;
    long (*run)(long);
} loops[] = {
    {"send_null", send_null}, {"send_vary", send_vary}, {"self_p2p", self_p2p},   {"allreduce", allreduce}, {"iallreduce", iallreduce},
    {"waitall3", waitall3},   {"waitall64", waitall64}, {"testall64", testall64}, {"testall_grow", testall_grow},
    {"thread", thread_send},
};

static long (*loop_named(const char *name))(long)
{
    for (size_t i = 0; i < sizeof loops / sizeof loops[0]; i++)
        if (strcmp(loops[i].name, name) == 0)
            return loops[i].run;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: ir_loops LOOP[,LOOP...] [N1 N2]; loops:");
        for (size_t i = 0; i < sizeof loops / sizeof loops[0]; i++)
            fprintf(stderr, " %s", loops[i].name);
        fprintf(stderr, "\n");
        return 2;
    }
    char *names[sizeof loops / sizeof loops[0]];
    int nl = 0, threaded = 0;
    for (char *save = NULL, *tok = strtok_r(argv[1], ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!loop_named(tok) || nl == (int)(sizeof names / sizeof names[0])) {
            fprintf(stderr, "ir_loops: no loop %s\n", tok);
            return 2;
        }
        threaded |= loop_named(tok) == thread_send;
        names[nl++] = tok;
    }
    if (threaded && nl > 1) {
        fprintf(stderr, "ir_loops: the thread loop runs alone (MPI_THREAD_MULTIPLE)\n");
        return 2;
    }
    long n1 = argc > 2 ? atol(argv[2]) : 1000, n2 = argc > 3 ? atol(argv[3]) : 21000;
    /* only the thread loop asks for MPI_THREAD_MULTIPLE: the others measure
     * the calls as a single-threaded code makes them */
    int provided = MPI_THREAD_SINGLE;
    if (threaded)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    if (threaded && provided != MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "ir_loops: MPI_THREAD_MULTIPLE not provided\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < MANY; i++)
        dbuf[i] = i;
    /* per loop two dumps: its N1 iterations, then its N2, after N1 not
     * counted: the first calls of a process pay one-time costs (tables
     * filled, slots claimed, MPI's and the plugin's lazy set-up) that
     * would fall in the N1 count alone and take 13 instructions a call off
     * the difference of the first loop of a group */
    CALLGRIND_START_INSTRUMENTATION;
    for (int l = 0; l < nl; l++) {
        long (*run)(long) = loop_named(names[l]);
        run(n1);
        CALLGRIND_ZERO_STATS;
        long c1 = run(n1);
        CALLGRIND_DUMP_STATS_AT("n1");
        long c2 = run(n2);
        CALLGRIND_DUMP_STATS_AT("n2");
        printf("%s %ld %ld\n", names[l], c1, c2);
    }
    CALLGRIND_STOP_INSTRUMENTATION;
    MPI_Finalize();
    return 0;
}
