/* Wire messages beneath MPI calls: grouping of UCX records under their MPI
 * operation, algorithm inference against the message-level models, and the
 * per-hop fit, on synthetic profiles with known answers.  The message counts
 * of the allreduce cases are those Open MPI 4.1 produced on 3 and 4 ranks
 * with coll_tuned_allreduce_algorithm 1 to 6. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "cf_wire.h"

#define MIB 1048576ull

/* A profile with world of size p and room for records. */
static void prof_init(cf_profile_t *p, int size)
{
    cf_profile_init(p);
    p->ranks = size;
    p->nodes = 1;
    p->ncomm = 2;
    p->comm = calloc(2, sizeof(*p->comm));
    p->comm[0] = (cf_comm_info_t){.id = CF_COMM_ID_WORLD, .size = size, .nodes = 1, .name = "MPI_COMM_WORLD"};
    p->comm[1] = (cf_comm_info_t){.id = 77, .size = 2, .nodes = 1, .name = "MPI_Comm_split"};
    p->rec = calloc(64, sizeof(*p->rec));
}

static void add_mpi(cf_profile_t *p, const char *op, uint32_t comm, uint64_t calls, uint64_t bytes_each)
{
    cf_record_t *r = &p->rec[p->nrec++];
    unsigned b = cf_size_bin(bytes_each);
    *r = (cf_record_t){.layer = CF_LAYER_MPI, .comm = comm, .path = CF_PATH_INTRA, .size_lo = cf_size_bin_lo(b),
                       .size_hi = cf_size_bin_hi(b), .calls = calls, .bytes = calls * bytes_each, .t_p50 = 1e-3};
    cf_strlcpy(r->op, op, sizeof(r->op));
    cf_strlcpy(r->kind, "collective", sizeof(r->kind));
}

/* UCX records of calls messages of bytes_each under parent, and as many receives. */
static void add_ucx(cf_profile_t *p, const char *parent, int path, uint64_t calls, uint64_t bytes_each, double t)
{
    unsigned b = cf_size_bin(bytes_each);
    for (int recv = 0; recv < 2; recv++) {
        cf_record_t *r = &p->rec[p->nrec++];
        *r = (cf_record_t){.layer = CF_LAYER_UCX, .path = path, .size_lo = cf_size_bin_lo(b),
                           .size_hi = cf_size_bin_hi(b), .calls = calls, .bytes = calls * bytes_each, .t_p50 = t};
        cf_strlcpy(r->op, recv ? "ucp_tag_recv_nbx" : "ucp_tag_send_nbx", sizeof(r->op));
        cf_strlcpy(r->kind, recv ? "recv" : "send", sizeof(r->kind));
        cf_strlcpy(r->parent_op, parent, sizeof(r->parent_op));
    }
}

/* Infers the algorithm of the allreduce in p; returns its record. */
static cf_wire_infer_t infer_allreduce(cf_profile_t *p)
{
    cf_wire_op_t *ops = NULL;
    size_t n = 0;
    cf_wire_infer_t inf;
    assert_int_equal(cf_wire_ops(p, &ops, &n), CF_OK);
    const cf_wire_op_t *o = NULL;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(ops[i].op, "MPI_Allreduce"))
            o = &ops[i];
    assert_non_null(o);
    assert_int_equal(o->coll, CF_COLL_ALLREDUCE);
    assert_int_equal(cf_wire_infer(o, &inf), CF_OK);
    free(ops);
    return inf;
}

static void test_ring_allreduce_grouped(void **state)
{
    (void)state;
    cf_profile_t p;
    cf_wire_op_t *ops = NULL;
    size_t n = 0;
    prof_init(&p, 4);
    /* 10 calls of 1 MiB on 4 ranks: 6 messages of 256 KiB per rank and call */
    add_mpi(&p, "MPI_Allreduce", CF_COMM_ID_WORLD, 40, MIB);
    add_ucx(&p, "MPI_Allreduce", CF_PATH_INTRA, 240, MIB / 4, 80e-6);
    add_mpi(&p, "MPI_Send", CF_COMM_ID_WORLD, 7, 100);
    add_ucx(&p, "MPI_Send", CF_PATH_INTRA, 7, 100, 2e-6);
    add_ucx(&p, "", CF_PATH_INTRA, 3, 4, 1e-6); /* outside any MPI call */
    assert_int_equal(cf_wire_ops(&p, &ops, &n), CF_OK);
    assert_int_equal(n, 3);
    /* most messages first */
    assert_string_equal(ops[0].op, "MPI_Allreduce");
    assert_int_equal(ops[0].comm_size, 4);
    assert_int_equal(ops[0].mixed_comms, 0);
    assert_int_equal(ops[0].mpi_calls, 40);
    assert_int_equal(ops[0].msgs, 240);
    assert_int_equal(ops[0].recvs, 240);
    assert_true(ops[0].msgs_per_call == 6.0);
    assert_true(ops[0].payload == (double)MIB);
    assert_true(ops[0].msg_size_mean == (double)(MIB / 4));
    assert_int_equal(ops[0].nbin, 1);
    assert_int_equal(ops[0].bin[0].size_lo, MIB / 4);
    assert_string_equal(ops[1].op, "MPI_Send");
    assert_int_equal(ops[1].coll, CF_COLL_NONE);
    assert_string_equal(ops[2].op, "");
    assert_true(isnan(ops[2].msgs_per_call));

    cf_wire_infer_t inf;
    assert_int_equal(cf_wire_infer(&ops[1], &inf), CF_ERR_UNSUPPORTED); /* point to point */
    assert_int_equal(cf_wire_infer(&ops[2], &inf), CF_ERR_NODATA);      /* no MPI call above */
    free(ops);

    inf = infer_allreduce(&p);
    assert_non_null(inf.algo);
    assert_string_equal(inf.algo, "ring");
    assert_true(inf.distance < 1e-12);
    assert_int_equal(inf.p, 4);
    assert_true(inf.expected.msgs == 6 && inf.expected.bytes == 1.5 && inf.expected.size_lo == 0.25);
    cf_profile_free(&p);
}

/* Measured Open MPI 4.1 message counts per call (all ranks) for 1 MiB. */
static void check_measured(int np, uint64_t msgs_small, uint64_t small, uint64_t msgs_big, uint64_t big,
                           const char *want)
{
    cf_profile_t p;
    prof_init(&p, np);
    add_mpi(&p, "MPI_Allreduce", CF_COMM_ID_WORLD, 20 * (uint64_t)np, MIB);
    if (msgs_small)
        add_ucx(&p, "MPI_Allreduce", CF_PATH_INTRA, 20 * msgs_small, small, 1e-4);
    if (msgs_big)
        add_ucx(&p, "MPI_Allreduce", CF_PATH_INTRA, 20 * msgs_big, big, 1e-4);
    cf_wire_infer_t inf = infer_allreduce(&p);
    if (want) {
        if (!inf.algo)
            fail_msg("p=%d: no match (closest %s at %.3f, second %.3f), want %s", np, inf.closest, inf.distance,
                     inf.second, want);
        assert_string_equal(inf.algo, want);
    } else {
        assert_null(inf.algo);
    }
    cf_profile_free(&p);
}

static void test_measured_algorithms(void **state)
{
    (void)state;
    check_measured(4, 24, MIB / 4, 0, 0, "ring");              /* algorithm 4 */
    check_measured(3, 12, MIB / 3, 0, 0, "ring");
    check_measured(4, 0, 0, 8, MIB, "recursive_doubling");     /* algorithm 3 */
    check_measured(4, 8, MIB / 4, 8, MIB / 2, "rabenseifner"); /* algorithm 6 */
    check_measured(3, 7, MIB / 2, 1, MIB, "rabenseifner");
    check_measured(4, 0, 0, 6, MIB, "reduce_bcast");           /* algorithms 1 and 2 */
    /* on 3 ranks recursive doubling and reduce+bcast both send 4/3 of n in 4/3 messages */
    check_measured(3, 0, 0, 4, MIB, NULL);
}

static void test_noise_and_mismatch(void **state)
{
    (void)state;
    /* 5 % more messages (retransmits, a stray one): still ring */
    cf_profile_t p;
    prof_init(&p, 8);
    add_mpi(&p, "MPI_Allreduce", CF_COMM_ID_WORLD, 8 * 100, 8 * MIB);
    add_ucx(&p, "MPI_Allreduce", CF_PATH_INTRA, 8 * 100 * 14 * 105 / 100, MIB, 1e-4);
    cf_wire_infer_t inf = infer_allreduce(&p);
    assert_non_null(inf.algo);
    assert_string_equal(inf.algo, "ring");
    cf_profile_free(&p);
    /* a segmented ring: 4 times the messages at a quarter the size matches nothing */
    prof_init(&p, 8);
    add_mpi(&p, "MPI_Allreduce", CF_COMM_ID_WORLD, 8 * 100, 8 * MIB);
    add_ucx(&p, "MPI_Allreduce", CF_PATH_INTRA, 8 * 100 * 14 * 4, MIB / 4, 1e-4);
    inf = infer_allreduce(&p);
    assert_null(inf.algo);
    assert_non_null(inf.closest);
    assert_true(inf.distance > CF_WIRE_MATCH);
    cf_profile_free(&p);
}

static void test_comm_size_from_busiest(void **state)
{
    (void)state;
    cf_profile_t p;
    cf_wire_op_t *ops = NULL;
    size_t n = 0;
    prof_init(&p, 4);
    add_mpi(&p, "MPI_Allgather", CF_COMM_ID_WORLD, 4 * 10, 4096);
    add_mpi(&p, "MPI_Allgather", 77, 2 * 50, 4096);
    add_ucx(&p, "MPI_Allgather", CF_PATH_INTRA, 100, 2048, 1e-5);
    assert_int_equal(cf_wire_ops(&p, &ops, &n), CF_OK);
    assert_int_equal(n, 1);
    assert_int_equal(ops[0].comm_size, 2);
    assert_int_equal(ops[0].comm, 77);
    assert_int_equal(ops[0].path, CF_PATH_INTRA);
    assert_int_equal(ops[0].mixed_comms, 1);
    assert_int_equal(ops[0].coll, CF_COLL_ALLGATHER);
    assert_int_equal(ops[0].size_lo, 4096);
    assert_int_equal(ops[0].size_hi, 8191);
    assert_true(ops[0].payload_lo == 4096 && ops[0].payload_hi == 4096);
    free(ops);
    cf_profile_free(&p);
}

static void test_sizes_and_no_mpi_side(void **state)
{
    (void)state;
    cf_profile_t p;
    cf_wire_op_t *ops = NULL;
    size_t n = 0;
    prof_init(&p, 4);
    add_mpi(&p, "MPI_Allreduce", CF_COMM_ID_WORLD, 40, 100);
    add_mpi(&p, "MPI_Allreduce", CF_COMM_ID_WORLD, 40, MIB);
    add_ucx(&p, "MPI_Allreduce", CF_PATH_INTRA, 240, 25, 1e-6);
    add_ucx(&p, "MPI_Allreduce", CF_PATH_INTRA, 240, MIB / 4, 1e-4);
    add_ucx(&p, "", CF_PATH_INTER, 3, 4, 1e-6);
    assert_int_equal(cf_wire_ops(&p, &ops, &n), CF_OK);
    assert_int_equal(n, 2);
    assert_int_equal(ops[0].size_lo, 64);
    assert_int_equal(ops[0].size_hi, 2 * MIB - 1);
    assert_true(ops[0].payload_lo == 100 && ops[0].payload_hi == (double)MIB);
    /* averaged over sizes, the ring's shape holds: 6 messages of n/4 */
    assert_true(ops[0].msgs_per_call == 6.0);
    assert_true(fabs(ops[0].msg_size_mean / ops[0].payload - 0.25) < 1e-12);
    /* traffic outside any MPI call has no communicator and no path above it */
    assert_int_equal(ops[1].comm, CF_COMM_ID_NONE);
    assert_int_equal(ops[1].path, -1);
    assert_int_equal(ops[1].comm_size, 0);
    free(ops);
    cf_profile_free(&p);
}

static void test_ompi_setting(void **state)
{
    (void)state;
    char buf[160];
    assert_string_equal(cf_wire_ompi_setting(CF_COLL_ALLREDUCE, "ring", buf, sizeof(buf)),
                        "--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4");
    assert_non_null(strstr(cf_wire_ompi_setting(CF_COLL_ALLREDUCE, "recursive_doubling", buf, sizeof(buf)),
                           "allreduce_algorithm 3"));
    assert_non_null(strstr(cf_wire_ompi_setting(CF_COLL_ALLGATHER, "bruck", buf, sizeof(buf)),
                           "allgather_algorithm 2"));
    assert_null(cf_wire_ompi_setting(CF_COLL_ALLREDUCE, "reduce_bcast", buf, sizeof(buf)));
    assert_null(cf_wire_ompi_setting(CF_COLL_BARRIER, "dissemination", buf, sizeof(buf)));
    assert_null(cf_wire_ompi_setting(CF_COLL_ALLREDUCE, NULL, buf, sizeof(buf)));
}

static void test_models(void **state)
{
    (void)state;
    cf_wire_model_t m;
    assert_int_equal(cf_wire_model(CF_COLL_ALLREDUCE, "ring", 8, &m), CF_OK);
    assert_true(m.msgs == 14 && m.bytes == 14.0 / 8 && m.size_lo == 1.0 / 8 && m.size_hi == 1.0 / 8);
    assert_string_equal(m.shape, "2(p-1) messages of n/p");
    assert_int_equal(cf_wire_model(CF_COLL_ALLREDUCE, "recursive_doubling", 8, &m), CF_OK);
    assert_true(m.msgs == 3 && m.bytes == 3 && m.size_lo == 1);
    assert_int_equal(cf_wire_model(CF_COLL_ALLREDUCE, "rabenseifner", 8, &m), CF_OK);
    assert_true(m.msgs == 6 && m.bytes == 14.0 / 8 && m.size_lo == 1.0 / 8 && m.size_hi == 0.5);
    assert_int_equal(cf_wire_model(CF_COLL_ALLGATHER, "ring", 5, &m), CF_OK);
    assert_true(m.msgs == 4 && m.bytes == 0.8);
    assert_int_equal(cf_wire_model(CF_COLL_ALLGATHER, "bruck", 5, &m), CF_OK);
    assert_true(m.msgs == 3);
    assert_int_equal(cf_wire_model(CF_COLL_BARRIER, "dissemination", 4, &m), CF_OK);
    assert_true(m.msgs == 2 && m.bytes == 0);
    assert_int_equal(cf_wire_model(CF_COLL_ALLREDUCE, "ring", 1, &m), CF_ERR_RANGE);
    assert_int_equal(cf_wire_model(CF_COLL_ALLREDUCE, "bogus", 4, &m), CF_ERR_INVALID);
    assert_int_equal(cf_wire_model(CF_COLL_P2P, "direct", 4, &m), CF_ERR_INVALID);
    assert_string_equal(cf_wire_algo_name(CF_COLL_ALLREDUCE, 0), "ring");
    assert_null(cf_wire_algo_name(CF_COLL_ALLREDUCE, 4));
    assert_null(cf_wire_algo_name(CF_COLL_P2P, 0));
}

static void test_barrier(void **state)
{
    (void)state;
    cf_profile_t p;
    cf_wire_op_t *ops = NULL;
    size_t n = 0;
    cf_wire_infer_t inf;
    prof_init(&p, 8);
    add_mpi(&p, "MPI_Barrier", CF_COMM_ID_WORLD, 8 * 10, 0);
    add_ucx(&p, "MPI_Barrier", CF_PATH_INTRA, 8 * 10 * 3, 0, 1e-6);
    assert_int_equal(cf_wire_ops(&p, &ops, &n), CF_OK);
    assert_int_equal(cf_wire_infer(&ops[0], &inf), CF_OK);
    assert_non_null(inf.algo);
    assert_string_equal(inf.algo, "dissemination");
    free(ops);
    cf_profile_free(&p);
}

static void test_hop_fit(void **state)
{
    (void)state;
    const double alpha = 2e-6, bw = 10e9;
    cf_profile_t p;
    prof_init(&p, 2);
    /* sizes 8 B .. 2 MiB; two records share the 32 KiB bin with different parents */
    for (uint64_t s = 8; s <= 4 * MIB; s *= 4)
        add_ucx(&p, "MPI_Send", CF_PATH_INTER, 100, s, alpha + (double)s / bw);
    add_ucx(&p, "MPI_Bcast", CF_PATH_INTER, 300, 32768, alpha + 32768.0 / bw);
    add_ucx(&p, "MPI_Send", CF_PATH_INTRA, 100, 8, 1e-7); /* another path */
    cf_point_t pts[CF_SIZE_BINS];
    size_t n = 0;
    assert_int_equal(cf_wire_hop_points(&p, CF_PATH_INTER, pts, CF_SIZE_BINS, &n), CF_OK);
    assert_int_equal(n, 10);
    for (size_t i = 1; i < n; i++)
        assert_true(pts[i].size > pts[i - 1].size);
    assert_true(pts[0].size == 8 && pts[0].weight == 100);
    for (size_t i = 0; i < n; i++)
        if (pts[i].size == 32768)
            assert_true(pts[i].weight == 400);
    /* the receives (kind recv) are not points */
    cf_fit_t fit;
    assert_int_equal(cf_wire_hop_fit(&p, CF_PATH_INTER, &fit), CF_OK);
    assert_true(fit.ok);
    assert_true(fabs(fit.alpha_s - alpha) / alpha < 0.01);
    assert_true(fabs(fit.bandwidth_Bps - bw) / bw < 0.01);
    /* too few sizes on the other path */
    assert_int_equal(cf_wire_hop_fit(&p, CF_PATH_INTRA, &fit), CF_ERR_NODATA);
    assert_false(fit.ok);
    assert_int_equal(cf_wire_hop_points(&p, CF_PATH_SELF, pts, CF_SIZE_BINS, &n), CF_ERR_NODATA);
    assert_int_equal(n, 0);
    /* a short array is filled, not overrun */
    assert_int_equal(cf_wire_hop_points(&p, CF_PATH_INTER, pts, 3, &n), CF_OK);
    assert_int_equal(n, 3);
    cf_profile_free(&p);
}

static void test_no_ucx_and_transports(void **state)
{
    (void)state;
    cf_profile_t p;
    cf_wire_op_t *ops = (cf_wire_op_t *)1;
    size_t n = 1;
    prof_init(&p, 2);
    add_mpi(&p, "MPI_Send", CF_COMM_ID_WORLD, 10, 8);
    assert_int_equal(cf_wire_ops(&p, &ops, &n), CF_ERR_NODATA);
    assert_int_equal(n, 0);
    free(ops);
    assert_int_equal(cf_wire_ops(NULL, &ops, &n), CF_ERR_INVALID);
    assert_null(cf_wire_transports(&p));
    p.extra = json_pack("{s:{s:{s:[s,s]}}}", "ucx", "transports", "intra-node", "sysv/memory", "cma/memory");
    json_t *t = cf_wire_transports(&p);
    assert_non_null(t);
    assert_int_equal(json_array_size(json_object_get(t, "intra-node")), 2);
    cf_profile_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_allreduce_grouped), cmocka_unit_test(test_measured_algorithms),
        cmocka_unit_test(test_noise_and_mismatch),    cmocka_unit_test(test_comm_size_from_busiest),
        cmocka_unit_test(test_models),                cmocka_unit_test(test_barrier),
        cmocka_unit_test(test_hop_fit),               cmocka_unit_test(test_no_ucx_and_transports),
        cmocka_unit_test(test_sizes_and_no_mpi_side), cmocka_unit_test(test_ompi_setting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
