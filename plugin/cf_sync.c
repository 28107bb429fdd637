#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cf_sync.h"

cf_sync_t cf_sync;

/* At least CF_SYNC_ROUNDS round trips; while the best is slower than
 * CF_SYNC_GOOD_NS (no round went through without a partner descheduled, as
 * on a node with more busy processes than cores), more, for up to
 * CF_SYNC_BUDGET_NS beyond those: the bound is half the best round trip
 * (beside a load of 10 on 2 cores, 16 rounds alone left it at 2-8 ms) */
#define CF_SYNC_ROUNDS 16
#define CF_SYNC_GOOD_NS 20000.0
#define CF_SYNC_BUDGET_NS 50000000ull
#define CF_SYNC_SPIN_NS 20000ull
#define CF_SYNC_TAG 4242
#define CF_TEST_OFFSET_MAX_S 1e6 /* about 11 days */

/* CLOCK_MONOTONIC itself, not the tick counter through a rate: the offsets
 * are then between the ranks' clocks whatever the rate, and within half the
 * round trip.  (Read through the 20 ms calibration's rate and kept after
 * cf_sync_rate replaced it, the init offsets were off by the time since the
 * start times the rates' difference: 9-11 us on a loaded node, 30 times the
 * stated bound.) */
static double cf_now_local(void) { return (double)cf_clock_mono_ns() + cf_sync.test_offset_ns; }

/* A receive that, after polling for CF_SYNC_SPIN_NS, gives the CPU away
 * between polls: a partner waiting for the same core then gets it in a
 * context switch, not at the end of a time slice. */
static void cf_sync_recv(void *buf, int n, MPI_Datatype type, int peer)
{
    MPI_Request rq;
    int done = 0;
    if (PMPI_Irecv(buf, n, type, peer, CF_SYNC_TAG, cf_g.tool_comm, &rq) != MPI_SUCCESS)
        return;
    uint64_t t0 = cf_clock_mono_ns();
    while (PMPI_Test(&rq, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done)
        if (cf_clock_mono_ns() - t0 > CF_SYNC_SPIN_NS)
            sched_yield();
}

/* the parent's side: a reply to each ping until the child says it is done */
static void cf_sync_serve(int child, double offset, double err)
{
    for (;;) {
        int more = 0;
        cf_sync_recv(&more, 1, MPI_INT, child);
        if (!more)
            return;
        double reply[4] = {cf_now_local(), offset, err, cf_sync.test_offset_ns};
        PMPI_Send(reply, 4, MPI_DOUBLE, child, CF_SYNC_TAG, cf_g.tool_comm);
    }
}

/* the child's side: its offset to rank 0 through the parent, and the bound */
static void cf_sync_ask(int parent, double *offset, double *err)
{
    double best_rtt = 1e300, reply[4] = {0};
    uint64_t start = 0;
    /* ranks of one node read the same kernel clock: nothing to measure (a
     * measurement could only add its error), once a round has said that
     * neither has a test offset */
    int same = cf_g.world_node && cf_g.world_node[parent] == cf_g.node && cf_sync.test_offset_ns == 0;
    for (int i = 0;; i++) {
        if (i == CF_SYNC_ROUNDS)
            start = cf_clock_mono_ns();
        int more = i == 0 || (!(same && reply[3] == 0) &&
                              (i < CF_SYNC_ROUNDS || (best_rtt > CF_SYNC_GOOD_NS &&
                                                      cf_clock_mono_ns() - start < CF_SYNC_BUDGET_NS)));
        double t0 = cf_now_local();
        PMPI_Send(&more, 1, MPI_INT, parent, CF_SYNC_TAG, cf_g.tool_comm);
        if (!more)
            break;
        double r[4] = {0};
        cf_sync_recv(r, 4, MPI_DOUBLE, parent);
        double t1 = cf_now_local();
        if (t1 - t0 < best_rtt) {
            best_rtt = t1 - t0;
            memcpy(reply, r, sizeof(reply));
            /* the parent read its clock half way through the round trip */
            *offset = r[0] + r[1] - (t0 + t1) / 2;
            *err = r[2] + best_rtt / 2;
        }
    }
    if (same && reply[3] == 0) {
        *offset = reply[1];
        *err = reply[2];
    }
}

void cf_sync_measure(cf_sync_pt_t *pt)
{
    int rank = cf_g.world_rank, p = cf_g.world_size;
    double offset = 0, err = 0;
    /* round k: ranks below 2^k serve rank + 2^k, which learns its offset */
    for (int mask = 1; mask < p; mask <<= 1) {
        if (rank < mask && rank + mask < p)
            cf_sync_serve(rank + mask, offset, err);
        else if (rank >= mask && rank < 2 * mask)
            cf_sync_ask(rank - mask, &offset, &err);
    }
    pt->local_ns = cf_now_local();
    pt->offset_ns = offset;
    /* this rank's samples reach its clock through its tick/clock pairs */
    pt->err_ns = err + cf_sync.pair_err_ns[pt == &cf_sync.fin];
}

void cf_sync_start(void)
{
    cf_sync.pair_err_ns[0] = 0.5 * (double)cf_clock_pair(&cf_g.init_ticks, &cf_g.init_mono_ns);
    cf_sync.pair_err_ns[1] = cf_sync.pair_err_ns[0];
}

void cf_sync_rate(void)
{
    uint64_t t, m;
    double half = 0.5 * (double)cf_clock_pair(&t, &m);
    /* the sync points read CLOCK_MONOTONIC itself: the new rate moves none */
    if (t > cf_g.init_ticks && m > cf_g.init_mono_ns) {
        cf_sync.ns_per_tick = (double)(m - cf_g.init_mono_ns) / (double)(t - cf_g.init_ticks);
        cf_sync.pair_err_ns[1] = half;
    }
}

void cf_sync_test_offset(int complain)
{
    const char *s = getenv("COMMFIT_TEST_CLOCK_OFFSET");
    cf_sync.test_offset_ns = 0;
    if (!s || !*s)
        return;
    const char *q = s;
    while (*q) {
        char *end;
        long r = strtol(q, &end, 10);
        if (end == q || *end != ':')
            goto bad;
        q = end + 1;
        double sec = strtod(q, &end);
        if (end == q)
            goto bad;
        /* nan, inf or an offset of years would be taken for a clock */
        if (!isfinite(sec) || fabs(sec) > CF_TEST_OFFSET_MAX_S) {
            if (complain)
                cf_log("COMMFIT_TEST_CLOCK_OFFSET='%s': '%.*s' is not a finite number of seconds within %.0f; ignored",
                       s, (int)(end - q), q, CF_TEST_OFFSET_MAX_S);
            cf_sync.test_offset_ns = 0;
            return;
        }
        if (r == cf_g.world_rank)
            cf_sync.test_offset_ns = sec * 1e9;
        q = end;
        if (*q == ',')
            q++;
        else if (*q)
            goto bad;
    }
    return;
bad:
    cf_sync.test_offset_ns = 0;
    if (complain)
        cf_log("COMMFIT_TEST_CLOCK_OFFSET='%s' is not RANK:SECONDS[,RANK:SECONDS...]; ignored", s);
}
