#include "cf_analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_advice.h"
#include "cf_bins.h"
#include "cf_units.h"

#define NPATH 3

struct cf_analysis {
    const cf_profile_t *p;
    cf_analysis_opts_t opts;
    cf_an_fit_t *fit;
    size_t nfit;
    cf_an_op_t *op;
    size_t nop;
    double total_s;
    cf_an_ranks_t ranks;
    cf_an_ref_t ref[NPATH];
    cf_an_breakdown_t split;
    cf_an_region_t *region;
    size_t nregion;
    cf_an_late_t *late;
    size_t nlate;
    cf_advice_t *fusion;
    size_t nfusion;
    cf_an_wire_t *wire;
    size_t nwire;
    cf_an_hop_t hop[NPATH]; /* paths with UCX sends, ascending */
    size_t nhop;
};

void cf_analysis_opts_init(cf_analysis_opts_t *opts)
{
    opts->link_alpha_s = NAN;
    opts->link_Bps = NAN;
}

const char *cf_an_comm_label(uint32_t comm, char *buf, size_t len)
{
    if (comm == CF_COMM_ID_NONE) {
        snprintf(buf, len, "all");
        return buf;
    }
    return cf_comm_label(comm, buf, len);
}

/* ---- grouping: records sorted so that one fit, then one bin, is a run ---- */

static int rec_usable(const cf_record_t *r)
{
    return r->layer == CF_LAYER_MPI && r->calls > 0;
}

static int is_kind(const cf_record_t *r, const char *kind)
{
    return strcmp(r->kind, kind) == 0;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
    return (a > b) - (a < b);
}

static int cmp_bin(const cf_record_t *a, const cf_record_t *b)
{
    int c = cmp_u64(a->size_lo, b->size_lo);
    return c ? c : cmp_u64(a->size_hi, b->size_hi);
}

/* (op, comm, path, bin) */
static int cmp_sep(const void *pa, const void *pb)
{
    const cf_record_t *a = *(const cf_record_t *const *)pa, *b = *(const cf_record_t *const *)pb;
    int c = strcmp(a->op, b->op);
    if (c == 0)
        c = cmp_u64(a->comm, b->comm);
    if (c == 0)
        c = (a->path > b->path) - (a->path < b->path);
    return c ? c : cmp_bin(a, b);
}

/* (path, bin) */
static int cmp_joint(const void *pa, const void *pb)
{
    const cf_record_t *a = *(const cf_record_t *const *)pa, *b = *(const cf_record_t *const *)pb;
    int c = (a->path > b->path) - (a->path < b->path);
    return c ? c : cmp_bin(a, b);
}

static int same_group(const cf_record_t *a, const cf_record_t *b, int joint)
{
    if (a->path != b->path)
        return 0;
    return joint || (strcmp(a->op, b->op) == 0 && a->comm == b->comm);
}

static double finite_or0(double v)
{
    return isfinite(v) && v > 0 ? v : 0.0;
}

/* The time a record contributes to its bin: the transfer median where
 * transfers were sampled, else the duration median. */
static double rec_time(const cf_record_t *r, int *source)
{
    if (r->xfer_n > 0 && isfinite(r->xfer_p50) && r->xfer_p50 > 0) {
        *source |= CF_AN_TIME_TRANSFER;
        return r->xfer_p50;
    }
    *source |= CF_AN_TIME_DURATION;
    return finite_or0(r->t_p50);
}

static int comm_size_of(const cf_profile_t *p, uint32_t comm)
{
    const cf_comm_info_t *c = cf_profile_comm(p, comm);
    return c != NULL && c->size > 0 ? c->size : 0;
}

static void fit_init(cf_an_fit_t *f)
{
    memset(f, 0, sizeof(*f));
    f->wait_share = f->startup_share = f->below_n_half = f->zero_p50_s = NAN;
    f->n_half_bytes = f->efficiency = NAN;
    f->hop_alpha_s = f->hop_Bps = NAN;
    f->verdict = cf_verdict(NAN);
}

static void bin_init(cf_an_bin_t *b)
{
    memset(b, 0, sizeof(*b));
    b->p50_s = b->duration_p50_s = b->p99_s = b->predicted_s = b->startup_share = NAN;
    b->algbw_Bps = b->busbw_Bps = b->ideal_s = b->efficiency = NAN;
    b->verdict = cf_verdict(NAN);
}

/* Bins and totals of one group of records (sorted by bin). */
static int collect(const cf_profile_t *p, const cf_record_t *const *e, size_t n, int joint,
                   cf_an_fit_t *f)
{
    size_t nb = 0;
    double wait_num = 0, wait_den = 0;
    int measured = 0;

    fit_init(f);
    f->joint = joint;
    f->path = e[0]->path;
    if (joint) {
        f->kind = CF_AN_P2P;
        cf_strlcpy(f->op, "p2p", sizeof(f->op));
        f->comm = CF_COMM_ID_NONE;
        f->coll = CF_COLL_P2P;
    } else {
        f->kind = is_kind(e[0], "collective") ? CF_AN_COLLECTIVE : CF_AN_P2P;
        cf_strlcpy(f->op, e[0]->op, sizeof(f->op));
        f->comm = e[0]->comm;
        f->comm_size = comm_size_of(p, f->comm);
        f->coll = f->kind == CF_AN_P2P ? CF_COLL_P2P : cf_coll_from_name(f->op);
    }
    for (size_t i = 0; i < n; i++)
        if (i == 0 || cmp_bin(e[i - 1], e[i]) != 0)
            nb++;
    f->bin = calloc(nb, sizeof(*f->bin));
    if (f->bin == NULL)
        return CF_ERR_NOMEM;

    for (size_t i = 0, k = 0; i < n; i++) {
        const cf_record_t *r = e[i];
        cf_an_bin_t *b;
        double t;

        if (i > 0 && cmp_bin(e[i - 1], r) != 0)
            k++;
        b = &f->bin[k];
        if (b->calls == 0) {
            bin_init(b);
            b->size_lo = r->size_lo;
            b->size_hi = r->size_hi;
            b->p50_s = 0;
            b->duration_p50_s = 0;
            b->p99_s = 0;
        }
        t = rec_time(r, &f->time_source);
        b->calls += r->calls;
        b->bytes += r->bytes;
        b->time_s += finite_or0(r->t_sum);
        b->p50_s += (double)r->calls * t; /* sums until divided below */
        b->duration_p50_s += (double)r->calls * finite_or0(r->t_p50);
        b->p99_s = fmax(b->p99_s, finite_or0(r->xfer_n > 0 ? r->xfer_p99 : r->t_p99));

        if (joint && (i == 0 || r->comm != e[i - 1]->comm)) {
            int cs = comm_size_of(p, r->comm);
            f->comm_size = cs > f->comm_size ? cs : f->comm_size;
        }
        /* Sampled calls know their wait and transfer, which add up to their
         * duration; without samples a wait share cannot be told. */
        if (r->xfer_n > 0) {
            wait_num += finite_or0(r->wait_s);
            wait_den += finite_or0(r->wait_s) + finite_or0(r->xfer_sum);
            measured = 1;
        } else if (finite_or0(r->wait_s) > 0) {
            wait_num += r->wait_s;
            wait_den += finite_or0(r->t_sum);
            measured = 1;
        }
        f->wait_s += finite_or0(r->wait_s);
    }
    f->nbin = nb;
    for (size_t k = 0; k < nb; k++) {
        cf_an_bin_t *b = &f->bin[k];
        b->size = (double)b->bytes / (double)b->calls;
        b->p50_s /= (double)b->calls;
        b->duration_p50_s /= (double)b->calls;
        f->calls += b->calls;
        f->bytes += b->bytes;
        f->time_s += b->time_s;
    }
    if (measured && wait_den > 0)
        f->wait_share = fmin(1.0, wait_num / wait_den);
    return CF_OK;
}

/* ---- fitting and verdicts ---- */

static int fit_group(cf_an_fit_t *f)
{
    cf_point_t *pts = calloc(f->nbin ? f->nbin : 1, sizeof(*pts));
    size_t npts = 0, nzero = 0;
    uint64_t zero_calls = 0;
    double zero_t = 0;
    int rc;

    if (pts == NULL)
        return CF_ERR_NOMEM;
    for (size_t k = 0; k < f->nbin; k++) {
        cf_an_bin_t *b = &f->bin[k];
        if (b->size <= 0) {
            nzero++;
            zero_calls += b->calls;
            zero_t += (double)b->calls * b->duration_p50_s;
            continue;
        }
        if (!(b->p50_s > 0) || !isfinite(b->size))
            continue;
        b->in_fit = 1;
        pts[npts++] = (cf_point_t){.size = b->size, .time_s = b->p50_s, .weight = (double)b->calls};
    }
    f->nsizes = (int)npts;
    if (zero_calls > 0)
        f->zero_p50_s = zero_t / (double)zero_calls;

    if (npts == 0 && nzero > 0) {
        /* Zero-byte calls (a barrier) are all startup by the model's terms. */
        f->note = "no payload";
        f->basis = "no payload";
        f->startup_share = 1.0;
        f->verdict = cf_verdict(1.0);
        for (size_t k = 0; k < f->nbin; k++) {
            f->bin[k].startup_share = 1.0;
            f->bin[k].verdict = f->verdict;
        }
        memset(&f->fit, 0, sizeof(f->fit));
        free(pts);
        return CF_OK;
    }
    rc = cf_fit_hockney(pts, npts, &f->fit);
    free(pts);
    if (rc == CF_ERR_NOMEM)
        return rc;
    if (rc != CF_OK || !f->fit.ok) {
        f->fit.ok = 0;
        f->note = "not enough size range";
        return CF_OK;
    }
    f->basis = "fit";
    f->n_half_bytes = f->fit.n_half_bytes;
    {
        double num = 0, den = 0, below = 0;
        for (size_t k = 0; k < f->nbin; k++) {
            cf_an_bin_t *b = &f->bin[k];
            double w = (double)b->calls, a = cf_fit_alpha_at(&f->fit, b->size);
            b->predicted_s = cf_fit_predict(&f->fit, b->size);
            if (b->size <= 0)
                b->startup_share = 1.0;
            else if (b->predicted_s > 0)
                b->startup_share = a / b->predicted_s;
            b->verdict = cf_verdict(b->startup_share);
            if (b->predicted_s > 0) {
                num += w * a;
                den += w * b->predicted_s;
            } else if (b->size <= 0) {
                num += w;
                den += w;
            }
            if (b->size < f->n_half_bytes)
                below += w;
        }
        f->startup_share = den > 0 ? num / den : NAN;
        f->verdict = cf_verdict(f->startup_share);
        f->below_n_half = isnan(f->n_half_bytes) ? NAN : below / (double)f->calls;
    }
    return CF_OK;
}

/* Time of one message of x bytes under the reference link, and its
 * startup.  NaN without a reference. */
static double ref_hop(const cf_an_ref_t *ref, double x, double *startup_p)
{
    if (ref == NULL || ref->source == NULL)
        return NAN;
    if (ref->fit != NULL) {
        *startup_p = cf_fit_alpha_at(ref->fit, x);
        return cf_fit_predict(ref->fit, x);
    }
    *startup_p = ref->alpha_s;
    return ref->alpha_s + (isinf(ref->bandwidth_Bps) ? 0.0 : x / ref->bandwidth_Bps);
}

/* An operation of n bytes on p ranks under algo with cost A alpha + C n/B:
 * A messages of C n / A bytes on the reference link.  NaN when the model
 * does not apply (unknown operation, one rank, no reference). */
static double ref_model(const cf_an_ref_t *ref, cf_coll_t c, const char *algo, int p, double n,
                        double *startup_p)
{
    double A, C, G, t, s = NAN;

    *startup_p = NAN;
    if (c == CF_COLL_NONE || cf_model_coeffs(c, algo, p, &A, &C, &G) != CF_OK || !(A > 0))
        return NAN;
    t = ref_hop(ref, C * n / A, &s);
    if (!isfinite(t) || !isfinite(s))
        return NAN;
    *startup_p = A * s;
    return A * t;
}

static const cf_an_ref_t *ref_of(const cf_analysis_t *a, int path)
{
    return path >= 0 && path < NPATH && a->ref[path].source != NULL ? &a->ref[path] : NULL;
}

static int model_ranks(const cf_an_fit_t *f)
{
    return f->kind == CF_AN_P2P ? 2 : f->comm_size;
}

/* Without a fit, the verdict of the reference link under the model. */
static void verdict_from_model(const cf_analysis_t *a, cf_an_fit_t *f)
{
    const cf_an_ref_t *ref = ref_of(a, f->path);
    int p = model_ranks(f);
    double num = 0, den = 0, below = 0, n_half;

    if (f->fit.ok || f->basis != NULL || ref == NULL)
        return;
    for (size_t k = 0; k < f->nbin; k++) {
        cf_an_bin_t *b = &f->bin[k];
        double s, t = ref_model(ref, f->coll, NULL, p, b->size, &s);
        if (!(t > 0))
            continue;
        b->startup_share = s / t;
        b->verdict = cf_verdict(b->startup_share);
        num += (double)b->calls * s;
        den += (double)b->calls * t;
    }
    if (!(den > 0))
        return;
    f->startup_share = num / den;
    f->verdict = cf_verdict(f->startup_share);
    f->basis = "model";
    n_half = cf_model_n_half(f->coll, NULL, p, ref->alpha_s, ref->bandwidth_Bps);
    if (!isnan(n_half)) {
        f->n_half_bytes = n_half;
        for (size_t k = 0; k < f->nbin; k++)
            if (f->bin[k].size < n_half)
                below += (double)f->bin[k].calls;
        f->below_n_half = below / (double)f->calls;
    }
}

/* algbw, busbw, ideal time and efficiency per bin; per-hop figures. */
static void collective_figures(const cf_analysis_t *a, cf_an_fit_t *f)
{
    const cf_an_ref_t *ref = ref_of(a, f->path);
    int p = f->comm_size;
    double factor = cf_busbw_factor(f->coll, p), ideal_sum = 0, meas_sum = 0;

    if (f->kind != CF_AN_COLLECTIVE)
        return;
    for (size_t k = 0; k < f->nbin; k++) {
        cf_an_bin_t *b = &f->bin[k];
        double s;
        if (b->size > 0 && b->p50_s > 0) {
            b->algbw_Bps = b->size / b->p50_s;
            b->busbw_Bps = b->algbw_Bps * factor;
        }
        if (p >= 2 && ref != NULL) {
            b->ideal_s = ref_model(ref, f->coll, NULL, p, b->size, &s);
            if (b->p50_s > 0 && isfinite(b->ideal_s)) {
                b->efficiency = b->ideal_s / b->p50_s;
                ideal_sum += (double)b->calls * b->ideal_s;
                meas_sum += (double)b->calls * b->p50_s;
            }
        }
    }
    if (meas_sum > 0)
        f->efficiency = ideal_sum / meas_sum;
    if (f->fit.ok && p >= 2 && cf_coll_is_collective(f->coll)) {
        const char *algo = cf_model_algo_canonical(f->coll, "ring");
        double ha, hb;
        if (algo == NULL)
            algo = cf_model_default_algo(f->coll);
        if (cf_model_per_hop(f->coll, algo, p, f->fit.alpha_s, f->fit.bandwidth_Bps, &ha, &hb) ==
            CF_OK) {
            f->hop_algo = algo;
            f->hop_alpha_s = ha;
            f->hop_Bps = hb;
        }
    }
}

static int cmp_fit(const void *pa, const void *pb)
{
    const cf_an_fit_t *a = pa, *b = pb;
    if (a->joint != b->joint)
        return b->joint - a->joint;
    if (a->joint)
        return (a->path > b->path) - (a->path < b->path);
    if (a->time_s != b->time_s)
        return a->time_s < b->time_s ? 1 : -1;
    return strcmp(a->op, b->op);
}

static int cmp_op(const void *pa, const void *pb)
{
    const cf_an_op_t *a = pa, *b = pb;
    if (a->time_s != b->time_s)
        return a->time_s < b->time_s ? 1 : -1;
    return strcmp(a->op, b->op);
}

static int is_nonblocking(const char *op, const char *kind)
{
    if (strcmp(kind, "p2p") != 0 && strcmp(kind, "collective") != 0)
        return 0;
    return (strncmp(op, "MPI_I", 5) == 0 && op[5] >= 'a' && op[5] <= 'z') ||
           strstr(op, "_init") != NULL;
}

static void rank_figures(const cf_profile_t *p, cf_an_ranks_t *rk)
{
    double wall = 0;

    memset(rk, 0, sizeof(*rk));
    rk->mpi_mean_s = rk->mpi_min_s = rk->mpi_max_s = rk->wall_mean_s = NAN;
    rk->mpi_fraction = rk->imbalance = NAN;
    rk->min_rank = rk->max_rank = -1;
    for (size_t i = 0; i < p->nrank; i++) {
        const cf_rank_info_t *r = &p->rank[i];
        double m = finite_or0(r->mpi_s);
        if (rk->n == 0 || m < rk->mpi_min_s) {
            rk->mpi_min_s = m;
            rk->min_rank = r->rank;
        }
        if (rk->n == 0 || m > rk->mpi_max_s) {
            rk->mpi_max_s = m;
            rk->max_rank = r->rank;
        }
        rk->mpi_total_s += m;
        wall += finite_or0(r->wall_s);
        rk->n++;
    }
    if (rk->n == 0)
        return;
    rk->mpi_mean_s = rk->mpi_total_s / (double)rk->n;
    rk->wall_mean_s = wall / (double)rk->n;
    if (rk->wall_mean_s > 0)
        rk->mpi_fraction = rk->mpi_mean_s / rk->wall_mean_s;
    if (rk->mpi_mean_s > 0)
        rk->imbalance = rk->mpi_max_s / rk->mpi_mean_s - 1.0;
}

static void breakdown(cf_analysis_t *a)
{
    cf_an_breakdown_t *b = &a->split;

    memset(b, 0, sizeof(*b));
    for (size_t k = 0; k < a->nop; k++) {
        const cf_an_op_t *o = &a->op[k];
        const cf_an_fit_t *f = o->fit;
        if (f != NULL && f->basis != NULL && strcmp(f->basis, "no payload") == 0)
            b->no_payload += o->time_s;
        else if (f != NULL && f->basis != NULL && isfinite(f->startup_share)) {
            b->startup += o->time_s * f->startup_share;
            b->payload += o->time_s * (1.0 - f->startup_share);
        } else
            b->unexplained += o->time_s;
    }
    if (a->total_s > 0) {
        b->startup /= a->total_s;
        b->payload /= a->total_s;
        b->no_payload /= a->total_s;
        b->unexplained /= a->total_s;
    } else {
        b->startup = b->payload = b->no_payload = b->unexplained = NAN;
    }
}

/* ---- regions ---- */

static int cmp_region_op(const void *pa, const void *pb)
{
    const cf_an_region_op_t *a = pa, *b = pb;
    if (a->time_s != b->time_s)
        return a->time_s < b->time_s ? 1 : -1;
    return strcmp(a->op, b->op);
}

/* Adds record r to region g, one row per (op, comm, path). */
static int region_add(const cf_profile_t *p, cf_an_region_t *g, const cf_record_t *r)
{
    cf_an_region_op_t *o = NULL, *grown;
    for (size_t k = 0; k < g->nop; k++)
        if (strcmp(g->op[k].op, r->op) == 0 && g->op[k].comm == r->comm && g->op[k].path == r->path)
            o = &g->op[k];
    if (o == NULL) {
        if ((grown = realloc(g->op, (g->nop + 1) * sizeof(*g->op))) == NULL)
            return CF_ERR_NOMEM;
        g->op = grown;
        o = &g->op[g->nop++];
        memset(o, 0, sizeof(*o));
        cf_strlcpy(o->op, r->op, sizeof(o->op));
        cf_strlcpy(o->kind, r->kind, sizeof(o->kind));
        o->comm = r->comm;
        o->comm_size = comm_size_of(p, r->comm);
        o->path = r->path;
    }
    o->calls += r->calls;
    o->bytes += r->bytes;
    o->time_s += finite_or0(r->t_sum);
    g->time_s += finite_or0(r->t_sum);
    return CF_OK;
}

static int regions_build(cf_analysis_t *a)
{
    const cf_profile_t *p = a->p;
    json_t *entries = p->extra != NULL ? json_object_get(p->extra, "region_entries") : NULL;
    size_t n = p->nregion + 1;

    if (p->nregion == 0 || p->region == NULL)
        return CF_OK;
    if ((a->region = calloc(n, sizeof(*a->region))) == NULL)
        return CF_ERR_NOMEM;
    a->nregion = n;
    for (size_t i = 0; i < n; i++) {
        cf_an_region_t *g = &a->region[i];
        json_t *e;
        g->name = i < p->nregion ? p->region[i] : NULL;
        e = g->name != NULL && json_is_object(entries) ? json_object_get(entries, g->name) : NULL;
        g->entries = json_is_integer(e) ? (long long)json_integer_value(e) : -1;
    }
    for (size_t i = 0; i < p->nrec; i++) {
        const cf_record_t *r = &p->rec[i];
        size_t k = r->region >= 1 && r->region <= p->nregion ? r->region - 1 : p->nregion;
        if (!rec_usable(r))
            continue;
        if (region_add(p, &a->region[k], r) != CF_OK)
            return CF_ERR_NOMEM;
    }
    /* The outside row only when something ran outside. */
    if (a->region[p->nregion].nop == 0)
        a->nregion--;
    for (size_t i = 0; i < a->nregion; i++) {
        cf_an_region_t *g = &a->region[i];
        size_t len = g->name ? strlen(g->name) : 0;
        for (size_t j = 0; j < a->nregion; j++) {
            const cf_an_region_t *h = &a->region[j];
            if (g->name == NULL ? h->name == NULL
                                : h->name != NULL && strncmp(h->name, g->name, len) == 0 &&
                                      (h->name[len] == '\0' || h->name[len] == '/'))
                g->inclusive_s += h->time_s;
        }
        g->share = a->total_s > 0 ? g->time_s / a->total_s : NAN;
        for (size_t k = 0; k < g->nop; k++)
            g->op[k].share = g->time_s > 0 ? g->op[k].time_s / g->time_s : NAN;
        if (g->nop > 1)
            qsort(g->op, g->nop, sizeof(*g->op), cmp_region_op);
    }
    return CF_OK;
}

/* ---- late arrivals ---- */

static int cmp_last(const void *pa, const void *pb)
{
    const cf_an_last_t *a = pa, *b = pb;
    if (a->count != b->count)
        return a->count < b->count ? 1 : -1;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

static int json_count(json_t *o, const char *k, unsigned long long *v_p)
{
    json_t *v = json_object_get(o, k);
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return 0;
    *v_p = (unsigned long long)json_integer_value(v);
    return 1;
}

/* The profile's late_arrivals; entries it cannot read are left out. */
static int late_build(cf_analysis_t *a)
{
    json_t *arr = a->p->extra != NULL ? json_object_get(a->p->extra, "late_arrivals") : NULL, *e;
    size_t i;

    if (!json_is_array(arr) || json_array_size(arr) == 0)
        return CF_OK;
    if ((a->late = calloc(json_array_size(arr), sizeof(*a->late))) == NULL)
        return CF_ERR_NOMEM;
    json_array_foreach(arr, i, e) {
        cf_an_late_t *l = &a->late[a->nlate];
        json_t *last = json_object_get(e, "last"), *x;
        unsigned long long comm, inst;
        size_t k;
        if (!json_is_object(e) || !json_count(e, "comm", &comm) || comm > UINT32_MAX ||
            !json_count(e, "instances", &inst) || !json_is_array(last))
            continue;
        l->comm = (uint32_t)comm;
        l->comm_size = comm_size_of(a->p, l->comm);
        l->instances = inst;
        l->last = calloc(json_array_size(last) + 1, sizeof(*l->last));
        if (l->last == NULL)
            return CF_ERR_NOMEM;
        a->nlate++;
        json_array_foreach(last, k, x) {
            unsigned long long rank, count;
            if (!json_is_object(x) || !json_count(x, "rank", &rank) || rank > INT32_MAX ||
                !json_count(x, "count", &count))
                continue;
            l->last[l->nlast].rank = (int)rank;
            l->last[l->nlast++].count = count;
        }
        qsort(l->last, l->nlast, sizeof(*l->last), cmp_last);
    }
    return CF_OK;
}

/* ---- beneath MPI: UCX records ---- */

/* Per-hop fits of the UCX sends, per path. */
static int hops_build(cf_analysis_t *a)
{
    for (int path = 0; path < NPATH; path++) {
        cf_an_hop_t *h = &a->hop[a->nhop];
        cf_point_t pts[CF_SIZE_BINS];
        size_t n = 0;
        int rc;

        memset(h, 0, sizeof(*h));
        h->path = path;
        for (size_t i = 0; i < a->p->nrec; i++) {
            const cf_record_t *r = &a->p->rec[i];
            if (r->layer == CF_LAYER_UCX && r->path == path && is_kind(r, "send")) {
                h->msgs += r->calls;
                h->bytes += r->bytes;
            }
        }
        if (h->msgs == 0)
            continue;
        if (cf_wire_hop_points(a->p, path, pts, CF_SIZE_BINS, &n) == CF_OK)
            h->nsizes = (int)n;
        rc = cf_wire_hop_fit(a->p, path, &h->fit);
        if (rc == CF_ERR_NOMEM)
            return rc;
        if (rc != CF_OK || !h->fit.ok) {
            h->fit.ok = 0;
            h->note = "not enough size range";
        }
        a->nhop++;
    }
    return CF_OK;
}

/* A collective of n bytes under a wire algorithm on the reference link;
 * reduce_bcast is costed as a binomial reduce and a binomial bcast. */
static double wire_algo_time(const cf_an_ref_t *ref, cf_coll_t c, const char *algo, int p, double n)
{
    double s;
    if (c == CF_COLL_ALLREDUCE && strcmp(algo, "reduce_bcast") == 0)
        return ref_model(ref, CF_COLL_REDUCE, "binomial", p, n, &s) +
               ref_model(ref, CF_COLL_BCAST, "binomial", p, n, &s);
    return ref_model(ref, c, algo, p, n, &s);
}

/* The inferred algorithm, the cheapest of cf_models.h and the measured
 * time, per call over the size bins of the operation's busiest stream. */
static void wire_costs(const cf_analysis_t *a, cf_an_wire_t *w)
{
    const cf_an_fit_t *f = cf_analysis_find(a, w->w.op, w->w.comm, w->w.path);
    const cf_an_ref_t *ref = ref_of(a, w->w.path);
    cf_an_ref_t own = {NULL, NAN, NAN, NULL};
    const char *cand[16];
    double sum[16] = {0}, calls = 0, meas = 0, meas_calls = 0;
    size_t ncand = 0, best = 0;
    int p = w->w.comm_size;

    if (f == NULL || f->nbin == 0)
        return;
    for (size_t k = 0; k < f->nbin; k++)
        if (f->bin[k].p50_s > 0 && isfinite(f->bin[k].p50_s)) {
            meas += (double)f->bin[k].calls * f->bin[k].p50_s;
            meas_calls += (double)f->bin[k].calls;
        }
    if (meas_calls > 0)
        w->measured_s = meas / meas_calls;
    if (w->inf.algo == NULL)
        return;
    /* The steps of the algorithm that ran, as its own fit times them, are
     * a truer link than a p2p fit or the wire for costing its rivals. */
    if (isnan(a->opts.link_Bps) && f->fit.ok &&
        cf_model_per_hop(w->w.coll, w->inf.algo, p, f->fit.alpha_s, f->fit.bandwidth_Bps, &own.alpha_s,
                         &own.bandwidth_Bps) == CF_OK &&
        isfinite(own.alpha_s) && own.bandwidth_Bps > 0) {
        own.source = "collective fit";
        ref = &own;
    }
    if (ref == NULL)
        return;
    w->cost_source = ref->source;
    w->cost_alpha_s = ref->alpha_s;
    w->cost_Bps = ref->bandwidth_Bps;
    cand[ncand++] = w->inf.algo;
    for (int i = 0; ncand < CF_ARRAY_LEN(cand); i++) {
        const char *name = cf_model_algo_name(w->w.coll, i);
        if (name == NULL)
            break;
        if (strcmp(name, w->inf.algo) != 0)
            cand[ncand++] = name;
    }
    for (size_t k = 0; k < f->nbin; k++) {
        const cf_an_bin_t *b = &f->bin[k];
        calls += (double)b->calls;
        for (size_t c = 0; c < ncand; c++)
            sum[c] += (double)b->calls * wire_algo_time(ref, w->w.coll, cand[c], p, b->size);
    }
    if (!(calls > 0) || !isfinite(sum[0]))
        return;
    for (size_t c = 1; c < ncand; c++)
        if (isfinite(sum[c]) && sum[c] < sum[best])
            best = c;
    w->model_s = sum[0] / calls;
    w->best_s = sum[best] / calls;
    w->best_algo = cand[best];
    w->excess = w->best_s > 0 ? w->model_s / w->best_s : NAN;
    w->saving_s = a->p->ranks > 0 ? (sum[0] - sum[best]) / a->p->ranks : NAN;
}

static void wire_figures(const cf_analysis_t *a, cf_an_wire_t *w)
{
    int rc;

    w->collective = cf_coll_is_collective(w->w.coll);
    w->model_s = w->best_s = w->measured_s = NAN;
    w->excess = w->saving_s = w->share = w->cost_alpha_s = w->cost_Bps = NAN;
    w->msg_size = w->w.msg_size_mean;
    for (size_t k = 0; k < a->nop; k++)
        if (a->op[k].comm == w->w.comm && a->op[k].path == w->w.path && strcmp(a->op[k].op, w->w.op) == 0)
            w->share = a->op[k].share;
    if (!w->collective)
        return;
    rc = cf_wire_infer(&w->w, &w->inf);
    if (rc == CF_OK) {
        w->inferred = 1;
        if (w->inf.algo == NULL)
            w->note = cf_size_bin(w->w.size_lo) != cf_size_bin(w->w.size_hi)
                          ? "no model matches: calls of several sizes may use different algorithms, "
                            "and the counts average over them"
                          : "no model within 20 %: another algorithm, or a segmented one";
        else if (w->w.mixed_comms)
            w->note = "calls on communicators of different sizes: counts average over them";
        wire_costs(a, w);
        return;
    }
    if (rc == CF_ERR_UNSUPPORTED)
        w->note = "no message-level model for this operation";
    else if (w->w.mpi_calls == 0)
        w->note = "no MPI call of this name recorded";
    else if (w->w.comm_size < 2)
        w->note = "communicator size unknown or 1";
    else
        w->note = "no message sent beneath it";
}

static int wire_build(cf_analysis_t *a)
{
    cf_wire_op_t *ops = NULL;
    size_t n = 0;
    int rc = cf_wire_ops(a->p, &ops, &n);

    if (rc == CF_ERR_NODATA || (rc == CF_OK && n == 0)) {
        free(ops);
        return CF_OK;
    }
    if (rc != CF_OK)
        return rc;
    a->wire = calloc(n, sizeof(*a->wire));
    if (a->wire == NULL) {
        free(ops);
        return CF_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        a->wire[i].w = ops[i];
        wire_figures(a, &a->wire[i]);
    }
    a->nwire = n;
    free(ops);
    return CF_OK;
}

static void fits_free(cf_an_fit_t *fit, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(fit[i].bin);
    free(fit);
}

int cf_analysis_run(const cf_profile_t *p, const cf_analysis_opts_t *opts, cf_analysis_t **a_p)
{
    cf_analysis_t *a;
    const cf_record_t **sep = NULL, **joint = NULL;
    size_t nsep = 0, njoint = 0, nfit_max = 0;
    int rc = CF_ERR_NOMEM;

    if (p == NULL || a_p == NULL || (p->nrec > 0 && p->rec == NULL) ||
        (p->nrank > 0 && p->rank == NULL))
        return CF_ERR_INVALID;
    if (opts != NULL && (isnan(opts->link_alpha_s) != isnan(opts->link_Bps) ||
                         opts->link_alpha_s < 0 || opts->link_Bps <= 0))
        return CF_ERR_INVALID;
    if ((a = calloc(1, sizeof(*a))) == NULL)
        return CF_ERR_NOMEM;
    a->p = p;
    if (opts != NULL)
        a->opts = *opts;
    else
        cf_analysis_opts_init(&a->opts);
    rank_figures(p, &a->ranks);

    sep = malloc((p->nrec ? p->nrec : 1) * sizeof(*sep));
    joint = malloc((p->nrec ? p->nrec : 1) * sizeof(*joint));
    if (sep == NULL || joint == NULL)
        goto err;
    for (size_t i = 0; i < p->nrec; i++) {
        const cf_record_t *r = &p->rec[i];
        if (!rec_usable(r))
            continue;
        sep[nsep++] = r;
        if (is_kind(r, "p2p"))
            joint[njoint++] = r;
    }
    qsort(sep, nsep, sizeof(*sep), cmp_sep);
    qsort(joint, njoint, sizeof(*joint), cmp_joint);

    /* Upper bounds: one fit per run of either array, one ranking row per run of sep. */
    for (size_t i = 0; i < nsep; i++)
        if (i == 0 || !same_group(sep[i - 1], sep[i], 0))
            a->nop++;
    for (size_t i = 0; i < njoint; i++)
        if (i == 0 || !same_group(joint[i - 1], joint[i], 1))
            nfit_max++;
    nfit_max += a->nop;
    a->fit = calloc(nfit_max ? nfit_max : 1, sizeof(*a->fit));
    a->op = calloc(a->nop ? a->nop : 1, sizeof(*a->op));
    if (a->fit == NULL || a->op == NULL)
        goto err;

    /* Joint p2p fits first: they are the reference links. */
    for (size_t i = 0, j; i < njoint; i = j) {
        cf_an_fit_t *f = &a->fit[a->nfit];
        for (j = i + 1; j < njoint && same_group(joint[j - 1], joint[j], 1); j++)
            ;
        a->nfit++;
        if ((rc = collect(p, joint + i, j - i, 1, f)) != CF_OK ||
            (rc = fit_group(f)) != CF_OK)
            goto err;
    }
    for (size_t i = 0, j, k = 0; i < nsep; i = j, k++) {
        cf_an_op_t *o = &a->op[k];
        const cf_record_t *r = sep[i];
        for (j = i + 1; j < nsep && same_group(sep[j - 1], sep[j], 0); j++)
            ;
        cf_strlcpy(o->op, r->op, sizeof(o->op));
        cf_strlcpy(o->kind, r->kind, sizeof(o->kind));
        o->comm = r->comm;
        o->comm_size = comm_size_of(p, r->comm);
        o->path = r->path;
        o->nonblocking = is_nonblocking(r->op, r->kind);
        for (size_t m = i; m < j; m++) {
            o->calls += sep[m]->calls;
            o->bytes += sep[m]->bytes;
            o->time_s += finite_or0(sep[m]->t_sum);
        }
        a->total_s += o->time_s;
        if (!is_kind(r, "p2p") && !is_kind(r, "collective"))
            continue;
        a->nfit++;
        if ((rc = collect(p, sep + i, j - i, 0, &a->fit[a->nfit - 1])) != CF_OK ||
            (rc = fit_group(&a->fit[a->nfit - 1])) != CF_OK)
            goto err;
    }

    if ((rc = hops_build(a)) != CF_OK)
        goto err;
    for (int path = 0; path < NPATH; path++) {
        cf_an_ref_t *ref = &a->ref[path];
        ref->alpha_s = ref->bandwidth_Bps = NAN;
        if (!isnan(a->opts.link_Bps)) {
            ref->source = "link";
            ref->alpha_s = a->opts.link_alpha_s;
            ref->bandwidth_Bps = a->opts.link_Bps;
            continue;
        }
        for (size_t i = 0; i < a->nfit; i++) {
            const cf_an_fit_t *f = &a->fit[i];
            if (f->joint && f->path == path && f->fit.ok) {
                ref->source = "p2p fit";
                ref->alpha_s = f->fit.alpha_s;
                ref->bandwidth_Bps = f->fit.bandwidth_Bps;
                ref->fit = &f->fit;
            }
        }
        /* Without MPI point to point on the path, the wire beneath MPI. */
        for (size_t k = 0; ref->source == NULL && k < a->nhop; k++) {
            if (a->hop[k].path == path && a->hop[k].fit.ok) {
                ref->source = "ucx hop fit";
                ref->alpha_s = a->hop[k].fit.alpha_s;
                ref->bandwidth_Bps = a->hop[k].fit.bandwidth_Bps;
                ref->fit = &a->hop[k].fit;
            }
        }
    }
    /* The fits move once sorted: point the references at their new place. */
    qsort(a->fit, a->nfit, sizeof(*a->fit), cmp_fit);
    for (size_t i = 0; i < a->nfit; i++) {
        cf_an_fit_t *f = &a->fit[i];
        if (f->joint && f->path >= 0 && f->path < NPATH && a->ref[f->path].fit != NULL &&
            strcmp(a->ref[f->path].source, "p2p fit") == 0)
            a->ref[f->path].fit = &f->fit;
    }
    for (size_t i = 0; i < a->nfit; i++) {
        verdict_from_model(a, &a->fit[i]);
        collective_figures(a, &a->fit[i]);
    }
    for (size_t k = 0; k < a->nop; k++) {
        cf_an_op_t *o = &a->op[k];
        o->share = a->total_s > 0 ? o->time_s / a->total_s : NAN;
    }
    qsort(a->op, a->nop, sizeof(*a->op), cmp_op);
    for (size_t k = 0; k < a->nop; k++)
        a->op[k].fit = cf_analysis_find(a, a->op[k].op, a->op[k].comm, a->op[k].path);
    breakdown(a);
    if ((rc = regions_build(a)) != CF_OK || (rc = late_build(a)) != CF_OK ||
        (rc = cf_advice_run(a, &a->fusion, &a->nfusion)) != CF_OK || (rc = wire_build(a)) != CF_OK)
        goto err;
    for (size_t k = 0; k < a->nop; k++)
        a->op[k].fusion = cf_analysis_fusion_find(a, a->op[k].op, a->op[k].comm, a->op[k].path);

    free(joint);
    free(sep);
    *a_p = a;
    return CF_OK;

err:
    free(joint);
    free(sep);
    cf_analysis_free(a);
    return rc;
}

void cf_analysis_free(cf_analysis_t *a)
{
    if (a == NULL)
        return;
    fits_free(a->fit, a->nfit);
    free(a->op);
    for (size_t i = 0; a->region != NULL && i < a->p->nregion + 1; i++)
        free(a->region[i].op);
    free(a->region);
    for (size_t i = 0; i < a->nlate; i++)
        free(a->late[i].last);
    free(a->late);
    cf_advice_free(a->fusion);
    free(a->wire);
    free(a);
}

const cf_profile_t *cf_analysis_profile(const cf_analysis_t *a)
{
    return a->p;
}

size_t cf_analysis_nfits(const cf_analysis_t *a)
{
    return a->nfit;
}

const cf_an_fit_t *cf_analysis_fit(const cf_analysis_t *a, size_t i)
{
    return i < a->nfit ? &a->fit[i] : NULL;
}

const cf_an_fit_t *cf_analysis_find(const cf_analysis_t *a, const char *op, uint32_t comm,
                                    int path)
{
    int joint = strcmp(op, "p2p") == 0 && comm == CF_COMM_ID_NONE;
    for (size_t i = 0; i < a->nfit; i++) {
        const cf_an_fit_t *f = &a->fit[i];
        if (f->joint == joint && f->path == path && f->comm == comm && strcmp(f->op, op) == 0)
            return f;
    }
    return NULL;
}

size_t cf_analysis_nops(const cf_analysis_t *a)
{
    return a->nop;
}

const cf_an_op_t *cf_analysis_op(const cf_analysis_t *a, size_t i)
{
    return i < a->nop ? &a->op[i] : NULL;
}

double cf_analysis_total_s(const cf_analysis_t *a)
{
    return a->total_s;
}

const cf_an_ranks_t *cf_analysis_ranks(const cf_analysis_t *a)
{
    return &a->ranks;
}

const cf_an_breakdown_t *cf_analysis_breakdown(const cf_analysis_t *a)
{
    return &a->split;
}

const cf_an_ref_t *cf_analysis_ref(const cf_analysis_t *a, int path)
{
    static const cf_an_ref_t none = {NULL, NAN, NAN, NULL};
    return path >= 0 && path < NPATH ? &a->ref[path] : &none;
}

double cf_analysis_call_time(const cf_analysis_t *a, const cf_an_fit_t *f, double n,
                             double *startup_p)
{
    double s = NAN, t;

    if (f->fit.ok) {
        s = cf_fit_alpha_at(&f->fit, n);
        t = cf_fit_predict(&f->fit, n);
    } else if (f->kind == CF_AN_COLLECTIVE) {
        t = ref_model(ref_of(a, f->path), f->coll, NULL, f->comm_size, n, &s);
    } else {
        t = ref_hop(ref_of(a, f->path), n, &s);
    }
    if (startup_p != NULL)
        *startup_p = s;
    return t;
}

size_t cf_analysis_nregions(const cf_analysis_t *a)
{
    return a->nregion;
}

const cf_an_region_t *cf_analysis_region(const cf_analysis_t *a, size_t i)
{
    return i < a->nregion ? &a->region[i] : NULL;
}

size_t cf_analysis_nlate(const cf_analysis_t *a)
{
    return a->nlate;
}

const cf_an_late_t *cf_analysis_late(const cf_analysis_t *a, size_t i)
{
    return i < a->nlate ? &a->late[i] : NULL;
}

size_t cf_analysis_nfusion(const cf_analysis_t *a)
{
    return a->nfusion;
}

const struct cf_advice *cf_analysis_fusion(const cf_analysis_t *a, size_t i)
{
    return i < a->nfusion ? &a->fusion[i] : NULL;
}

const struct cf_advice *cf_analysis_fusion_find(const cf_analysis_t *a, const char *op,
                                                uint32_t comm, int path)
{
    for (size_t i = 0; i < a->nfusion; i++)
        if (a->fusion[i].comm == comm && a->fusion[i].path == path &&
            strcmp(a->fusion[i].op, op) == 0)
            return &a->fusion[i];
    return NULL;
}

size_t cf_analysis_nwire(const cf_analysis_t *a)
{
    return a->nwire;
}

const cf_an_wire_t *cf_analysis_wire(const cf_analysis_t *a, size_t i)
{
    return i < a->nwire ? &a->wire[i] : NULL;
}

size_t cf_analysis_nhops(const cf_analysis_t *a)
{
    return a->nhop;
}

const cf_an_hop_t *cf_analysis_hop(const cf_analysis_t *a, size_t i)
{
    return i < a->nhop ? &a->hop[i] : NULL;
}

/* ---- advice ---- */

const char *cf_an_fmt_share_n(double frac, char *buf, size_t len)
{
    double inv = frac > 0 ? 1.0 / frac : NAN;
    if (!isfinite(frac))
        snprintf(buf, len, "?");
    else if (fabs(frac - 1.0) < 0.05)
        snprintf(buf, len, "n");
    else if (frac < 1 && fabs(inv - round(inv)) < 0.05 * inv)
        snprintf(buf, len, "n/%.0f", round(inv));
    else
        snprintf(buf, len, "%.2g n", frac);
    return buf;
}

const char *cf_analysis_wire_advice(const cf_analysis_t *a, const cf_an_wire_t *w, char *buf, size_t len)
{
    char label[24], sz[CF_FMT_LEN], t1[CF_FMT_LEN], t2[CF_FMT_LEN], set[160];
    const char *ompi = NULL, *on;

    if (w == NULL || !w->collective || w->inf.algo == NULL || w->best_algo == NULL ||
        !(w->excess >= CF_AN_WIRE_EXCESS) || strcmp(w->best_algo, w->inf.algo) == 0 || w->cost_source == NULL)
        return NULL;
    if (strstr(a->p->mpi_library, "Open MPI") != NULL)
        ompi = cf_wire_ompi_setting(w->w.coll, w->best_algo, set, sizeof(set));
    on = strcmp(w->cost_source, "collective fit") == 0 ? "with the per-hop alpha and B of its own fit"
         : strcmp(w->cost_source, "link") == 0        ? "on the given link"
         : strcmp(w->cost_source, "p2p fit") == 0     ? "on the point-to-point fit of its path"
                                                      : "on the UCX per-hop fit of its path";
    snprintf(buf, len,
             "%s on %s runs %s (%s: %.3g per rank and call, of %s on average); at its sizes %s would "
             "take %.0f%% less time %s: %s instead of %s per call%s%s",
             w->w.op, cf_comm_label(w->w.comm, label, sizeof(label)), w->inf.algo, w->inf.expected.shape,
             w->w.msgs_per_call, cf_an_fmt_share_n(w->msg_size / w->w.payload, sz, sizeof(sz)), w->best_algo,
             100.0 * (1.0 - w->best_s / w->model_s), on, cf_fmt_time(w->best_s, t1, sizeof(t1)),
             cf_fmt_time(w->model_s, t2, sizeof(t2)), ompi ? "; Open MPI: " : "", ompi ? ompi : "");
    return buf;
}

char *cf_analysis_advice(const cf_an_op_t *o, char *buf, size_t len)
{
    const cf_an_fit_t *f = o->fit;
    char nh[CF_FMT_LEN], sz[CF_FMT_LEN] = "", what[192];
    int coll, fuse, no_gain;

    if (strcmp(o->kind, "completion") == 0) {
        snprintf(buf, len, "time blocked waiting for nonblocking operations to complete: post "
                           "them earlier or overlap more work with them");
        return buf;
    }
    if (strcmp(o->kind, "probe") == 0) {
        snprintf(buf, len, "probing for messages, not a transfer");
        return buf;
    }
    if (f == NULL) {
        snprintf(buf, len, "not a transfer: not fitted");
        return buf;
    }
    coll = f->kind == CF_AN_COLLECTIVE;
    if (f->basis != NULL && strcmp(f->basis, "no payload") == 0) {
        snprintf(buf, len, "no payload: its time is synchronization (waiting for the slowest "
                           "rank, then startup); balance the work before it or drop the call");
        return buf;
    }
    if (f->basis == NULL) {
        snprintf(buf, len, "not enough size range to fit (%d size%s); give --link RATE,TIME to "
                           "judge it against a link",
                 f->nsizes, f->nsizes == 1 ? "" : "s");
        return buf;
    }
    cf_fmt_size(f->n_half_bytes, nh, sizeof(nh));
    /* The fusion advice, where there is one, says whether fusing pays. */
    fuse = o->fusion != NULL && o->fusion->verdict != NULL && strcmp(o->fusion->verdict, "fuse") == 0;
    no_gain = o->fusion != NULL && o->fusion->verdict != NULL && !fuse;
    if (fuse)
        snprintf(what, sizeof(what), "fuse them into buckets of %s (see the fusion advice)",
                 cf_fmt_size(o->fusion->bucket_bytes, sz, sizeof(sz)));
    else if (no_gain)
        snprintf(what, sizeof(what), "yet fusing them gains nothing (%s)", o->fusion->reason);
    else
        snprintf(what, sizeof(what), "%s", coll ? "fuse them into fewer, larger calls (buckets)"
                                                : "aggregate messages into fewer, larger ones");
    if (f->startup_share > 0.5) {
        if (isfinite(f->below_n_half) && isfinite(f->n_half_bytes))
            snprintf(buf, len, "%.0f%% of the calls are below n_half = %s: %s", 100.0 * f->below_n_half,
                     nh, what);
        else
            snprintf(buf, len, "startup dominates: %s", what);
        return buf;
    }
    if (fuse && isfinite(f->below_n_half) && isfinite(f->n_half_bytes))
        snprintf(buf, len, "payload dominates the time, though %.0f%% of the calls are below "
                           "n_half = %s: move fewer bytes or use faster links, and fuse the small "
                           "calls into buckets of %s (see the fusion advice)",
                 100.0 * f->below_n_half, nh, sz);
    else if (!no_gain && isfinite(f->below_n_half) && f->below_n_half >= 0.5 &&
             isfinite(f->n_half_bytes))
        snprintf(buf, len, "payload dominates the time, though %.0f%% of the calls are below "
                           "n_half = %s: move fewer bytes or use faster links, and %s",
                 100.0 * f->below_n_half, nh,
                 coll ? "fuse the small calls into buckets" : "aggregate the small messages");
    else if (coll && isfinite(f->efficiency) && f->efficiency < 0.5)
        snprintf(buf, len, "payload dominates and it runs at %.0f%% of the ideal %s: check the "
                           "algorithm the MPI library picks, then move fewer bytes",
                 100.0 * f->efficiency, f->coll == CF_COLL_ALLREDUCE ? "ring" : "model");
    else
        snprintf(buf, len, "payload dominates: move fewer bytes (compression, lower precision) "
                           "or use faster links");
    return buf;
}

/* ---- JSON ---- */

typedef struct {
    int bad;
} jctx_t;

/* JSON has no infinity or NaN: those become null. */
static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *jstr(const char *s)
{
    return s != NULL ? json_string(s) : json_null();
}

static void jset(jctx_t *c, json_t *o, const char *k, json_t *v)
{
    if (json_object_set_new(o, k, v) != 0)
        c->bad = 1;
}

static void jpush(jctx_t *c, json_t *arr, json_t *v)
{
    if (json_array_append_new(arr, v) != 0)
        c->bad = 1;
}

static json_t *jpair(double lo, double hi)
{
    json_t *a = json_array();
    if (a != NULL && (json_array_append_new(a, jnum(lo)) || json_array_append_new(a, jnum(hi)))) {
        json_decref(a);
        return NULL;
    }
    return a;
}

static json_t *fit_json(jctx_t *c, const cf_an_fit_t *f)
{
    json_t *o = json_object(), *ci = json_object(), *segs = json_array(), *bins = json_array();
    char label[24];
    int ok = f->fit.ok;

    jset(c, o, "kind", json_string(f->kind == CF_AN_P2P ? "p2p" : "collective"));
    jset(c, o, "op", json_string(f->op));
    jset(c, o, "joint", json_boolean(f->joint));
    jset(c, o, "comm", json_string(cf_an_comm_label(f->comm, label, sizeof(label))));
    jset(c, o, "comm_size", json_integer(f->comm_size));
    jset(c, o, "path", json_string(cf_path_name((unsigned)f->path)));
    jset(c, o, "calls", json_integer((json_int_t)f->calls));
    jset(c, o, "bytes", json_integer((json_int_t)f->bytes));
    jset(c, o, "time_s", jnum(f->time_s));
    jset(c, o, "fit_ok", json_boolean(ok));
    jset(c, o, "note", jstr(f->note));
    jset(c, o, "sizes", json_integer(f->nsizes));
    jset(c, o, "alpha_s", jnum(ok ? f->fit.alpha_s : NAN));
    jset(c, o, "bandwidth_Bps", jnum(ok ? f->fit.bandwidth_Bps : NAN));
    jset(c, o, "n_half_bytes", jnum(ok ? f->fit.n_half_bytes : NAN));
    jset(c, o, "r2", jnum(ok ? f->fit.r2 : NAN));
    jset(c, ci, "alpha_s", jpair(ok ? f->fit.alpha_ci[0] : NAN, ok ? f->fit.alpha_ci[1] : NAN));
    jset(c, ci, "bandwidth_Bps",
         jpair(ok ? f->fit.bandwidth_ci[0] : NAN, ok ? f->fit.bandwidth_ci[1] : NAN));
    jset(c, o, "ci", ci);
    jset(c, o, "size_lo", jnum(ok ? f->fit.size_lo : NAN));
    jset(c, o, "size_hi", jnum(ok ? f->fit.size_hi : NAN));
    jset(c, o, "points", json_integer(ok ? f->fit.npoints : 0));
    jset(c, o, "outliers", json_integer(ok ? f->fit.noutliers : 0));
    jset(c, o, "startup_share", jnum(f->startup_share));
    jset(c, o, "verdict", json_string(f->verdict));
    jset(c, o, "verdict_basis", jstr(f->basis));
    jset(c, o, "below_n_half", jnum(f->below_n_half));
    jset(c, o, "wait_share", jnum(f->wait_share));
    jset(c, o, "time_source",
         json_string(f->time_source == (CF_AN_TIME_DURATION | CF_AN_TIME_TRANSFER) ? "mixed"
                     : f->time_source == CF_AN_TIME_TRANSFER                       ? "transfer"
                                                                                   : "duration"));
    jset(c, o, "zero_byte_p50_s", jnum(f->zero_p50_s));
    if (f->kind == CF_AN_COLLECTIVE) {
        json_t *hop = json_object();
        jset(c, hop, "algo", jstr(f->hop_algo));
        jset(c, hop, "alpha_s", jnum(f->hop_alpha_s));
        jset(c, hop, "bandwidth_Bps", jnum(f->hop_Bps));
        jset(c, o, "per_hop", hop);
        jset(c, o, "efficiency", jnum(f->efficiency));
    }
    for (int s = 0; ok && s < f->fit.nseg; s++) {
        const cf_segment_t *g = &f->fit.seg[s];
        json_t *j = json_object();
        jset(c, j, "size_lo", jnum(g->size_lo));
        jset(c, j, "size_hi", jnum(g->size_hi));
        jset(c, j, "alpha_s", jnum(g->alpha_s));
        jset(c, j, "bandwidth_Bps", jnum(g->bandwidth_Bps));
        jset(c, j, "n_half_bytes",
             jnum(isinf(g->bandwidth_Bps) ? NAN : g->alpha_s * g->bandwidth_Bps));
        jset(c, j, "points", json_integer(g->npoints));
        jpush(c, segs, j);
    }
    jset(c, o, "segments", segs);
    for (size_t k = 0; k < f->nbin; k++) {
        const cf_an_bin_t *b = &f->bin[k];
        json_t *j = json_object();
        jset(c, j, "size_lo", json_integer((json_int_t)(b->size_lo > INT64_MAX ? INT64_MAX : b->size_lo)));
        jset(c, j, "size_hi", json_integer((json_int_t)(b->size_hi > INT64_MAX ? INT64_MAX : b->size_hi)));
        jset(c, j, "size", jnum(b->size));
        jset(c, j, "calls", json_integer((json_int_t)b->calls));
        jset(c, j, "bytes", json_integer((json_int_t)b->bytes));
        jset(c, j, "time_s", jnum(b->time_s));
        jset(c, j, "p50_s", jnum(b->p50_s));
        jset(c, j, "duration_p50_s", jnum(b->duration_p50_s));
        jset(c, j, "p99_s", jnum(b->p99_s));
        jset(c, j, "in_fit", json_boolean(b->in_fit));
        jset(c, j, "predicted_s", jnum(b->predicted_s));
        jset(c, j, "startup_share", jnum(b->startup_share));
        jset(c, j, "verdict", json_string(b->verdict));
        jpush(c, bins, j);
    }
    jset(c, o, "bins", bins);
    return o;
}

static json_t *collectives_json(jctx_t *c, const cf_analysis_t *a)
{
    json_t *arr = json_array();
    char label[24];

    for (size_t i = 0; i < a->nfit; i++) {
        const cf_an_fit_t *f = &a->fit[i];
        const cf_an_ref_t *ref = ref_of(a, f->path);
        if (f->kind != CF_AN_COLLECTIVE)
            continue;
        for (size_t k = 0; k < f->nbin; k++) {
            const cf_an_bin_t *b = &f->bin[k];
            json_t *j = json_object();
            jset(c, j, "op", json_string(f->op));
            jset(c, j, "comm", json_string(cf_an_comm_label(f->comm, label, sizeof(label))));
            jset(c, j, "comm_size", json_integer(f->comm_size));
            jset(c, j, "path", json_string(cf_path_name((unsigned)f->path)));
            jset(c, j, "size_lo", json_integer((json_int_t)(b->size_lo > INT64_MAX ? INT64_MAX : b->size_lo)));
            jset(c, j, "size_hi", json_integer((json_int_t)(b->size_hi > INT64_MAX ? INT64_MAX : b->size_hi)));
            jset(c, j, "size", jnum(b->size));
            jset(c, j, "calls", json_integer((json_int_t)b->calls));
            jset(c, j, "p50_s", jnum(b->p50_s));
            jset(c, j, "algbw_Bps", jnum(b->algbw_Bps));
            jset(c, j, "busbw_Bps", jnum(b->busbw_Bps));
            jset(c, j, "busbw_factor", jnum(cf_busbw_factor(f->coll, f->comm_size)));
            jset(c, j, "ideal_ring_s", jnum(b->ideal_s));
            jset(c, j, "ideal_algo", jstr(isfinite(b->ideal_s) ? cf_model_default_algo(f->coll) : NULL));
            jset(c, j, "ideal_source", jstr(isfinite(b->ideal_s) && ref ? ref->source : NULL));
            jset(c, j, "efficiency", jnum(b->efficiency));
            jpush(c, arr, j);
        }
    }
    return arr;
}

static json_t *regions_json(jctx_t *c, const cf_analysis_t *a)
{
    json_t *arr = json_array();
    double ranks = a->p->ranks > 0 ? a->p->ranks : NAN;
    char label[24];

    for (size_t i = 0; i < a->nregion; i++) {
        const cf_an_region_t *g = &a->region[i];
        json_t *j = json_object(), *ops = json_array();
        jset(c, j, "region", jstr(g->name));
        jset(c, j, "entries", g->entries >= 0 ? json_integer(g->entries) : json_null());
        jset(c, j, "time_s", jnum(g->time_s));
        jset(c, j, "time_per_rank_s", jnum(g->time_s / ranks));
        jset(c, j, "inclusive_s", jnum(g->inclusive_s));
        jset(c, j, "inclusive_per_rank_s", jnum(g->inclusive_s / ranks));
        jset(c, j, "share", jnum(g->share));
        for (size_t k = 0; k < g->nop; k++) {
            const cf_an_region_op_t *o = &g->op[k];
            json_t *r = json_object();
            jset(c, r, "op", json_string(o->op));
            jset(c, r, "kind", json_string(o->kind));
            jset(c, r, "comm", json_string(cf_comm_label(o->comm, label, sizeof(label))));
            jset(c, r, "comm_size", json_integer(o->comm_size));
            jset(c, r, "path", json_string(cf_path_name((unsigned)o->path)));
            jset(c, r, "calls", json_integer((json_int_t)o->calls));
            jset(c, r, "bytes", json_integer((json_int_t)o->bytes));
            jset(c, r, "time_s", jnum(o->time_s));
            jset(c, r, "time_per_rank_s", jnum(o->time_s / ranks));
            jset(c, r, "share", jnum(o->share));
            jpush(c, ops, r);
        }
        jset(c, j, "operations", ops);
        jpush(c, arr, j);
    }
    return arr;
}

static json_t *late_json(jctx_t *c, const cf_analysis_t *a)
{
    json_t *arr = json_array();
    char label[24];

    for (size_t i = 0; i < a->nlate; i++) {
        const cf_an_late_t *l = &a->late[i];
        json_t *j = json_object(), *last = json_array();
        jset(c, j, "comm", json_string(cf_comm_label(l->comm, label, sizeof(label))));
        jset(c, j, "comm_size", json_integer(l->comm_size));
        jset(c, j, "instances", json_integer((json_int_t)l->instances));
        for (size_t k = 0; k < l->nlast; k++) {
            json_t *r = json_object();
            jset(c, r, "rank", json_integer(l->last[k].rank));
            jset(c, r, "count", json_integer((json_int_t)l->last[k].count));
            jset(c, r, "share",
                 jnum(l->instances > 0 ? (double)l->last[k].count / (double)l->instances : NAN));
            jpush(c, last, r);
        }
        jset(c, j, "last", last);
        jpush(c, arr, j);
    }
    return arr;
}

static json_t *jsize(uint64_t v)
{
    return json_integer((json_int_t)(v > INT64_MAX ? INT64_MAX : v));
}

static json_t *hop_json(jctx_t *c, const cf_an_hop_t *h)
{
    json_t *o = json_object();
    int ok = h->fit.ok;
    jset(c, o, "path", json_string(cf_path_name((unsigned)h->path)));
    jset(c, o, "messages", jsize(h->msgs));
    jset(c, o, "bytes", jsize(h->bytes));
    jset(c, o, "sizes", json_integer(h->nsizes));
    jset(c, o, "alpha_s", jnum(ok ? h->fit.alpha_s : NAN));
    jset(c, o, "bandwidth_Bps", jnum(ok ? h->fit.bandwidth_Bps : NAN));
    jset(c, o, "n_half_bytes", jnum(ok ? h->fit.n_half_bytes : NAN));
    jset(c, o, "r2", jnum(ok ? h->fit.r2 : NAN));
    jset(c, o, "size_lo", jnum(ok ? h->fit.size_lo : NAN));
    jset(c, o, "size_hi", jnum(ok ? h->fit.size_hi : NAN));
    jset(c, o, "segments", json_integer(ok ? h->fit.nseg : 0));
    jset(c, o, "note", jstr(h->note));
    return o;
}

static json_t *wire_coll_json(jctx_t *c, const cf_analysis_t *a, const cf_an_wire_t *w)
{
    json_t *o = json_object(), *bins = json_array();
    const cf_wire_infer_t *inf = &w->inf;
    const cf_wire_model_t *m = &inf->expected;
    double n = w->w.payload;
    char label[24], advice[512];

    jset(c, o, "op", json_string(w->w.op));
    jset(c, o, "comm", json_string(cf_an_comm_label(w->w.comm, label, sizeof(label))));
    jset(c, o, "comm_size", json_integer(w->w.comm_size));
    jset(c, o, "mixed_comms", json_boolean(w->w.mixed_comms));
    jset(c, o, "path", w->w.path >= 0 ? json_string(cf_path_name((unsigned)w->w.path)) : json_null());
    jset(c, o, "size_lo", jsize(w->w.size_lo));
    jset(c, o, "size_hi", jsize(w->w.size_hi));
    jset(c, o, "payload_bytes", jnum(n));
    jset(c, o, "payload_lo_bytes", jnum(w->w.payload_lo));
    jset(c, o, "payload_hi_bytes", jnum(w->w.payload_hi));
    jset(c, o, "mpi_calls", jsize(w->w.mpi_calls));
    jset(c, o, "share", jnum(w->share));
    jset(c, o, "wire_messages_per_call_per_rank", jnum(w->w.msgs_per_call));
    jset(c, o, "wire_bytes_per_call_per_rank", jnum(w->w.bytes_per_call));
    jset(c, o, "message_size", jnum(w->msg_size));
    jset(c, o, "message_share_of_payload", jnum(n > 0 ? w->msg_size / n : NAN));
    for (size_t k = 0; k < w->w.nbin; k++) {
        const cf_wire_bin_t *b = &w->w.bin[k];
        json_t *j = json_object();
        jset(c, j, "size_lo", jsize(b->size_lo));
        jset(c, j, "size_hi", jsize(b->size_hi));
        jset(c, j, "size", jnum(b->msgs ? (double)b->bytes / (double)b->msgs : NAN));
        jset(c, j, "messages_per_call_per_rank",
             jnum(w->w.mpi_calls ? (double)b->msgs / (double)w->w.mpi_calls : NAN));
        jpush(c, bins, j);
    }
    jset(c, o, "message_bins", bins);
    jset(c, o, "inferred_algorithm", jstr(w->inferred ? inf->algo : NULL));
    jset(c, o, "closest_algorithm", jstr(w->inferred ? inf->closest : NULL));
    jset(c, o, "distance", jnum(w->inferred ? inf->distance : NAN));
    jset(c, o, "model", jstr(w->inferred ? m->shape : NULL));
    jset(c, o, "expected_messages", jnum(w->inferred ? m->msgs : NAN));
    jset(c, o, "expected_bytes_per_call_per_rank", jnum(w->inferred ? m->bytes * n : NAN));
    jset(c, o, "expected_message_size_lo", jnum(w->inferred ? m->size_lo * n : NAN));
    jset(c, o, "expected_message_size_hi", jnum(w->inferred ? m->size_hi * n : NAN));
    jset(c, o, "match", json_boolean(w->inferred && inf->algo != NULL));
    jset(c, o, "model_s", jnum(w->model_s));
    jset(c, o, "measured_s", jnum(w->measured_s));
    jset(c, o, "best_algorithm", jstr(w->best_algo));
    jset(c, o, "best_model_s", jnum(w->best_s));
    {
        json_t *l = json_object();
        jset(c, l, "source", jstr(w->cost_source));
        jset(c, l, "alpha_s", jnum(w->cost_alpha_s));
        jset(c, l, "bandwidth_Bps", jnum(w->cost_Bps));
        jset(c, o, "cost_link", l);
    }
    jset(c, o, "excess", jnum(w->excess));
    jset(c, o, "saving_per_rank_s", jnum(w->saving_s));
    jset(c, o, "advice", jstr(cf_analysis_wire_advice(a, w, advice, sizeof(advice))));
    jset(c, o, "note", jstr(w->note));
    return o;
}

static json_t *wire_other_json(jctx_t *c, const cf_an_wire_t *w)
{
    json_t *o = json_object();
    jset(c, o, "op", w->w.op[0] ? json_string(w->w.op) : json_null());
    jset(c, o, "mpi_calls", jsize(w->w.mpi_calls));
    jset(c, o, "messages", jsize(w->w.msgs));
    jset(c, o, "bytes", jsize(w->w.msg_bytes));
    jset(c, o, "receives", jsize(w->w.recvs));
    jset(c, o, "receive_bytes", jsize(w->w.recv_bytes));
    jset(c, o, "wire_messages_per_call_per_rank", jnum(w->w.msgs_per_call));
    jset(c, o, "message_size", jnum(w->msg_size));
    jset(c, o, "note", jstr(w->note));
    return o;
}

/* null without UCX records */
static json_t *wire_json(jctx_t *c, const cf_analysis_t *a)
{
    json_t *o, *coll, *other, *hops, *tr;

    if (a->nwire == 0 && a->nhop == 0)
        return json_null();
    o = json_object();
    coll = json_array();
    other = json_array();
    hops = json_array();
    for (size_t i = 0; i < a->nwire; i++) {
        if (a->wire[i].collective)
            jpush(c, coll, wire_coll_json(c, a, &a->wire[i]));
        else
            jpush(c, other, wire_other_json(c, &a->wire[i]));
    }
    for (size_t i = 0; i < a->nhop; i++)
        jpush(c, hops, hop_json(c, &a->hop[i]));
    tr = cf_wire_transports(a->p);
    jset(c, o, "collectives", coll);
    jset(c, o, "other", other);
    jset(c, o, "hop_fits", hops);
    jset(c, o, "transports", tr != NULL ? json_deep_copy(tr) : json_object());
    return o;
}

json_t *cf_analysis_to_json(const cf_analysis_t *a)
{
    const cf_profile_t *p = a->p;
    const cf_an_ranks_t *rk = &a->ranks;
    jctx_t c = {0};
    json_t *root = json_object(), *job = json_object(), *mt = json_object();
    json_t *ranks = json_array(), *refs = json_array(), *ops = json_array(), *fits = json_array();
    char label[24], advice[256];

    jset(&c, root, "format", json_string("commfit-report"));
    jset(&c, root, "version", json_integer(1));
    jset(&c, job, "ranks", json_integer(p->ranks));
    jset(&c, job, "nodes", json_integer(p->nodes));
    jset(&c, job, "wall_s", jnum(p->wall_s));
    jset(&c, job, "partial", json_boolean(p->partial));
    jset(&c, job, "mpi_library", json_string(p->mpi_library));
    jset(&c, job, "start_time", json_string(p->start_time));
    jset(&c, root, "job", job);

    jset(&c, mt, "ranked_s", jnum(a->total_s));
    jset(&c, mt, "total_s", jnum(rk->mpi_total_s));
    jset(&c, mt, "mean_s", jnum(rk->mpi_mean_s));
    jset(&c, mt, "min_s", jnum(rk->mpi_min_s));
    jset(&c, mt, "max_s", jnum(rk->mpi_max_s));
    jset(&c, mt, "min_rank", json_integer(rk->min_rank));
    jset(&c, mt, "max_rank", json_integer(rk->max_rank));
    jset(&c, mt, "wall_mean_s", jnum(rk->wall_mean_s));
    jset(&c, mt, "fraction_of_wall", jnum(rk->mpi_fraction));
    jset(&c, mt, "imbalance", jnum(rk->imbalance));
    jset(&c, root, "mpi_time", mt);
    {
        json_t *bd = json_object();
        jset(&c, bd, "startup", jnum(a->split.startup));
        jset(&c, bd, "payload", jnum(a->split.payload));
        jset(&c, bd, "no_payload", jnum(a->split.no_payload));
        jset(&c, bd, "unexplained", jnum(a->split.unexplained));
        jset(&c, root, "breakdown", bd);
    }
    for (size_t i = 0; i < p->nrank; i++) {
        const cf_rank_info_t *r = &p->rank[i];
        json_t *j = json_object();
        jset(&c, j, "rank", json_integer(r->rank));
        jset(&c, j, "node", json_integer(r->node));
        jset(&c, j, "host", json_string(r->host));
        jset(&c, j, "wall_s", jnum(r->wall_s));
        jset(&c, j, "mpi_s", jnum(r->mpi_s));
        jset(&c, j, "wait_s", jnum(r->wait_s));
        jset(&c, j, "transfer_s", jnum(r->xfer_s));
        jpush(&c, ranks, j);
    }
    jset(&c, root, "ranks", ranks);

    for (int path = 0; path < NPATH; path++) {
        const cf_an_ref_t *ref = &a->ref[path];
        json_t *j;
        if (ref->source == NULL)
            continue;
        j = json_object();
        jset(&c, j, "path", json_string(cf_path_name((unsigned)path)));
        jset(&c, j, "source", json_string(ref->source));
        jset(&c, j, "alpha_s", jnum(ref->alpha_s));
        jset(&c, j, "bandwidth_Bps", jnum(ref->bandwidth_Bps));
        jpush(&c, refs, j);
    }
    jset(&c, root, "references", refs);

    for (size_t k = 0; k < a->nop; k++) {
        const cf_an_op_t *o = &a->op[k];
        json_t *j = json_object();
        jset(&c, j, "op", json_string(o->op));
        jset(&c, j, "kind", json_string(o->kind));
        jset(&c, j, "comm", json_string(cf_comm_label(o->comm, label, sizeof(label))));
        jset(&c, j, "comm_size", json_integer(o->comm_size));
        jset(&c, j, "path", json_string(cf_path_name((unsigned)o->path)));
        jset(&c, j, "nonblocking", json_boolean(o->nonblocking));
        jset(&c, j, "calls", json_integer((json_int_t)o->calls));
        jset(&c, j, "bytes", json_integer((json_int_t)o->bytes));
        jset(&c, j, "time_s", jnum(o->time_s));
        jset(&c, j, "time_per_rank_s", jnum(p->ranks > 0 ? o->time_s / p->ranks : NAN));
        jset(&c, j, "share", jnum(o->share));
        jset(&c, j, "startup_share", jnum(o->fit ? o->fit->startup_share : NAN));
        jset(&c, j, "verdict", jstr(o->fit ? o->fit->verdict : NULL));
        jset(&c, j, "wait_share", jnum(o->fit ? o->fit->wait_share : NAN));
        jset(&c, j, "advice", json_string(cf_analysis_advice(o, advice, sizeof(advice))));
        jpush(&c, ops, j);
    }
    jset(&c, root, "operations", ops);

    for (size_t i = 0; i < a->nfit; i++)
        jpush(&c, fits, fit_json(&c, &a->fit[i]));
    jset(&c, root, "fits", fits);
    jset(&c, root, "collectives", collectives_json(&c, a));
    {
        json_t *adv = cf_advice_to_json(a->fusion, a->nfusion);
        if (adv == NULL)
            c.bad = 1;
        else
            jset(&c, root, "advice", adv);
    }
    jset(&c, root, "regions", regions_json(&c, a));
    jset(&c, root, "late_arrivals", late_json(&c, a));
    jset(&c, root, "wire", wire_json(&c, a));

    if (c.bad || root == NULL) {
        json_decref(root);
        return NULL;
    }
    return root;
}
