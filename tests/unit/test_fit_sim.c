/* Error rates of the split rule, by simulation with this machine's noise.
 *
 * Noise model (measured on a loaded machine, the conservative end; see
 * cf_fit.h): a bin's median time is the model
 * time times exp(N(0, sigma)), sigma 0.10 up to 2 KiB and 0.07 above; 3 %
 * of the bins are slow by a factor 1.3 to 3 (log-uniform).  Sweeps are
 * log-spaced from 8 B to 4 MiB with the calls a sweep gives (a 0.2 s
 * budget per size, 16 to 10000 calls).  Everything is drawn from a
 * fixed-seed generator, so the rates printed are the same on every run. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cf_fit.h"

#define MAXN 32
#define SIZE_LO 8.0
#define SIZE_HI 4194304.0
#define OUTLIER_P 0.03

static uint64_t rng_state;

/* xorshift64* */
static double rng_u01(void) /* (0, 1) */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return ((double)((rng_state * 0x2545f4914f6cdd1dull) >> 11) + 0.5) / 9007199254740992.0;
}

static double rng_normal(void)
{
    return sqrt(-2.0 * log(rng_u01())) * cos(6.283185307179586 * rng_u01());
}

static double rng_logu(double lo, double hi)
{
    return lo * pow(hi / lo, rng_u01());
}

static double noisy(double size, double t)
{
    double sigma = size <= 2048 ? 0.10 : 0.07;
    t *= exp(sigma * rng_normal());
    if (rng_u01() < OUTLIER_P)
        t *= rng_logu(1.3, 3.0);
    return t;
}

static double sweep_calls(double t)
{
    return fmin(10000.0, fmax(16.0, floor(0.2 / t)));
}

static void sizes_of(double *m, int n)
{
    for (int i = 0; i < n; i++)
        m[i] = round(SIZE_LO * pow(SIZE_HI / SIZE_LO, (double)i / (n - 1)));
}

/* Fill p from the noiseless times t. */
static void measure(cf_point_t *p, const double *m, const double *t, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (cf_point_t){m[i], noisy(m[i], t[i]), sweep_calls(t[i])};
}

/* Sweeps of n sizes whose time above size index brk (drawn, 3 sizes at
 * least on each side) is jump x the lower line's prediction at the same
 * size: another startup and another B.  jump = 1 is a pure line
 * T = a + M/B.  *split_p: share of fits with 2 or more segments; *found_p:
 * share with a boundary within one size of brk. */
static void simulate(int n, double jump, int trials, double *split_p, double *found_p)
{
    double m[MAXN], t[MAXN];
    cf_point_t p[MAXN];
    cf_fit_t f;
    int split = 0, found = 0;

    sizes_of(m, n);
    for (int k = 0; k < trials; k++) {
        double a = rng_logu(1e-6, 50e-6), bw = rng_logu(0.1e9, 20e9);
        int brk = 3 + (int)(rng_u01() * (n - 5));
        int ok = 0;

        for (int i = 0; i < n; i++)
            t[i] = (i < brk ? 1.0 : jump) * (a + m[i] / bw);
        measure(p, m, t, n);
        assert_int_equal(cf_fit_hockney(p, (size_t)n, &f), CF_OK);
        for (int s = 1; s < f.nseg && !ok; s++) {
            int at = 0;
            while (at < n && m[at] < f.seg[s].size_lo)
                at++;
            ok = abs(at - brk) <= 1;
        }
        split += f.nseg > 1;
        found += ok;
    }
    *split_p = (double)split / trials;
    *found_p = (double)found / trials;
}

static void test_pure_lines_rarely_split(void **state)
{
    static const int ns[] = {5, 10, 15, 23};
    (void)state;

    rng_state = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < CF_ARRAY_LEN(ns); i++) {
        double r, found;
        simulate(ns[i], 1.0, 1000, &r, &found);
        print_message("pure line, %2d sizes: split in %.1f %% of sweeps\n", ns[i], 100 * r);
        assert_true(r < 0.05);
    }
}

/* Finding 95 % of x1.3 jumps in 10 sizes is out of reach at
 * this noise with fewer than 5 % false splits: a 1.3 x step scatters like
 * 3 bins of noise, and where it falls on the knee between the startup-
 * and bandwidth-bound sizes one line absorbs it to 4 % rms.  The rates
 * are printed and held at the measured values (fixed seed), so that a
 * change of the rule shows in both directions. */
static void test_jump_found(void **state)
{
    static const struct {
        double jump;
        int n;
        double min_rate; /* measured at SPLIT_PENALTY 1.5, less a margin */
    } cases[] = {
        {1.3, 10, 0.05}, {1.3, 15, 0.12}, {1.3, 23, 0.18}, {2.0, 10, 0.45},
        {2.0, 23, 0.85}, {3.0, 10, 0.70}, {3.0, 15, 0.86}, {3.0, 23, 0.95},
    };
    (void)state;

    rng_state = 0x2545f4914f6cdd1dull;
    for (size_t i = 0; i < CF_ARRAY_LEN(cases); i++) {
        double split, r;
        simulate(cases[i].n, cases[i].jump, 500, &split, &r);
        print_message("x%.1f jump, %2d sizes: found in %.1f %% of sweeps\n", cases[i].jump,
                      cases[i].n, 100 * r);
        assert_true(r >= cases[i].min_rate);
    }
}

/* What any rule could do at this noise: the likelihood-ratio test of one
 * line against two with a break (3 sizes at least each side), knowing the
 * noise exactly and without slow bins, its threshold set so that pure
 * lines split in 5 % of sweeps.  Slow bins only make things harder: data
 * with them are data without them passed through more noise. */
static double line_cost(const double *m, const double *y, int lo, int hi)
{
    double a = 0, b = 0, ref[MAXN], cost = 0;

    for (int i = lo; i < hi; i++)
        ref[i] = y[i];
    for (int it = 0; it < 4; it++) {
        double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, d;
        for (int i = lo; i < hi; i++) {
            double w = 1.0 / (ref[i] * ref[i]);
            sw += w;
            sx += w * m[i];
            sy += w * y[i];
            sxx += w * m[i] * m[i];
            sxy += w * m[i] * y[i];
        }
        d = sw * sxx - sx * sx;
        b = (sw * sxy - sx * sy) / d;
        a = (sy - b * sx) / sw;
        for (int i = lo; i < hi; i++)
            ref[i] = a + b * m[i] > 0 ? a + b * m[i] : y[i];
    }
    for (int i = lo; i < hi; i++) {
        double sigma = m[i] <= 2048 ? 0.10 : 0.07, p = a + b * m[i];
        double r = p > 0 ? log(y[i] / p) : 10.0;
        cost += r * r / (sigma * sigma);
    }
    return cost;
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

/* Likelihood ratio of the best break, and where it is. */
static double oracle_stat(const double *m, const double *y, int n, int *at)
{
    double one = line_cost(m, y, 0, n), best = INFINITY;
    for (int b = 3; b <= n - 3; b++) {
        double two = line_cost(m, y, 0, b) + line_cost(m, y, b, n);
        if (two < best) {
            best = two;
            *at = b;
        }
    }
    return one - best;
}

static double oracle_found(int n, double jump, int trials)
{
    double m[MAXN], y[MAXN], *null = malloc((size_t)trials * sizeof(*null)), thr;
    int found = 0, at = 0;

    assert_non_null(null);
    sizes_of(m, n);
    for (int k = 0; k < trials; k++) {
        double a = rng_logu(1e-6, 50e-6), bw = rng_logu(0.1e9, 20e9);
        for (int i = 0; i < n; i++)
            y[i] = (a + m[i] / bw) * exp((m[i] <= 2048 ? 0.10 : 0.07) * rng_normal());
        null[k] = oracle_stat(m, y, n, &at);
    }
    qsort(null, (size_t)trials, sizeof(*null), cmp_double);
    thr = null[(int)(0.95 * trials)];
    for (int k = 0; k < trials; k++) {
        double a = rng_logu(1e-6, 50e-6), bw = rng_logu(0.1e9, 20e9);
        int brk = 3 + (int)(rng_u01() * (n - 5));
        for (int i = 0; i < n; i++)
            y[i] = (i < brk ? 1.0 : jump) * (a + m[i] / bw) *
                   exp((m[i] <= 2048 ? 0.10 : 0.07) * rng_normal());
        found += oracle_stat(m, y, n, &at) > thr && abs(at - brk) <= 1;
    }
    free(null);
    return (double)found / trials;
}

/* The bound is printed beside the rule's rates.  If a change of the noise
 * model made 95 % for x1.3 in 10 sizes reachable, this fails: then the
 * split rule must be recalibrated to reach it. */
static void test_bound_of_any_rule(void **state)
{
    static const struct {
        double jump;
        int n;
    } cases[] = {{1.3, 10}, {1.3, 15}, {1.3, 23}, {2.0, 10}, {3.0, 10}};
    (void)state;

    rng_state = 0x853c49e6748fea9bull;
    for (size_t i = 0; i < CF_ARRAY_LEN(cases); i++) {
        double r = oracle_found(cases[i].n, cases[i].jump, 2000);
        print_message("bound (likelihood ratio, noise known, no slow bins, 5 %% false splits): "
                      "x%.1f jump, %2d sizes: found in %.1f %% of sweeps\n",
                      cases[i].jump, cases[i].n, 100 * r);
        if (cases[i].jump == 1.3 && cases[i].n == 10)
            assert_true(r < 0.95);
    }
}

/* Above a token bucket's burst b, T = a + b/B0 + (M - b)/R: the upper
 * line's intercept is negative; the asymptotic B must be R. */
static void test_token_bucket_rate(void **state)
{
    const int n = 23;
    const double a = 5e-6, b0 = 10e9, burst = 262144, rate = 1e9;
    double m[MAXN], t[MAXN], sum_err = 0;
    cf_point_t p[MAXN];
    cf_fit_t f;
    int within = 0, trials = 200;
    (void)state;

    rng_state = 12345;
    sizes_of(m, n);
    for (int i = 0; i < n; i++)
        t[i] = a + fmin(m[i], burst) / b0 + fmax(0.0, m[i] - burst) / rate;
    for (int k = 0; k < trials; k++) {
        measure(p, m, t, n);
        assert_int_equal(cf_fit_hockney(p, (size_t)n, &f), CF_OK);
        within += fabs(f.bandwidth_Bps / rate - 1.0) <= 0.10;
        sum_err += f.bandwidth_Bps / rate - 1.0;
    }
    print_message("token bucket, %d sizes: asymptotic B within 10 %% of R in %.1f %% of sweeps, "
                  "mean error %+.1f %%\n",
                  n, 100.0 * within / trials, 100.0 * sum_err / trials);
    /* No bias: the mean is within 10 %; single sweeps scatter by the 5
     * or so noisy sizes above the burst. */
    assert_true(fabs(sum_err / trials) <= 0.10);
    assert_true(within >= 0.78 * trials);
}

/* A switch where the library declares one (its eager limit, between the
 * sizes brk - 1 and brk): given the limit, the fit breaks there, so a
 * jump of any height is found, and where nothing happens at the limit the
 * break costs the line little.  Per trial the same sweep is fitted with
 * and without the limit.  *found_p: share with a boundary within one size
 * of brk; *within_p and *within0_p: share whose asymptotic B is within
 * 25 % of the upper line's, with and without the limit; *kept_p: share
 * whose fit kept the limit. */
static void simulate_limit(int n, double jump, int trials, double *found_p, double *within_p,
                           double *within0_p, double *kept_p)
{
    double m[MAXN], t[MAXN];
    cf_point_t p[MAXN];
    cf_fit_t f, f0;
    int found = 0, within = 0, within0 = 0, kept = 0;

    sizes_of(m, n);
    for (int k = 0; k < trials; k++) {
        double a = rng_logu(1e-6, 50e-6), bw = rng_logu(0.1e9, 20e9);
        int brk = 3 + (int)(rng_u01() * (n - 5)), ok = 0;
        double limit = sqrt(m[brk - 1] * m[brk]);

        for (int i = 0; i < n; i++)
            t[i] = (i < brk ? 1.0 : jump) * (a + m[i] / bw);
        measure(p, m, t, n);
        assert_int_equal(cf_fit_run_limits(p, (size_t)n, &limit, 1, &f, NULL), CF_OK);
        assert_int_equal(cf_fit_run(p, (size_t)n, &f0, NULL), CF_OK);
        kept += f.nlimits == 1 && f.limit_bytes[0] == limit;
        for (int s = 1; s < f.nseg && !ok; s++) {
            int at = 0;
            while (at < n && m[at] < f.seg[s].size_lo)
                at++;
            ok = abs(at - brk) <= 1;
        }
        found += ok;
        within += fabs(f.bandwidth_Bps * jump / bw - 1.0) <= 0.25;
        within0 += fabs(f0.bandwidth_Bps * jump / bw - 1.0) <= 0.25;
    }
    *found_p = (double)found / trials;
    *within_p = (double)within / trials;
    *within0_p = (double)within0 / trials;
    *kept_p = (double)kept / trials;
}

static void test_declared_limit(void **state)
{
    static const struct {
        double jump;
        int n;
    } cases[] = {{1.3, 10}, {1.3, 15}, {1.3, 23}, {1.0, 10}, {1.0, 23}};
    (void)state;

    rng_state = 0x5851f42d4c957f2dull;
    for (size_t i = 0; i < CF_ARRAY_LEN(cases); i++) {
        double found, within, within0, kept;
        simulate_limit(cases[i].n, cases[i].jump, 500, &found, &within, &within0, &kept);
        print_message("x%.1f at a declared limit, %2d sizes: found in %.1f %% of sweeps (limit kept in "
                      "%.1f %%); B within 25 %%: %.1f %% (%.1f %% without the limit)\n",
                      cases[i].jump, cases[i].n, 100 * found, 100 * kept, 100 * within, 100 * within0);
        /* every break lands at the limit: 95 % found for a x1.3
         * switch, where the library states it */
        if (cases[i].jump > 1.0)
            assert_true(found >= 0.95);
        /* a limit where nothing changes costs the asymptotic B little */
        if (cases[i].jump == 1.0)
            assert_true(within >= within0 - 0.10);
    }
}

/* A limit outside the sizes does not bind; one that leaves fewer than 3
 * sizes on a side is let go; two limits give three segments. */
static void test_limits_that_cannot_bind(void **state)
{
    double m[MAXN], t[MAXN];
    cf_point_t p[MAXN];
    cf_fit_t f;
    const int n = 20;
    (void)state;

    sizes_of(m, n);
    for (int i = 0; i < n; i++) {
        t[i] = (m[i] < 300 ? 1.0 : m[i] < 4000 ? 1.5 : 6.0) * (1e-6 + m[i] / 5e9);
        p[i] = (cf_point_t){m[i], t[i], 100};
    }
    {
        double lim[] = {1e9};
        assert_int_equal(cf_fit_run_limits(p, (size_t)n, lim, 1, &f, NULL), CF_OK);
        assert_int_equal(f.nlimits, 0);
    }
    {
        double lim[] = {4096, 256};
        assert_int_equal(cf_fit_run_limits(p, (size_t)n, lim, 2, &f, NULL), CF_OK);
        assert_int_equal(f.nlimits, 2);
        assert_true(f.limit_bytes[0] == 256 && f.limit_bytes[1] == 4096);
        assert_true(f.nseg >= 3);
        /* within the flat rule's few per cent at the smallest sizes */
        for (int i = 0; i < n; i++)
            assert_true(fabs(cf_fit_predict(&f, m[i]) / t[i] - 1.0) < 0.05);
    }
    {
        /* 2 and 4 MiB at most above 2 MiB: too few for a segment, so
         * that one is let go and 4096 kept */
        double lim[] = {2097152, 4096};
        assert_int_equal(cf_fit_run_limits(p, (size_t)n, lim, 2, &f, NULL), CF_OK);
        assert_int_equal(f.nlimits, 1);
        assert_true(f.limit_bytes[0] == 4096);
    }
    assert_int_equal(cf_fit_run_limits(p, (size_t)n, NULL, 1, &f, NULL), CF_ERR_INVALID);
}

/* Between two segments a declared limit is the switch: a 10-size sweep
 * has 2787 and 12040 B around a 4096-byte eager limit, and a 5000-byte
 * message is past it (the geometric mean of the edges, 5.8 kB, would put
 * it on the eager line, 39 % short). */
static void test_limit_is_the_switch(void **state)
{
    double m[MAXN], t[MAXN], lim = 4096;
    cf_point_t p[MAXN];
    cf_fit_t f;
    const int n = 10;
    (void)state;

    sizes_of(m, n);
    for (int i = 0; i < n; i++) {
        t[i] = m[i] < lim ? 0.3e-6 + m[i] / 5e9 : 3.5e-6 + m[i] / 10e9;
        p[i] = (cf_point_t){m[i], t[i], 1000};
    }
    assert_int_equal(cf_fit_run_limits(p, (size_t)n, &lim, 1, &f, NULL), CF_OK);
    assert_int_equal(f.nlimits, 1);
    assert_true(fabs(cf_fit_predict(&f, 5000) / (3.5e-6 + 5000 / 10e9) - 1.0) < 0.05);
    assert_true(fabs(cf_fit_predict(&f, 4000) / (0.3e-6 + 4000 / 5e9) - 1.0) < 0.05);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pure_lines_rarely_split),
        cmocka_unit_test(test_jump_found),
        cmocka_unit_test(test_bound_of_any_rule),
        cmocka_unit_test(test_token_bucket_rate),
        cmocka_unit_test(test_declared_limit),
        cmocka_unit_test(test_limits_that_cannot_bind),
        cmocka_unit_test(test_limit_is_the_switch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
