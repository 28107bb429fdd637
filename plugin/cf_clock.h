/* Timestamps for the hot path: the TSC where the kernel itself trusts it
 * as its clock source, CLOCK_MONOTONIC otherwise.  Durations are taken in
 * ticks and turned into nanoseconds with one multiply and shift. */
#ifndef CF_CLOCK_H
#define CF_CLOCK_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define CF_HAVE_TSC 1
#endif
#include "cf_common.h"

/* COMMFIT_TIMER: which clock the hot path reads */
enum { CF_TIMER_AUTO, CF_TIMER_TSC, CF_TIMER_MONOTONIC };

typedef struct {
    int use_tsc;
    uint64_t mult; /* ns = ticks * mult >> 24 */
    double hz;     /* ticks per second */
} cf_clock_t;

CF_HIDDEN extern cf_clock_t cf_clock;

static inline uint64_t cf_clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The TSC as the clock (cf_ticks reads it then), and a read of it. */
static inline int cf_clock_tsc(void)
{
#ifdef CF_HAVE_TSC
    return cf_clock.use_tsc;
#else
    return 0;
#endif
}
static inline uint64_t cf_tsc(void)
{
#ifdef CF_HAVE_TSC
    return __rdtsc();
#else
    return 0;
#endif
}

static inline uint64_t cf_ticks(void)
{
    return cf_clock_tsc() ? cf_tsc() : cf_clock_mono_ns();
}

/* The statement `call` (an MPI call) timed from t0 to t1 in ticks: one
 * test of the clock source for both reads, the call written once per
 * source, so that the read after the call does not load and test it again. */
#define CF_TIMED(t0, t1, call)                                                                                \
    do {                                                                                                      \
        if (cf_clock_tsc()) {                                                                                 \
            t0 = cf_tsc();                                                                                    \
            call;                                                                                             \
            t1 = cf_tsc();                                                                                    \
        } else {                                                                                              \
            t0 = cf_clock_mono_ns();                                                                          \
            call;                                                                                             \
            t1 = cf_clock_mono_ns();                                                                          \
        }                                                                                                     \
    } while (0)

static inline uint64_t cf_ticks_to_ns(uint64_t ticks)
{
    return (uint64_t)(((unsigned __int128)ticks * cf_clock.mult) >> 24);
}

/* Chooses the clock and measures the tick rate (about 20 ms).  want is a
 * CF_TIMER_*: auto takes the TSC where the kernel's clock source is the
 * TSC; tsc takes it wherever the processor says it is invariant (a
 * virtual machine whose kernel keeps kvm-clock, say); monotonic never.
 * Returns -1 when tsc was asked for and the processor has no invariant
 * TSC (CLOCK_MONOTONIC is used), else 0. */
CF_HIDDEN int cf_clock_init(int want);
/* What the hot path reads: "tsc" or "CLOCK_MONOTONIC" (the profile's clock.timer). */
static inline const char *cf_clock_timer_name(void) { return cf_clock.use_tsc ? "tsc" : "CLOCK_MONOTONIC"; }

/* A tick count and the CLOCK_MONOTONIC time of the same instant: of
 * several tries, the one whose two clock reads bracket the tick read most
 * closely, the clock time taken in the middle.  One plain pair of reads
 * can be split by a preemption, and ranks that map their ticks onto the
 * shared clock through such a pair disagree by that much: hundreds of ns
 * to microseconds, more than a one-way message on shared memory takes.
 * Returns that bracket, ns: the clock time is within half of it. */
CF_HIDDEN uint64_t cf_clock_pair(uint64_t *ticks_p, uint64_t *mono_p);

#endif
