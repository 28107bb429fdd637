/* Collective cost models against the reference sheet (docs/models.md). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cf_models.h"

#define ALPHA 5e-6
#define BW 25e9

static void assert_rel(double got, double want, double tol)
{
    double rel = want == 0 ? fabs(got) : fabs(got - want) / fabs(want);
    if (!(rel <= tol))
        fail_msg("got %.12g, want %.12g", got, want);
}

static void test_ring_allreduce_exact(void **state)
{
    double A, C, G;
    (void)state;
    /* The worked example: bit-for-bit, not approximately. */
    assert_true(cf_model_time(CF_COLL_ALLREDUCE, "ring", 4, 1e6, 5e-6, 25e9, 0) ==
                2 * 3 * 5e-6 + 2.0 * 3 / 4 * 1e6 / 25e9);
    assert_true(cf_model_time(CF_COLL_ALLREDUCE, NULL, 4, 1e6, 5e-6, 25e9, 0) ==
                2 * 3 * 5e-6 + 2.0 * 3 / 4 * 1e6 / 25e9);
    assert_int_equal(cf_model_coeffs(CF_COLL_ALLREDUCE, "ring", 4, &A, &C, &G), CF_OK);
    assert_true(A == 6 && C == 1.5 && G == 0.75);
    /* with a reduction cost */
    assert_rel(cf_model_time(CF_COLL_ALLREDUCE, "ring", 4, 1e6, ALPHA, BW, 1e-10),
               30e-6 + 60e-6 + 0.75 * 1e6 * 1e-10, 1e-12);
}

static void test_coefficients_of_sheet(void **state)
{
    static const struct {
        cf_coll_t c;
        const char *algo;
        int p;
        double A, C, G;
    } rows[] = {
        {CF_COLL_ALLREDUCE, "recursive_doubling", 8, 3, 3, 3},
        {CF_COLL_ALLREDUCE, "rabenseifner", 8, 6, 1.75, 0.875},
        {CF_COLL_ALLGATHER, "ring", 8, 7, 0.875, 0},
        {CF_COLL_ALLGATHER, "recursive_doubling", 8, 3, 0.875, 0},
        {CF_COLL_ALLGATHER, "bruck", 6, 3, 5.0 / 6, 0}, /* ceil(lg 6) rounds */
        {CF_COLL_REDUCE_SCATTER, "ring", 8, 7, 0.875, 0.875},
        {CF_COLL_REDUCE_SCATTER, "pairwise", 8, 7, 0.875, 0.875},
        {CF_COLL_REDUCE_SCATTER, "recursive_halving", 8, 3, 0.875, 0.875},
        {CF_COLL_REDUCE_SCATTER_BLOCK, NULL, 8, 7, 0.875, 0.875},
        {CF_COLL_BCAST, "binomial", 16, 4, 4, 0},
        {CF_COLL_BCAST, "scatter_allgather", 16, 19, 1.875, 0},
        {CF_COLL_REDUCE, "binomial", 16, 4, 4, 4},
        {CF_COLL_GATHER, "binomial", 16, 4, 0.9375, 0},
        {CF_COLL_SCATTER, NULL, 16, 4, 0.9375, 0},
        {CF_COLL_ALLTOALL, "pairwise", 4, 3, 0.75, 0},
        {CF_COLL_ALLTOALL, "bruck", 16, 4, 2, 0},
        {CF_COLL_BARRIER, "dissemination", 5, 3, 0, 0},
        {CF_COLL_SCAN, NULL, 8, 3, 3, 3},
        {CF_COLL_EXSCAN, NULL, 8, 3, 3, 3},
        {CF_COLL_P2P, NULL, 2, 1, 1, 0},
        {CF_COLL_ALLREDUCE, "ring", 1, 0, 0, 0},
    };
    (void)state;
    for (size_t i = 0; i < CF_ARRAY_LEN(rows); i++) {
        double A = -1, C = -1, G = -1;
        assert_int_equal(cf_model_coeffs(rows[i].c, rows[i].algo, rows[i].p, &A, &C, &G), CF_OK);
        if (fabs(A - rows[i].A) > 1e-12 || fabs(C - rows[i].C) > 1e-12 ||
            fabs(G - rows[i].G) > 1e-12)
            fail_msg("%s/%s p=%d: A %g C %g G %g", cf_coll_name(rows[i].c),
                     rows[i].algo ? rows[i].algo : "default", rows[i].p, A, C, G);
    }
}

static void test_coeffs_errors(void **state)
{
    double A = 9, C = 9, G = 9;
    (void)state;
    assert_int_equal(cf_model_coeffs(CF_COLL_ALLREDUCE, "bogus", 4, &A, &C, &G),
                     CF_ERR_INVALID);
    assert_int_equal(cf_model_coeffs(CF_COLL_BCAST, "ring", 4, &A, &C, &G), CF_ERR_INVALID);
    assert_int_equal(cf_model_coeffs(CF_COLL_NONE, NULL, 4, &A, &C, &G), CF_ERR_INVALID);
    assert_int_equal(cf_model_coeffs(CF_COLL_COUNT, NULL, 4, &A, &C, &G), CF_ERR_INVALID);
    assert_int_equal(cf_model_coeffs(CF_COLL_ALLREDUCE, NULL, 0, &A, &C, &G), CF_ERR_RANGE);
    assert_true(A == 9 && C == 9 && G == 9);
    assert_true(isnan(cf_model_time(CF_COLL_ALLREDUCE, NULL, 0, 1e6, ALPHA, BW, 0)));
    assert_true(isnan(cf_model_time(CF_COLL_ALLREDUCE, NULL, 4, -1, ALPHA, BW, 0)));
    assert_true(isnan(cf_model_time(CF_COLL_ALLREDUCE, NULL, 4, 1e6, ALPHA, 0, 0)));
    assert_true(isnan(cf_model_time(CF_COLL_ALLREDUCE, NULL, 4, 1e6, NAN, BW, 0)));
}

static void test_algo_names(void **state)
{
    (void)state;
    assert_int_equal(cf_model_coeffs(CF_COLL_ALLREDUCE, "Recursive-Doubling", 4,
                                     &(double){0}, &(double){0}, &(double){0}),
                     CF_OK);
    assert_string_equal(cf_model_algo_canonical(CF_COLL_ALLREDUCE, "RABENSEIFNER"),
                        "rabenseifner");
    assert_string_equal(cf_model_algo_canonical(CF_COLL_BCAST, "default"), "binomial");
    assert_null(cf_model_algo_canonical(CF_COLL_BCAST, "pairwise"));
    assert_string_equal(cf_model_algo_name(CF_COLL_ALLREDUCE, 1), "recursive_doubling");
    assert_null(cf_model_algo_name(CF_COLL_ALLREDUCE, 3));
    assert_null(cf_model_algo_name(CF_COLL_NONE, 0));
    assert_string_equal(cf_model_formula(CF_COLL_ALLREDUCE, NULL),
                        "2(p-1) alpha + 2(p-1)/p n/B + (p-1)/p n gamma");
    /* Every collective has a model, listed first under its default name. */
    for (int c = 0; c < CF_COLL_COUNT; c++) {
        assert_non_null(cf_model_algo_name((cf_coll_t)c, 0));
        assert_string_equal(cf_model_algo_name((cf_coll_t)c, 0),
                            cf_model_default_algo((cf_coll_t)c));
        for (int i = 0; cf_model_algo_name((cf_coll_t)c, i); i++)
            assert_non_null(cf_model_formula((cf_coll_t)c, cf_model_algo_name((cf_coll_t)c, i)));
    }
    assert_string_equal(cf_model_default_algo(CF_COLL_ALLGATHER), "ring");
    assert_string_equal(cf_model_default_algo(CF_COLL_REDUCE_SCATTER), "ring");
}

static void test_busbw_factors(void **state)
{
    (void)state;
    assert_true(cf_busbw_factor(CF_COLL_ALLREDUCE, 4) == 1.5);
    assert_true(cf_busbw_factor(CF_COLL_ALLREDUCE, 8) == 1.75);
    assert_true(cf_busbw_factor(CF_COLL_ALLGATHER, 4) == 0.75);
    assert_true(cf_busbw_factor(CF_COLL_REDUCE_SCATTER, 4) == 0.75);
    assert_true(cf_busbw_factor(CF_COLL_REDUCE_SCATTER_BLOCK, 4) == 0.75);
    assert_true(cf_busbw_factor(CF_COLL_ALLTOALL, 4) == 0.75);
    assert_true(cf_busbw_factor(CF_COLL_GATHER, 4) == 0.75);
    assert_true(cf_busbw_factor(CF_COLL_SCATTER, 4) == 0.75);
    assert_true(cf_busbw_factor(CF_COLL_BCAST, 4) == 1);
    assert_true(cf_busbw_factor(CF_COLL_REDUCE, 4) == 1);
    assert_true(cf_busbw_factor(CF_COLL_P2P, 2) == 1);
    assert_true(cf_busbw_factor(CF_COLL_ALLREDUCE, 1) == 0);
    assert_true(isnan(cf_busbw_factor(CF_COLL_NONE, 4)));
    assert_true(isnan(cf_busbw_factor(CF_COLL_ALLREDUCE, 0)));
}

/* busbw of an algorithm at the bandwidth bound is the link bandwidth. */
static void test_busbw_of_ideal_is_link(void **state)
{
    static const cf_coll_t bw_optimal[] = {CF_COLL_ALLREDUCE, CF_COLL_ALLGATHER,
                                           CF_COLL_REDUCE_SCATTER, CF_COLL_ALLTOALL};
    (void)state;
    for (size_t i = 0; i < CF_ARRAY_LEN(bw_optimal); i++) {
        cf_coll_t c = bw_optimal[i];
        double n = 1e9, t = cf_model_time(c, NULL, 8, n, 0, BW, 0);
        assert_rel(n / t * cf_busbw_factor(c, 8), BW, 1e-12);
    }
}

static void test_lower_bound(void **state)
{
    (void)state;
    assert_rel(cf_model_lower_bound(CF_COLL_ALLREDUCE, 8, 1e6, ALPHA, BW),
               3 * ALPHA + 1.75 * 1e6 / BW, 1e-12);
    assert_rel(cf_model_lower_bound(CF_COLL_ALLGATHER, 6, 1e6, ALPHA, BW),
               3 * ALPHA + 5.0 / 6 * 1e6 / BW, 1e-12);
    assert_rel(cf_model_lower_bound(CF_COLL_BCAST, 8, 1e6, ALPHA, BW), 3 * ALPHA + 1e6 / BW,
               1e-12);
    assert_rel(cf_model_lower_bound(CF_COLL_BARRIER, 8, 0, ALPHA, BW), 3 * ALPHA, 1e-12);
    assert_rel(cf_model_lower_bound(CF_COLL_P2P, 2, 1e6, ALPHA, BW), 45e-6, 1e-12);
    assert_true(cf_model_lower_bound(CF_COLL_BCAST, 1, 1e6, ALPHA, BW) == 0);
    assert_true(isnan(cf_model_lower_bound(CF_COLL_NONE, 8, 1e6, ALPHA, BW)));
    /* No algorithm beats the bound. */
    for (int c = 0; c < CF_COLL_COUNT; c++) {
        for (int p = 1; p <= 64; p++) {
            for (int i = 0; cf_model_algo_name((cf_coll_t)c, i); i++) {
                const char *a = cf_model_algo_name((cf_coll_t)c, i);
                for (double n = 1; n <= 1e9; n *= 1000) {
                    double t = cf_model_time((cf_coll_t)c, a, p, n, ALPHA, BW, 0);
                    double lb = cf_model_lower_bound((cf_coll_t)c, p, n, ALPHA, BW);
                    if (t < lb * (1 - 1e-12))
                        fail_msg("%s/%s p=%d n=%g: %g < bound %g", cf_coll_name((cf_coll_t)c), a,
                                 p, n, t, lb);
                }
            }
        }
    }
}

static void test_n_half(void **state)
{
    (void)state;
    /* docs/models.md: n_half,ring = p alpha B, growing with p. */
    for (int p = 2; p <= 1024; p *= 2) {
        double nh = cf_model_n_half(CF_COLL_ALLREDUCE, "ring", p, ALPHA, BW);
        double A, C, G;
        assert_rel(nh, p * ALPHA * BW, 1e-12);
        assert_int_equal(cf_model_coeffs(CF_COLL_ALLREDUCE, "ring", p, &A, &C, &G), CF_OK);
        assert_rel(A * ALPHA, C * nh / BW, 1e-12); /* startup == payload there */
    }
    assert_rel(cf_model_n_half(CF_COLL_P2P, NULL, 2, ALPHA, BW), 125e3, 1e-12);
    assert_true(isinf(cf_model_n_half(CF_COLL_BARRIER, NULL, 8, ALPHA, BW)));
    assert_true(cf_model_n_half(CF_COLL_ALLREDUCE, NULL, 8, 0, BW) == 0);
}

static void test_per_hop_round_trip(void **state)
{
    (void)state;
    for (int c = 0; c < CF_COLL_COUNT; c++) {
        for (int i = 0; cf_model_algo_name((cf_coll_t)c, i); i++) {
            const char *algo = cf_model_algo_name((cf_coll_t)c, i);
            double A, C, G, a_c, B_c, alpha = 0, B = 0;
            int p = 16;
            assert_int_equal(cf_model_coeffs((cf_coll_t)c, algo, p, &A, &C, &G), CF_OK);
            if (C == 0)
                continue;
            /* The collective's own line: T = A alpha + n / (B / C). */
            a_c = A * ALPHA;
            B_c = BW / C;
            assert_int_equal(cf_model_per_hop((cf_coll_t)c, algo, p, a_c, B_c, &alpha, &B), CF_OK);
            assert_rel(alpha, ALPHA, 1e-12);
            assert_rel(B, BW, 1e-12);
            for (double n = 1; n < 1e10; n *= 100)
                assert_rel(a_c + n / B_c, cf_model_time((cf_coll_t)c, algo, p, n, alpha, B, 0),
                           1e-12);
        }
    }
}

static void test_per_hop_edges(void **state)
{
    double alpha = 7, B = 7;
    (void)state;
    assert_int_equal(cf_model_per_hop(CF_COLL_ALLREDUCE, NULL, 1, 1e-6, 1e9, &alpha, &B),
                     CF_ERR_RANGE);
    assert_int_equal(cf_model_per_hop(CF_COLL_ALLREDUCE, NULL, 4, -1e-6, 1e9, &alpha, &B),
                     CF_ERR_INVALID);
    assert_int_equal(cf_model_per_hop(CF_COLL_ALLREDUCE, "nope", 4, 1e-6, 1e9, &alpha, &B),
                     CF_ERR_INVALID);
    assert_true(alpha == 7 && B == 7);
    assert_int_equal(cf_model_per_hop(CF_COLL_BARRIER, NULL, 8, 3e-6, 1e9, &alpha, &B), CF_OK);
    assert_rel(alpha, 1e-6, 1e-12);
    assert_true(isinf(B));
    assert_int_equal(cf_model_per_hop(CF_COLL_ALLREDUCE, NULL, 4, 30e-6, INFINITY, &alpha, &B),
                     CF_OK);
    assert_true(isinf(B));
}

static void test_names(void **state)
{
    static const struct {
        const char *s;
        cf_coll_t c;
    } rows[] = {
        {"allreduce", CF_COLL_ALLREDUCE},
        {"AllReduce", CF_COLL_ALLREDUCE},
        {"MPI_Allreduce", CF_COLL_ALLREDUCE},
        {"PMPI_Allreduce", CF_COLL_ALLREDUCE},
        {"MPI_Iallreduce", CF_COLL_ALLREDUCE},
        {"mpi_iallreduce", CF_COLL_ALLREDUCE},
        {"MPI_Allreduce_init", CF_COLL_ALLREDUCE},
        {"MPI_Allreduce_c", CF_COLL_ALLREDUCE},
        {"MPI_Allgatherv", CF_COLL_ALLGATHER},
        {"MPI_Iallgatherv", CF_COLL_ALLGATHER},
        {"MPI_Gatherv", CF_COLL_GATHER},
        {"MPI_Scatterv", CF_COLL_SCATTER},
        {"MPI_Alltoallv", CF_COLL_ALLTOALL},
        {"MPI_Alltoallw", CF_COLL_ALLTOALL},
        {"MPI_Reduce_scatter", CF_COLL_REDUCE_SCATTER},
        {"MPI_Reduce_scatter_block", CF_COLL_REDUCE_SCATTER_BLOCK},
        {"MPI_Ireduce_scatter_block", CF_COLL_REDUCE_SCATTER_BLOCK},
        {"MPI_Bcast", CF_COLL_BCAST},
        {"MPI_Ibcast", CF_COLL_BCAST},
        {"MPI_Reduce", CF_COLL_REDUCE},
        {"MPI_Barrier", CF_COLL_BARRIER},
        {"MPI_Ibarrier", CF_COLL_BARRIER},
        {"MPI_Scan", CF_COLL_SCAN},
        {"MPI_Exscan", CF_COLL_EXSCAN},
        {"MPI_Iexscan", CF_COLL_EXSCAN},
        {"reduce_scatter", CF_COLL_REDUCE_SCATTER},
        {"p2p", CF_COLL_P2P},
        {"sendrecv", CF_COLL_P2P},
        {"MPI_Send", CF_COLL_NONE},
        {"MPI_Sendrecv", CF_COLL_NONE},
        {"MPI_Isend", CF_COLL_NONE},
        {"MPI_Reduce_local", CF_COLL_NONE},
        {"MPI_Neighbor_allgather", CF_COLL_NONE},
        {"MPI_P2p", CF_COLL_NONE},
        {"MPI_Iiallreduce", CF_COLL_NONE},
        {"allreducex", CF_COLL_NONE},
        {"", CF_COLL_NONE},
        {"MPI_", CF_COLL_NONE},
        {NULL, CF_COLL_NONE},
    };
    (void)state;
    for (size_t i = 0; i < CF_ARRAY_LEN(rows); i++) {
        cf_coll_t got = cf_coll_from_name(rows[i].s);
        if (got != rows[i].c)
            fail_msg("\"%s\" -> %d, want %d", rows[i].s ? rows[i].s : "(null)", got, rows[i].c);
    }
    for (int c = 0; c < CF_COLL_COUNT; c++)
        assert_int_equal(cf_coll_from_name(cf_coll_name((cf_coll_t)c)), c);
    assert_null(cf_coll_name(CF_COLL_NONE));
    assert_string_equal(cf_coll_name(CF_COLL_REDUCE_SCATTER_BLOCK), "reduce_scatter_block");
    assert_true(cf_coll_is_collective(CF_COLL_BARRIER));
    assert_false(cf_coll_is_collective(CF_COLL_P2P));
    assert_false(cf_coll_is_collective(CF_COLL_NONE));
    {
        char longname[200];
        memset(longname, 'a', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = '\0';
        assert_int_equal(cf_coll_from_name(longname), CF_COLL_NONE);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_allreduce_exact),
        cmocka_unit_test(test_coefficients_of_sheet),
        cmocka_unit_test(test_coeffs_errors),
        cmocka_unit_test(test_algo_names),
        cmocka_unit_test(test_busbw_factors),
        cmocka_unit_test(test_busbw_of_ideal_is_link),
        cmocka_unit_test(test_lower_bound),
        cmocka_unit_test(test_n_half),
        cmocka_unit_test(test_per_hop_round_trip),
        cmocka_unit_test(test_per_hop_edges),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
