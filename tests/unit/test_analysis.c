/* The analysis of a profile on synthetic records with known answers:
 * alpha = 5 us and B = 25 GB/s for point to point, a ring all-reduce on
 * 4 ranks over the same link. */
#define _GNU_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cf_advice.h"
#include "cf_analysis.h"
#include "cf_bins.h"
#include "cf_summary.h"

#define ALPHA 5e-6
#define BW 25e9
#define P 4
#define WORLD CF_COMM_ID_WORLD
#define INTER CF_PATH_INTER

static uint64_t rng_state;

static double rng_uniform(void) /* [-1, 1) */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static void assert_rel(double got, double want, double tol)
{
    double rel = fabs(got - want) / fabs(want);
    if (!(rel <= tol))
        fail_msg("got %.9g, want %.9g (rel err %.3g > %.3g)", got, want, rel, tol);
}

static double hockney(double m)
{
    return ALPHA + m / BW;
}

static double ring(double n)
{
    return 2.0 * (P - 1) * ALPHA + 2.0 * (P - 1) / P * n / BW;
}

static void profile_new(cf_profile_t *p)
{
    cf_profile_init(p);
    p->ranks = P;
    p->nodes = 2;
    p->wall_s = 10;
    snprintf(p->mpi_library, sizeof(p->mpi_library), "Open MPI v4.1.4");
    p->nrank = P;
    p->rank = calloc(P, sizeof(*p->rank));
    for (int r = 0; r < P; r++)
        p->rank[r] = (cf_rank_info_t){.rank = r, .node = r / 2, .host = "h", .wall_s = 10,
                                      .mpi_s = 1.0 + r};
    p->ncomm = 1;
    p->comm = calloc(1, sizeof(*p->comm));
    p->comm[0] = (cf_comm_info_t){.id = WORLD, .size = P, .nodes = 2, .name = "MPI_COMM_WORLD"};
}

/* A record of calls of size bytes each, every one taking t seconds. */
static cf_record_t *add(cf_profile_t *p, const char *op, const char *kind, uint32_t comm, int path,
                        uint64_t size, uint64_t calls, double t)
{
    cf_record_t *r;
    unsigned bin = cf_size_bin(size);

    p->rec = realloc(p->rec, (p->nrec + 1) * sizeof(*p->rec));
    assert_non_null(p->rec);
    r = &p->rec[p->nrec++];
    memset(r, 0, sizeof(*r));
    cf_strlcpy(r->op, op, sizeof(r->op));
    cf_strlcpy(r->kind, kind, sizeof(r->kind));
    r->comm = comm;
    r->path = path;
    r->size_lo = cf_size_bin_lo(bin);
    r->size_hi = cf_size_bin_hi(bin);
    r->calls = calls;
    r->bytes = calls * size;
    r->t_sum = (double)calls * t;
    r->t_min = r->t_max = r->t_p50 = r->t_p99 = t;
    return r;
}

/* MPI_Send and MPI_Recv at 1 B .. 64 MiB, exactly on the line. */
static void add_p2p(cf_profile_t *p)
{
    for (int i = 0; i <= 26; i++) {
        uint64_t m = (uint64_t)1 << i;
        add(p, "MPI_Send", "p2p", WORLD, INTER, m, 10, hockney((double)m));
        add(p, "MPI_Recv", "p2p", WORLD, INTER, m, 10, hockney((double)m));
    }
}

static void add_allreduce(cf_profile_t *p, int lo, int hi)
{
    for (int i = lo; i <= hi; i++) {
        uint64_t n = (uint64_t)1 << i;
        add(p, "MPI_Allreduce", "collective", WORLD, INTER, n, 20, ring((double)n));
    }
}

static cf_analysis_t *analyse(const cf_profile_t *p, const cf_analysis_opts_t *o)
{
    cf_analysis_t *a = NULL;
    assert_int_equal(cf_analysis_run(p, o, &a), CF_OK);
    assert_non_null(a);
    return a;
}

static const cf_an_bin_t *bin_of(const cf_an_fit_t *f, double size)
{
    for (size_t k = 0; k < f->nbin; k++)
        if (f->bin[k].size == size)
            return &f->bin[k];
    fail_msg("no bin of size %g", size);
    return NULL;
}

static void test_p2p_recovery(void **state)
{
    cf_profile_t p;
    cf_analysis_t *a;
    const cf_an_fit_t *f, *send;
    (void)state;

    profile_new(&p);
    add_p2p(&p);
    a = analyse(&p, NULL);
    f = cf_analysis_find(a, "p2p", CF_COMM_ID_NONE, INTER);
    assert_non_null(f);
    assert_true(f->joint);
    assert_int_equal(f->kind, CF_AN_P2P);
    assert_ptr_equal(cf_analysis_fit(a, 0), f); /* joint fits come first */
    assert_true(f->fit.ok);
    assert_int_equal(f->fit.nseg, 1);
    assert_int_equal(f->nsizes, 27);
    assert_int_equal(f->calls, 540);
    assert_rel(f->fit.alpha_s, ALPHA, 1e-6);
    assert_rel(f->fit.bandwidth_Bps, BW, 1e-6);
    assert_rel(f->fit.n_half_bytes, 125e3, 1e-6);
    assert_true(f->fit.r2 > 0.999999);
    assert_true(f->fit.alpha_ci[0] <= ALPHA * (1 + 1e-9) && ALPHA * (1 - 1e-9) <= f->fit.alpha_ci[1]);
    assert_string_equal(f->basis, "fit");
    assert_true(isnan(f->wait_share)); /* nothing sampled */

    send = cf_analysis_find(a, "MPI_Send", WORLD, INTER);
    assert_non_null(send);
    assert_false(send->joint);
    assert_int_equal(send->comm_size, P);
    assert_rel(send->fit.alpha_s, ALPHA, 1e-6);
    assert_rel(send->fit.bandwidth_Bps, BW, 1e-6);
    assert_non_null(cf_analysis_find(a, "MPI_Recv", WORLD, INTER));
    assert_null(cf_analysis_find(a, "MPI_Recv", WORLD, CF_PATH_INTRA));

    /* The path's reference link: its best-case transfers (here the same
     * times as the joint fit's), with the joint fit beside it. */
    assert_string_equal(cf_analysis_ref(a, INTER)->source, "p2p best case");
    assert_ptr_equal(cf_analysis_ref(a, INTER)->joint, f);
    /* alpha: the median of the three smallest sizes' times (1, 2, 4 B) */
    assert_rel(cf_analysis_ref(a, INTER)->alpha_s, hockney(2), 1e-9);
    assert_rel(cf_analysis_ref(a, INTER)->bandwidth_Bps, BW, 1e-9);
    assert_rel(cf_analysis_ref(a, INTER)->program_Bps, BW, 1e-6);
    assert_null(cf_analysis_ref(a, CF_PATH_INTRA)->source);
    cf_analysis_free(a);
    cf_profile_free(&p);
}

/* A benchmark's blocking sends and receives that mostly wait for their
 * partner: every call's median holds 20 to 60 us of waiting, its shortest
 * call none (alpha 2 us, B 5 GB/s).  The joint fit of the medians is far
 * off (41 us, 44 % rms); the reference link from the best cases per size,
 * sends and receives paired, is within 15 % (exact here). */
static void add_waiting_p2p(cf_profile_t *p)
{
    for (int i = 3; i <= 22; i++) {
        uint64_t m = (uint64_t)1 << i;
        double t = 2e-6 + (double)m / 5e9, wait = 20e-6 * (1 + i % 3);
        for (int k = 0; k < 2; k++) {
            cf_record_t *r = add(p, k ? "MPI_Recv" : "MPI_Send", "p2p", WORLD, INTER, m, 200, t + wait);
            r->t_min = t;
            r->t_p99 = t + 4 * wait;
        }
    }
}

static void test_reference_best_case(void **state)
{
    cf_profile_t p;
    cf_analysis_t *a;
    const cf_an_ref_t *ref;
    json_t *j, *r;
    (void)state;

    profile_new(&p);
    add_waiting_p2p(&p);
    a = analyse(&p, NULL);
    ref = cf_analysis_ref(a, INTER);
    assert_string_equal(ref->source, "p2p best case");
    assert_rel(ref->alpha_s, 2e-6, 0.15);
    assert_rel(ref->bandwidth_Bps, 5e9, 0.15);
    /* the program's own fit of its durations, beside it, is not */
    assert_non_null(ref->joint);
    assert_true(ref->program_alpha_s > 5e-6);
    assert_true(ref->program_err_rms > 0.25 || fabs(ref->program_Bps / 5e9 - 1) > 0.15);
    /* measured per size: at a sweep size the link's time is the best case */
    {
        cf_pred_t pr;
        assert_rel(cf_pred_at(&ref->pred, 65536, &pr), 2e-6 + 65536 / 5e9, 1e-9);
        assert_int_equal(pr.source, CF_PRED_MEASURED);
        cf_pred_at(&ref->pred, 64.0 * 1048576, &pr);
        assert_int_equal(pr.source, CF_PRED_MODEL);
    }
    j = cf_analysis_to_json(a);
    r = json_array_get(json_object_get(j, "references"), 0);
    assert_string_equal(json_string_value(json_object_get(r, "source")), "p2p best case");
    assert_true(json_is_object(json_object_get(r, "program_fit")));
    assert_rel(json_number_value(json_object_get(json_object_get(r, "program_fit"), "alpha_s")),
               ref->program_alpha_s, 1e-9);
    json_decref(j);
    cf_analysis_free(a);
    cf_profile_free(&p);

    /* Mid sizes (256 B .. 256 kB) whose every call waits, even the
     * shortest (HPCC's ring exchanges), and a lucky receive of an arrived
     * message at 16 B: the ends still give alpha and B. */
    profile_new(&p);
    add_waiting_p2p(&p);
    for (size_t i = 0; i < p.nrec; i++) {
        cf_record_t *rec = &p.rec[i];
        if (rec->size_lo >= 256 && rec->size_lo < 262144)
            rec->t_min = rec->t_p50;
        if (rec->size_lo == 16)
            rec->t_min = 1e-8;
    }
    a = analyse(&p, NULL);
    ref = cf_analysis_ref(a, INTER);
    assert_string_equal(ref->source, "p2p best case");
    assert_rel(ref->alpha_s, 2e-6, 0.15);
    assert_rel(ref->bandwidth_Bps, 5e9, 0.15);
    {
        /* the waiting sizes are not taken as the link's times */
        cf_pred_t pr;
        cf_pred_at(&ref->pred, 16384, &pr);
        assert_rel(pr.time_s, 2e-6 + 16384 / 5e9, 0.15);
    }
    cf_analysis_free(a);
    cf_profile_free(&p);
}

/* The calibration's link sweep is the reference where there is one; a
 * malformed section is a caveat and no calibration. */
static void test_reference_calibration(void **state)
{
    cf_profile_t p;
    cf_analysis_t *a;
    const cf_an_ref_t *ref;
    json_t *sizes = json_array();
    int found = 0;
    (void)state;

    for (int e = 3; e <= 22; e++) {
        double n = ldexp(1.0, e), t = 3e-6 + n / 8e9; /* one way */
        /* the medians lie on the line; the best round trips 10 % under it */
        json_array_append_new(sizes, json_pack("{s:f, s:i, s:f, s:f}", "bytes", n, "reps", 50, "best_s", t / 1.1,
                                               "p50_s", t));
    }
    profile_new(&p);
    add_waiting_p2p(&p);
    p.extra = json_pack("{s:{s:i, s:f, s:f, s:b, s:[s], s:{s:i, s:i}, s:[{s:s, s:[i, i], s:s, s:o}], s:[]}}",
                        "calibration", "version", 1, "budget_s", 0.5, "elapsed_s", 0.31, "complete", 1,
                        "skipped", "MPI_Alltoall", "messages", "sent", 1234, "bytes", 5678901, "links", "path",
                        "inter-node", "ranks", 0, 2, "method", "ping-pong", "sizes", sizes, "collectives");
    assert_non_null(p.extra);
    a = analyse(&p, NULL);
    ref = cf_analysis_ref(a, INTER);
    assert_string_equal(ref->source, "calibration");
    assert_rel(ref->alpha_s, 3e-6, 0.01);
    assert_rel(ref->bandwidth_Bps, 8e9, 0.01);
    assert_true(isfinite(ref->program_Bps)); /* the program's fit, beside it */
    {
        cf_pred_t pr;
        assert_rel(cf_pred_at(&ref->pred, 4096, &pr), 3e-6 + 4096 / 8e9, 1e-9);
        assert_int_equal(pr.source, CF_PRED_CALIBRATION);
    }
    for (size_t i = 0; i < cf_analysis_ncaveats(a); i++)
        assert_null(strstr(cf_analysis_caveat(a, i), "disturbed")); /* an undisturbed sweep stays as measured */
    cf_analysis_free(a);

    /* NetPIPE's figure of each size (the best trial's mean), 5 % under the
     * median: the link is fitted to it, not to the median */
    {
        size_t i;
        json_t *e;
        json_array_foreach(sizes, i, e)
            json_object_set_new(e, "trial_s", json_real(json_real_value(json_object_get(e, "p50_s")) / 1.05));
        a = analyse(&p, NULL);
        ref = cf_analysis_ref(a, INTER);
        assert_string_equal(ref->source, "calibration");
        assert_rel(ref->alpha_s, 3e-6 / 1.05, 0.01);
        assert_rel(ref->bandwidth_Bps, 8e9 * 1.05, 0.01);
        cf_pred_t pr;
        assert_rel(cf_pred_at(&ref->pred, 4096, &pr), (3e-6 + 4096 / 8e9) / 1.05, 1e-6);
        cf_analysis_free(a);
        /* a trial figure under the best is no measurement: the median */
        json_array_foreach(sizes, i, e)
            json_object_set_new(e, "trial_s", json_real(json_real_value(json_object_get(e, "best_s")) / 2));
        a = analyse(&p, NULL);
        assert_rel(cf_analysis_ref(a, INTER)->bandwidth_Bps, 8e9, 0.01);
        cf_analysis_free(a);
        json_array_foreach(sizes, i, e)
            json_object_del(e, "trial_s");
    }

    /* Disturbed at finalize by another process: 1 MiB with every trial
     * delayed (best 6x, median 18x the line), 2 MiB, where the budget
     * stopped the sweep, with most of them (median 10x).  Untamed, the fit
     * of the medians takes B several times too low; tamed, the line is
     * found again and a caveat says so. */
    {
        json_array_remove(sizes, 19);
        json_t *s20 = json_array_get(sizes, 17), *s21 = json_array_get(sizes, 18);
        double t20 = 3e-6 + ldexp(1.0, 20) / 8e9, t21 = 3e-6 + ldexp(1.0, 21) / 8e9;
        json_object_set_new(s20, "best_s", json_real(6 * t20));
        json_object_set_new(s20, "p50_s", json_real(18 * t20));
        json_object_set_new(s21, "p50_s", json_real(10 * t21));
        a = analyse(&p, NULL);
        ref = cf_analysis_ref(a, INTER);
        assert_string_equal(ref->source, "calibration");
        assert_rel(ref->bandwidth_Bps, 8e9, 0.05);
        assert_rel(ref->alpha_s, 3e-6, 0.05);
        for (size_t i = 0; i < cf_analysis_ncaveats(a); i++)
            found |= strstr(cf_analysis_caveat(a, i), "2 of its 19 sizes were disturbed") != NULL;
        assert_true(found);
        found = 0;
        cf_analysis_free(a);
    }

    /* malformed: a caveat, and the best case */
    json_object_set_new(p.extra, "calibration", json_pack("{s:i, s:s}", "version", 1, "links", "oops"));
    a = analyse(&p, NULL);
    assert_string_equal(cf_analysis_ref(a, INTER)->source, "p2p best case");
    for (size_t i = 0; i < cf_analysis_ncaveats(a); i++)
        found |= strstr(cf_analysis_caveat(a, i), "calibration section is malformed") != NULL;
    assert_true(found);
    cf_analysis_free(a);
    /* absent or of another version: no calibration; a calibration without a
     * link of this path: the best case, no caveat */
    json_object_set_new(p.extra, "calibration", json_pack("{s:i}", "version", 2));
    a = analyse(&p, NULL);
    assert_string_equal(cf_analysis_ref(a, INTER)->source, "p2p best case");
    cf_analysis_free(a);
    json_object_set_new(p.extra, "calibration", json_pack("{s:i, s:[], s:[]}", "version", 1, "links", "collectives"));
    a = analyse(&p, NULL);
    assert_string_equal(cf_analysis_ref(a, INTER)->source, "p2p best case");
    for (size_t i = 0; i < cf_analysis_ncaveats(a); i++)
        assert_null(strstr(cf_analysis_caveat(a, i), "calibration"));
    cf_analysis_free(a);
    cf_profile_free(&p);
}

/* File accesses (kind io) at several sizes are fitted on their own, as the
 * file system's startup and bandwidth (1 ms, 500 MB/s here), but never as
 * network: alone they make no reference link, a single size gets no verdict
 * from a link model, the advice speaks of files and their time is the
 * breakdown's io share. */
static void test_file_io_apart(void **state)
{
    cf_profile_t p;
    cf_analysis_t *a;
    const cf_an_fit_t *f;
    char advice[512];
    (void)state;

    profile_new(&p);
    for (int i = 10; i <= 24; i++) {
        uint64_t m = (uint64_t)1 << i;
        add(&p, "MPI_File_write_at_all", "io", WORLD, CF_PATH_SELF, m, 10, 1e-3 + (double)m / 500e6);
    }
    add(&p, "MPI_File_read_at", "io", WORLD, CF_PATH_SELF, 4096, 10, 2e-3);
    a = analyse(&p, NULL);
    f = cf_analysis_find(a, "MPI_File_write_at_all", WORLD, CF_PATH_SELF);
    assert_non_null(f);
    assert_int_equal(f->kind, CF_AN_IO);
    assert_string_equal(cf_an_kind_name(f->kind), "io");
    assert_true(f->fit.ok);
    assert_rel(f->fit.alpha_s, 1e-3, 1e-6);
    assert_rel(f->fit.bandwidth_Bps, 500e6, 1e-6);
    for (int path = 0; path < 3; path++)
        assert_null(cf_analysis_ref(a, path)->source); /* no p2p: no link at all */
    assert_null(cf_analysis_find(a, "p2p", CF_COMM_ID_NONE, CF_PATH_SELF));
    f = cf_analysis_find(a, "MPI_File_read_at", WORLD, CF_PATH_SELF);
    assert_non_null(f);
    assert_null(f->basis); /* one size, and no link model for a file system */
    for (size_t i = 0; i < cf_analysis_nops(a); i++) {
        cf_analysis_advice(cf_analysis_op(a, i), advice, sizeof(advice));
        assert_non_null(strstr(advice, "file"));
        assert_null(strstr(advice, "link"));
    }
    assert_rel(cf_analysis_breakdown(a)->io, 1.0, 1e-9);
    assert_true(cf_analysis_breakdown(a)->payload == 0 && cf_analysis_breakdown(a)->startup == 0);
    cf_analysis_free(a);

    /* with point to point on the self path, sends alone (no receive to pair
     * their durations with, no one-way times): the joint fit stands in */
    for (int i = 0; i <= 20; i++) {
        uint64_t m = (uint64_t)1 << i;
        add(&p, "MPI_Send", "p2p", WORLD, CF_PATH_SELF, m, 10, hockney((double)m));
    }
    a = analyse(&p, NULL);
    assert_string_equal(cf_analysis_ref(a, CF_PATH_SELF)->source, "p2p fit");
    assert_rel(cf_analysis_ref(a, CF_PATH_SELF)->bandwidth_Bps, BW, 1e-6);
    assert_null(cf_analysis_find(a, "MPI_File_read_at", WORLD, CF_PATH_SELF)->basis);
    cf_analysis_free(a);
    cf_profile_free(&p);
}

/* docs/models.md: 1 MB -> 45 us (startup 11 %), 1 kB -> 5.04 us (startup 99 %). */
static void test_seed_example(void **state)
{
    cf_profile_t p;
    cf_analysis_t *a;
    const cf_an_fit_t *f;
    const cf_an_bin_t *kb, *mb;
    double num = 0, den = 0;
    (void)state;

    profile_new(&p);
    for (uint64_t m = 1; m <= 100000000; m *= 10)
        add(&p, "MPI_Send", "p2p", WORLD, INTER, m, 7, hockney((double)m));
    a = analyse(&p, NULL);
    f = cf_analysis_find(a, "MPI_Send", WORLD, INTER);
    assert_non_null(f);
    assert_true(f->fit.ok);
    kb = bin_of(f, 1e3);
    mb = bin_of(f, 1e6);
    assert_rel(kb->predicted_s, 5.04e-6, 1e-6);
    assert_rel(kb->startup_share, 5.0 / 5.04, 1e-6);
    assert_string_equal(kb->verdict, "startup-bound");
    assert_rel(mb->predicted_s, 45e-6, 1e-6);
    assert_rel(mb->startup_share, 1.0 / 9.0, 1e-6);
    assert_string_equal(mb->verdict, "bandwidth-bound");
    /* The operation's share is over its calls: sum alpha / sum T. */
    for (uint64_t m = 1; m <= 100000000; m *= 10) {
        num += ALPHA;
        den += hockney((double)m);
    }
    assert_rel(f->startup_share, num / den, 1e-6);
    assert_string_equal(f->verdict, num / den > 0.5 ? "startup-bound" : "bandwidth-bound");
    /* 6 of the 9 sizes (1 B .. 100 kB) are below n_half = 125 kB. */
    assert_rel(f->below_n_half, 6.0 / 9.0, 1e-9);
    cf_analysis_free(a);
    cf_profile_free(&p);
}

static void test_collective_ideal_ring(void **state)
{
    cf_profile_t p;
    cf_analysis_t *a;
    const cf_an_fit_t *f;
    (void)state;

    profile_new(&p);
    add_p2p(&p);
    add_allreduce(&p, 3, 26);
    a = analyse(&p, NULL);
    f = cf_analysis_find(a, "MPI_Allreduce", WORLD, INTER);
    assert_non_null(f);
    assert_int_equal(f->kind, CF_AN_COLLECTIVE);
    assert_int_equal(f->coll, CF_COLL_ALLREDUCE);
    assert_int_equal(f->comm_size, P);
    assert_true(f->fit.ok);
    /* The collective's own line: 2(p-1) alpha and B / (2(p-1)/p). */
    assert_rel(f->fit.alpha_s, 6 * ALPHA, 1e-6);
    assert_rel(f->fit.bandwidth_Bps, BW / 1.5, 1e-6);
    /* Inverted under the ring: the link again. */
    assert_string_equal(f->hop_algo, "ring");
    assert_rel(f->hop_alpha_s, ALPHA, 1e-6);
    assert_rel(f->hop_Bps, BW, 1e-6);
    for (size_t k = 0; k < f->nbin; k++) {
        const cf_an_bin_t *b = &f->bin[k];
        assert_rel(b->algbw_Bps, b->size / b->p50_s, 1e-12);
        assert_rel(b->busbw_Bps, b->algbw_Bps * 1.5, 1e-12);
        assert_rel(b->ideal_s, ring(b->size), 1e-6);
        assert_rel(b->efficiency, 1.0, 1e-6);
    }
    assert_rel(f->efficiency, 1.0, 1e-6);
    /* Large vectors run at the link's bandwidth on the bus. */
    assert_rel(bin_of(f, 67108864.0)->busbw_Bps, BW, 0.01);
    assert_string_equal(bin_of(f, 1024.0)->verdict, "startup-bound");
    assert_string_equal(bin_of(f, 1048576.0)->verdict, "bandwidth-bound");
    cf_analysis_free(a);
    cf_profile_free(&p);
}

static void test_link_option(void **state)
{
    cf_profile_t p;
    cf_analysis_t *a;
    cf_analysis_opts_t o;
    const cf_an_fit_t *f;
    (void)state;

    profile_new(&p);
    add_allreduce(&p, 3, 26);
    /* No point-to-point traffic and no link: no ideal. */
    a = analyse(&p, NULL);
    f = cf_analysis_find(a, "MPI_Allreduce", WORLD, INTER);
    assert_null(cf_analysis_ref(a, INTER)->source);
    assert_true(isnan(f->efficiency) && isnan(f->bin[0].ideal_s));
    cf_analysis_free(a);

    cf_analysis_opts_init(&o);
    o.link_alpha_s = ALPHA;
    o.link_Bps = BW;
    a = analyse(&p, &o);
    f = cf_analysis_find(a, "MPI_Allreduce", WORLD, INTER);
    assert_string_equal(cf_analysis_ref(a, INTER)->source, "link");
    assert_rel(f->efficiency, 1.0, 1e-9);
    for (size_t k = 0; k < f->nbin; k++)
        assert_rel(f->bin[k].ideal_s, ring(f->bin[k].size), 1e-9);
    cf_analysis_free(a);

    /* Half a link is a caller's error. */
    o.link_Bps = NAN;
    assert_int_equal(cf_analysis_run(&p, &o, &a), CF_ERR_INVALID);
    cf_profile_free(&p);
}

static void test_not_enough_sizes(void **state)
{
    cf_profile_t p;
    cf_analysis_t *a;
    cf_analysis_opts_t o;
    const cf_an_fit_t *f;
    json_t *j, *fj = NULL;
    size_t i;
    (void)state;

    profile_new(&p);
    add(&p, "MPI_Allreduce", "collective", WORLD, INTER, 1000, 50, ring(1000));
    add(&p, "MPI_Allreduce", "collective", WORLD, INTER, 4000, 50, ring(4000));
    a = analyse(&p, NULL);
    f = cf_analysis_find(a, "MPI_Allreduce", WORLD, INTER);
    assert_false(f->fit.ok);
    assert_string_equal(f->note, "not enough size range");
    assert_int_equal(f->nsizes, 2);
    assert_null(f->basis);
    assert_string_equal(f->verdict, "undetermined");
    j = cf_analysis_to_json(a);
    json_array_foreach(json_object_get(j, "fits"), i, fj)
        if (strcmp(json_string_value(json_object_get(fj, "op")), "MPI_Allreduce") == 0)
            break;
    assert_non_null(fj);
    assert_true(json_is_false(json_object_get(fj, "fit_ok")));
    assert_string_equal(json_string_value(json_object_get(fj, "note")), "not enough size range");
    assert_true(json_is_null(json_object_get(fj, "alpha_s")));
    assert_true(json_is_null(json_object_get(fj, "bandwidth_Bps")));
    assert_true(json_is_null(json_array_get(json_object_get(json_object_get(fj, "ci"), "alpha_s"), 0)));
    json_decref(j);
    cf_analysis_free(a);

    /* With a link, the verdict comes from the ring model on that link. */
    cf_analysis_opts_init(&o);
    o.link_alpha_s = ALPHA;
    o.link_Bps = BW;
    a = analyse(&p, &o);
    f = cf_analysis_find(a, "MPI_Allreduce", WORLD, INTER);
    assert_false(f->fit.ok);
    assert_string_equal(f->basis, "model");
    assert_string_equal(f->verdict, "startup-bound");
    assert_rel(bin_of(f, 1000)->startup_share, 6 * ALPHA / ring(1000), 1e-9);
    assert_rel(f->n_half_bytes, P * ALPHA * BW, 1e-9); /* n_half of the ring: p alpha B */
    cf_analysis_free(a);
    cf_profile_free(&p);
}

/* Noise, an outlier bin and an eager -> rendezvous switch at 64 KiB. */
static void test_noise_outlier_switch(void **state)
{
    cf_profile_t p;
    cf_analysis_t *a;
    const cf_an_fit_t *f;
    (void)state;

    rng_state = 2024;
    profile_new(&p);
    for (int i = 0; i <= 26; i++) {
        double m = ldexp(1.0, i);
        double t = m < 65536 ? 2e-6 + m / 10e9 : 20e-6 + m / 25e9;
        t *= 1.0 + 0.03 * rng_uniform();
        if (i == 5)
            t *= 4; /* a preempted bin */
        add(&p, "MPI_Isend", "p2p", WORLD, INTER, (uint64_t)m, 100, t);
    }
    a = analyse(&p, NULL);
    f = cf_analysis_find(a, "MPI_Isend", WORLD, INTER);
    assert_true(f->fit.ok);
    assert_int_equal(f->fit.nseg, 2);
    assert_true(f->fit.noutliers >= 1);
    assert_true(f->fit.seg[0].size_hi >= 16384 && f->fit.seg[0].size_hi <= 65536);
    assert_rel(f->fit.seg[0].alpha_s, 2e-6, 0.10);
    assert_rel(f->fit.seg[0].bandwidth_Bps, 10e9, 0.10);
    assert_rel(f->fit.seg[1].alpha_s, 20e-6, 0.10);
    assert_rel(f->fit.seg[1].bandwidth_Bps, 25e9, 0.10);
    /* Per bin the verdict follows the segment of the size. */
    assert_string_equal(bin_of(f, 1024)->verdict, "startup-bound");
    assert_string_equal(bin_of(f, 67108864)->verdict, "bandwidth-bound");
    assert_true(cf_analysis_op(a, 0)->nonblocking);
    cf_analysis_free(a);
    cf_profile_free(&p);
}

/* op's records from 8 B to 16 MiB, 100 calls each: 40 sampled, their
 * transfer model(n) and their wait that times it; each call model(n) x (1 + wait). */
static void add_timed(cf_profile_t *p, const char *op, const char *kind, double (*model)(double), double wait)
{
    for (int i = 3; i <= 24; i++) {
        uint64_t n = (uint64_t)1 << i;
        double t = model((double)n);
        cf_record_t *r = add(p, op, kind, WORLD, INTER, n, 100, (1 + wait) * t);
        r->xfer_n = 40;
        r->xfer_p50 = r->xfer_p99 = t;
        r->xfer_sum = 40 * t;
        r->wait_s = wait * r->xfer_sum;
    }
}

/* Sampled transfer times are fitted; the wait is reported apart. */
static void test_transfer_and_wait(void **state)
{
    cf_profile_t p;
    cf_analysis_t *a;
    const cf_an_fit_t *f;
    (void)state;

    profile_new(&p);
    add_timed(&p, "MPI_Allreduce", "collective", ring, 0.5);
    a = analyse(&p, NULL);
    f = cf_analysis_find(a, "MPI_Allreduce", WORLD, INTER);
    assert_int_equal(f->time_source, CF_AN_TIME_TRANSFER);
    assert_rel(f->fit.alpha_s, 6 * ALPHA, 1e-6);
    assert_rel(f->fit.bandwidth_Bps, BW / 1.5, 1e-6);
    /* wait / (wait + transfer) over the sampled calls */
    assert_rel(f->wait_share, 1.0 / 3.0, 1e-9);
    assert_rel(bin_of(f, 1024)->p50_s, ring(1024), 1e-12);
    {
        /* the breakdown: a third of the time waiting, the split of the rest */
        const cf_an_breakdown_t *bd = cf_analysis_breakdown(a);
        char buf[512];
        assert_rel(bd->waiting, 1.0 / 3.0, 1e-9);
        assert_rel(bd->startup + bd->payload, 2.0 / 3.0, 1e-9);
        assert_rel(bd->startup, 2.0 / 3.0 * f->startup_share, 1e-9);
        assert_null(strstr(cf_analysis_headline(a, buf, sizeof(buf)), "Waiting"));
        assert_null(strstr(cf_analysis_advice(cf_analysis_op(a, 0), buf, sizeof(buf)), "last rank"));
    }
    cf_analysis_free(a);
    /* waiting twice the transfer: the headline and the operation's advice say so first */
    for (size_t k = 0; k < p.nrec; k++)
        p.rec[k].wait_s = 2 * p.rec[k].xfer_sum;
    a = analyse(&p, NULL);
    f = cf_analysis_find(a, "MPI_Allreduce", WORLD, INTER);
    assert_rel(f->wait_share, 2.0 / 3.0, 1e-9);
    {
        const cf_an_breakdown_t *bd = cf_analysis_breakdown(a);
        char buf[512];
        assert_rel(bd->waiting, 2.0 / 3.0, 1e-9);
        assert_rel(bd->startup + bd->payload, 1.0 / 3.0, 1e-9);
        assert_non_null(strstr(cf_analysis_headline(a, buf, sizeof(buf)),
                               "Waiting dominates: 66.7% of the recorded MPI time is ranks waiting inside "
                               "collectives for the last rank to arrive"));
        assert_non_null(strstr(cf_analysis_advice(cf_analysis_op(a, 0), buf, sizeof(buf)),
                               "it waits for the last rank to arrive 67% of its time (its sampled instances): "
                               "balance the work before it, or find what delays the late rank, first; of the rest, "));
    }
    cf_analysis_free(a);
    cf_profile_free(&p);

    /* point-to-point: only a receive posted before its message is timed, so
     * its waits are said of those receives and not set apart */
    profile_new(&p);
    add_timed(&p, "MPI_Recv", "p2p", hockney, 2);
    a = analyse(&p, NULL);
    {
        const cf_an_op_t *o = cf_analysis_op(a, 0);
        const cf_an_breakdown_t *bd = cf_analysis_breakdown(a);
        char buf[CF_AN_ADVICE_LEN];
        assert_string_equal(o->op, "MPI_Recv");
        assert_rel(o->fit->wait_share, 2.0 / 3.0, 1e-9);
        assert_true(bd->waiting == 0);
        assert_rel(bd->startup + bd->payload + bd->uncertain, 1.0, 1e-9);
        assert_non_null(strstr(cf_analysis_advice(o, buf, sizeof(buf)),
                               "its sampled receives posted before their message waited for the sender 67% of "
                               "their time (late senders: balance the work before the sends, or find what delays "
                               "them); its transfer: "));
    }
    cf_analysis_free(a);
    /* sends beside them, whose wait is never measured (0 in their
     * records): not a wait of 0, so the receives' share stands in the
     * path's joint fit, and a fit of sends alone has none */
    add_timed(&p, "MPI_Send", "p2p", hockney, 0);
    a = analyse(&p, NULL);
    assert_rel(cf_analysis_find(a, "p2p", CF_COMM_ID_NONE, INTER)->wait_share, 2.0 / 3.0, 1e-9);
    assert_rel(cf_analysis_find(a, "MPI_Recv", WORLD, INTER)->wait_share, 2.0 / 3.0, 1e-9);
    assert_true(isnan(cf_analysis_find(a, "MPI_Send", WORLD, INTER)->wait_share));
    cf_analysis_free(a);
    cf_profile_free(&p);
}

static void test_zero_byte_bins(void **state)
{
    cf_profile_t p;
    cf_analysis_t *a;
    const cf_an_fit_t *f;
    char buf[256];
    (void)state;

    profile_new(&p);
    add(&p, "MPI_Barrier", "collective", WORLD, INTER, 0, 30, 12e-6);
    add(&p, "MPI_Bcast", "collective", WORLD, INTER, 0, 5, 1e-3); /* count 0: must not pull the line */
    for (int i = 4; i <= 20; i += 2) {
        uint64_t n = (uint64_t)1 << i;
        add(&p, "MPI_Bcast", "collective", WORLD, INTER, n, 10, 10e-6 + (double)n / 5e9);
    }
    a = analyse(&p, NULL);
    f = cf_analysis_find(a, "MPI_Barrier", WORLD, INTER);
    assert_false(f->fit.ok);
    assert_string_equal(f->note, "no payload");
    assert_rel(f->zero_p50_s, 12e-6, 1e-12);
    assert_string_equal(f->verdict, "startup-bound");
    f = cf_analysis_find(a, "MPI_Bcast", WORLD, INTER);
    assert_true(f->fit.ok);
    assert_rel(f->fit.alpha_s, 10e-6, 1e-6);
    assert_rel(f->fit.bandwidth_Bps, 5e9, 1e-6);
    assert_false(f->bin[0].in_fit);
    assert_true(f->bin[1].in_fit);
    assert_rel(f->zero_p50_s, 1e-3, 1e-12);
    assert_rel(f->bin[0].startup_share, 1.0, 0);
    {
        /* The zero-byte calls weigh their startup in the share, as the
         * others weigh their modelled time: a third, bandwidth-bound. */
        double num = 5 * 10e-6, den = 5 * 10e-6;
        for (int i = 4; i <= 20; i += 2) {
            num += 10 * 10e-6;
            den += 10 * (10e-6 + ldexp(1.0, i) / 5e9);
        }
        assert_rel(f->startup_share, num / den, 1e-3);
        assert_string_equal(f->verdict, "bandwidth-bound");
    }
    for (size_t k = 0; k < cf_analysis_nops(a); k++)
        if (strcmp(cf_analysis_op(a, k)->op, "MPI_Barrier") == 0)
            assert_non_null(strstr(cf_analysis_advice(cf_analysis_op(a, k), buf, sizeof(buf)),
                                   "no payload"));
    cf_analysis_free(a);
    cf_profile_free(&p);
}

/* Records of one bin (regions, here) merge: calls add, medians combine
 * weighted by calls. */
static void test_merge_bins(void **state)
{
    cf_profile_t p;
    cf_analysis_t *a;
    const cf_an_fit_t *f;
    (void)state;

    profile_new(&p);
    add(&p, "MPI_Send", "p2p", WORLD, INTER, 1024, 10, 1e-6)->region = 1;
    add(&p, "MPI_Send", "p2p", WORLD, INTER, 1024, 30, 2e-6)->region = 2;
    add(&p, "MPI_Recv", "p2p", CF_COMM_ID_SELF, INTER, 1024, 60, 3e-6);
    a = analyse(&p, NULL);
    f = cf_analysis_find(a, "MPI_Send", WORLD, INTER);
    assert_int_equal(f->nbin, 1);
    assert_int_equal(f->bin[0].calls, 40);
    assert_rel(f->bin[0].p50_s, (10 * 1e-6 + 30 * 2e-6) / 40, 1e-12);
    f = cf_analysis_find(a, "p2p", CF_COMM_ID_NONE, INTER);
    assert_int_equal(f->nbin, 1);
    assert_int_equal(f->bin[0].calls, 100);
    assert_rel(f->bin[0].p50_s, (10 * 1e-6 + 30 * 2e-6 + 60 * 3e-6) / 100, 1e-12);
    assert_int_equal(f->comm_size, P); /* the largest communicator */
    cf_analysis_free(a);
    cf_profile_free(&p);
}

static void test_ranking(void **state)
{
    cf_profile_t p;
    cf_analysis_t *a;
    double sum = 0;
    int seen_wait = 0;
    char buf[256];
    (void)state;

    profile_new(&p);
    add_p2p(&p);
    add_allreduce(&p, 3, 26);
    add(&p, "MPI_Waitall", "completion", CF_COMM_ID_NONE, INTER, 0, 1000, 0.5);
    add(&p, "ucp_tag_send_nbx", "p2p", CF_COMM_ID_NONE, INTER, 8, 1000, 100.0)->layer = CF_LAYER_UCX;
    a = analyse(&p, NULL);
    assert_int_equal(cf_analysis_nops(a), 4); /* Send, Recv, Allreduce, Waitall; UCX left out */
    for (size_t k = 0; k < cf_analysis_nops(a); k++) {
        const cf_an_op_t *o = cf_analysis_op(a, k);
        sum += o->share;
        if (k > 0)
            assert_true(cf_analysis_op(a, k - 1)->time_s >= o->time_s);
        if (strcmp(o->op, "MPI_Waitall") == 0) {
            seen_wait = 1;
            assert_null(o->fit);
            assert_int_equal(k, 0); /* 500 s: the largest */
            assert_non_null(strstr(cf_analysis_advice(o, buf, sizeof(buf)), "nonblocking"));
        } else {
            assert_non_null(o->fit);
            assert_string_equal(o->fit->op, o->op);
        }
    }
    assert_true(seen_wait);
    assert_rel(sum, 1.0, 1e-12);
    assert_rel(cf_analysis_ranks(a)->mpi_mean_s, 2.5, 1e-12);
    assert_int_equal(cf_analysis_ranks(a)->max_rank, 3);
    assert_rel(cf_analysis_ranks(a)->imbalance, 4.0 / 2.5 - 1.0, 1e-12);
    {
        /* The waits are not explained; the rest splits by startup share. */
        const cf_an_breakdown_t *bd = cf_analysis_breakdown(a);
        const cf_an_op_t *w = cf_analysis_op(a, 0);
        assert_rel(bd->unexplained, w->share, 1e-12);
        assert_rel(bd->startup + bd->payload + bd->no_payload + bd->unexplained, 1.0, 1e-12);
        assert_true(bd->startup > 0 && bd->payload > 0 && bd->no_payload == 0);
    }
    cf_analysis_free(a);
    cf_profile_free(&p);
}

static void expect_type(json_t *o, const char *key, json_type type)
{
    json_t *v = json_object_get(o, key);
    if (v == NULL)
        fail_msg("missing '%s'", key);
    if (json_typeof(v) != type && !(type == JSON_REAL && json_is_number(v)) &&
        !(type == JSON_TRUE && json_is_boolean(v)))
        fail_msg("'%s' has type %d, want %d", key, (int)json_typeof(v), type);
}

static void test_json_contract(void **state)
{
    cf_profile_t p;
    cf_analysis_t *a;
    json_t *j, *fits, *colls, *f, *b, *s, *ci;
    size_t i, nbins = 0, nseg = 0;
    char *text;
    (void)state;

    profile_new(&p);
    add_p2p(&p);
    add_allreduce(&p, 3, 26);
    a = analyse(&p, NULL);
    j = cf_analysis_to_json(a);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "format")), "commfit-report");
    fits = json_object_get(j, "fits");
    colls = json_object_get(j, "collectives");
    assert_true(json_is_array(fits) && json_array_size(fits) == 4); /* joint, Send, Recv, Allreduce */
    assert_true(json_is_array(colls) && json_array_size(colls) == 24);
    json_array_foreach(fits, i, f) {
        const char *kind = json_string_value(json_object_get(f, "kind"));
        assert_true(strcmp(kind, "p2p") == 0 || strcmp(kind, "collective") == 0);
        expect_type(f, "op", JSON_STRING);
        expect_type(f, "comm", JSON_STRING);
        expect_type(f, "comm_size", JSON_INTEGER);
        expect_type(f, "path", JSON_STRING);
        expect_type(f, "alpha_s", JSON_REAL);
        expect_type(f, "bandwidth_Bps", JSON_REAL);
        expect_type(f, "n_half_bytes", JSON_REAL);
        expect_type(f, "r2", JSON_REAL);
        expect_type(f, "startup_share", JSON_REAL);
        expect_type(f, "verdict", JSON_STRING);
        expect_type(f, "ci", JSON_OBJECT);
        ci = json_object_get(f, "ci");
        assert_int_equal(json_array_size(json_object_get(ci, "alpha_s")), 2);
        assert_int_equal(json_array_size(json_object_get(ci, "bandwidth_Bps")), 2);
        assert_true(json_is_number(json_array_get(json_object_get(ci, "alpha_s"), 0)));
        expect_type(f, "segments", JSON_ARRAY);
        json_array_foreach(json_object_get(f, "segments"), nseg, s) {
            expect_type(s, "size_lo", JSON_REAL);
            expect_type(s, "size_hi", JSON_REAL);
            expect_type(s, "alpha_s", JSON_REAL);
            expect_type(s, "bandwidth_Bps", JSON_REAL);
        }
        assert_true(nseg >= 1);
        expect_type(f, "bins", JSON_ARRAY);
        json_array_foreach(json_object_get(f, "bins"), nbins, b) {
            expect_type(b, "size_lo", JSON_INTEGER);
            expect_type(b, "size_hi", JSON_INTEGER);
            expect_type(b, "calls", JSON_INTEGER);
            expect_type(b, "p50_s", JSON_REAL);
            expect_type(b, "verdict", JSON_STRING);
        }
        assert_true(nbins >= 24);
    }
    json_array_foreach(colls, i, b) {
        assert_string_equal(json_string_value(json_object_get(b, "op")), "MPI_Allreduce");
        assert_int_equal(json_integer_value(json_object_get(b, "comm_size")), P);
        expect_type(b, "size_lo", JSON_INTEGER);
        expect_type(b, "size_hi", JSON_INTEGER);
        expect_type(b, "algbw_Bps", JSON_REAL);
        expect_type(b, "busbw_Bps", JSON_REAL);
        expect_type(b, "ideal_ring_s", JSON_REAL);
        expect_type(b, "efficiency", JSON_REAL);
        assert_rel(json_number_value(json_object_get(b, "efficiency")), 1.0, 1e-6);
    }
    /* Serializable: no NaN or infinity slipped through. */
    text = json_dumps(j, 0);
    assert_non_null(text);
    free(text);
    json_decref(j);
    cf_analysis_free(a);
    cf_profile_free(&p);
}

static void check_survives(const cf_profile_t *p)
{
    cf_analysis_t *a = NULL;
    json_t *j;
    char *text, *buf = NULL, advice[256];
    size_t len = 0;
    FILE *out;

    assert_int_equal(cf_analysis_run(p, NULL, &a), CF_OK);
    j = cf_analysis_to_json(a);
    assert_non_null(j);
    text = json_dumps(j, 0);
    assert_non_null(text);
    free(text);
    json_decref(j);
    for (size_t k = 0; k < cf_analysis_nops(a); k++)
        cf_analysis_advice(cf_analysis_op(a, k), advice, sizeof(advice));
    cf_analysis_free(a);
    out = open_memstream(&buf, &len);
    assert_non_null(out);
    cf_summary_print(p, out);
    fclose(out);
    /* Every line of the summary carries the prefix. */
    for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        assert_int_equal(strncmp(line, "commfit: ", 9), 0);
    free(buf);
}

static void test_any_profile(void **state)
{
    static const char *const kinds[] = {"p2p", "collective", "completion", "probe", "other", ""};
    static const char *const ops[] = {"MPI_Send", "MPI_Allreduce", "MPI_Barrier", "MPI_Wait",
                                      "MPI_Neighbor_allgather", "MPI_Bcast", "x"};
    cf_profile_t p;
    (void)state;

    /* Empty: no ranks, no communicators, no records. */
    cf_profile_init(&p);
    check_survives(&p);

    /* Odd values a reader would let through, and some it would not. */
    profile_new(&p);
    add(&p, "MPI_Send", "p2p", WORLD, 7, 100, 0, 1e-6);                /* no calls, bad path */
    add(&p, "MPI_Send", "p2p", 12345, 2, 100, 5, -1.0);                 /* unknown comm, negative */
    add(&p, "MPI_Allreduce", "collective", WORLD, 2, 100, 5, NAN);
    add(&p, "MPI_Allreduce", "collective", WORLD, 2, 1000, 5, INFINITY);
    add(&p, "MPI_Allreduce", "collective", WORLD, 2, 10000, 5, 0.0);
    add(&p, "MPI_Alltoall", "collective", CF_COMM_ID_SELF, 2, 100, 5, 1e-6);
    add(&p, "MPI_Alltoall", "collective", CF_COMM_ID_SELF, 2, 1000, 5, 1e-6);
    add(&p, "MPI_Alltoall", "collective", CF_COMM_ID_SELF, 2, 10000, 5, 1e-6);
    p.rec[1].xfer_n = 3; /* transfer fields with nothing in them */
    p.rank[0].mpi_s = NAN;
    p.rank[1].wall_s = -1;
    check_survives(&p);
    cf_profile_free(&p);

    /* Random profiles. */
    rng_state = 99;
    for (int round = 0; round < 300; round++) {
        int n = (int)((rng_uniform() + 1) * 40);
        profile_new(&p);
        p.ranks = round % 5;
        for (int i = 0; i < n; i++) {
            double u = rng_uniform();
            uint64_t size = round % 7 == 0 ? 0 : (uint64_t)ldexp(1.0, (int)((u + 1) * 15));
            cf_record_t *r =
                add(&p, ops[(size_t)((rng_uniform() + 1) * 3.5) % 7], kinds[(size_t)((rng_uniform() + 1) * 3) % 6],
                    (uint32_t)((rng_uniform() + 1) * 2), (int)((rng_uniform() + 1) * 1.5),
                    size, (uint64_t)((rng_uniform() + 1) * 3), fabs(rng_uniform()) * 1e-3);
            if (rng_uniform() > 0.5) {
                r->xfer_n = (uint64_t)((rng_uniform() + 1) * 2);
                r->xfer_p50 = rng_uniform() * 1e-4;
                r->xfer_sum = rng_uniform();
                r->wait_s = rng_uniform();
            }
            if (rng_uniform() > 0.9)
                r->layer = CF_LAYER_UCX;
        }
        if (round % 3 == 0) {
            p.comm[0].size = (int)(rng_uniform() * 3); /* 0, negative or tiny */
            p.nrank = 0;
        }
        check_survives(&p);
        cf_profile_free(&p);
    }
}

static void test_summary(void **state)
{
    cf_profile_t p;
    char *buf = NULL;
    size_t len = 0;
    FILE *out;
    (void)state;

    profile_new(&p);
    add_p2p(&p);
    add_allreduce(&p, 3, 26);
    p.partial = 1;
    out = open_memstream(&buf, &len);
    cf_summary_print(&p, out);
    fclose(out);
    assert_non_null(strstr(buf, "commfit: 4 ranks on 2 nodes"));
    assert_non_null(strstr(buf, "partial profile"));
    assert_non_null(strstr(buf, "time/rank"));
    assert_non_null(strstr(buf, "MPI_Allreduce"));
    assert_non_null(strstr(buf, "bandwidth-bound"));
    assert_non_null(strstr(buf, "25.0 GB/s")); /* the p2p link in the B column */
    free(buf);
    cf_profile_free(&p);
}

/* Regions: own and inclusive time per region and operation; late arrivals
 * from the profile, most often last first; wait and transfer in the JSON. */
static void test_regions_and_late(void **state)
{
    cf_profile_t p;
    cf_analysis_t *a;
    const cf_an_region_t *g;
    const cf_an_late_t *l;
    json_t *j, *arr, *e;
    (void)state;

    profile_new(&p);
    p.nregion = 2;
    p.region = calloc(2, sizeof(*p.region));
    p.region[0] = strdup("step");
    p.region[1] = strdup("step/allreduce");
    p.extra = json_pack("{s:{s:i, s:i}, s:[{s:i, s:i, s:[{s:i, s:i}, {s:i, s:i}, {s:i, s:i}]}]}",
                        "region_entries", "step", 10, "step/allreduce", 10, "late_arrivals", "comm",
                        (int)WORLD, "instances", 40, "last", "rank", 0, "count", 5, "rank", 3, "count",
                        30, "rank", 1, "count", 5);
    add(&p, "MPI_Allreduce", "collective", WORLD, INTER, 1024, 40, 1e-3)->region = 2;
    add(&p, "MPI_Allreduce", "collective", WORLD, INTER, 4096, 40, 2e-3)->region = 2;
    add(&p, "MPI_Bcast", "collective", WORLD, INTER, 64, 10, 1e-3)->region = 1;
    add(&p, "MPI_Barrier", "collective", WORLD, INTER, 0, 10, 2e-3);
    p.rank[1].wait_s = 0.25;
    p.rank[1].xfer_s = 0.75;
    a = analyse(&p, NULL);

    assert_int_equal(cf_analysis_nregions(a), 3);
    g = cf_analysis_region(a, 0);
    assert_string_equal(g->name, "step");
    assert_int_equal(g->entries, 10);
    assert_rel(g->time_s, 0.01, 1e-12);
    assert_rel(g->inclusive_s, 0.01 + 0.04 + 0.08, 1e-12);
    assert_rel(g->share, 0.01 / 0.15, 1e-12);
    g = cf_analysis_region(a, 1);
    assert_string_equal(g->name, "step/allreduce");
    assert_int_equal(g->nop, 1); /* both bins in one row */
    assert_int_equal(g->op[0].calls, 80);
    assert_rel(g->op[0].share, 1.0, 1e-12);
    assert_rel(g->inclusive_s, g->time_s, 1e-12);
    g = cf_analysis_region(a, 2);
    assert_null(g->name); /* outside */
    assert_int_equal(g->entries, -1);
    assert_string_equal(g->op[0].op, "MPI_Barrier");
    assert_null(cf_analysis_region(a, 3));

    assert_int_equal(cf_analysis_nlate(a), 1);
    l = cf_analysis_late(a, 0);
    assert_int_equal(l->comm, WORLD);
    assert_int_equal(l->comm_size, P);
    assert_int_equal(l->instances, 40);
    assert_int_equal(l->nlast, 3);
    assert_int_equal(l->last[0].rank, 3);
    assert_int_equal(l->last[0].count, 30);
    assert_int_equal(l->last[1].rank, 0); /* ties by rank */

    j = cf_analysis_to_json(a);
    arr = json_object_get(j, "regions");
    assert_int_equal(json_array_size(arr), 3);
    e = json_array_get(arr, 2);
    assert_true(json_is_null(json_object_get(e, "region")));
    assert_true(json_is_null(json_object_get(e, "entries")));
    e = json_array_get(arr, 1);
    assert_rel(json_number_value(json_object_get(e, "time_per_rank_s")), 0.12 / P, 1e-12);
    assert_int_equal(json_array_size(json_object_get(e, "operations")), 1);
    arr = json_object_get(j, "late_arrivals");
    e = json_array_get(arr, 0);
    assert_string_equal(json_string_value(json_object_get(e, "comm")), "world");
    assert_rel(json_number_value(json_object_get(json_array_get(json_object_get(e, "last"), 0), "share")),
               0.75, 1e-12);
    e = json_array_get(json_object_get(j, "ranks"), 1);
    assert_rel(json_number_value(json_object_get(e, "wait_s")), 0.25, 0);
    assert_rel(json_number_value(json_object_get(e, "transfer_s")), 0.75, 0);
    e = json_array_get(json_object_get(j, "operations"), 0);
    assert_non_null(json_object_get(e, "wait_share"));
    json_decref(j);
    cf_analysis_free(a);
    cf_profile_free(&p);

    /* No regions, malformed late arrivals: nothing listed, nothing breaks. */
    profile_new(&p);
    p.extra = json_pack("{s:[i, {s:s}, {s:i, s:i, s:[i, {s:i}]}]}", "late_arrivals", 3, "comm", "x",
                        "comm", 1, "instances", 2, "last", 7, "rank", 1);
    add_allreduce(&p, 3, 8);
    a = analyse(&p, NULL);
    assert_int_equal(cf_analysis_nregions(a), 0);
    assert_int_equal(cf_analysis_nlate(a), 1);
    assert_int_equal(cf_analysis_late(a, 0)->nlast, 0);
    cf_analysis_free(a);
    cf_profile_free(&p);
}

/* ---- beneath MPI: UCX records ---- */

/* UCX sends (and as many receives) of bytes_each under parent, msgs in all. */
static void add_ucx(cf_profile_t *p, const char *parent, int path, uint64_t bytes_each, uint64_t msgs,
                    double t)
{
    for (int recv = 0; recv < 2; recv++) {
        cf_record_t *r = add(p, recv ? "ucp_tag_recv_nbx" : "ucp_tag_send_nbx", recv ? "recv" : "send",
                             CF_COMM_ID_NONE, path, bytes_each, msgs, t);
        r->layer = CF_LAYER_UCX;
        cf_strlcpy(r->parent_op, parent, sizeof(r->parent_op));
    }
}

static double rd(double n)
{
    return 2.0 * (ALPHA + n / BW); /* lg 4 rounds of the whole vector */
}

static json_t *wire_coll(json_t *j, const char *op)
{
    json_t *w = json_object_get(j, "wire"), *c;
    size_t i;
    assert_true(json_is_object(w));
    json_array_foreach(json_object_get(w, "collectives"), i, c)
        if (strcmp(json_string_value(json_object_get(c, "op")), op) == 0)
            return c;
    fail_msg("no wire entry for %s", op);
    return NULL;
}

static double jnum_of(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    if (!json_is_number(v))
        fail_msg("%s is not a number", k);
    return json_number_value(v);
}

/* A ring all-reduce on 4 ranks: 2(p-1) = 6 messages of M/4 per rank and
 * call, every size from 8 B to 64 MiB; UCX sends timed on a known hop. */
static void test_wire_ring(void **state)
{
    const double ha = 1e-6, hb = 10e9;
    cf_profile_t p;
    cf_analysis_t *a;
    const cf_an_wire_t *w;
    const cf_an_hop_t *h;
    json_t *j, *c, *x;
    char line[512];
    (void)state;

    profile_new(&p);
    add_p2p(&p);
    add_allreduce(&p, 3, 26); /* 20 calls over all ranks per size */
    for (int i = 3; i <= 26; i++) {
        uint64_t n = (uint64_t)1 << i;
        add_ucx(&p, "MPI_Allreduce", INTER, n / P, 20 * 6, ha + (double)(n / P) / hb);
    }
    add(&p, "MPI_Send", "p2p", WORLD, CF_PATH_INTRA, 64, 10, 1e-6);
    add_ucx(&p, "MPI_Send", CF_PATH_INTRA, 64, 10, 1e-7);
    p.extra = json_pack("{s:{s:{s:[s], s:[s,s]}}}", "ucx", "transports", "inter-node", "tcp/eth0",
                        "intra-node", "sysv/memory", "cma/memory");
    a = analyse(&p, NULL);

    assert_int_equal(cf_analysis_nwire(a), 2);
    w = cf_analysis_wire(a, 0);
    assert_string_equal(w->w.op, "MPI_Allreduce");
    assert_true(w->collective);
    assert_int_equal(w->w.comm, WORLD);
    assert_int_equal(w->w.comm_size, P);
    assert_int_equal(w->w.path, INTER);
    assert_true(w->inferred);
    assert_non_null(w->inf.algo);
    assert_string_equal(w->inf.algo, "ring");
    assert_rel(w->w.msgs_per_call, 6.0, 1e-12);
    assert_rel(w->msg_size / w->w.payload, 0.25, 1e-12);
    /* Costed on its own fit inverted under the ring: the p2p link again. */
    assert_string_equal(w->cost_source, "collective fit");
    assert_rel(w->cost_alpha_s, ALPHA, 1e-6);
    assert_rel(w->cost_Bps, BW, 1e-6);
    assert_rel(w->measured_s, w->model_s, 1e-6);
    /* Rabenseifner saves 2 alpha per call; no algorithm is notably cheaper. */
    assert_non_null(w->best_algo);
    assert_true(w->excess >= 1.0 && w->excess < CF_AN_WIRE_EXCESS);
    assert_null(cf_analysis_wire_advice(a, w, line, sizeof(line)));
    assert_false(cf_analysis_wire(a, 1)->collective); /* MPI_Send */

    assert_int_equal(cf_analysis_nhops(a), 2);
    h = cf_analysis_hop(a, 0);
    assert_int_equal(h->path, CF_PATH_INTRA);
    assert_false(h->fit.ok);
    assert_string_equal(h->note, "not enough size range");
    h = cf_analysis_hop(a, 1);
    assert_int_equal(h->path, INTER);
    assert_true(h->fit.ok);
    assert_rel(h->fit.alpha_s, ha, 0.01);
    assert_rel(h->fit.bandwidth_Bps, hb, 0.01);
    /* MPI point to point stays the reference where there is some. */
    assert_string_equal(cf_analysis_ref(a, INTER)->source, "p2p best case");

    j = cf_analysis_to_json(a);
    assert_non_null(j);
    c = wire_coll(j, "MPI_Allreduce");
    assert_string_equal(json_string_value(json_object_get(c, "comm")), "world");
    assert_int_equal(json_integer_value(json_object_get(c, "comm_size")), P);
    assert_int_equal(json_integer_value(json_object_get(c, "size_lo")), 8);
    assert_int_equal(json_integer_value(json_object_get(c, "size_hi")), (1 << 27) - 1);
    assert_int_equal(json_integer_value(json_object_get(c, "mpi_calls")), 24 * 20);
    assert_rel(jnum_of(c, "wire_messages_per_call_per_rank"), 6.0, 1e-12);
    assert_rel(jnum_of(c, "wire_bytes_per_call_per_rank"), 1.5 * jnum_of(c, "payload_bytes"), 1e-12);
    assert_rel(jnum_of(c, "message_size"), jnum_of(c, "payload_bytes") / 4, 1e-12);
    assert_rel(jnum_of(c, "message_share_of_payload"), 0.25, 1e-12);
    assert_string_equal(json_string_value(json_object_get(c, "inferred_algorithm")), "ring");
    assert_rel(jnum_of(c, "expected_messages"), 6.0, 1e-12);
    assert_true(json_is_true(json_object_get(c, "match")));
    assert_string_equal(json_string_value(json_object_get(c, "model")), "2(p-1) messages of n/p");
    assert_int_equal(json_array_size(json_object_get(c, "message_bins")), 24);
    assert_true(json_is_null(json_object_get(c, "advice")));
    assert_string_equal(json_string_value(json_object_get(json_object_get(c, "cost_link"), "source")),
                        "collective fit");
    x = json_object_get(json_object_get(j, "wire"), "other");
    assert_int_equal(json_array_size(x), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(x, 0), "op")), "MPI_Send");
    x = json_object_get(json_object_get(j, "wire"), "hop_fits");
    assert_int_equal(json_array_size(x), 2);
    x = json_array_get(x, 1);
    assert_string_equal(json_string_value(json_object_get(x, "path")), "inter-node");
    assert_rel(jnum_of(x, "alpha_s"), ha, 0.01);
    assert_rel(jnum_of(x, "bandwidth_Bps"), hb, 0.01);
    assert_rel(jnum_of(x, "n_half_bytes"), ha * hb, 0.02);
    assert_true(jnum_of(x, "r2") > 0.999);
    assert_true(json_is_null(json_object_get(x, "note")));
    x = json_array_get(json_object_get(json_object_get(j, "wire"), "hop_fits"), 0);
    assert_true(json_is_null(json_object_get(x, "alpha_s"))); /* intra-node: one size */
    x = json_object_get(json_object_get(j, "wire"), "transports");
    assert_int_equal(json_array_size(json_object_get(x, "intra-node")), 2);
    json_decref(j);
    cf_analysis_free(a);
    cf_profile_free(&p);
}

/* Recursive doubling at large sizes: lg p = 2 messages of the whole vector
 * per rank, where the ring and Rabenseifner send 2(p-1)/p = 1.5 of it. */
static void test_wire_recursive_doubling(void **state)
{
    cf_profile_t p;
    cf_analysis_t *a;
    const cf_an_wire_t *w;
    json_t *j, *c;
    char line[512], *buf = NULL;
    size_t len = 0;
    FILE *out;
    (void)state;

    profile_new(&p);
    for (int i = 16; i <= 26; i++) {
        uint64_t n = (uint64_t)1 << i;
        add(&p, "MPI_Allreduce", "collective", WORLD, INTER, n, 20, rd((double)n));
        add_ucx(&p, "MPI_Allreduce", INTER, n, 20 * 2, ALPHA + (double)n / BW);
    }
    a = analyse(&p, NULL);
    w = cf_analysis_wire(a, 0);
    assert_non_null(w);
    assert_string_equal(w->inf.algo, "recursive_doubling");
    assert_string_equal(w->cost_source, "collective fit");
    assert_rel(w->cost_alpha_s, ALPHA, 1e-6);
    assert_rel(w->cost_Bps, BW, 1e-6);
    /* Rabenseifner: 2 lg p alpha + 1.5 n/B, the cheapest at these sizes. */
    assert_string_equal(w->best_algo, "rabenseifner");
    assert_true(w->excess > CF_AN_WIRE_EXCESS && w->excess < 2.0 / 1.5);
    assert_true(w->saving_s > 0);
    assert_non_null(cf_analysis_wire_advice(a, w, line, sizeof(line)));
    assert_non_null(strstr(line, "MPI_Allreduce on world runs recursive_doubling"));
    assert_non_null(strstr(line, "rabenseifner would take"));
    assert_non_null(strstr(line, "--mca coll_tuned_allreduce_algorithm 6")); /* Open MPI in the profile */
    /* No MPI point to point: the UCX sends (11 sizes) give the path's link. */
    assert_string_equal(cf_analysis_ref(a, INTER)->source, "ucx hop fit");
    j = cf_analysis_to_json(a);
    c = wire_coll(j, "MPI_Allreduce");
    assert_string_equal(json_string_value(json_object_get(c, "inferred_algorithm")), "recursive_doubling");
    assert_string_equal(json_string_value(json_object_get(c, "best_algorithm")), "rabenseifner");
    assert_true(json_is_string(json_object_get(c, "advice")));
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(j, "references"), 0),
                                                          "source")),
                        "ucx hop fit");
    json_decref(j);
    cf_analysis_free(a);

    /* The end-of-run summary says it too; another library gets no Open MPI setting. */
    out = open_memstream(&buf, &len);
    cf_summary_print(&p, out);
    fclose(out);
    assert_non_null(strstr(buf, "commfit: beneath MPI: MPI_Allreduce on world runs recursive_doubling"));
    free(buf);
    snprintf(p.mpi_library, sizeof(p.mpi_library), "MPICH 4.0");
    a = analyse(&p, NULL);
    assert_non_null(cf_analysis_wire_advice(a, cf_analysis_wire(a, 0), line, sizeof(line)));
    assert_null(strstr(line, "--mca"));
    cf_analysis_free(a);
    cf_profile_free(&p);
}

/* Without MPI point to point on a path, the UCX per-hop fit is its
 * reference link; a --link still comes first. */
static void test_wire_reference(void **state)
{
    const double ha = 2e-6, hb = 5e9;
    cf_profile_t p;
    cf_analysis_t *a;
    cf_analysis_opts_t o;
    const cf_an_fit_t *f;
    const cf_an_ref_t *ref;
    json_t *j;
    (void)state;

    profile_new(&p);
    add_allreduce(&p, 3, 26);
    for (int i = 3; i <= 26; i++) {
        uint64_t n = (uint64_t)1 << i;
        add_ucx(&p, "MPI_Allreduce", INTER, n / P, 20 * 6, ha + (double)(n / P) / hb);
    }
    a = analyse(&p, NULL);
    ref = cf_analysis_ref(a, INTER);
    assert_string_equal(ref->source, "ucx hop fit");
    assert_ptr_equal(ref->fit, &cf_analysis_hop(a, 0)->fit);
    assert_rel(ref->alpha_s, ha, 0.01);
    assert_rel(ref->bandwidth_Bps, hb, 0.01);
    f = cf_analysis_find(a, "MPI_Allreduce", WORLD, INTER);
    /* ideal: 6 hops of n/4 on the UCX line */
    assert_rel(bin_of(f, 1048576.0)->ideal_s, 6 * (ha + 262144.0 / hb), 0.02);
    assert_true(isfinite(f->efficiency));
    cf_analysis_free(a);

    cf_analysis_opts_init(&o);
    o.link_alpha_s = ALPHA;
    o.link_Bps = BW;
    a = analyse(&p, &o);
    assert_string_equal(cf_analysis_ref(a, INTER)->source, "link");
    assert_string_equal(cf_analysis_wire(a, 0)->cost_source, "link");
    cf_analysis_free(a);
    cf_profile_free(&p);

    /* No UCX record: no wire section. */
    profile_new(&p);
    add_allreduce(&p, 3, 8);
    a = analyse(&p, NULL);
    assert_int_equal(cf_analysis_nwire(a), 0);
    assert_int_equal(cf_analysis_nhops(a), 0);
    j = cf_analysis_to_json(a);
    assert_true(json_is_null(json_object_get(j, "wire")));
    json_decref(j);
    cf_analysis_free(a);
    cf_profile_free(&p);
}

/* Nonblocking spans (post to completion) overlap other work: they feed
 * neither the reference link nor the cost ranking, whose shares add up
 * without them. */
static void test_nonblocking_spans(void **state)
{
    cf_profile_t p;
    cf_analysis_t *a;
    const cf_an_fit_t *joint;
    double sum = 0, spans = 0;
    int seen = 0;
    char buf[512];
    (void)state;

    profile_new(&p);
    add_p2p(&p);
    /* Spans 100 times the link's time: a program that posts early and
     * computes before it waits. */
    for (int i = 0; i <= 20; i++) {
        uint64_t m = (uint64_t)1 << i;
        add(&p, "MPI_Isend", "p2p", WORLD, INTER, m, 10, 100.0 * hockney((double)m));
        add(&p, "MPI_Irecv", "p2p", WORLD, INTER, m, 10, 100.0 * hockney((double)m));
        spans += 2 * 10 * 100.0 * hockney((double)m);
    }
    a = analyse(&p, NULL);
    joint = cf_analysis_find(a, "p2p", CF_COMM_ID_NONE, INTER);
    assert_non_null(joint);
    assert_int_equal(joint->calls, 540); /* the blocking calls only */
    assert_rel(joint->fit.bandwidth_Bps, BW, 1e-6);
    assert_rel(cf_analysis_ref(a, INTER)->bandwidth_Bps, BW, 1e-6);
    assert_rel(cf_analysis_span_s(a), spans, 1e-9);
    for (size_t k = 0; k < cf_analysis_nops(a); k++) {
        const cf_an_op_t *o = cf_analysis_op(a, k);
        if (o->nonblocking) {
            seen++;
            assert_true(isnan(o->share));
            assert_non_null(o->fit);
            assert_true(o->fit->nonblocking);
            assert_non_null(strstr(cf_analysis_advice(o, buf, sizeof(buf)), "not a cost"));
        } else {
            assert_int_equal(seen, 0); /* spans come after every cost */
            sum += o->share;
        }
    }
    assert_int_equal(seen, 2);
    assert_rel(sum, 1.0, 1e-12);
    {
        json_t *j = cf_analysis_to_json(a), *ops = json_object_get(j, "operations"), *o;
        size_t i;
        json_array_foreach(ops, i, o) {
            if (json_is_true(json_object_get(o, "nonblocking")))
                assert_true(json_is_null(json_object_get(o, "verdict")));
        }
        json_decref(j);
    }
    cf_analysis_free(a);
    cf_profile_free(&p);
}

/* A mean above p99 comes from under 1 % of the messages (the first ones
 * between two ranks wait milliseconds for their connection), and one below
 * p99 / 5 from a tail (preemptions), not from a second mode: the median
 * stays (it was 45 us for 8 B messages of 200 ns); two real modes keep the
 * mean, as a ping-pong's half round trip. */
static void test_transfer_mean_or_median(void **state)
{
    cf_profile_t p;
    cf_analysis_t *a;
    const cf_an_fit_t *f;
    (void)state;

    profile_new(&p);
    for (int i = 0; i <= 12; i++) {
        uint64_t m = (uint64_t)1 << i;
        cf_record_t *r = add(&p, "MPI_Recv", "p2p", WORLD, INTER, m, 1000, 3.0 * hockney((double)m));
        r->xfer_n = 500;
        r->xfer_p50 = hockney((double)m);
        if (i == 3) { /* a few connection waits */
            r->xfer_p99 = 15 * r->xfer_p50;
            r->xfer_sum = 500 * 200 * r->xfer_p50;
        } else if (i == 4) { /* two modes: half at p50, half 4 x slower */
            r->xfer_p99 = 4 * r->xfer_p50;
            r->xfer_sum = 250 * 5 * r->xfer_p50;
        } else if (i == 5) { /* a tail of preemptions: mean 1.8 x p50, p99 10 x */
            r->xfer_p99 = 10 * r->xfer_p50;
            r->xfer_sum = 500 * 1.8 * r->xfer_p50;
        } else {
            r->xfer_p99 = 2 * r->xfer_p50;
            r->xfer_sum = 500 * 1.1 * r->xfer_p50;
        }
    }
    a = analyse(&p, NULL);
    f = cf_analysis_find(a, "MPI_Recv", WORLD, INTER);
    assert_non_null(f);
    assert_rel(bin_of(f, 8)->p50_s, hockney(8), 1e-12);
    assert_rel(bin_of(f, 16)->p50_s, 2.5 * hockney(16), 1e-12);
    assert_rel(bin_of(f, 32)->p50_s, hockney(32), 1e-12);
    assert_rel(bin_of(f, 64)->p50_s, hockney(64), 1e-12);
    cf_analysis_free(a);
    cf_profile_free(&p);
}

/* A bin uses its transfer samples only when it has enough of them; one
 * sample among a million calls stands for nothing, and the profile says. */
static void test_sample_coverage(void **state)
{
    cf_profile_t p;
    cf_analysis_t *a;
    const cf_an_fit_t *f;
    const cf_an_bin_t *b;
    (void)state;

    profile_new(&p);
    for (int i = 0; i <= 12; i++) {
        uint64_t m = (uint64_t)1 << i;
        cf_record_t *r = add(&p, "MPI_Recv", "p2p", WORLD, INTER, m, 1000000, 3.0 * hockney((double)m));
        r->xfer_p50 = hockney((double)m);
        r->xfer_p99 = r->xfer_p50;
        r->xfer_sum = r->xfer_p50;
        r->xfer_n = i == 5 ? 1 : 100; /* one bin with a single sample */
        r->xfer_sum *= (double)r->xfer_n;
    }
    a = analyse(&p, NULL);
    /* One operation's line is of one quantity: durations throughout. */
    f = cf_analysis_find(a, "MPI_Recv", WORLD, INTER);
    assert_non_null(f);
    assert_int_equal(f->time_source, CF_AN_TIME_DURATION);
    assert_int_equal(bin_of(f, 64)->time_source, CF_AN_TIME_DURATION);
    /* The joint fit of the path keeps its choice per bin. */
    f = cf_analysis_find(a, "p2p", CF_COMM_ID_NONE, INTER);
    assert_non_null(f);
    b = bin_of(f, 32);
    assert_int_equal(b->time_source, CF_AN_TIME_DURATION);
    assert_rel(b->p50_s, 3.0 * hockney(32), 1e-12);
    assert_int_equal(b->samples, 1);
    assert_rel(b->coverage, 1e-6, 1e-12);
    b = bin_of(f, 64);
    assert_int_equal(b->time_source, CF_AN_TIME_TRANSFER);
    assert_rel(b->p50_s, hockney(64), 1e-12);
    assert_rel(b->coverage, 1e-4, 1e-12);
    assert_int_equal(f->few_sample_bins, 1);
    assert_int_equal(f->transfer_bins, 12);
    assert_int_equal(f->time_source, CF_AN_TIME_DURATION | CF_AN_TIME_TRANSFER);
    {
        int found = 0;
        for (size_t i = 0; i < cf_analysis_ncaveats(a); i++)
            found |= strstr(cf_analysis_caveat(a, i), "too few timed transfers (fewer than 8") != NULL;
        assert_true(found);
    }
    cf_analysis_free(a);
    cf_profile_free(&p);
}

/* Every bin carries the model's error; a fit that misses its bins is no
 * ground for a verdict. */
static void test_model_error_and_uncertain(void **state)
{
    cf_profile_t p;
    cf_analysis_t *a;
    const cf_an_fit_t *f;
    char buf[512];
    (void)state;

    profile_new(&p);
    add_p2p(&p);
    /* Times that alternate 2x above and below a line: no line fits them. */
    for (int i = 0; i <= 20; i++) {
        uint64_t m = (uint64_t)1 << i;
        add(&p, "MPI_Bcast", "collective", WORLD, INTER, m, 10, hockney((double)m) * (i % 2 ? 2.2 : 0.45));
    }
    a = analyse(&p, NULL);
    f = cf_analysis_find(a, "MPI_Send", WORLD, INTER);
    for (size_t k = 0; k < f->nbin; k++) {
        assert_true(f->bin[k].in_fit);
        assert_true(fabs(f->bin[k].model_error) < 1e-6);
    }
    assert_true(f->err_rms < 1e-6 && f->err_max < 1e-6);
    assert_null(f->leaning);
    assert_string_equal(f->verdict, "bandwidth-bound");
    assert_string_equal(bin_of(f, 1)->verdict, "startup-bound");
    assert_string_equal(bin_of(f, 1 << 26)->verdict, "bandwidth-bound");

    f = cf_analysis_find(a, "MPI_Bcast", WORLD, INTER);
    assert_true(f->fit.ok);
    assert_true(f->err_rms > 0.25);
    assert_string_equal(f->verdict, CF_AN_UNCERTAIN);
    assert_non_null(f->leaning);
    assert_non_null(strstr(f->why, "misses"));
    for (size_t k = 0; k < cf_analysis_nops(a); k++) {
        const cf_an_op_t *o = cf_analysis_op(a, k);
        /* the fusion advice, priced on the measured times, may still
         * stand; the verdict never does */
        if (strcmp(o->op, "MPI_Bcast") == 0) {
            cf_analysis_advice(o, buf, sizeof(buf));
            assert_true(strstr(buf, "cannot tell") != NULL || strstr(buf, "cannot be told") != NULL);
        }
    }
    cf_analysis_free(a);
    cf_profile_free(&p);
}

/* A last bin the line misses (a copy that leaves the cache) is still
 * bandwidth-bound: the miss is the model's error, not startup. */
static void test_missed_last_bin_verdict(void **state)
{
    cf_profile_t p;
    cf_analysis_t *a;
    const cf_an_fit_t *f;
    const cf_an_bin_t *b;
    (void)state;

    profile_new(&p);
    add_p2p(&p);
    for (int i = 0; i <= 22; i++) {
        uint64_t m = (uint64_t)1 << i;
        add(&p, "MPI_Bcast", "collective", WORLD, INTER, m, 10, hockney((double)m) * (i == 22 ? 1.8 : 1.0));
    }
    a = analyse(&p, NULL);
    f = cf_analysis_find(a, "MPI_Bcast", WORLD, INTER);
    assert_true(f->fit.ok);
    b = bin_of(f, 1 << 22);
    assert_true(b->in_fit);
    /* the line misses it, and its last segment of 1, 2 and 4 MiB leaves
     * B's interval open above, but the startup (5 us, from the small
     * sizes) is 2 % of its time whatever B is */
    assert_true(b->model_error < -0.1);
    assert_true(isinf(f->fit.bandwidth_ci[1]));
    assert_true(b->startup_share < 0.03);
    assert_string_equal(b->verdict, "bandwidth-bound");
    cf_analysis_free(a);
    cf_profile_free(&p);
}

/* Fusion advice only for a stream that repeats per step and matters. */
static void test_fusion_gating(void **state)
{
    cf_profile_t p;
    cf_analysis_t *a;
    const cf_advice_t *ad;
    (void)state;

    profile_new(&p);
    add_p2p(&p);
    /* Per rank 7, 11 and 13 calls: no common step. */
    add(&p, "MPI_Allreduce", "collective", WORLD, INTER, 8, 7 * P, ring(8));
    add(&p, "MPI_Allreduce", "collective", WORLD, INTER, 64, 11 * P, ring(64));
    add(&p, "MPI_Allreduce", "collective", WORLD, INTER, 512, 13 * P, ring(512));
    /* 100 steps of three small calls, but a sliver of the time. */
    add(&p, "MPI_Reduce", "collective", WORLD, INTER, 8, 100 * P, 1e-9);
    add(&p, "MPI_Reduce", "collective", WORLD, INTER, 16, 100 * P, 1e-9);
    add(&p, "MPI_Reduce", "collective", WORLD, INTER, 32, 100 * P, 1e-9);
    a = analyse(&p, NULL);
    ad = cf_analysis_fusion_find(a, "MPI_Allreduce", WORLD, INTER);
    assert_non_null(ad);
    assert_null(ad->verdict);
    assert_non_null(strstr(ad->reason, "no repeating step"));
    ad = cf_analysis_fusion_find(a, "MPI_Reduce", WORLD, INTER);
    assert_non_null(ad);
    assert_int_equal(ad->steps, 100);
    assert_true(ad->share < 0.01);
    assert_null(ad->verdict);
    assert_non_null(strstr(ad->reason, "1%"));
    cf_analysis_free(a);
    cf_profile_free(&p);
}

/* More ranks than CPUs on a node: every number is in doubt, and the report
 * says so first. */
static void test_oversubscribed(void **state)
{
    cf_profile_t p;
    cf_analysis_t *a;
    json_t *j;
    (void)state;

    profile_new(&p);
    add_p2p(&p);
    p.oversubscribed = 1;
    p.ranks_per_node_max = 4;
    p.cpus_per_node_min = 2;
    a = analyse(&p, NULL);
    assert_true(cf_analysis_ncaveats(a) >= 1);
    assert_non_null(strstr(cf_analysis_caveat(a, 0), "oversubscribed: 4 ranks share 2 CPUs"));
    j = cf_analysis_to_json(a);
    assert_true(json_is_true(json_object_get(json_object_get(j, "job"), "oversubscribed")));
    assert_int_equal(json_array_size(json_object_get(j, "caveats")), cf_analysis_ncaveats(a));
    json_decref(j);
    cf_analysis_free(a);
    p.oversubscribed = 0;
    a = analyse(&p, NULL);
    assert_int_equal(cf_analysis_ncaveats(a), 0);
    cf_analysis_free(a);
    cf_profile_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_p2p_recovery),
        cmocka_unit_test(test_file_io_apart),
        cmocka_unit_test(test_seed_example),
        cmocka_unit_test(test_collective_ideal_ring),
        cmocka_unit_test(test_link_option),
        cmocka_unit_test(test_not_enough_sizes),
        cmocka_unit_test(test_noise_outlier_switch),
        cmocka_unit_test(test_transfer_and_wait),
        cmocka_unit_test(test_zero_byte_bins),
        cmocka_unit_test(test_merge_bins),
        cmocka_unit_test(test_ranking),
        cmocka_unit_test(test_json_contract),
        cmocka_unit_test(test_any_profile),
        cmocka_unit_test(test_summary),
        cmocka_unit_test(test_regions_and_late),
        cmocka_unit_test(test_wire_ring),
        cmocka_unit_test(test_wire_recursive_doubling),
        cmocka_unit_test(test_wire_reference),
        cmocka_unit_test(test_nonblocking_spans),
        cmocka_unit_test(test_sample_coverage),
        cmocka_unit_test(test_transfer_mean_or_median),
        cmocka_unit_test(test_model_error_and_uncertain),
        cmocka_unit_test(test_missed_last_bin_verdict),
        cmocka_unit_test(test_fusion_gating),
        cmocka_unit_test(test_oversubscribed),
        cmocka_unit_test(test_reference_best_case),
        cmocka_unit_test(test_reference_calibration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
