/* Fusion advice over several runs of one program (cf_advice.h, "Several
 * runs"): commfit report A.json B.json ... */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_advice.h"
#include "cf_analysis.h"
#include "cf_common.h"
#include "cf_predict.h"
#include "cf_units.h"

#define RUNS_MAX 64 /* runs combined, this one included */

static int is_fuse(const cf_advice_t *ad)
{
    return ad->verdict != NULL && strcmp(ad->verdict, "fuse") == 0;
}

const cf_advice_t *cf_advice_same_stream(const cf_analysis_t *r, const cf_advice_t *ad)
{
    for (size_t i = 0; i < cf_analysis_nfusion(r); i++) {
        const cf_advice_t *o = cf_analysis_fusion(r, i);
        if (o->comm == ad->comm && o->path == ad->path && o->comm_size == ad->comm_size &&
            o->nonblocking == ad->nonblocking && strcmp(o->op, ad->op) == 0 &&
            fabs(o->calls_per_step - ad->calls_per_step) <= 1e-6 * ad->calls_per_step)
            return o;
    }
    return NULL;
}

static const cf_adv_cand_t *cand_of(const cf_advice_t *ad, double S)
{
    for (size_t c = 0; c < ad->ncand; c++)
        if (fabs(ad->cand[c].bucket_bytes - S) < 0.5)
            return &ad->cand[c];
    return NULL;
}

/* One candidate over the runs: median saving per step and predicted run
 * saving per step, half the range of the savings, the combined
 * uncertainty, and the median of the savings' MPI parts (without the
 * framework's time, cf_advice_cand_framework).  0 where a run lacks it or
 * has no number for it. */
typedef struct {
    double sv, run_sv, spread, unc, mpi;
} over_runs_t;

static int cand_over_runs(const cf_advice_t *const *r, size_t n, double S, over_runs_t *o)
{
    double sv[RUNS_MAX], unc[RUNS_MAX], run[RUNS_MAX], mpi[RUNS_MAX], lo = INFINITY, hi = -INFINITY;
    for (size_t k = 0; k < n; k++) {
        const cf_adv_cand_t *cd = cand_of(r[k], S);
        if (cd == NULL)
            return 0;
        sv[k] = cf_advice_cand_saving(r[k], cd, &unc[k]);
        mpi[k] = sv[k] - cf_advice_cand_framework(r[k], cd);
        run[k] = (r[k]->current_s - cf_advice_cand_predicted_s(r[k], cd)) / (double)r[k]->steps;
        if (!isfinite(sv[k]) || !isfinite(unc[k]) || !isfinite(run[k]))
            return 0;
        lo = fmin(lo, sv[k]);
        hi = fmax(hi, sv[k]);
    }
    o->spread = 0.5 * (hi - lo);
    o->sv = cf_median(sv, n);
    o->run_sv = cf_median(run, n);
    o->mpi = cf_median(mpi, n);
    double u = cf_median(unc, n);
    o->unc = sqrt(u * u + o->spread * o->spread);
    return 1;
}

/* A verdict other than "fuse" on the medians: the advice's fields as the
 * one-run rule leaves them, of the best size (which why names). */
static void set_not_fused(cf_advice_t *ad, const char *verdict, const char *reason, const cf_adv_cand_t *best)
{
    ad->verdict = verdict;
    ad->reason = reason;
    ad->bucket_bytes = ad->buckets_per_step = ad->model_s = NAN;
    ad->predicted_s = ad->current_s;
    ad->predicted_saving_s = 0.0;
    ad->framework_saving_s = NAN;
    ad->hidden_saving_step_s = ad->hidden_saving_unc_step_s = NAN;
    ad->inflight_ratio = ad->inflight_faults = NAN;
    ad->inflight_calls = 0;
    ad->extrapolated = best->source == CF_PRED_MODEL;
    ad->refault_pages = (float)best->refault_pages;
}

int cf_advice_runs_rule(size_t n, size_t fuse, const double *sv, const double *unc, size_t nc, double ref,
                        size_t *pick_p, size_t *best_p)
{
    size_t best = (size_t)-1, pick = (size_t)-1;
    for (size_t c = 0; c < nc; c++)
        if (isfinite(sv[c]) && (best == (size_t)-1 || sv[c] > sv[best]))
            best = c;
    *best_p = best;
    *pick_p = (size_t)-1;
    if (best == (size_t)-1 || fuse == 0 || n < 2)
        return CF_RUNS_OWN;
    if (fuse == n)
        pick = cf_advice_pick(sv, unc, nc, ref);
    *pick_p = pick;
    if (pick != (size_t)-1)
        return CF_RUNS_FUSE;
    if (fuse < n)
        return CF_RUNS_DISAGREE;
    return sv[best] > unc[best] ? CF_RUNS_NO_GAIN : CF_RUNS_WITHIN;
}

void cf_advice_runs(cf_advice_t *ad, const cf_analysis_t *const *runs, size_t nruns)
{
    const cf_advice_t *r[RUNS_MAX];
    size_t n = 1, fuse, best = (size_t)-1, pick = (size_t)-1;
    int rule;
    over_runs_t o[CF_ADV_MAX_CAND], *ob;
    int ok[CF_ADV_MAX_CAND] = {0};
    double ref[RUNS_MAX], rf;
    char b1[CF_FMT_LEN], b2[CF_FMT_LEN], b3[CF_FMT_LEN], b4[CF_FMT_LEN];

    if (ad->verdict == NULL || ad->ncand == 0 || !(ad->steps > 0))
        return;
    r[0] = ad;
    for (size_t k = 0; k < nruns && n < RUNS_MAX; k++) {
        const cf_advice_t *x = cf_advice_same_stream(runs[k], ad);
        if (x != NULL && x->verdict != NULL && x->ncand > 0 && x->steps > 0)
            r[n++] = x;
    }
    if (n == 1)
        return;
    fuse = 0;
    for (size_t k = 0; k < n; k++) {
        fuse += is_fuse(r[k]);
        ref[k] = cf_advice_ref_step(r[k]);
    }
    rf = cf_median(ref, n);
    size_t nc = ad->ncand < CF_ADV_MAX_CAND ? ad->ncand : CF_ADV_MAX_CAND;
    double sv[CF_ADV_MAX_CAND], unc[CF_ADV_MAX_CAND];
    for (size_t c = 0; c < nc; c++) {
        ok[c] = cand_over_runs(r, n, ad->cand[c].bucket_bytes, &o[c]);
        sv[c] = ok[c] ? cf_advice_eligible(o[c].sv, o[c].sv - o[c].mpi) : NAN;
        unc[c] = ok[c] ? o[c].unc : NAN;
    }
    rule = cf_advice_runs_rule(n, fuse, sv, unc, nc, rf, &pick, &best);
    /* the figures are the medians only where some run advises fusion and
     * every run prices a size; otherwise this run's advice stands, and
     * runs > 1 with no spread says so */
    ad->runs = n < UINT16_MAX ? (uint16_t)n : UINT16_MAX;
    if (rule == CF_RUNS_OWN)
        return;
    ob = &o[pick != (size_t)-1 ? pick : best];
    ad->run_spread_step_s = (float)ob->spread;
    ad->best_saving_share = rf > 0 ? o[best].sv / rf : NAN; /* the text's "best bucket size saves" */
    if (rule == CF_RUNS_FUSE) {
        cf_advice_set_fuse(ad, &ad->cand[pick], ob->sv, ob->unc);
        ad->predicted_saving_s = ob->run_sv * (double)ad->steps;
        ad->predicted_s = ad->current_s - ad->predicted_saving_s;
        return;
    }
    if (rule == CF_RUNS_DISAGREE)
        set_not_fused(ad, "uncertain", "the runs disagree", &ad->cand[best]);
    else if (rule == CF_RUNS_NO_GAIN) /* beyond its uncertainty, under 5 % */
        set_not_fused(ad, "no gain", "fusing saves under 5% (the runs' median)", &ad->cand[best]);
    else
        set_not_fused(ad, "uncertain", "the runs' median saving is within its uncertainty (their spread included)",
                      &ad->cand[best]);
    ad->saving_step_s = ob->sv;
    ad->saving_unc_step_s = ob->unc;
    if (rule == CF_RUNS_NO_GAIN)
        snprintf(ad->why, CF_ADV_WHY_LEN, "buckets of %s: saving %s per step (median of %zu runs), under 5%% of %s",
                 cf_fmt_size(ad->cand[best].bucket_bytes, b1, sizeof(b1)), cf_fmt_time(ob->sv, b2, sizeof(b2)), n,
                 cf_fmt_time(rf, b3, sizeof(b3)));
    else
        snprintf(ad->why, CF_ADV_WHY_LEN,
             "%zu of %zu runs advise fusion; buckets of %s: saving %s per step (median), uncertainty %s "
             "(spread between runs %s); profile more runs or steps",
             fuse, n, cf_fmt_size(ad->cand[best].bucket_bytes, b1, sizeof(b1)), cf_fmt_time(ob->sv, b2, sizeof(b2)),
             cf_fmt_time(ob->unc, b3, sizeof(b3)), cf_fmt_time(ob->spread, b4, sizeof(b4)));
}
