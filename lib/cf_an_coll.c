/* Stage "collectives": bus bandwidth, the ideal algorithm's time on the
 * path's reference link and the efficiency against it, per-hop figures,
 * and beneath MPI the wire messages with the algorithm they reveal.  See
 * cf_an_stage.h for the pipeline. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cf_an_stage.h"
#include "cf_bins.h"

/* algbw, busbw, ideal time and efficiency per bin; per-hop figures. */
void cf_an_collective_figures(const cf_analysis_t *a, cf_an_fit_t *f)
{
    const cf_an_ref_t *ref = cf_an_ref_of(a, f->path);
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
            b->ideal_s = cf_an_ref_model(ref, f->coll, NULL, p, b->size, &s);
            b->ideal_time_source = isfinite(b->ideal_s) ? cf_an_ref_source_at(ref, f->coll, p, b->size) : 0;
            if (b->size > 0 && b->ideal_s > 0 && isfinite(b->ideal_s))
                b->ideal_busbw_Bps = b->size / b->ideal_s * factor;
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


/* ---- beneath MPI: UCX records ---- */

/* Per-hop fits of the UCX sends, per path. */
int cf_an_hops_build(cf_analysis_t *a)
{
    for (int path = 0; path < CF_AN_NPATH; path++) {
        cf_an_hop_t *h = &a->hop[a->nhop];
        cf_point_t pts[CF_SIZE_BINS];
        size_t n = 0;
        int rc;

        memset(h, 0, sizeof(*h));
        h->path = path;
        for (size_t i = 0; i < a->p->nrec; i++) {
            const cf_record_t *r = &a->p->rec[i];
            if (r->layer == CF_LAYER_UCX && r->path == path && strcmp(r->kind, "send") == 0) {
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
        return cf_an_ref_model(ref, CF_COLL_REDUCE, "binomial", p, n, &s) +
               cf_an_ref_model(ref, CF_COLL_BCAST, "binomial", p, n, &s);
    return cf_an_ref_model(ref, c, algo, p, n, &s);
}

/* The inferred algorithm, the cheapest of cf_models.h and the measured
 * time, per call over the size bins of the operation's busiest stream. */
static void wire_costs(const cf_analysis_t *a, cf_an_wire_t *w)
{
    const cf_an_fit_t *f = cf_analysis_find(a, w->w.op, w->w.comm, w->w.path);
    const cf_an_ref_t *ref = cf_an_ref_of(a, w->w.path);
    cf_an_ref_t own = {.alpha_s = NAN, .bandwidth_Bps = NAN}; /* a line: no measured sizes */
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

int cf_an_wire_build(cf_analysis_t *a)
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

