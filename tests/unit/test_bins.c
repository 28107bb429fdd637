/* Size bins, time histograms, keys and the stats table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "cf_bins.h"

static void test_size_bins(void **state)
{
    (void)state;
    assert_int_equal(cf_size_bin(0), 0);
    assert_int_equal(cf_size_bin(1), 1);
    assert_int_equal(cf_size_bin(2), 2);
    assert_int_equal(cf_size_bin(3), 2);
    assert_int_equal(cf_size_bin(4), 3);
    assert_int_equal(cf_size_bin(8192), 14);
    assert_int_equal(cf_size_bin(16383), 14);
    assert_int_equal(cf_size_bin(UINT64_MAX), 64);
    /* every size lies inside the bounds of its bin, and bins tile the line */
    for (unsigned b = 1; b < CF_SIZE_BINS; b++) {
        assert_int_equal(cf_size_bin(cf_size_bin_lo(b)), b);
        assert_int_equal(cf_size_bin(cf_size_bin_hi(b)), b);
        if (b + 1 < CF_SIZE_BINS)
            assert_true(cf_size_bin_hi(b) + 1 == cf_size_bin_lo(b + 1));
    }
}

static void test_hist_bins(void **state)
{
    (void)state;
    /* exact below 8, then 8 sub-buckets per power of two */
    for (uint64_t v = 0; v < 8; v++)
        assert_int_equal(cf_hist_bin(v), v);
    assert_int_equal(cf_hist_bin(8), 8);
    assert_int_equal(cf_hist_bin(15), 15);
    assert_int_equal(cf_hist_bin(16), 16);
    assert_int_equal(cf_hist_bin(17), 16);
    assert_int_equal(cf_hist_bin(18), 17);
    assert_int_equal(cf_hist_bin(UINT64_MAX), CF_HIST_N - 1);
    /* every value lies in [lo, lo + width) of its bucket; width <= 1/8 of lo */
    for (uint64_t v = 1; v < (1ull << 40); v = v * 3 / 2 + 1) {
        unsigned i = cf_hist_bin(v);
        assert_true(cf_hist_bin_lo(i) <= v);
        assert_true(v < cf_hist_bin_lo(i) + cf_hist_bin_width(i));
        if (v >= 8)
            assert_true(cf_hist_bin_width(i) * 8 <= cf_hist_bin_lo(i));
    }
}

static void test_quantiles(void **state)
{
    (void)state;
    uint32_t h[CF_HIST_N] = {0};
    /* 1000 samples of 1..1000 us in ns: median 500 us, p99 990 us within 6.25 % */
    for (uint64_t i = 1; i <= 1000; i++)
        h[cf_hist_bin(i * 1000)]++;
    double p50 = cf_hist_quantile(h, 0.5, 1000, 1000000);
    double p99 = cf_hist_quantile(h, 0.99, 1000, 1000000);
    assert_true(p50 > 500000 * 0.9375 && p50 < 500000 * 1.0625);
    assert_true(p99 > 990000 * 0.9375 && p99 < 990000 * 1.0625);
    /* a single value comes back exactly, thanks to the min/max clamp */
    uint32_t one[CF_HIST_N] = {0};
    one[cf_hist_bin(123456)] = 10;
    assert_true(cf_hist_quantile(one, 0.5, 123456, 123456) == 123456.0);
    uint32_t none[CF_HIST_N] = {0};
    assert_true(cf_hist_quantile(none, 0.5, 0, 0) == 0.0);
}

/* a time bucket counts up and a full one stays full (the hot path's
 * increment is two instructions on x86, plain C elsewhere) */
static void test_hist_inc(void **state)
{
    uint32_t b[3] = {0, UINT32_MAX - 1, UINT32_MAX};
    (void)state;
    for (int i = 0; i < 3; i++)
        cf_hist_inc(&b[i]);
    assert_int_equal(b[0], 1);
    assert_int_equal(b[1], UINT32_MAX);
    assert_int_equal(b[2], UINT32_MAX);
    cf_hist_inc(&b[1]);
    assert_int_equal(b[1], UINT32_MAX);
}

static void test_key_roundtrip(void **state)
{
    (void)state;
    uint64_t k = cf_key_make(CF_LAYER_UCX, 393, 0xdeadbeefu, CF_PATH_INTER, 6789, 37);
    assert_int_equal(cf_key_layer(k), CF_LAYER_UCX);
    assert_int_equal(cf_key_op(k), 393);
    assert_int_equal(cf_key_comm(k), 0xdeadbeefu);
    assert_int_equal(cf_key_path(k), CF_PATH_INTER);
    assert_int_equal(cf_key_region(k), 6789);
    assert_int_equal(cf_key_bin(k), 37);
    /* operation 1 with every other field 0 is still not the empty key */
    assert_true(cf_key_make(CF_LAYER_MPI, 1, 0, 0, 0, 0) != 0);
}

static void test_stats_merge(void **state)
{
    (void)state;
    cf_stat_t a = {.key = 5}, b = {.key = 5};
    cf_stat_add(&a, 100, 50);
    cf_stat_add(&a, 100, 70);
    cf_stat_add(&b, 300, 20);
    cf_stat_merge(&a, &b);
    assert_int_equal(a.calls, 3);
    assert_int_equal(a.bytes, 500);
    assert_int_equal(a.t_sum, 140);
    assert_int_equal(a.t_min, 20);
    assert_int_equal(a.t_max, 70);
    uint64_t n = 0;
    for (unsigned i = 0; i < CF_HIST_N; i++)
        n += a.hist[i];
    assert_int_equal(n, 3);
    /* merging an empty stat changes nothing */
    cf_stat_t e = {.key = 5};
    cf_stat_merge(&a, &e);
    assert_int_equal(a.calls, 3);
    assert_int_equal(a.t_min, 20);
}

static void test_table_fixed_budget(void **state)
{
    (void)state;
    cf_table_t t;
    assert_int_equal(cf_table_init(&t, 64), CF_OK);
    assert_int_equal(t.cap, 64);
    /* 63 keys fit (one slot stays free), the rest are counted as dropped */
    for (uint64_t k = 1; k <= 100; k++) {
        cf_stat_t *s = cf_table_get(&t, k * 1000003);
        if (s)
            cf_stat_add(s, 1, 1);
    }
    assert_int_equal(t.used, 63);
    assert_int_equal(t.dropped, 37);
    assert_int_equal(t.used + t.dropped, 100);
    /* existing keys are still found when the table is full */
    cf_stat_t *s = cf_table_get(&t, 1000003);
    assert_non_null(s);
    assert_int_equal(s->calls, 1);
    cf_table_fini(&t);

    /* a large table nearly full: a new key costs at most CF_TABLE_PROBE
     * probes, then a drop; every key placed is found again */
    assert_int_equal(cf_table_init(&t, 4096), CF_OK);
    uint64_t placed = 0;
    for (uint64_t k = 1; k <= 5000; k++)
        placed += cf_table_get(&t, k) != NULL;
    assert_int_equal(placed, t.used);
    assert_int_equal(t.used + t.dropped, 5000);
    for (uint64_t k = 1, found = 0; k <= 5000; k++) {
        found += t.slots != NULL && cf_table_get(&t, k) != NULL && cf_table_get(&t, k)->key == k;
        if (k == 5000)
            assert_int_equal(found, t.used);
    }
    /* the walk by fill order visits every filled slot once, and no other:
     * the keys were inserted ascending, so the walk reads them ascending */
    uint32_t filled = 0, walked = 0;
    for (uint32_t i = 0; i < t.cap; i++)
        filled += t.slots[i].key != 0;
    assert_int_equal(cf_table_count(&t), filled);
    for (uint32_t k = 0, prev = 0; k < cf_table_count(&t); k++, walked++) {
        const cf_stat_t *e = cf_table_nth(&t, k);
        assert_true(e->key > prev);
        assert_ptr_equal(cf_table_find(&t, e->key), e);
        prev = (uint32_t)e->key;
    }
    assert_int_equal(walked, filled);
    cf_table_fini(&t);
}

static void test_keys_union(void **state)
{
    (void)state;
    uint64_t a[] = {1, 4, 9, 12}, b[] = {2, 4, 10, 12, 20}, out[16];
    int over = 0;
    size_t n = cf_keys_union(a, 4, b, 5, out, 16, &over);
    uint64_t want[] = {1, 2, 4, 9, 10, 12, 20};
    assert_int_equal(n, 7);
    assert_memory_equal(out, want, sizeof(want));
    assert_int_equal(over, 0);
    /* an empty side, and a cap that cuts the union: the flag says so */
    assert_int_equal(cf_keys_union(a, 4, b, 0, out, 16, &over), 4);
    assert_int_equal(over, 0);
    assert_int_equal(cf_keys_union(a, 4, b, 5, out, 5, &over), 5);
    assert_int_equal(over, 1);
    assert_int_equal(out[4], 10);
}

/* The cross-rank merge: union of every rank's keys, then stats summed key by
 * key, gives what one table holding every call would have held. */
static void test_merge_ranks(void **state)
{
    (void)state;
    enum { RANKS = 3, KEYS = 40 };
    cf_table_t rank[RANKS], all;
    assert_int_equal(cf_table_init(&all, 256), CF_OK);
    unsigned seed = 7;
    for (int r = 0; r < RANKS; r++) {
        assert_int_equal(cf_table_init(&rank[r], 256), CF_OK);
        for (int i = 0; i < 500; i++) {
            uint64_t key = cf_key_make(0, 1 + (unsigned)(rand_r(&seed) % 5), CF_COMM_ID_WORLD, 1, 0,
                                       (unsigned)(rand_r(&seed) % 8)) + (uint64_t)r * (i % 2);
            uint64_t bytes = (uint64_t)(rand_r(&seed) % 1000), t = 100 + (uint64_t)(rand_r(&seed) % 5000);
            cf_stat_add(cf_table_get(&rank[r], key), bytes, t);
            cf_stat_add(cf_table_get(&all, key), bytes, t);
        }
    }
    /* the union, as the reduction tree builds it: rank by rank */
    uint64_t u[KEYS * RANKS * 4], tmp[KEYS * RANKS * 4], mine[256];
    size_t nu = 0;
    int over = 0;
    for (int r = 0; r < RANKS; r++) {
        size_t m = 0;
        for (uint32_t s = 0; s < rank[r].cap; s++)
            if (rank[r].slots[s].key)
                mine[m++] = rank[r].slots[s].key;
        for (size_t x = 1; x < m; x++) /* insertion sort: small lists */
            for (size_t y = x; y > 0 && mine[y - 1] > mine[y]; y--) {
                uint64_t k = mine[y];
                mine[y] = mine[y - 1];
                mine[y - 1] = k;
            }
        nu = cf_keys_union(u, nu, mine, m, tmp, CF_ARRAY_LEN(tmp), &over);
        memcpy(u, tmp, nu * sizeof(uint64_t));
    }
    assert_int_equal(over, 0);
    assert_int_equal(nu, all.used);
    for (size_t i = 0; i < nu; i++) {
        cf_stat_t sum = {.key = u[i]};
        for (int r = 0; r < RANKS; r++) {
            cf_stat_t *s = cf_table_get(&rank[r], u[i]);
            if (s->calls)
                cf_stat_merge(&sum, s);
        }
        cf_stat_t *want = cf_table_get(&all, u[i]);
        assert_int_equal(sum.calls, want->calls);
        assert_int_equal(sum.bytes, want->bytes);
        assert_int_equal(sum.t_sum, want->t_sum);
        assert_int_equal(sum.t_min, want->t_min);
        assert_int_equal(sum.t_max, want->t_max);
        assert_memory_equal(sum.hist, want->hist, sizeof(sum.hist));
    }
    for (int r = 0; r < RANKS; r++)
        cf_table_fini(&rank[r]);
    cf_table_fini(&all);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size_bins),   cmocka_unit_test(test_hist_bins),
        cmocka_unit_test(test_quantiles),   cmocka_unit_test(test_key_roundtrip),
        cmocka_unit_test(test_stats_merge), cmocka_unit_test(test_table_fixed_budget),
        cmocka_unit_test(test_keys_union),  cmocka_unit_test(test_merge_ranks),
        cmocka_unit_test(test_hist_inc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
