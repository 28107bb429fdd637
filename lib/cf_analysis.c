/* The analysis pipeline (cf_an_stage.h): runs the stages in order and
 * answers for their results. */
#include "cf_analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_advice.h"
#include "cf_an_stage.h"

void cf_analysis_opts_init(cf_analysis_opts_t *opts)
{
    opts->link_alpha_s = NAN;
    opts->link_Bps = NAN;
    opts->runs = NULL;
    opts->nruns = 0;
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

/* The ranking: costs by time; in a profile that does not charge completion
 * calls to requests, the nonblocking spans after them. */
static int cmp_op(const void *pa, const void *pb)
{
    const cf_an_op_t *a = pa, *b = pb;
    if (a->share != a->share || b->share != b->share) /* NaN: an unranked span */
        if ((a->share != a->share) != (b->share != b->share))
            return (a->share != a->share) - (b->share != b->share);
    if (a->time_s != b->time_s)
        return a->time_s < b->time_s ? 1 : -1;
    return strcmp(a->op, b->op);
}

static void fits_free(cf_an_fit_t *fit, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(fit[i].bin);
        if (fit[i].why != cf_an_no_why)
            free((char *)fit[i].why);
    }
    free(fit);
}

int cf_analysis_run(const cf_profile_t *p, const cf_analysis_opts_t *opts, cf_analysis_t **a_p)
{
    cf_analysis_t *a;
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
    cf_an_rank_figures(p, &a->ranks);

    /* points, then fits */
    cf_an_limits_build(a);
    if ((rc = cf_an_points_build(a)) != CF_OK)
        goto err;
    for (size_t i = 0; i < a->nfit; i++)
        if ((rc = cf_an_fit_group(a, &a->fit[i])) != CF_OK)
            goto err;
    qsort(a->fit, a->nfit, sizeof(*a->fit), cmp_fit);
    if (cf_index_init(&a->fit_index, a->nfit) != CF_OK) {
        rc = CF_ERR_NOMEM;
        goto err;
    }
    for (size_t i = 0; i < a->nfit; i++)
        cf_index_put(&a->fit_index, cf_stream_hash(a->fit[i].op, a->fit[i].comm, a->fit[i].path), i);
    /* links, then what is costed on them */
    if ((rc = cf_an_hops_build(a)) != CF_OK)
        goto err;
    cf_an_links_build(a);
    for (size_t i = 0; i < a->nfit; i++) {
        cf_an_verdict_from_model(a, &a->fit[i]);
        cf_an_collective_figures(a, &a->fit[i]);
        cf_an_bin_predictions(a, &a->fit[i]);
    }
    for (size_t k = 0; k < a->nop; k++) {
        cf_an_op_t *o = &a->op[k];
        o->share = (!o->nonblocking || a->charged) && a->total_s > 0 ? o->time_s / a->total_s : NAN;
    }
    qsort(a->op, a->nop, sizeof(*a->op), cmp_op);
    if (cf_index_init(&a->op_index, a->nop) != CF_OK) {
        rc = CF_ERR_NOMEM;
        goto err;
    }
    for (size_t k = 0; k < a->nop; k++)
        cf_index_put(&a->op_index, cf_stream_hash(a->op[k].op, a->op[k].comm, a->op[k].path), k);
    for (size_t k = 0; k < a->nop; k++)
        a->op[k].fit = cf_analysis_find(a, a->op[k].op, a->op[k].comm, a->op[k].path);
    cf_an_overlap_build(a);
    if ((rc = cf_an_regions_build(a)) != CF_OK || (rc = cf_an_late_build(a)) != CF_OK)
        goto err;
    /* advice reads the fits and links; the verdicts read the advice */
    if ((rc = cf_advice_run(a, &a->fusion, &a->nfusion)) != CF_OK)
        goto err;
    for (size_t k = 0; k < a->nfusion; k++)
        cf_advice_runs(&a->fusion[k], a->opts.runs, a->opts.nruns);
    if (cf_index_init(&a->fusion_index, a->nfusion) != CF_OK) {
        rc = CF_ERR_NOMEM;
        goto err;
    }
    for (size_t k = 0; k < a->nfusion; k++)
        cf_index_put(&a->fusion_index,
                     cf_stream_hash(a->fusion[k].op, a->fusion[k].comm, a->fusion[k].path), k);
    for (size_t k = 0; k < a->nop; k++)
        a->op[k].fusion = cf_analysis_fusion_find(a, a->op[k].op, a->op[k].comm, a->op[k].path);
    cf_an_breakdown(a);
    cf_an_caveats_build(a);
    if ((rc = cf_an_wire_build(a)) != CF_OK)
        goto err;
    *a_p = a;
    return CF_OK;

err:
    cf_analysis_free(a);
    return rc;
}

void cf_analysis_free(cf_analysis_t *a)
{
    if (a == NULL)
        return;
    fits_free(a->fit, a->nfit);
    cf_index_free(&a->fit_index);
    cf_index_free(&a->op_index);
    cf_index_free(&a->fusion_index);
    free(a->op);
    for (size_t i = 0; a->region != NULL && i < a->p->nregion + 1; i++)
        free(a->region[i].op);
    free(a->region);
    for (size_t i = 0; i < a->nlate; i++)
        free(a->late[i].last);
    free(a->late);
    cf_advice_free(a->fusion, a->nfusion);
    free(a->wire);
    free(a);
}
