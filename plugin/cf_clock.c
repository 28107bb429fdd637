#include <stdio.h>
#include <string.h>
#include "cf_clock.h"

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

void cf_clock_init(void)
{
    cf_clock.use_tsc = 0;
    cf_clock.mult = 1u << 24;
    cf_clock.hz = 1e9;
#ifdef CF_HAVE_TSC
    if (!cf_kernel_uses_tsc())
        return;
    uint64_t n0 = cf_clock_mono_ns(), c0 = __rdtsc();
    uint64_t n1, c1;
    do {
        n1 = cf_clock_mono_ns();
        c1 = __rdtsc();
    } while (n1 - n0 < 20000000ull);
    if (c1 <= c0)
        return;
    cf_clock.hz = (double)(c1 - c0) * 1e9 / (double)(n1 - n0);
    cf_clock.mult = (uint64_t)((double)(n1 - n0) / (double)(c1 - c0) * (double)(1u << 24) + 0.5);
    cf_clock.use_tsc = 1;
#endif
}

void cf_clock_pair(uint64_t *ticks_p, uint64_t *mono_p)
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
        t = cf_ticks();
        m = cf_clock_mono_ns();
    }
    *ticks_p = t;
    *mono_p = m;
}
