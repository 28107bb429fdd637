/* Clocks comparable across ranks: each rank's offset to rank 0's clock is
 * measured at init and at finalize with min-RTT ping-pongs down a binomial
 * tree (log2 p rounds, pairs in parallel), and interpolated linearly in
 * between (the Score-P method).  Ranks of one node share the kernel's clock
 * and inherit their parent's offset after one round trip (unless a test
 * offset is injected).  Local time is CLOCK_MONOTONIC, in ns: the ping-pongs read it
 * directly, samples through the tick counter mapped onto it at the run's
 * two ends (cf_clock_pair at init and in cf_sync_rate). */
#ifndef CF_SYNC_H
#define CF_SYNC_H

#include "cf_runtime.h"

typedef struct {
    double local_ns; /* local time of the measurement */
    double offset_ns; /* rank 0's clock minus ours */
    /* bound: half the best round trip, summed along the tree, plus half the
     * bracket of this rank's tick/clock pair at that end (cf_clock_pair) */
    double err_ns;
} cf_sync_pt_t;

typedef struct {
    cf_sync_pt_t init, fin;
    double test_offset_ns; /* COMMFIT_TEST_CLOCK_OFFSET for this rank */
    double pair_err_ns[2]; /* half the bracket of the init and the final tick/clock pair */
    /* ns per tick over the whole run, fixed at finalize: it maps ticks onto
     * CLOCK_MONOTONIC exactly at both ends, so that ranks of one node, which
     * share that clock, agree; the 20 ms calibration alone drifts by up to
     * 1e-5, tens of microseconds over a run */
    double ns_per_tick;
} cf_sync_t;

CF_HIDDEN extern cf_sync_t cf_sync;

static inline double cf_local_ns(uint64_t ticks)
{
    double since = cf_sync.ns_per_tick > 0 ? (double)(ticks - cf_g.init_ticks) * cf_sync.ns_per_tick
                                           : (double)cf_ticks_to_ns(ticks - cf_g.init_ticks);
    return (double)cf_g.init_mono_ns + since + cf_sync.test_offset_ns;
}

/* The run's first tick/clock pair, cf_g.init_ticks and init_mono_ns (at
 * init, before cf_sync_measure). */
CF_HIDDEN void cf_sync_start(void);
/* Fixes ns_per_tick from the run's two ends (at finalize, before converting
 * any sample). */
CF_HIDDEN void cf_sync_rate(void);

/* Local time to rank 0's time, both ns. */
static inline double cf_global_ns(double local)
{
    double span = cf_sync.fin.local_ns - cf_sync.init.local_ns;
    double drift = span > 0 ? (cf_sync.fin.offset_ns - cf_sync.init.offset_ns) / span : 0;
    return local + cf_sync.init.offset_ns + drift * (local - cf_sync.init.local_ns);
}

/* Collective over world (through cf_g.tool_comm). */
CF_HIDDEN void cf_sync_measure(cf_sync_pt_t *pt);
/* Reads COMMFIT_TEST_CLOCK_OFFSET ("RANK:SECONDS[,RANK:SECONDS...]"). */
CF_HIDDEN void cf_sync_test_offset(int complain);

#endif
