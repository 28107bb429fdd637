/* Stage "fits": piecewise alpha + M/B on the points, the model's error in
 * every bin, and verdicts that say "uncertain" where the data cannot
 * carry one.  See cf_an_stage.h for the pipeline.
 *
 * Startup share of a bin: alpha(M) / T(M) under the fit.  Its interval:
 * the payload time M / B of the bin's segment under the two ends of the
 * 95 % interval of B (its lower end at least the asymptotic B's: bytes do
 * not travel slower in small messages), against the measured median T:
 *     share in [1 - M / (B_lo T), 1 - M / (B_hi T)], clipped to [0, 1]
 * (and widened to hold the estimate).  Only B is uncertain there: the
 * measured time is what it is, and startup is the part that is not
 * payload.  A bin whose interval holds 50 % is "uncertain"; so is a fit
 * whose predictions miss its bins by more than MAX_RMS_ERR (rms), since
 * then neither alpha nor B describes them.  The operation's share and
 * interval are the means over its bins weighted by calls x modelled time,
 * so that they are shares of its time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_an_stage.h"
#include "cf_units.h"

#define MAX_RMS_ERR 0.25

/* B interval of the segment covering size: the fit's segments when they
 * carry one, else the headline interval. */
static void bw_interval(const cf_fit_t *fit, double size, double *lo_p, double *hi_p)
{
    const cf_segment_t *g = cf_fit_segment_at(fit, size);
    double lo = g != NULL ? g->bandwidth_ci[0] : NAN, hi = g != NULL ? g->bandwidth_ci[1] : NAN;
    /* Bytes do not travel slower in a small message than the largest ones
     * do: the asymptotic bandwidth's lower end bounds every size's (a short
     * flat segment of tiny messages alone would allow 1 MB/s). */
    if (fit->bandwidth_ci[0] > 0 && !(lo >= fit->bandwidth_ci[0]))
        lo = fit->bandwidth_ci[0];
    *lo_p = lo > 0 ? lo : 0.0;
    *hi_p = hi > 0 ? hi : INFINITY;
}

static double clip01(double v)
{
    return v < 0 ? 0.0 : v > 1 ? 1.0 : v;
}

/* Share interval of one bin, on the model's time for the bin, as the share
 * itself is (alpha at the size over the predicted time).  Two bounds hold
 * under T = alpha + M/B, and the tighter is taken: the payload time M/B
 * under B's interval (whatever is not payload is startup), which decides
 * the small sizes, and alpha's own interval, which decides the large ones:
 * a last segment of 3 sizes may leave B's interval open above (payload
 * possibly 0), but a 4 MiB message whose startup is 5 us of 470 us is not
 * "between 1 % and 100 %" startup.  On the measured time instead of the
 * model's, whatever the model misses would count as startup; the miss
 * shows in the bin's model error. */
static void bin_interval(const cf_fit_t *fit, const cf_an_bin_t *b, double *lo_p, double *hi_p)
{
    double blo, bhi, t = b->predicted_s > 0 ? b->predicted_s : b->p50_s;
    const cf_segment_t *g = cf_fit_segment_at(fit, b->size);
    /* the startup at this size: its segment's alpha, or the path's startup
     * where that is only a line's crossing below 0 (cf_fit_alpha_at) */
    const double *aci = g != NULL && g->alpha_s > 0 ? g->alpha_ci : fit->alpha_ci;

    bw_interval(fit, b->size, &blo, &bhi);
    *lo_p = blo > 0 ? clip01(1.0 - b->size / (blo * t)) : 0.0;
    *hi_p = isinf(bhi) ? 1.0 : clip01(1.0 - b->size / (bhi * t));
    if (aci[0] > 0 && isfinite(aci[0]))
        *lo_p = fmax(*lo_p, clip01(aci[0] / t));
    if (aci[1] >= 0 && isfinite(aci[1]))
        *hi_p = fmin(*hi_p, clip01(aci[1] / t));
    *lo_p = fmin(*lo_p, b->startup_share);
    *hi_p = fmax(*hi_p, b->startup_share);
}

static const char *side(double share)
{
    return cf_verdict(share);
}

/* CF_OK or CF_ERR_NOMEM. */
static int judge(cf_an_fit_t *f)
{
    char l[CF_FMT_LEN], h[CF_FMT_LEN], why[160] = "";

    f->leaning = NULL;
    f->verdict = side(f->startup_share);
    if (isnan(f->startup_share))
        return CF_OK;
    if (isfinite(f->err_rms) && f->err_rms > MAX_RMS_ERR) {
        snprintf(why, sizeof(why), "the model misses its size bins by %.0f%% rms", 100.0 * f->err_rms);
    } else if (f->startup_lo < 0.5 && f->startup_hi > 0.5) {
        snprintf(l, sizeof(l), "%.0f%%", 100.0 * f->startup_lo);
        snprintf(h, sizeof(h), "%.0f%%", 100.0 * f->startup_hi);
        snprintf(why, sizeof(why), "the startup share lies between %s and %s (95%% intervals of alpha and B)", l,
                 h);
    }
    if (why[0] != '\0') {
        if (f->why == cf_an_no_why && (f->why = strdup(why)) == NULL) {
            f->why = cf_an_no_why;
            return CF_ERR_NOMEM;
        }
        f->leaning = f->verdict;
        f->verdict = CF_AN_UNCERTAIN;
    }
    return CF_OK;
}

/* The startup share of a fitted line, bin by bin and over the calls, with
 * its 95 % interval and the model's error; then the verdict.  CF_OK or
 * CF_ERR_NOMEM. */
static int fit_shares(cf_an_fit_t *f)
{
    double num = 0, den = 0, below = 0, lo = 0, hi = 0, wsum = 0, e2 = 0, emax = 0;
    size_t ne = 0;
    for (size_t k = 0; k < f->nbin; k++) {
        cf_an_bin_t *b = &f->bin[k];
        double w = (double)b->calls, al = cf_fit_alpha_at(&f->fit, b->size), blo, bhi;
        b->predicted_s = cf_fit_predict(&f->fit, b->size);
        if (b->size <= 0) {
            b->startup_share = 1.0;
            blo = bhi = 1.0;
        } else if (b->predicted_s > 0) {
            b->startup_share = clip01(al / b->predicted_s);
            bin_interval(&f->fit, b, &blo, &bhi);
        } else {
            blo = bhi = NAN;
        }
        b->verdict = side(b->startup_share);
        if (isfinite(blo) && blo < 0.5 && bhi > 0.5)
            b->verdict = CF_AN_UNCERTAIN;
        if (b->size > 0 && b->p50_s > 0 && b->predicted_s > 0) {
            b->model_error = b->predicted_s / b->p50_s - 1.0;
            if (b->in_fit) {
                e2 += b->model_error * b->model_error;
                emax = fmax(emax, fabs(b->model_error));
                ne++;
            }
        }
        if (b->predicted_s > 0 || b->size <= 0) {
            /* a zero-byte call weighs its own time: the startup where
             * the model gives one, else what it measured */
            double t = b->predicted_s > 0 ? b->predicted_s : cf_an_pos(b->duration_p50_s);
            num += w * b->startup_share * t;
            den += w * t;
            if (isfinite(blo)) {
                lo += w * blo * t;
                hi += w * bhi * t;
                wsum += w * t;
            }
        }
        if (b->size < f->n_half_bytes)
            below += w;
    }
    f->startup_share = den > 0 ? num / den : NAN;
    f->startup_lo = wsum > 0 ? lo / wsum : NAN;
    f->startup_hi = wsum > 0 ? hi / wsum : NAN;
    f->err_rms = ne > 0 ? sqrt(e2 / (double)ne) : NAN;
    f->err_max = ne > 0 ? emax : NAN;
    f->below_n_half = isnan(f->n_half_bytes) ? NAN : below / (double)f->calls;
    return judge(f);
}

int cf_an_fit_group(const cf_analysis_t *a, cf_an_fit_t *f)
{
    cf_point_t *pts = calloc(f->nbin ? f->nbin : 1, sizeof(*pts));
    size_t *idx = calloc(f->nbin ? f->nbin : 1, sizeof(*idx));
    unsigned char *kept = calloc(f->nbin ? f->nbin : 1, 1);
    size_t npts = 0, nzero = 0;
    uint64_t zero_calls = 0;
    double zero_t = 0;
    int rc = CF_ERR_NOMEM;

    if (pts == NULL || idx == NULL || kept == NULL)
        goto out;
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
        idx[npts] = k;
        pts[npts++] = (cf_point_t){.size = b->size, .time_s = b->p50_s, .weight = (double)b->calls};
    }
    f->nsizes = (int)npts;
    if (zero_calls > 0)
        f->zero_p50_s = zero_t / (double)zero_calls;

    if (npts == 0 && nzero > 0) {
        /* Zero-byte calls (a barrier) are all startup by the model's terms. */
        f->note = "no payload";
        f->basis = "no payload";
        f->startup_share = f->startup_lo = f->startup_hi = 1.0;
        f->verdict = cf_verdict(1.0);
        for (size_t k = 0; k < f->nbin; k++) {
            f->bin[k].startup_share = 1.0;
            f->bin[k].verdict = f->verdict;
        }
        memset(&f->fit, 0, sizeof(f->fit));
        rc = CF_OK;
        goto out;
    }
    if (f->joint && f->path >= 0 && f->path < CF_AN_NPATH && a->limits[f->path].n > 0)
        rc = cf_fit_run_limits(pts, npts, a->limits[f->path].bytes, a->limits[f->path].n, &f->fit, kept);
    else
        rc = cf_fit_run(pts, npts, &f->fit, kept);
    if (rc == CF_ERR_NOMEM)
        goto out;
    if (rc != CF_OK || !f->fit.ok) {
        f->fit.ok = 0;
        /* 3 distinct sizes and still no line: their weights leave the
         * regression degenerate */
        f->note = npts >= 3 && f->fit.npoints >= 3 ? "no line fits these sizes" : "not enough size range";
        rc = CF_OK;
        goto out;
    }
    rc = CF_OK;
    for (size_t i = 0; i < npts; i++) {
        f->bin[idx[i]].in_fit = kept[i] != 0;
        f->bin[idx[i]].outlier = kept[i] == 0;
    }
    f->basis = "fit";
    f->n_half_bytes = f->fit.n_half_bytes;
    if (fit_shares(f) != CF_OK)
        rc = CF_ERR_NOMEM;
out:
    free(kept);
    free(idx);
    free(pts);
    return rc;
}
