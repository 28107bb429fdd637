/* Parsing and formatting of times, sizes and rates. */
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cf_common.h"
#include "cf_units.h"

static double time_of(const char *s)
{
    double v = -1;
    int rc = cf_parse_time(s, &v);
    if (rc != CF_OK)
        fail_msg("cf_parse_time(\"%s\") = %d", s, rc);
    return v;
}

static double size_of(const char *s)
{
    double v = -1;
    int rc = cf_parse_size(s, &v);
    if (rc != CF_OK)
        fail_msg("cf_parse_size(\"%s\") = %d", s, rc);
    return v;
}

static double rate_of(const char *s)
{
    double v = -1;
    int rc = cf_parse_rate(s, &v);
    if (rc != CF_OK)
        fail_msg("cf_parse_rate(\"%s\") = %d", s, rc);
    return v;
}

/* Equality is exact on purpose: unit exponents are folded into one
 * correctly rounded conversion. */
/* The blocking operation a nonblocking, persistent or large-count one stands for. */
static void test_blocking_op_name(void **state)
{
    static const char *cases[][3] = {
        {"MPI_Iallreduce", "MPI_Allreduce", "1"}, {"MPI_Isend", "MPI_Send", "1"},
        {"MPI_Allreduce_init", "MPI_Allreduce", "1"}, {"MPI_Iallreduce_c", "MPI_Allreduce", "1"},
        {"MPI_Send_init", "MPI_Send", "1"}, {"MPI_Allreduce", "MPI_Allreduce", "0"},
        {"MPI_Ibarrier", "MPI_Barrier", "1"}, {"ucp_tag_send_nbx", "ucp_tag_send_nbx", "0"},
    };
    char buf[48];
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(cf_blocking_op_name(cases[i][0], buf, sizeof(buf)), cases[i][2][0] - '0');
        assert_string_equal(buf, cases[i][1]);
    }
    assert_int_equal(cf_blocking_op_name("MPI_Iallreduce", buf, 8), 0); /* does not fit */
    assert_string_equal(buf, "");
}

static void test_parse_time(void **state)
{
    (void)state;
    assert_true(time_of("5us") == 5e-6);
    assert_true(time_of("5 us") == 5e-6);
    assert_true(time_of("5\u00b5s") == 5e-6);
    assert_true(time_of("5\u03bcs") == 5e-6);
    assert_true(time_of("5usec") == 5e-6);
    assert_true(time_of("1.5ms") == 1.5e-3);
    assert_true(time_of("1.5 MS") == 1.5e-3);
    assert_true(time_of("2e-6") == 2e-6);
    assert_true(time_of("  3 s  ") == 3.0);
    assert_true(time_of("1ns") == 1e-9);
    assert_true(time_of("250 nsec") == 250e-9);
    assert_true(time_of(".5s") == 0.5);
    assert_true(time_of("5.") == 5.0);
    assert_true(time_of("+1us") == 1e-6);
    assert_true(time_of("0") == 0.0);
    assert_true(time_of("1.5e3us") == 1.5e-3);
}

static void test_parse_time_invalid(void **state)
{
    static const char *bad[] = {"",     "   ",  "-1us", "-0",   "nan", "inf", "infinity",
                                "5 xs", "5us junk", "us", "5 u s", "1e", ".", "0x10",
                                "5min", "5 s s", "1,5ms", "5Us2"};
    double v = 42;
    (void)state;
    for (size_t i = 0; i < CF_ARRAY_LEN(bad); i++) {
        int rc = cf_parse_time(bad[i], &v);
        if (rc != CF_ERR_INVALID)
            fail_msg("cf_parse_time(\"%s\") = %d, want CF_ERR_INVALID", bad[i], rc);
    }
    assert_int_equal(cf_parse_time(NULL, &v), CF_ERR_INVALID);
    assert_true(v == 42); /* untouched on error */
    assert_int_equal(cf_parse_time("1e999s", &v), CF_ERR_RANGE);
}

static void test_parse_size(void **state)
{
    (void)state;
    assert_true(size_of("1MB") == 1e6);
    assert_true(size_of("1 MB") == 1e6);
    assert_true(size_of("1kB") == 1e3);
    assert_true(size_of("1KB") == 1e3);
    assert_true(size_of("1k") == 1e3);
    assert_true(size_of("4096") == 4096);
    assert_true(size_of("1KiB") == 1024);
    assert_true(size_of("64 KiB") == 65536);
    assert_true(size_of("1MiB") == 1048576);
    assert_true(size_of("1GiB") == 1073741824.0);
    assert_true(size_of("1TiB") == 1099511627776.0);
    assert_true(size_of("25 MiB") == 25 * 1048576.0);
    assert_true(size_of("1GB") == 1e9);
    assert_true(size_of("2.5 GB") == 2.5e9);
    assert_true(size_of("1TB") == 1e12);
    assert_true(size_of("1 byte") == 1);
    assert_true(size_of("64 bytes") == 64);
    assert_true(size_of("0") == 0);
    assert_true(size_of("128M") == 128e6);
}

static void test_parse_size_invalid(void **state)
{
    static const char *bad[] = {"",       "1Mb",  "1mB", "-1",  "1 MB/s", "1XB",
                                "MB",     "1 M B", "1MBx", "nan", "1Kib2",  "1 bits"};
    double v = 42;
    (void)state;
    for (size_t i = 0; i < CF_ARRAY_LEN(bad); i++) {
        int rc = cf_parse_size(bad[i], &v);
        if (rc != CF_ERR_INVALID)
            fail_msg("cf_parse_size(\"%s\") = %d, want CF_ERR_INVALID", bad[i], rc);
    }
    assert_true(v == 42);
    assert_int_equal(cf_parse_size("1e400", &v), CF_ERR_RANGE);
    assert_int_equal(cf_parse_size("1e305TiB", &v), CF_ERR_RANGE);
}

static void test_parse_rate(void **state)
{
    (void)state;
    assert_true(rate_of("400Gb/s") == 50e9);
    assert_true(rate_of("25GB/s") == 25e9);
    assert_true(rate_of("25 GB/s") == 25e9);
    assert_true(rate_of("100Gbit/s") == 12.5e9);
    assert_true(rate_of("100 Gbits/s") == 12.5e9);
    assert_true(rate_of("1e9") == 1e9);
    assert_true(rate_of("10Gbps") == 1.25e9);
    assert_true(rate_of("25GBps") == 25e9);
    assert_true(rate_of("1 GiB/s") == 1073741824.0);
    assert_true(rate_of("12.5 GB/sec") == 12.5e9);
    assert_true(rate_of("800 Mb/s") == 100e6);
    assert_true(rate_of("200 kB/s") == 200e3);
    assert_true(rate_of("8 b/s") == 1);
    assert_true(rate_of("3 bytes/s") == 3);
}

static void test_parse_rate_invalid(void **state)
{
    static const char *bad[] = {"",   "25GB", "25G",    "25 GB/h", "-1GB/s", "GB/s",
                                "25 GB /s", "25 mB/s", "nan", "25GB/s/s", "25 Gx/s"};
    double v = 42;
    (void)state;
    for (size_t i = 0; i < CF_ARRAY_LEN(bad); i++) {
        int rc = cf_parse_rate(bad[i], &v);
        if (rc != CF_ERR_INVALID)
            fail_msg("cf_parse_rate(\"%s\") = %d, want CF_ERR_INVALID", bad[i], rc);
    }
    /* Every model divides by the bandwidth. */
    assert_int_equal(cf_parse_rate("0", &v), CF_ERR_RANGE);
    assert_int_equal(cf_parse_rate("0 GB/s", &v), CF_ERR_RANGE);
    assert_true(v == 42);
}

static void test_parse_link(void **state)
{
    double B = 0, a = 0;
    (void)state;
    assert_int_equal(cf_parse_link("400Gb/s,5us", &B, &a), CF_OK);
    assert_true(B == 50e9 && a == 5e-6);
    assert_int_equal(cf_parse_link("2us,25GB/s", &B, &a), CF_OK);
    assert_true(B == 25e9 && a == 2e-6);
    assert_int_equal(cf_parse_link(" 100 Gbit/s , 1.5 us ", &B, &a), CF_OK);
    assert_true(B == 12.5e9 && a == 1.5e-6);

    B = a = 7;
    assert_int_equal(cf_parse_link("400Gb/s", &B, &a), CF_ERR_INVALID);
    assert_int_equal(cf_parse_link("400Gb/s,5us,1us", &B, &a), CF_ERR_INVALID);
    assert_int_equal(cf_parse_link("5us,6us", &B, &a), CF_ERR_INVALID);
    assert_int_equal(cf_parse_link("25GB/s,50GB/s", &B, &a), CF_ERR_INVALID);
    assert_int_equal(cf_parse_link("400Gb/s,1e-6", &B, &a), CF_ERR_INVALID);
    assert_int_equal(cf_parse_link("1e9,5us", &B, &a), CF_ERR_INVALID);
    assert_int_equal(cf_parse_link(",", &B, &a), CF_ERR_INVALID);
    assert_int_equal(cf_parse_link("-400Gb/s,5us", &B, &a), CF_ERR_INVALID);
    assert_int_equal(cf_parse_link(NULL, &B, &a), CF_ERR_INVALID);
    assert_true(B == 7 && a == 7);
}

#define ASSERT_FMT(fn, v, want)                                  \
    do {                                                         \
        char b_[CF_FMT_LEN];                                     \
        assert_string_equal(fn((v), b_, sizeof(b_)), (want));    \
    } while (0)

static void test_fmt_time(void **state)
{
    (void)state;
    ASSERT_FMT(cf_fmt_time, 45e-6, "45.0 us");
    ASSERT_FMT(cf_fmt_time, 5.04e-6, "5.04 us");
    ASSERT_FMT(cf_fmt_time, 5e-6, "5.00 us");
    ASSERT_FMT(cf_fmt_time, 40e-6, "40.0 us");
    ASSERT_FMT(cf_fmt_time, 0.04e-6, "40.0 ns");
    ASSERT_FMT(cf_fmt_time, 1.0, "1.00 s");
    ASSERT_FMT(cf_fmt_time, 0.0015, "1.50 ms");
    ASSERT_FMT(cf_fmt_time, 999.96e-6, "1.00 ms");
    ASSERT_FMT(cf_fmt_time, 9.996e-6, "10.0 us");
    ASSERT_FMT(cf_fmt_time, 123.4e-3, "123 ms");
    ASSERT_FMT(cf_fmt_time, 1.234e-9, "1.23 ns");
    ASSERT_FMT(cf_fmt_time, 5e-10, "0.500 ns");
    ASSERT_FMT(cf_fmt_time, 0.0, "0 s");
    ASSERT_FMT(cf_fmt_time, 3600.0, "3600 s");
    ASSERT_FMT(cf_fmt_time, -5e-6, "-5.00 us");
    ASSERT_FMT(cf_fmt_time, INFINITY, "inf");
    ASSERT_FMT(cf_fmt_time, NAN, "n/a");
}

static void test_fmt_size_rate(void **state)
{
    (void)state;
    ASSERT_FMT(cf_fmt_size, 1e6, "1.00 MB");
    ASSERT_FMT(cf_fmt_size, 125e3, "125 kB");
    ASSERT_FMT(cf_fmt_size, 512, "512 B");
    ASSERT_FMT(cf_fmt_size, 8, "8 B");
    ASSERT_FMT(cf_fmt_size, 3.5, "3.50 B");
    ASSERT_FMT(cf_fmt_size, 1024, "1.02 kB");
    ASSERT_FMT(cf_fmt_size, 999999, "1.00 MB");
    ASSERT_FMT(cf_fmt_size, 26214400, "26.2 MB");
    ASSERT_FMT(cf_fmt_size, 2.5e12, "2.50 TB");
    ASSERT_FMT(cf_fmt_size, 0, "0 B");
    ASSERT_FMT(cf_fmt_rate, 25e9, "25.0 GB/s");
    ASSERT_FMT(cf_fmt_rate, 1e6 / 45e-6, "22.2 GB/s");
    ASSERT_FMT(cf_fmt_rate, 50e9, "50.0 GB/s");
    ASSERT_FMT(cf_fmt_rate, 1e3, "1.00 kB/s");
    ASSERT_FMT(cf_fmt_rate, 950, "950 B/s");
    ASSERT_FMT(cf_fmt_rate, 2e12, "2.00 TB/s");
    ASSERT_FMT(cf_fmt_rate, INFINITY, "inf");
}

static void test_fmt_small_buffer(void **state)
{
    char b[5];
    (void)state;
    memset(b, 'x', sizeof(b));
    assert_ptr_equal(cf_fmt_time(45e-6, b, sizeof(b)), b);
    assert_string_equal(b, "45.0");
    assert_null(cf_fmt_size(1, NULL, 0));
}

/* What is printed parses back to what was printed. */
static void test_round_trip(void **state)
{
    static const double times[] = {1e-9, 3.3e-7, 5.04e-6, 45e-6, 0.0123, 2.5};
    static const double sizes[] = {1, 999, 1024, 125e3, 1e6, 3.3e9};
    static const double rates[] = {950, 1.5e6, 22.2e9, 50e9};
    char b[CF_FMT_LEN];
    double v;
    (void)state;
    for (size_t i = 0; i < CF_ARRAY_LEN(times); i++) {
        assert_int_equal(cf_parse_time(cf_fmt_time(times[i], b, sizeof(b)), &v), CF_OK);
        assert_true(fabs(v - times[i]) <= 0.005 * times[i]);
    }
    for (size_t i = 0; i < CF_ARRAY_LEN(sizes); i++) {
        assert_int_equal(cf_parse_size(cf_fmt_size(sizes[i], b, sizeof(b)), &v), CF_OK);
        assert_true(fabs(v - sizes[i]) <= 0.005 * sizes[i]);
    }
    for (size_t i = 0; i < CF_ARRAY_LEN(rates); i++) {
        assert_int_equal(cf_parse_rate(cf_fmt_rate(rates[i], b, sizeof(b)), &v), CF_OK);
        assert_true(fabs(v - rates[i]) <= 0.005 * rates[i]);
    }
}

static void test_forms(void **state)
{
    (void)state;
    assert_non_null(strstr(cf_units_time_forms, "us"));
    assert_non_null(strstr(cf_units_size_forms, "MiB"));
    assert_non_null(strstr(cf_units_rate_forms, "Gb/s"));
    assert_non_null(strstr(cf_units_link_forms, "400Gb/s,5us"));
}

/* The plugin parses inside applications that may set a locale with a
 * decimal comma. */
static void test_locale_independent(void **state)
{
    static const char *locales[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "de_DE"};
    const char *set = NULL;
    double v = 0;
    (void)state;
    for (size_t i = 0; i < CF_ARRAY_LEN(locales) && set == NULL; i++)
        set = setlocale(LC_NUMERIC, locales[i]);
    if (set == NULL)
        skip();
    assert_int_equal(cf_parse_time("2.5us", &v), CF_OK);
    setlocale(LC_NUMERIC, "C");
    assert_true(v == 2.5e-6);
}

/* Values no unit reads well (a corrupt profile, a denormal) print in
 * scientific form, never as "nan" or a run of digits. */
static void test_fmt_extremes(void **state)
{
    char b[64];
    (void)state;
    assert_string_equal(cf_fmt_time(1e-306, b, sizeof(b)), "1e-297 ns");
    assert_string_equal(cf_fmt_time(5e-324, b, sizeof(b)), "4.94e-315 ns");
    assert_string_equal(cf_fmt_time(1e306, b, sizeof(b)), "1e+306 s");
    assert_string_equal(cf_fmt_size(1e300, b, sizeof(b)), "1e+288 TB");
    assert_string_equal(cf_fmt_rate(-1e-306, b, sizeof(b)), "-1e-306 B/s");
    assert_null(strstr(cf_fmt_time(1e-310, b, sizeof(b)), "nan"));
}

/* The tools' hash index: every position stored under a hash is found, in
 * the order stored, also among colliding hashes and after the table wraps;
 * an empty index finds nothing. */
static void test_index(void **state)
{
    cf_index_t x = {0, NULL};
    size_t cur = 0, pos, n = 0, last = 0;
    (void)state;

    assert_int_equal(cf_index_next(&x, 5, &cur, &pos), 0);
    assert_int_equal(cf_index_init(&x, 1000), CF_OK);
    for (size_t i = 0; i < 1000; i++)
        cf_index_put(&x, (i % 7) == 3 ? x.mask : i % 7, i); /* hash mask: probes wrap to 0 */
    for (uint64_t h = 0; h < 7; h++) {
        uint64_t key = h == 3 ? x.mask : h;
        cur = 0;
        n = 0;
        while (cf_index_next(&x, key, &cur, &pos)) {
            if (pos % 7 != h)
                continue; /* another hash's entry in the probe run: callers compare items */
            assert_true(n == 0 || pos > last);
            last = pos;
            n++;
        }
        assert_int_equal(n, (1000 - h + 6) / 7);
    }
    cf_index_free(&x);
    assert_null(x.slot);
}

/* cf_median: odd and even counts, unsorted input, none. */
static void test_median(void **state)
{
    double odd[] = {5, 1, 4, 2, 3}, even[] = {10, 2, 8, 4}, one[] = {7};
    (void)state;
    assert_true(cf_median(odd, 5) == 3.0);
    assert_true(cf_median(even, 4) == 6.0);
    assert_true(cf_median(one, 1) == 7.0);
    assert_true(isnan(cf_median(NULL, 0)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index),
        cmocka_unit_test(test_blocking_op_name),
        cmocka_unit_test(test_parse_time),
        cmocka_unit_test(test_median),
        cmocka_unit_test(test_parse_time_invalid),
        cmocka_unit_test(test_parse_size),
        cmocka_unit_test(test_parse_size_invalid),
        cmocka_unit_test(test_parse_rate),
        cmocka_unit_test(test_parse_rate_invalid),
        cmocka_unit_test(test_parse_link),
        cmocka_unit_test(test_fmt_time),
        cmocka_unit_test(test_fmt_size_rate),
        cmocka_unit_test(test_fmt_small_buffer),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_forms),
        cmocka_unit_test(test_locale_independent),
        cmocka_unit_test(test_fmt_extremes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
