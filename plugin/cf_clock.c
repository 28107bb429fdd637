#include <stdio.h>
#include <string.h>
#include "cf_clock.h"
#ifdef CF_HAVE_TSC
#include <cpuid.h>
#endif

cf_clock_t cf_clock = {0, 1u << 24, 1e9};

static int cf_kernel_uses_tsc(void)
{
    char buf[32] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (!f)
        return 0;
    int ok = fgets(buf, sizeof(buf), f) != NULL && strncmp(buf, "tsc", 3) == 0;
    fclose(f);
    return ok;
}

#ifdef CF_HAVE_TSC
/* The processor's word that its TSC runs at one rate in every power state
 * (CPUID 0x80000007, EDX bit 8: Linux's constant_tsc and nonstop_tsc). */
static int cf_tsc_invariant(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(0x80000007u, &a, &b, &c, &d) && (d >> 8 & 1u);
}

/* a TSC read and the CLOCK_MONOTONIC time of it, as cf_clock_pair does
 * (cf_ticks is not the TSC yet): the bracket of the best of 16 tries, ns */
static uint64_t cf_tsc_pair(uint64_t *c, uint64_t *n)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 16; i++) {
        uint64_t n0 = cf_clock_mono_ns(), ci = __rdtsc(), n1 = cf_clock_mono_ns();
        if (n1 >= n0 && n1 - n0 < best) {
            best = n1 - n0;
            *c = ci;
            *n = n0 + (n1 - n0) / 2;
        }
    }
    return best;
}
#endif

int cf_clock_init(int want)
{
    cf_clock.use_tsc = 0;
    cf_clock.mult = 1u << 24;
    cf_clock.hz = 1e9;
    if (want == CF_TIMER_MONOTONIC)
        return 0;
#ifdef CF_HAVE_TSC
    if (want == CF_TIMER_TSC ? !cf_tsc_invariant() : !cf_kernel_uses_tsc())
        return want == CF_TIMER_TSC ? -1 : 0;
    /* both ends bracketed: a preemption between a plain pair of reads
     * (milliseconds on a loaded node) would skew the rate by its share of
     * the 20 ms; bracketed, each end is within half its bracket (tens of ns) */
    uint64_t c0 = 0, n0 = 0, c1 = 0, n1 = 0;
    if (cf_tsc_pair(&c0, &n0) == UINT64_MAX)
        return want == CF_TIMER_TSC ? -1 : 0;
    while (cf_clock_mono_ns() - n0 < 20000000ull)
        ;
    if (cf_tsc_pair(&c1, &n1) == UINT64_MAX || c1 <= c0 || n1 <= n0)
        return want == CF_TIMER_TSC ? -1 : 0;
    cf_clock.hz = (double)(c1 - c0) * 1e9 / (double)(n1 - n0);
    cf_clock.mult = (uint64_t)((double)(n1 - n0) / (double)(c1 - c0) * (double)(1u << 24) + 0.5);
    cf_clock.use_tsc = 1;
    return 0;
#else
    return want == CF_TIMER_TSC ? -1 : 0;
#endif
}

uint64_t cf_clock_pair(uint64_t *ticks_p, uint64_t *mono_p)
{
    uint64_t best = UINT64_MAX, t = 0, m = 0;
    for (int i = 0; i < 32; i++) {
        uint64_t m0 = cf_clock_mono_ns(), ti = cf_ticks(), m1 = cf_clock_mono_ns();
        if (m1 >= m0 && m1 - m0 < best) {
            best = m1 - m0;
            t = ti;
            m = m0 + (m1 - m0) / 2;
        }
    }
    if (best == UINT64_MAX) { /* the clock went backwards each time: take the last reads */
        uint64_t m0 = cf_clock_mono_ns();
        t = cf_ticks();
        m = cf_clock_mono_ns();
        best = m > m0 ? m - m0 : m0 - m;
    }
    *ticks_p = t;
    *mono_p = m;
    return best;
}
