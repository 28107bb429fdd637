/* Stage "links": the reference link of each path, which ideal times and
 * model verdicts are costed on.  See cf_an_stage.h for the pipeline.
 *
 * A path's link is, in this order: the link given with --link; the joint
 * fit of the path's blocking point-to-point calls (their one-way times
 * where sampled); the per-hop fit of the UCX sends beneath MPI.  A
 * nonblocking span never feeds it: from post to completion it holds
 * whatever the program did before it waited. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_an_stage.h"

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


void cf_an_links_build(cf_analysis_t *a)
{
    for (int path = 0; path < CF_AN_NPATH; path++) {
        cf_an_ref_t *ref = &a->ref[path];
        memset(ref, 0, sizeof(*ref));
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
                ref->joint = f;
            }
        }
        if (ref->joint != NULL) {
            const cf_an_fit_t *f = ref->joint;
            if (a->p->oversubscribed == 1)
                snprintf(ref->why, sizeof(ref->why), "measured with more ranks than CPUs on a node");
            else if (f->leaning != NULL)
                snprintf(ref->why, sizeof(ref->why), "%s", f->why);
            else if (f->fit.alpha_uncertain)
                snprintf(ref->why, sizeof(ref->why), "startup: %s", f->fit.alpha_why);
            else if (f->fit.bandwidth_uncertain)
                snprintf(ref->why, sizeof(ref->why), "bandwidth: %s", f->fit.bandwidth_why);
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
