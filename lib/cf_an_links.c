/* Stage "links": the reference link of each path, which ideal times and
 * model verdicts are costed on.  See cf_an_stage.h for the pipeline.
 *
 * A path's link is, in this order:
 * - the link given with --link (source "link");
 * - the calibration's link sweep of the path (profile section
 *   "calibration", measured at MPI_Finalize): alpha and the asymptotic B
 *   fitted to NetPIPE's figure of each size, the best of its trials
 *   ("calibration");
 * - the program's best-behaved blocking point-to-point transfers ("p2p
 *   best case", from_best_case): per size bin the least time of any of
 *   its streams, alpha from the smallest sizes and B from the ends, as
 *   NetPIPE takes them, without the waits for a late partner that a fit
 *   of call durations takes in;
 * - the joint fit of those calls, where the best case gives no line;
 * - the per-hop fit of the UCX sends beneath MPI ("ucx hop fit").
 * A nonblocking span never feeds it: from post to completion it holds
 * whatever the program did before it waited.  The joint fit of the path
 * (the program's own line, durations where transfers were too few) is
 * reported beside whichever is used.  Per message size the link's time
 * is predicted measurement first (cf_predict.h): the time at a size the
 * sweep measured, interpolated between, the fitted line beyond. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_an_stage.h"

#define BEST_SPREAD 2.0 /* best-case times kept as measured within this factor of its line */

/* The reference's line: its fit, else alpha + x / B. */
static double ref_line(const void *ctx, double x, double *startup_p)
{
    const cf_an_ref_t *ref = ctx;
    if (ref->fit != NULL) {
        *startup_p = cf_fit_alpha_at(ref->fit, x);
        return cf_fit_predict(ref->fit, x);
    }
    *startup_p = ref->alpha_s;
    return ref->alpha_s + (isinf(ref->bandwidth_Bps) ? 0.0 : x / ref->bandwidth_Bps);
}

/* Time of one message of x bytes under the reference link, and its
 * startup: measured first (cf_predict.h).  NaN without a reference. */
static double ref_hop(const cf_an_ref_t *ref, double x, double *startup_p)
{
    cf_pred_t pr;
    if (ref == NULL || ref->source == NULL)
        return NAN;
    if (ref->pred.line == NULL) /* a line made on the spot (cf_an_coll.c) */
        return ref_line(ref, x, startup_p);
    cf_pred_at(&ref->pred, x, &pr);
    *startup_p = pr.startup_s;
    return pr.time_s;
}

/* An operation of n bytes on p ranks under algo with cost A alpha + C n/B:
 * A messages of C n / A bytes on the reference link.  NaN when the model
 * does not apply (unknown operation, one rank, no reference). */
double cf_an_ref_model(const cf_an_ref_t *ref, cf_coll_t c, const char *algo, int p, double n,
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

const cf_an_ref_t *cf_an_ref_of(const cf_analysis_t *a, int path)
{
    return path >= 0 && path < CF_AN_NPATH && a->ref[path].source != NULL ? &a->ref[path] : NULL;
}

static int model_ranks(const cf_an_fit_t *f)
{
    return f->kind == CF_AN_P2P ? 2 : f->comm_size;
}

/* Without a fit, the verdict of the reference link under the model. */
void cf_an_verdict_from_model(const cf_analysis_t *a, cf_an_fit_t *f)
{
    const cf_an_ref_t *ref = cf_an_ref_of(a, f->path);
    int p = model_ranks(f);
    double num = 0, den = 0, below = 0, n_half;

    /* a file system is not a network path: no link model judges it */
    if (f->fit.ok || f->basis != NULL || ref == NULL || f->kind == CF_AN_IO)
        return;
    for (size_t k = 0; k < f->nbin; k++) {
        cf_an_bin_t *b = &f->bin[k];
        double s, t = cf_an_ref_model(ref, f->coll, NULL, p, b->size, &s);
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


/* A caveat from this stage; see cf_an_ranks.c for the others. */
static void links_caveat(cf_analysis_t *a, const char *text)
{
    if (a->ncaveat < CF_AN_MAX_CAVEATS)
        snprintf(a->caveat[a->ncaveat++], sizeof(a->caveat[0]), "%s", text);
}

/* A fit of (size, time, weight) points into ref->own_fit; 1 when it gave a line. */
static int own_fit(cf_an_ref_t *ref, const cf_point_t *pts, size_t n, const cf_an_limits_t *lim)
{
    int rc = lim->n > 0 ? cf_fit_run_limits(pts, n, lim->bytes, lim->n, &ref->own_fit, NULL)
                        : cf_fit_run(pts, n, &ref->own_fit, NULL);
    if (rc != CF_OK || !ref->own_fit.ok)
        return 0;
    ref->fit = &ref->own_fit;
    ref->alpha_s = ref->own_fit.alpha_s;
    ref->bandwidth_Bps = ref->own_fit.bandwidth_Bps;
    return 1;
}

/* The calibration's sweep of the path, by NetPIPE's figure of a size: the
 * best of its trials, each a mean over many round trips (trial_s).  That
 * is neither the fastest single round trip nor the median: on shared
 * memory here 8 B had a best of 0.32 us, a median of 0.47 us and NetPIPE
 * 0.52 us in the same job, and 4 MiB a best of 588 us, a median of 649 us
 * and NetPIPE 544 us.  A profile recorded before the sweep kept trials
 * gives its medians (cf_calib_link_time). */
static int from_calibration(cf_analysis_t *a, int path, cf_an_ref_t *ref)
{
    const cf_calib_link_t *l = cf_calib_link_of(&a->calib, path);
    cf_point_t pts[CF_CALIB_MAX_SIZES];

    if (l == NULL)
        return 0;
    for (size_t k = 0; k < l->nsize; k++)
        pts[k] = (cf_point_t){l->size[k].bytes, cf_calib_link_time(&l->size[k]), l->size[k].reps > 0 ? l->size[k].reps : 1};
    if (!own_fit(ref, pts, l->nsize, &a->limits[path]))
        return 0;
    ref->source = "calibration";
    if (l->ntamed > 0) {
        char text[200];
        snprintf(text, sizeof(text),
                 "calibration, %s link: %zu of its %zu sizes were disturbed (their median far above their best): "
                 "taken from their best, and no slower than the next larger size",
                 cf_path_name(path), l->ntamed, l->nsize);
        links_caveat(a, text);
    }
    cf_pred_init(&ref->pred, ref_line, ref, ref->own_fit.err_rms);
    for (size_t k = 0; k < l->nsize; k++)
        cf_pred_add(&ref->pred, l->size[k].bytes, cf_calib_link_time(&l->size[k]),
                    log(l->size[k].p50_s / l->size[k].best_s), CF_PRED_CALIBRATION);
    return 1;
}

static int blocking_p2p(const cf_record_t *r, int path)
{
    return r->layer == CF_LAYER_MPI && r->path == path && r->calls > 0 && r->bytes > 0 &&
           strcmp(r->kind, "p2p") == 0 && !cf_op_nonblocking(r->op, r->kind);
}

/* A duration-only record of a blocking call, for the best case. */
typedef struct {
    unsigned bin;
    uint32_t comm;
    int cls; /* 0 a send, 1 a receive (a ping-pong pairs them), 2 a sendrecv */
    double calls, t_min;
} dur_t;

static int cmp_dur(const void *pa, const void *pb)
{
    const dur_t *x = pa, *y = pb;
    if (x->bin != y->bin)
        return x->bin < y->bin ? -1 : 1;
    if (x->comm != y->comm)
        return x->comm < y->comm ? -1 : 1;
    return (x->cls > 1) - (y->cls > 1);
}

static void take_min(double *best, double t)
{
    if (t > 0 && isfinite(t) && t < *best)
        *best = t;
}

/* The best case of the duration-only records, per bin: per communicator,
 * the mean shortest send and the mean shortest receive averaged (the send
 * of an eager message returns after a copy, its receive waits the rest of
 * the round trip: together, one way), a sendrecv alone (both directions
 * at once); the least of those. */
static void durations_best(const dur_t *d, size_t n, double *best)
{
    for (size_t i = 0, j; i < n; i = j) {
        double sum[3] = {0}, calls[3] = {0};
        for (j = i; j < n && d[j].bin == d[i].bin && d[j].comm == d[i].comm; j++) {
            sum[d[j].cls] += d[j].calls * d[j].t_min;
            calls[d[j].cls] += d[j].calls;
        }
        if (calls[0] > 0 && calls[1] > 0)
            take_min(&best[d[i].bin], 0.5 * (sum[0] / calls[0] + sum[1] / calls[1]));
        if (calls[2] > 0)
            take_min(&best[d[i].bin], sum[2] / calls[2]);
    }
}

/* The program's best-behaved blocking transfers on the path, NetPIPE's
 * best case: per size bin the least time of any stream of its blocking
 * point-to-point calls (a record's transfer median where it has sampled
 * one-way times, else the duration pairs of durations_best).  alpha is the
 * median of the three smallest sizes' times (one lucky bin does not set
 * it), B the slope between the ends, (M_last - M_first) / (T_last -
 * T_first), as NetPIPE takes latency from its smallest message and
 * bandwidth from its largest: sizes in between, where a program's calls
 * may all wait for their partners (HPCC's ring exchanges, PTRANS), do not
 * pull them.  The sizes measured for the predictor are those within a
 * factor BEST_SPREAD of that line either way: the others waited, or were
 * copies of messages that had arrived. */
static int from_best_case(cf_analysis_t *a, int path, cf_an_ref_t *ref)
{
    double best[CF_SIZE_BINS], bytes[CF_SIZE_BINS] = {0}, calls[CF_SIZE_BINS] = {0};
    double sz[CF_SIZE_BINS], t[CF_SIZE_BINS], low[3];
    dur_t *d = malloc((a->p->nrec ? a->p->nrec : 1) * sizeof(*d));
    size_t nd = 0, n = 0;

    if (d == NULL)
        return 0;
    for (int k = 0; k < CF_SIZE_BINS; k++)
        best[k] = INFINITY;
    for (size_t i = 0; i < a->p->nrec; i++) {
        const cf_record_t *r = &a->p->rec[i];
        unsigned k = cf_size_bin(r->size_lo);
        if (!blocking_p2p(r, path) || k >= CF_SIZE_BINS)
            continue;
        bytes[k] += (double)r->bytes;
        calls[k] += (double)r->calls;
        if (r->xfer_n > 0 && isfinite(r->xfer_p50) && r->xfer_p50 > 0)
            take_min(&best[k], r->xfer_p50);
        else if (cf_an_pos(r->t_min) > 0)
            d[nd++] = (dur_t){k, r->comm,
                              strstr(r->op, "endrecv") != NULL ? 2 : strstr(r->op, "ecv") != NULL ? 1 : 0,
                              (double)r->calls, r->t_min};
    }
    qsort(d, nd, sizeof(*d), cmp_dur);
    durations_best(d, nd, best);
    free(d);
    for (int k = 0; k < CF_SIZE_BINS; k++)
        if (isfinite(best[k]) && calls[k] > 0) {
            sz[n] = bytes[k] / calls[k];
            t[n++] = best[k];
        }
    if (n < 2 || !(sz[n - 1] > sz[0]))
        return 0;
    for (size_t k = 0; k < 3; k++)
        low[k] = t[k < n ? k : n - 1];
    ref->source = "p2p best case";
    ref->fit = NULL;
    ref->alpha_s = fmax(fmin(low[0], low[1]), fmin(fmax(low[0], low[1]), low[2]));
    ref->bandwidth_Bps = t[n - 1] > t[0] ? (sz[n - 1] - sz[0]) / (t[n - 1] - t[0]) : INFINITY;
    if (n < 3)
        snprintf(ref->why, sizeof(ref->why), "bandwidth: fewer than 3 sizes");
    cf_pred_init(&ref->pred, ref_line, ref, NAN);
    for (size_t k = 0; k < n; k++) {
        double line = ref->alpha_s + (isinf(ref->bandwidth_Bps) ? 0.0 : sz[k] / ref->bandwidth_Bps);
        if (t[k] <= BEST_SPREAD * line && t[k] * BEST_SPREAD >= line)
            cf_pred_add(&ref->pred, sz[k], t[k], CF_PRED_MIN_SPREAD, CF_PRED_MEASURED);
    }
    return 1;
}

void cf_an_links_build(cf_analysis_t *a)
{
    cf_calib_read(a->p, &a->calib);
    if (a->calib.malformed) {
        char text[200];
        snprintf(text, sizeof(text), "the profile's calibration section is malformed (%s): not used",
                 a->calib.why);
        links_caveat(a, text);
    }
    for (size_t i = 0; i < a->calib.ncoll; i++) {
        const cf_calib_coll_t *k = &a->calib.coll[i];
        char text[200];
        if (k->ntamed == 0)
            continue;
        snprintf(text, sizeof(text),
                 "calibration, %s on communicator %u: %zu of its %zu sizes were disturbed (their median far above "
                 "their best): taken from their best, and no slower than the next larger size",
                 k->op, (unsigned)k->comm, k->ntamed, k->nsize);
        links_caveat(a, text);
    }
    for (int path = 0; path < CF_AN_NPATH; path++) {
        cf_an_ref_t *ref = &a->ref[path];
        memset(ref, 0, sizeof(*ref));
        ref->alpha_s = ref->bandwidth_Bps = NAN;
        ref->program_alpha_s = ref->program_Bps = ref->program_err_rms = NAN;
        cf_pred_init(&ref->pred, ref_line, ref, NAN);
        for (size_t i = 0; i < a->nfit; i++) {
            const cf_an_fit_t *f = &a->fit[i];
            if (f->joint && f->path == path && f->fit.ok) {
                ref->joint = f;
                ref->program_alpha_s = f->fit.alpha_s;
                ref->program_Bps = f->fit.bandwidth_Bps;
                ref->program_err_rms = f->err_rms;
            }
        }
        if (!isnan(a->opts.link_Bps)) {
            ref->source = "link";
            ref->alpha_s = a->opts.link_alpha_s;
            ref->bandwidth_Bps = a->opts.link_Bps;
            continue;
        }
        if (!from_calibration(a, path, ref) && !from_best_case(a, path, ref) && ref->joint != NULL) {
            ref->source = "p2p fit";
            ref->alpha_s = ref->joint->fit.alpha_s;
            ref->bandwidth_Bps = ref->joint->fit.bandwidth_Bps;
            ref->fit = &ref->joint->fit;
            cf_pred_init(&ref->pred, ref_line, ref, ref->joint->err_rms);
        }
        if (ref->source != NULL) {
            const cf_an_fit_t *f = ref->joint;
            if (a->p->oversubscribed == 1)
                snprintf(ref->why, sizeof(ref->why), "measured with more ranks than CPUs on a node");
            else if (f != NULL && ref->fit == &f->fit && f->leaning != NULL)
                snprintf(ref->why, sizeof(ref->why), "%s", f->why);
            else if (ref->fit != NULL && ref->fit->alpha_uncertain)
                snprintf(ref->why, sizeof(ref->why), "startup: %s", ref->fit->alpha_why);
            else if (ref->fit != NULL && ref->fit->bandwidth_uncertain)
                snprintf(ref->why, sizeof(ref->why), "bandwidth: %s", ref->fit->bandwidth_why);
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
}

double cf_analysis_call_time(const cf_analysis_t *a, const cf_an_fit_t *f, double n,
                             double *startup_p)
{
    double s = NAN, t;

    if (f->fit.ok) {
        s = cf_fit_alpha_at(&f->fit, n);
        t = cf_fit_predict(&f->fit, n);
    } else if (f->kind == CF_AN_IO) {
        t = NAN;
    } else if (f->kind == CF_AN_COLLECTIVE) {
        t = cf_an_ref_model(cf_an_ref_of(a, f->path), f->coll, NULL, f->comm_size, n, &s);
    } else {
        t = ref_hop(cf_an_ref_of(a, f->path), n, &s);
    }
    if (startup_p != NULL)
        *startup_p = s;
    return t;
}

const cf_an_fit_t *cf_an_blocking_twin(const cf_analysis_t *a, const cf_an_fit_t *f)
{
    char name[48];

    if (!f->nonblocking || !cf_blocking_op_name(f->op, name, sizeof(name)))
        return NULL;
    return cf_analysis_find(a, name, f->comm, f->path);
}

/* The line beyond the measured sizes: the fit, else the reference link
 * under the operation's model. */
static double stream_line(const void *ctx, double n, double *startup_p)
{
    const cf_an_line_t *l = ctx;
    double s = NAN, t;
    if (l->f != NULL)
        return cf_analysis_call_time(l->a, l->f, n, startup_p);
    t = l->coll == CF_COLL_P2P ? ref_hop(cf_an_ref_of(l->a, l->path), n, &s)
                               : cf_an_ref_model(cf_an_ref_of(l->a, l->path), l->coll, NULL, l->comm_size, n, &s);
    *startup_p = s;
    return t;
}

static void add_bins(cf_predictor_t *pr, const cf_an_fit_t *f)
{
    for (size_t k = 0; k < f->nbin; k++) {
        const cf_an_bin_t *b = &f->bin[k];
        double per_rank = f->comm_size > 0 ? (double)b->calls / f->comm_size : (double)b->calls;
        if (b->size > 0 && b->p50_s > 0)
            cf_pred_add(pr, b->size, b->p50_s, cf_pred_median_spread(b->p50_s, b->p99_s, per_rank),
                        CF_PRED_MEASURED);
    }
}

void cf_an_predictor(const cf_analysis_t *a, const cf_an_fit_t *f, cf_an_line_t *ctx, cf_predictor_t *pr)
{
    const cf_calib_coll_t *cal = f->kind == CF_AN_COLLECTIVE ? cf_calib_coll_of(&a->calib, f->op, f->comm) : NULL;
    /* a nonblocking stream goes by its blocking twin's times and line,
     * unless the calibration timed the nonblocking operation itself
     * (posted, then waited for): the twin runs another algorithm */
    const cf_an_fit_t *own = !f->nonblocking                                                 ? f
                             : cal != NULL && cf_op_nonblocking(cal->op, "collective") ? NULL
                                                                                            : cf_an_blocking_twin(a, f);

    *ctx = (cf_an_line_t){a, own != NULL && (own->fit.ok || own->kind != CF_AN_COLLECTIVE) ? own : NULL,
                          f->coll, f->comm_size, f->path};
    cf_pred_init(pr, stream_line, ctx, own != NULL && own->fit.ok ? own->err_rms : NAN);
    /* a span from post to completion is no call time: only a blocking
     * operation's bins are measurements */
    if (own != NULL && !own->nonblocking)
        add_bins(pr, own);
    if (cal != NULL && (cal->comm_size == 0 || cal->comm_size == f->comm_size))
        for (size_t k = 0; k < cal->nsize; k++)
            cf_pred_add(pr, cal->size[k].bytes, cal->size[k].p50_s,
                        log(cal->size[k].p50_s / cal->size[k].best_s), CF_PRED_CALIBRATION);
}

int cf_an_ref_source_at(const cf_an_ref_t *ref, cf_coll_t c, int p, double n)
{
    double A, C, G;
    cf_pred_t r;

    if (ref == NULL || ref->source == NULL)
        return CF_PRED_NONE;
    if (c == CF_COLL_P2P)
        A = C = 1;
    else if (c == CF_COLL_NONE || cf_model_coeffs(c, NULL, p, &A, &C, &G) != CF_OK || !(A > 0))
        return CF_PRED_NONE;
    if (ref->pred.line == NULL)
        return CF_PRED_MODEL;
    cf_pred_at(&ref->pred, C * n / A, &r);
    return (int)r.source;
}

json_t *cf_an_ref_program_json(const cf_an_ref_t *ref)
{
    if (ref->joint == NULL || !isfinite(ref->program_Bps))
        return json_null();
    return json_pack("{s:f, s:o, s:o}", "alpha_s", ref->program_alpha_s, "bandwidth_Bps",
                     isfinite(ref->program_Bps) ? json_real(ref->program_Bps) : json_null(), "err_rms",
                     isfinite(ref->program_err_rms) ? json_real(ref->program_err_rms) : json_null());
}

void cf_an_bin_predictions(const cf_analysis_t *a, cf_an_fit_t *f)
{
    cf_predictor_t *pr = malloc(sizeof(*pr)), *loo = malloc(sizeof(*loo));
    cf_an_line_t line;
    cf_pred_t r;

    if (pr != NULL && loo != NULL && f->kind != CF_AN_IO) {
        cf_an_predictor(a, f, &line, pr);
        for (size_t k = 0; k < f->nbin; k++) {
            cf_an_bin_t *b = &f->bin[k];
            size_t j;
            if (!(b->size > 0))
                continue;
            b->prediction_s = cf_pred_at(pr, b->size, &r);
            b->prediction_source = (int)r.source;
            /* the same without this bin's own time */
            *loo = *pr;
            for (j = 0; j < loo->n && loo->pt[j].size != b->size; j++)
                ;
            if (j < loo->n && loo->pt[j].source == CF_PRED_MEASURED) {
                memmove(&loo->pt[j], &loo->pt[j + 1], (loo->n - j - 1) * sizeof(loo->pt[0]));
                loo->n--;
            }
            b->prediction_loo_s = cf_pred_at(loo, b->size, &r);
            b->prediction_loo_source = (int)r.source;
        }
    }
    free(pr);
    free(loo);
}
