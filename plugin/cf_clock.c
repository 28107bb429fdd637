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
