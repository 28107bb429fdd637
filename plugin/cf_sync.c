#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cf_sync.h"

cf_sync_t cf_sync;

#define CF_SYNC_ROUNDS 16
#define CF_SYNC_TAG 4242
#define CF_TEST_OFFSET_MAX_S 1e6 /* about 11 days */

/* CLOCK_MONOTONIC itself, not the tick counter through a rate: the offsets
 * are then between the ranks' clocks whatever the rate, and within half the
 * round trip.  (Read through the 20 ms calibration's rate and kept after
 * cf_sync_rate replaced it, the init offsets were off by the time since the
 * start times the rates' difference: 9-11 us on a loaded node, 30 times the
 * stated bound.) */
static double cf_now_local(void) { return (double)cf_clock_mono_ns() + cf_sync.test_offset_ns; }

void cf_sync_measure(cf_sync_pt_t *pt)
{
    int rank = cf_g.world_rank, p = cf_g.world_size;
    MPI_Comm comm = cf_g.tool_comm;
    double offset = 0, err = 0;
    /* round k: ranks below 2^k serve rank + 2^k, which learns its offset */
    for (int mask = 1; mask < p; mask <<= 1) {
        if (rank < mask && rank + mask < p) {
            int child = rank + mask;
            for (int i = 0; i < CF_SYNC_ROUNDS; i++) {
                double reply[4];
                PMPI_Recv(NULL, 0, MPI_BYTE, child, CF_SYNC_TAG, comm, MPI_STATUS_IGNORE);
                reply[0] = cf_now_local();
                reply[1] = offset;
                reply[2] = err;
                reply[3] = cf_sync.test_offset_ns;
                PMPI_Send(reply, 4, MPI_DOUBLE, child, CF_SYNC_TAG, comm);
            }
        } else if (rank >= mask && rank < 2 * mask) {
            int parent = rank - mask;
            double best_rtt = 1e300, reply[4] = {0};
            for (int i = 0; i < CF_SYNC_ROUNDS; i++) {
                double t0 = cf_now_local();
                PMPI_Send(NULL, 0, MPI_BYTE, parent, CF_SYNC_TAG, comm);
                PMPI_Recv(reply, 4, MPI_DOUBLE, parent, CF_SYNC_TAG, comm, MPI_STATUS_IGNORE);
                double t1 = cf_now_local();
                if (t1 - t0 < best_rtt) {
                    best_rtt = t1 - t0;
                    /* the parent read its clock half way through the round trip */
                    offset = reply[0] + reply[1] - (t0 + t1) / 2;
                    err = reply[2] + best_rtt / 2;
                }
            }
            /* ranks of one node read the same kernel clock: nothing to
             * measure, and a measurement could only add its error (a busy
             * node makes every round trip slow) */
            if (cf_g.world_node && cf_g.world_node[parent] == cf_g.node && reply[3] == 0 &&
                cf_sync.test_offset_ns == 0) {
                offset = reply[1];
                err = reply[2];
            }
        }
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
