/* Hockney fitting on synthetic data with known answers. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cf_fit.h"

#define ALPHA 5e-6
#define BW 25e9
#define NPOW 27 /* 1 B .. 64 MiB */

/* Fixed-seed generator so that noisy cases are reproducible everywhere. */
static uint64_t rng_state;

static double rng_uniform(void) /* [-1, 1) */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static void make_hockney(cf_point_t *p, double alpha, double bw, double noise)
{
    for (int i = 0; i < NPOW; i++) {
        p[i].size = ldexp(1.0, i);
        p[i].time_s = (alpha + p[i].size / bw) * (1.0 + noise * rng_uniform());
        p[i].weight = 1.0;
    }
}

static void assert_rel(double got, double want, double tol)
{
    double rel = fabs(got - want) / fabs(want);
    if (!(rel <= tol))
        fail_msg("got %.9g, want %.9g (rel err %.3g > %.3g)", got, want, rel, tol);
}

/* slack: relative widening, for exact data where the interval collapses
 * to a point and rounding decides the rest. */
static void assert_in_slack(double v, const double ci[2], double slack)
{
    if (!(ci[0] <= v * (1 + slack) && v * (1 - slack) <= ci[1]))
        fail_msg("%.9g not in [%.9g, %.9g]", v, ci[0], ci[1]);
}

static void assert_in(double v, const double ci[2])
{
    assert_in_slack(v, ci, 0.0);
}

static void test_exact_recovery(void **state)
{
    cf_point_t p[NPOW];
    cf_fit_t f;
    (void)state;

    make_hockney(p, ALPHA, BW, 0.0);
    assert_int_equal(cf_fit_hockney(p, NPOW, &f), CF_OK);
    assert_true(f.ok);
    assert_int_equal(f.nseg, 1);
    assert_int_equal(f.npoints, NPOW);
    assert_int_equal(f.noutliers, 0);
    assert_rel(f.alpha_s, ALPHA, 1e-6);
    assert_rel(f.bandwidth_Bps, BW, 1e-6);
    assert_rel(f.n_half_bytes, 125e3, 1e-6);
    assert_rel(f.seg[0].alpha_s, ALPHA, 1e-6);
    assert_rel(f.seg[0].bandwidth_Bps, BW, 1e-6);
    assert_true(f.r2 > 0.999999);
    assert_true(f.size_lo == 1.0 && f.size_hi == ldexp(1.0, NPOW - 1));
    assert_in_slack(ALPHA, f.alpha_ci, 1e-9);
    assert_in_slack(BW, f.bandwidth_ci, 1e-9);
    assert_true(f.alpha_ci[1] - f.alpha_ci[0] < 1e-6 * ALPHA);
    assert_rel(cf_fit_predict(&f, 1e6), 45e-6, 1e-6);
}

static void test_input_order_irrelevant(void **state)
{
    cf_point_t p[NPOW], q[NPOW];
    cf_fit_t f;
    (void)state;

    make_hockney(p, ALPHA, BW, 0.0);
    for (int i = 0; i < NPOW; i++)
        q[i] = p[(i * 7) % NPOW]; /* 7 is coprime with 27: a permutation */
    assert_int_equal(cf_fit_hockney(q, NPOW, &f), CF_OK);
    assert_rel(f.alpha_s, ALPHA, 1e-6);
    assert_rel(f.bandwidth_Bps, BW, 1e-6);
}

static void test_noise(void **state)
{
    cf_point_t p[NPOW];
    cf_fit_t f;
    (void)state;

    /* A 95 % interval misses for one seed in twenty; the coverage test
     * below checks the rate itself. */
    rng_state = 1;
    make_hockney(p, ALPHA, BW, 0.05);
    assert_int_equal(cf_fit_hockney(p, NPOW, &f), CF_OK);
    assert_int_equal(f.nseg, 1);
    assert_rel(f.alpha_s, ALPHA, 0.10);
    assert_rel(f.bandwidth_Bps, BW, 0.10);
    assert_in(ALPHA, f.alpha_ci);
    assert_in(BW, f.bandwidth_ci);
    assert_true(f.alpha_ci[0] < f.alpha_s && f.alpha_s < f.alpha_ci[1]);
    assert_true(f.bandwidth_ci[0] < f.bandwidth_Bps && f.bandwidth_Bps < f.bandwidth_ci[1]);
}

/* The intervals should be about 95 %: far from always and far from never. */
static void test_noise_ci_coverage(void **state)
{
    cf_point_t p[NPOW];
    cf_fit_t f;
    int in_a = 0, in_b = 0, trials = 200;
    (void)state;

    rng_state = 777;
    for (int t = 0; t < trials; t++) {
        make_hockney(p, ALPHA, BW, 0.05);
        assert_int_equal(cf_fit_hockney(p, NPOW, &f), CF_OK);
        in_a += f.alpha_ci[0] <= ALPHA && ALPHA <= f.alpha_ci[1];
        in_b += f.bandwidth_ci[0] <= BW && BW <= f.bandwidth_ci[1];
    }
    assert_true(in_a >= 170 && in_a <= 199);
    assert_true(in_b >= 170 && in_b <= 199);
}

static void test_outliers(void **state)
{
    cf_point_t p[NPOW];
    cf_fit_t f;
    (void)state;

    rng_state = 4242;
    make_hockney(p, ALPHA, BW, 0.05);
    p[3].time_s *= 10;  /* a small size: would wreck alpha */
    p[22].time_s *= 10; /* a large size: would wreck B */
    assert_int_equal(cf_fit_hockney(p, NPOW, &f), CF_OK);
    assert_int_equal(f.nseg, 1);
    assert_int_equal(f.noutliers, 2);
    assert_int_equal(f.npoints, NPOW - 2);
    assert_rel(f.alpha_s, ALPHA, 0.10);
    assert_rel(f.bandwidth_Bps, BW, 0.10);
}

/* The smallest and the largest size are the startup and the bandwidth
 * the fit exists to give: never outliers, however far off (docs/models.md);
 * an interior outlier still goes. */
static void test_ends_never_dropped(void **state)
{
    cf_point_t p[NPOW];
    unsigned char kept[NPOW];
    cf_fit_t f;
    (void)state;

    rng_state = 99;
    make_hockney(p, ALPHA, BW, 0.05);
    p[NPOW - 1].time_s *= 3;
    p[0].time_s /= 3;
    p[12].time_s *= 10;
    assert_int_equal(cf_fit_run(p, NPOW, &f, kept), CF_OK);
    assert_true(kept[0] && kept[NPOW - 1]);
    assert_false(kept[12]);
    assert_true(f.size_lo == 1.0 && f.size_hi == ldexp(1.0, NPOW - 1));
    /* The last segment holds the slow end: its B is what that size says. */
    assert_true(f.seg[f.nseg - 1].size_hi == ldexp(1.0, NPOW - 1));
}

/* kept_p: per input index, 1 in the fit, 0 dropped or ignored. */
static void test_kept_output(void **state)
{
    cf_point_t p[NPOW];
    unsigned char kept[NPOW];
    cf_fit_t f;
    int nk = 0;
    (void)state;

    rng_state = 4242;
    make_hockney(p, ALPHA, BW, 0.03);
    p[5].weight = 0;     /* ignored */
    p[9].time_s = 0;     /* ignored */
    p[16].time_s *= 10;  /* outlier */
    memset(kept, 7, sizeof(kept));
    assert_int_equal(cf_fit_run(p, NPOW, &f, kept), CF_OK);
    for (int i = 0; i < NPOW; i++) {
        assert_true(kept[i] == 0 || kept[i] == 1);
        nk += kept[i];
    }
    assert_false(kept[5] || kept[9] || kept[16]);
    assert_int_equal(nk, f.npoints);
    assert_int_equal(f.noutliers, 1);
    /* cf_fit_hockney is the same fit. */
    {
        cf_fit_t g;
        assert_int_equal(cf_fit_hockney(p, NPOW, &g), CF_OK);
        assert_true(g.alpha_s == f.alpha_s && g.bandwidth_Bps == f.bandwidth_Bps);
    }
    /* No data: all 0. */
    memset(kept, 7, 3);
    assert_int_equal(cf_fit_run(p, 2, &f, kept), CF_ERR_NODATA);
    assert_true(kept[0] == 0 && kept[1] == 0);
}

/* Above a token bucket's burst b at rate R the time is a + b/B0 + (M - b)/R:
 * a line with a negative intercept.  Clamping it to 0 biased the rate, and
 * dropping the largest sizes as outliers reported 2.2 x R. */
static void test_token_bucket(void **state)
{
    const double a = 5e-6, b0 = 10e9, burst = 1048576, rate = 1e9;
    cf_point_t p[NPOW];
    unsigned char kept[NPOW];
    cf_fit_t f;
    (void)state;

    for (int noisy = 0; noisy < 2; noisy++) {
        rng_state = 77;
        for (int i = 0; i < NPOW; i++) {
            double m = ldexp(1.0, i);
            p[i].size = m;
            p[i].time_s = (a + fmin(m, burst) / b0 + fmax(0.0, m - burst) / rate) *
                          (1.0 + 0.03 * noisy * rng_uniform());
            p[i].weight = 1;
        }
        assert_int_equal(cf_fit_run(p, NPOW, &f, kept), CF_OK);
        assert_true(f.nseg >= 2);
        assert_true(kept[NPOW - 1] && kept[NPOW - 2]);
        assert_true(f.seg[f.nseg - 1].alpha_s < 0); /* a line, not a startup */
        assert_rel(f.bandwidth_Bps, rate, noisy ? 0.10 : 1e-6);
        assert_rel(f.alpha_s, a, noisy ? 0.15 : 1e-6);
        if (!noisy) {
            assert_in_slack(rate, f.bandwidth_ci, 1e-9);
            /* Startup and payload cost the same inside the burst, at a b0:
             * a x the asymptotic rate would say 5 kB. */
            assert_rel(f.n_half_bytes, a * b0, 1e-6);
        }
        /* The startup of a message above the burst is still a. */
        assert_rel(cf_fit_alpha_at(&f, 64e6), f.alpha_s, 1e-12);
        assert_string_equal(cf_verdict(cf_fit_startup_share(&f, &(cf_point_t){64e6, 0, 1}, 1)),
                            "bandwidth-bound");
    }
}

/* A sweep's first size, seen in a few warm-up calls at 7 x the time,
 * beside bins of millions of calls (NetPIPE's first 78 4-byte messages):
 * it stays in the fit, being the first size, but as a stray it must not
 * set the startup of the path; its miss shows in its model error. */
static void test_stray_first_bin(void **state)
{
    const double a = 270e-9, b = 4e9;
    cf_point_t p[16];
    unsigned char kept[16];
    cf_fit_t f;
    int n = 0;
    (void)state;

    p[n++] = (cf_point_t){4, 7 * (a + 4 / b), 78};
    for (double m = 16; m <= 4194304; m *= 4)
        p[n++] = (cf_point_t){m, a + m / b, m < 100000 ? 3e6 : 2e4};
    assert_int_equal(cf_fit_run(p, (size_t)n, &f, kept), CF_OK);
    assert_true(kept[0]);
    assert_rel(f.alpha_s, a, 0.10);
    assert_rel(f.bandwidth_Bps, b, 0.10);
}

/* A segment over 1 to 5 byte messages: its slope is noise, the messages
 * are startup-bound (it once gave B = 7.5 MB/s and "bandwidth-bound"). */
static void test_tiny_sizes_flat(void **state)
{
    static const double t[] = {1.00e-6, 1.02e-6, 1.01e-6, 1.04e-6, 1.05e-6};
    cf_point_t p[5];
    cf_fit_t f;
    (void)state;

    for (int i = 0; i < 5; i++)
        p[i] = (cf_point_t){i + 1.0, t[i], 1000};
    assert_int_equal(cf_fit_hockney(p, 5, &f), CF_OK);
    assert_int_equal(f.nseg, 1);
    assert_true(isinf(f.bandwidth_Bps));
    assert_true(isinf(f.bandwidth_ci[1]));
    assert_true(f.bandwidth_uncertain);
    assert_string_equal(f.bandwidth_why, "time does not grow with size");
    assert_rel(f.alpha_s, 1.024e-6, 0.01);
    assert_string_equal(cf_verdict(cf_fit_startup_share(&f, p, 5)), "startup-bound");
    assert_true(f.err_max < 0.03);
}

/* Headline = the two ends: startup from the first segment, bandwidth from
 * the last (NetPIPE reported 1.73 GB/s from one line through a curve whose
 * upper segment ran at 9.9). */
static void test_headline_is_the_ends(void **state)
{
    cf_point_t p[NPOW];
    cf_fit_t f;
    (void)state;

    for (int i = 0; i < NPOW; i++) {
        double m = ldexp(1.0, i);
        p[i] = (cf_point_t){m, m < 65536 ? 2e-6 + m / 1e9 : 40e-6 + m / 9.9e9, 1};
    }
    assert_int_equal(cf_fit_hockney(p, NPOW, &f), CF_OK);
    assert_int_equal(f.nseg, 2);
    assert_true(f.alpha_s == f.seg[0].alpha_s);
    assert_true(f.bandwidth_Bps == f.seg[1].bandwidth_Bps);
    assert_rel(f.alpha_s, 2e-6, 1e-6);
    assert_rel(f.bandwidth_Bps, 9.9e9, 1e-6);
    /* n_half where the curve crosses 2 alpha: in the first segment, at
     * alpha x its B, not alpha x the asymptotic B. */
    assert_rel(f.n_half_bytes, 2e-6 * 1e9, 1e-6);
    assert_true(f.alpha_ci[0] == f.seg[0].alpha_ci[0] && f.alpha_ci[1] == f.seg[0].alpha_ci[1]);
    assert_true(f.bandwidth_ci[0] == f.seg[1].bandwidth_ci[0]);
    /* The old single line, kept for reference, misses both. */
    assert_true(fabs(f.line_bandwidth_Bps / 9.9e9 - 1) > 0.1);
    assert_true(f.line_r2 < f.r2);
    assert_true(f.err_rms < 1e-6 && f.err_max < 1e-6);
    assert_false(f.alpha_uncertain);
    assert_false(f.bandwidth_uncertain);
    assert_string_equal(f.bandwidth_why, "");
}

/* A last segment of 3 sizes spanning a factor 4 gives no trustworthy B. */
static void test_bandwidth_uncertain_short_tail(void **state)
{
    cf_point_t p[12];
    cf_fit_t f;
    (void)state;

    rng_state = 3;
    for (int i = 0; i < 12; i++) {
        double m = i < 9 ? ldexp(1.0, 2 * i) : ldexp(1.0, 16) * (1.0 + 0.5 * (i - 8));
        p[i] = (cf_point_t){m, (m < 65537 ? 2e-6 + m / 10e9 : 30e-6 + m / 1e9) *
                                   (1.0 + 0.03 * rng_uniform()),
                            100};
    }
    assert_int_equal(cf_fit_hockney(p, 12, &f), CF_OK);
    assert_true(f.nseg >= 2);
    assert_true(f.bandwidth_uncertain);
    assert_true(strlen(f.bandwidth_why) > 0);
}

static void make_switch(cf_point_t *p, double noise)
{
    for (int i = 0; i < NPOW; i++) {
        double m = ldexp(1.0, i);
        double t = m < 65536 ? 2e-6 + m / 10e9 : 20e-6 + m / 25e9;
        p[i].size = m;
        p[i].time_s = t * (1.0 + noise * rng_uniform());
        p[i].weight = 1.0;
    }
}

static void check_switch(const cf_fit_t *f, double tol)
{
    assert_int_equal(f->nseg, 2);
    assert_true(f->seg[0].size_hi >= 16384 && f->seg[0].size_hi <= 65536);
    assert_true(f->seg[1].size_lo >= 32768 && f->seg[1].size_lo <= 131072);
    assert_true(f->seg[0].npoints >= 3 && f->seg[1].npoints >= 3);
    assert_rel(f->seg[0].alpha_s, 2e-6, tol);
    assert_rel(f->seg[0].bandwidth_Bps, 10e9, tol);
    assert_rel(f->seg[1].alpha_s, 20e-6, tol);
    assert_rel(f->seg[1].bandwidth_Bps, 25e9, tol);
}

static void test_protocol_switch(void **state)
{
    cf_point_t p[NPOW];
    cf_fit_t f;
    (void)state;

    make_switch(p, 0.0);
    assert_int_equal(cf_fit_hockney(p, NPOW, &f), CF_OK);
    check_switch(&f, 1e-6);
    assert_true(f.seg[0].size_hi == 32768 && f.seg[1].size_lo == 65536);
    assert_int_equal(f.noutliers, 0);
    /* Each size is predicted by its own protocol's line. */
    assert_rel(cf_fit_predict(&f, 1024), 2e-6 + 1024 / 10e9, 1e-6);
    assert_rel(cf_fit_predict(&f, 1e6), 20e-6 + 1e6 / 25e9, 1e-6);
    assert_rel(cf_fit_alpha_at(&f, 100), 2e-6, 1e-6);
    assert_rel(cf_fit_alpha_at(&f, 1e9), 20e-6, 1e-6);
    /* Outside the fitted range: the nearest segment. */
    assert_rel(cf_fit_alpha_at(&f, 0), 2e-6, 1e-6);
    assert_rel(cf_fit_alpha_at(&f, 1e12), 20e-6, 1e-6);
}

static void test_protocol_switch_noisy(void **state)
{
    cf_point_t p[NPOW];
    cf_fit_t f;
    (void)state;

    rng_state = 2024;
    make_switch(p, 0.03);
    assert_int_equal(cf_fit_hockney(p, NPOW, &f), CF_OK);
    check_switch(&f, 0.10);
}

/* Three protocols (shared-memory eager, eager, rendezvous). */
static void test_three_segments(void **state)
{
    cf_point_t p[NPOW];
    cf_fit_t f;
    (void)state;

    for (int i = 0; i < NPOW; i++) {
        double m = ldexp(1.0, i);
        p[i].size = m;
        p[i].time_s = m < 1024 ? 1e-6 + m / 2e9 : m < 262144 ? 4e-6 + m / 8e9 : 30e-6 + m / 25e9;
        p[i].weight = 1.0;
    }
    assert_int_equal(cf_fit_hockney(p, NPOW, &f), CF_OK);
    assert_int_equal(f.nseg, 3);
    assert_true(f.seg[0].size_hi == 512 && f.seg[1].size_lo == 1024);
    assert_true(f.seg[1].size_hi == 131072 && f.seg[2].size_lo == 262144);
    assert_rel(f.seg[1].alpha_s, 4e-6, 1e-6);
    assert_rel(f.seg[2].bandwidth_Bps, 25e9, 1e-6);
}

/* Several bins of the same size (e.g. from different communicators). */
static void test_repeated_sizes(void **state)
{
    cf_point_t p[2 * NPOW];
    cf_fit_t f;
    (void)state;

    rng_state = 31;
    make_hockney(p, ALPHA, BW, 0.03);
    make_hockney(p + NPOW, ALPHA, BW, 0.03);
    assert_int_equal(cf_fit_hockney(p, 2 * NPOW, &f), CF_OK);
    assert_int_equal(f.nseg, 1);
    assert_int_equal(f.npoints + f.noutliers, 2 * NPOW);
    assert_rel(f.alpha_s, ALPHA, 0.05);
    assert_rel(f.bandwidth_Bps, BW, 0.05);
}

static void test_two_sizes_nodata(void **state)
{
    cf_point_t p[6];
    cf_fit_t f;
    (void)state;

    for (int i = 0; i < 6; i++) {
        p[i].size = (i % 2) ? 1024 : 8;
        p[i].time_s = 1e-6 * (1 + i);
        p[i].weight = 3;
    }
    memset(&f, 0xff, sizeof(f));
    assert_int_equal(cf_fit_hockney(p, 6, &f), CF_ERR_NODATA);
    assert_int_equal(f.ok, 0);
    assert_int_equal(f.npoints, 6);
    assert_true(f.size_lo == 8 && f.size_hi == 1024);
    assert_int_equal(f.nseg, 0);
    assert_true(isnan(cf_fit_predict(&f, 100)));
    assert_true(isnan(cf_fit_startup_share(&f, p, 6)));

    assert_int_equal(cf_fit_hockney(p, 0, &f), CF_ERR_NODATA);
    assert_int_equal(f.npoints, 0);
    assert_int_equal(cf_fit_hockney(NULL, 0, &f), CF_ERR_NODATA);
}

static void test_zero_weight_ignored(void **state)
{
    cf_point_t p[NPOW];
    cf_fit_t f;
    (void)state;

    make_hockney(p, ALPHA, BW, 0.0);
    for (int i = 3; i < NPOW; i++)
        p[i].weight = 0;
    assert_int_equal(cf_fit_hockney(p, NPOW, &f), CF_OK);
    assert_int_equal(f.npoints, 3);
    p[2].time_s = 0; /* an unresolved timing is no measurement */
    assert_int_equal(cf_fit_hockney(p, NPOW, &f), CF_ERR_NODATA);
    assert_int_equal(f.npoints, 2);
}

static void test_invalid(void **state)
{
    cf_point_t p[NPOW];
    cf_fit_t f;
    (void)state;

    make_hockney(p, ALPHA, BW, 0.0);
    memset(&f, 0x5a, sizeof(f));
    p[4].time_s = NAN;
    assert_int_equal(cf_fit_hockney(p, NPOW, &f), CF_ERR_INVALID);
    p[4].time_s = -1;
    assert_int_equal(cf_fit_hockney(p, NPOW, &f), CF_ERR_INVALID);
    p[4].time_s = 1e-5;
    p[4].size = -1;
    assert_int_equal(cf_fit_hockney(p, NPOW, &f), CF_ERR_INVALID);
    p[4].size = 16;
    p[4].weight = INFINITY;
    assert_int_equal(cf_fit_hockney(p, NPOW, &f), CF_ERR_INVALID);
    assert_int_equal(cf_fit_hockney(NULL, 3, &f), CF_ERR_INVALID);
    assert_int_equal(cf_fit_hockney(p, NPOW, NULL), CF_ERR_INVALID);
    /* Output untouched on error. */
    {
        cf_fit_t g;
        memset(&g, 0x5a, sizeof(g));
        assert_memory_equal(&f, &g, sizeof(f));
    }
}

static void test_flat_time_infinite_bandwidth(void **state)
{
    cf_point_t p[NPOW];
    cf_fit_t f;
    (void)state;

    make_hockney(p, ALPHA, INFINITY, 0.0);
    p[NPOW - 1].time_s = 0.999 * ALPHA; /* slope slightly negative */
    assert_int_equal(cf_fit_hockney(p, NPOW, &f), CF_OK);
    assert_true(isinf(f.bandwidth_Bps) && f.bandwidth_Bps > 0);
    assert_true(isinf(f.n_half_bytes));
    assert_true(isinf(f.bandwidth_ci[1]));
    assert_rel(f.alpha_s, ALPHA, 1e-3);
    assert_rel(cf_fit_predict(&f, 1e9), f.alpha_s, 1e-12);
    assert_rel(cf_fit_startup_share(&f, p, NPOW), 1.0, 1e-12);
}

static void test_zero_alpha_constrained(void **state)
{
    cf_point_t p[NPOW];
    cf_fit_t f;
    (void)state;

    for (int i = 0; i < NPOW; i++) {
        p[i].size = ldexp(1.0, i + 10);
        /* pure bandwidth with a slight dip at small sizes: alpha_u < 0 */
        p[i].time_s = p[i].size / BW * (i < 3 ? 0.98 : 1.0);
        p[i].weight = 1;
    }
    assert_int_equal(cf_fit_hockney(p, NPOW, &f), CF_OK);
    assert_true(f.alpha_s == 0.0);
    assert_true(f.alpha_ci[0] == 0.0);
    assert_true(f.n_half_bytes == 0.0);
    assert_rel(f.bandwidth_Bps, BW, 0.01);
    assert_in(f.bandwidth_Bps, f.bandwidth_ci);
}

/* Call counts weight bins, but relative error keeps alpha tied to the
 * small sizes even when one large bin holds nearly all calls. */
static void test_heavy_weight(void **state)
{
    cf_point_t p[NPOW];
    cf_fit_t f;
    (void)state;

    rng_state = 5;
    make_hockney(p, ALPHA, BW, 0.03);
    p[25].weight = 1e6;
    assert_int_equal(cf_fit_hockney(p, NPOW, &f), CF_OK);
    assert_rel(f.alpha_s, ALPHA, 0.10);
    assert_rel(f.bandwidth_Bps, BW, 0.10);
}

/* Call counts of a sweep: every size up to 16 KiB repeated as often, the
 * larger ones fewer times in proportion to their size (at least 20). */
static double sweep_calls(double size)
{
    return size <= 16384 ? 22000 : fmax(20, 22000 * 16384 / size);
}

/* A switch at 128 KiB that doubles the time, where the sweep times 8 to
 * 250 times fewer calls than at the small sizes.  Had the calls decided,
 * the small sizes, which one line fits, would outvote the few large ones. */
static void test_switch_despite_call_imbalance(void **state)
{
    const double brk = 131072, a1 = 2e-6, bw = 10e9;
    const double a2 = 2 * (a1 + brk / bw) - brk / bw;
    cf_point_t p[23];
    cf_fit_t f;
    (void)state;

    for (uint64_t seed = 1; seed <= 20; seed++) {
        rng_state = seed;
        for (int i = 0; i < 23; i++) {
            double m = ldexp(1.0, i);
            p[i].size = m;
            p[i].time_s = ((m < brk ? a1 : a2) + m / bw) * (1.0 + 0.05 * rng_uniform());
            p[i].weight = sweep_calls(m);
        }
        assert_int_equal(cf_fit_hockney(p, 23, &f), CF_OK);
        assert_int_equal(f.nseg, 2);
        assert_true(f.seg[0].size_hi == 65536 && f.seg[1].size_lo == brk);
        assert_rel(f.seg[0].alpha_s, a1, 0.15);
        assert_rel(f.seg[1].alpha_s, a2, 0.15);
        assert_rel(f.seg[1].bandwidth_Bps, bw, 0.15);
    }
}

/* ... and the same imbalance does not make noise look like a switch. */
static void test_no_split_on_noise_with_sweep_calls(void **state)
{
    cf_point_t p[NPOW];
    cf_fit_t f;
    int splits = 0;
    (void)state;

    rng_state = 555;
    for (int t = 0; t < 200; t++) {
        make_hockney(p, ALPHA, BW, 0.05);
        for (int i = 0; i < NPOW; i++)
            p[i].weight = sweep_calls(p[i].size);
        assert_int_equal(cf_fit_hockney(p, NPOW, &f), CF_OK);
        splits += f.nseg > 1;
    }
    assert_true(splits <= 2);
}

/* Real sweeps as the report bins them: size, median time, calls.  Open MPI
 * 4.1 (ob1, vader), 2 ranks on one node. */
typedef struct {
    double size, p50, calls;
} sweep_bin_t;

/* coll_sweep --op allreduce --min 8 --max 4MiB: the single-copy
 * (rendezvous) protocol takes over from 8 KiB at 4x the time of 4 KiB;
 * iterations fall from 500 to 16 above 128 KiB. */
static const sweep_bin_t allreduce_sweep[] = {
    {8, 1.835e-07, 1006},        {16, 1.835e-07, 1006},        {32, 1.835e-07, 1006},
    {64, 1.995e-07, 1006},       {128, 1.835e-07, 1006},       {256, 2.155e-07, 1006},
    {512, 4.315e-07, 1006},      {1024, 4.315e-07, 1006},      {2048, 7.355e-07, 1006},
    {4096, 1.2155e-06, 1006},    {8192, 4.8635e-06, 1006},     {16384, 7.9355e-06, 1006},
    {32768, 1.17755e-05, 1006},  {65536, 1.7566e-05, 1006},    {131072, 3.17435e-05, 1006},
    {262144, 5.6244e-05, 518},   {524288, 9.7114e-05, 262},    {1048576, 0.0001392635, 134},
    {2097152, 0.0002375675, 70}, {4194304, 0.0006225915, 38},
};

/* pingpong --max 4MiB --mode nonblocking (MPI_Isend): eager up to 2 KiB,
 * rendezvous from 4 KiB (7x the time); 22000 calls per small size, 140 at
 * 4 MiB, which falls off a cache cliff. */
static const sweep_bin_t pingpong_sweep[] = {
    {1, 1.355e-07, 22000},       {2, 1.355e-07, 22000},        {4, 1.355e-07, 22000},
    {8, 1.355e-07, 22000},       {16, 1.355e-07, 22000},       {32, 1.355e-07, 22000},
    {64, 1.515e-07, 22000},      {128, 1.355e-07, 22000},      {256, 1.675e-07, 22000},
    {512, 2.315e-07, 22000},     {1024, 2.715e-07, 22000},     {2048, 3.675e-07, 22000},
    {4096, 2.4315e-06, 22000},   {8192, 2.6875e-06, 22000},    {16384, 3.1995e-06, 22000},
    {32768, 4.3515e-06, 18022},  {65536, 6.3995e-06, 9010},    {131072, 1.07515e-05, 4504},
    {262144, 2.15035e-05, 2252}, {524288, 3.921e-05, 1126},    {1048576, 7.78235e-05, 562},
    {2097152, 0.0001556475, 280}, {4194304, 0.0004095995, 140},
};

/* The switch from last_before to first_after is a segment boundary; each
 * bin is predicted within 10 % in the median and within 30 % but for the
 * bins the fit declares outliers; with the real calls and with equal ones. */
static void check_sweep(const sweep_bin_t *b, size_t n, double last_before, double first_after)
{
    cf_point_t p[32];
    double err[32];
    cf_fit_t f;

    assert_true(n <= 32);
    for (int unit = 0; unit < 2; unit++) {
        int found = 0;
        for (size_t i = 0; i < n; i++)
            p[i] = (cf_point_t){b[i].size, b[i].p50, unit ? 1.0 : b[i].calls};
        assert_int_equal(cf_fit_hockney(p, n, &f), CF_OK);
        assert_true(f.nseg >= 2);
        assert_true(f.noutliers <= (int)n / 5);
        for (int k = 0; k + 1 < f.nseg; k++)
            found |= f.seg[k].size_hi == last_before && f.seg[k + 1].size_lo == first_after;
        if (!found)
            fail_msg("no segment boundary between %g and %g (%s weights)", last_before,
                     first_after, unit ? "equal" : "call");
        for (size_t i = 0; i < n; i++) {
            double e = fabs(cf_fit_predict(&f, b[i].size) / b[i].p50 - 1.0);
            size_t j = i;
            for (; j > 0 && err[j - 1] > e; j--) /* insertion sort */
                err[j] = err[j - 1];
            err[j] = e;
        }
        if (!(err[n / 2] < 0.10 && err[n - 1 - (size_t)f.noutliers] < 0.30))
            fail_msg("median error %.3f, largest but outliers %.3f (%s weights)", err[n / 2],
                     err[n - 1 - (size_t)f.noutliers], unit ? "equal" : "call");
    }
}

static void test_real_allreduce_sweep(void **state)
{
    (void)state;
    check_sweep(allreduce_sweep, CF_ARRAY_LEN(allreduce_sweep), 4096, 8192);
}

static void test_real_pingpong_sweep(void **state)
{
    (void)state;
    check_sweep(pingpong_sweep, CF_ARRAY_LEN(pingpong_sweep), 2048, 4096);
}

/* A shared-memory all-reduce sweep of 10 sizes from 32 KiB to 2 MiB whose
 * time grows like M^0.72 (314 us at 2 MiB), with +-8 % noise per bin and
 * a sweep's calls (fewer at large sizes).  One line misses both ends on
 * the same side and no finer model brings every bin within tolerance; the
 * refinement must still take the finer one that predicts clearly better,
 * so that the 2 MiB bin is predicted within 25 % (with the old rule, only
 * 128 of these 200 sweeps were, the worst at +42 %). */
static void test_bending_sweep_refined(void **state)
{
    static const double sizes[10] = {32768, 49152, 65536, 98304, 131072,
                                     262144, 393216, 524288, 1048576, 2097152};
    int within = 0;
    double worst = 0;
    (void)state;

    rng_state = 1;
    for (int sweep = 0; sweep < 200; sweep++) {
        cf_point_t p[10];
        cf_fit_t f;
        double e;
        for (int i = 0; i < 10; i++) {
            double M = sizes[i], calls = M <= 131072 ? 2000.0 : 2000.0 * 131072 / M;
            p[i] = (cf_point_t){M, 314e-6 * pow(M / 2097152.0, 0.72) * (1.0 + 0.08 * rng_uniform()),
                                calls};
        }
        assert_int_equal(cf_fit_run(p, 10, &f, NULL), CF_OK);
        e = fabs(cf_fit_predict(&f, 2097152.0) / p[9].time_s - 1.0);
        within += e <= 0.25;
        worst = fmax(worst, e);
        if (sweep == 0)
            assert_true(e <= 0.25);
    }
    if (within < 196)
        fail_msg("2 MiB within 25 %% in %d of 200 sweeps (worst %.0f %%)", within, 100 * worst);
    /* without noise: within 10 % */
    {
        cf_point_t p[10];
        cf_fit_t f;
        for (int i = 0; i < 10; i++)
            p[i] = (cf_point_t){sizes[i], 314e-6 * pow(sizes[i] / 2097152.0, 0.72), 100};
        assert_int_equal(cf_fit_run(p, 10, &f, NULL), CF_OK);
        assert_rel(cf_fit_predict(&f, 2097152.0), 314e-6, 0.10);
    }
}

static void test_startup_share_lesson(void **state)
{
    cf_point_t p[NPOW];
    cf_point_t one;
    cf_fit_t f;
    (void)state;

    make_hockney(p, ALPHA, BW, 0.0);
    assert_int_equal(cf_fit_hockney(p, NPOW, &f), CF_OK);

    one = (cf_point_t){1e6, 45e-6, 10};
    assert_rel(cf_fit_predict(&f, 1e6), 45e-6, 1e-6);
    assert_rel(cf_fit_startup_share(&f, &one, 1), 5.0 / 45.0, 1e-6);
    assert_true(fabs(cf_fit_startup_share(&f, &one, 1) - 0.111) < 0.0005);
    assert_string_equal(cf_verdict(cf_fit_startup_share(&f, &one, 1)), "bandwidth-bound");

    one = (cf_point_t){1e3, 5.04e-6, 10};
    assert_rel(cf_fit_predict(&f, 1e3), 5.04e-6, 1e-6);
    assert_rel(cf_fit_startup_share(&f, &one, 1), 5.0 / 5.04, 1e-6);
    assert_true(fabs(cf_fit_startup_share(&f, &one, 1) - 0.992) < 0.0005);
    assert_string_equal(cf_verdict(cf_fit_startup_share(&f, &one, 1)), "startup-bound");

    /* Weighted over calls: 1 call of 1 MB and 9 of 1 kB. */
    {
        cf_point_t mix[2] = {{1e6, 0, 1}, {1e3, 0, 9}};
        double want = (10 * 5e-6) / (45e-6 + 9 * 5.04e-6);
        assert_rel(cf_fit_startup_share(&f, mix, 2), want, 1e-6);
    }
}

static void test_verdict(void **state)
{
    (void)state;
    assert_string_equal(cf_verdict(0.51), "startup-bound");
    assert_string_equal(cf_verdict(0.5), "bandwidth-bound");
    assert_string_equal(cf_verdict(0.0), "bandwidth-bound");
    assert_string_equal(cf_verdict(NAN), "undetermined");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_recovery),
        cmocka_unit_test(test_input_order_irrelevant),
        cmocka_unit_test(test_noise),
        cmocka_unit_test(test_noise_ci_coverage),
        cmocka_unit_test(test_outliers),
        cmocka_unit_test(test_ends_never_dropped),
        cmocka_unit_test(test_kept_output),
        cmocka_unit_test(test_token_bucket),
        cmocka_unit_test(test_tiny_sizes_flat),
        cmocka_unit_test(test_stray_first_bin),
        cmocka_unit_test(test_headline_is_the_ends),
        cmocka_unit_test(test_bandwidth_uncertain_short_tail),
        cmocka_unit_test(test_protocol_switch),
        cmocka_unit_test(test_protocol_switch_noisy),
        cmocka_unit_test(test_three_segments),
        cmocka_unit_test(test_repeated_sizes),
        cmocka_unit_test(test_two_sizes_nodata),
        cmocka_unit_test(test_zero_weight_ignored),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_flat_time_infinite_bandwidth),
        cmocka_unit_test(test_zero_alpha_constrained),
        cmocka_unit_test(test_heavy_weight),
        cmocka_unit_test(test_switch_despite_call_imbalance),
        cmocka_unit_test(test_no_split_on_noise_with_sweep_calls),
        cmocka_unit_test(test_real_allreduce_sweep),
        cmocka_unit_test(test_real_pingpong_sweep),
        cmocka_unit_test(test_bending_sweep_refined),
        cmocka_unit_test(test_startup_share_lesson),
        cmocka_unit_test(test_verdict),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
