/* The analysis pipeline (cf_an_stage.h): runs the stages in order and
 * answers for their results. */
#include "cf_analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_an_stage.h"

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

uint64_t cf_stream_hash(const char *op, uint32_t comm, int path)
{
    uint64_t h = cf_hash_str(CF_HASH_SEED, op);
    h = cf_hash_bytes(h, &comm, sizeof(comm));
    return cf_hash_bytes(h, &path, sizeof(path));
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
    size_t cur = 0, i;
    while (cf_index_next(&a->fit_index, cf_stream_hash(op, comm, path), &cur, &i)) {
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

const cf_an_op_t *cf_analysis_op_find(const cf_analysis_t *a, const char *op, uint32_t comm,
                                      int path)
{
    size_t cur = 0, i;
    while (cf_index_next(&a->op_index, cf_stream_hash(op, comm, path), &cur, &i))
        if (a->op[i].comm == comm && a->op[i].path == path && strcmp(a->op[i].op, op) == 0)
            return &a->op[i];
    return NULL;
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

const cf_an_limits_t *cf_analysis_limits(const cf_analysis_t *a, int path)
{
    return a != NULL && path >= 0 && path < CF_AN_NPATH ? &a->limits[path] : NULL;
}

const cf_an_ref_t *cf_analysis_ref(const cf_analysis_t *a, int path)
{
    static const cf_an_ref_t none = {.alpha_s = NAN, .bandwidth_Bps = NAN};
    return path >= 0 && path < CF_AN_NPATH ? &a->ref[path] : &none;
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
    size_t cur = 0, i;
    while (cf_index_next(&a->fusion_index, cf_stream_hash(op, comm, path), &cur, &i))
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


double cf_analysis_span_s(const cf_analysis_t *a)
{
    return a->span_s;
}

int cf_analysis_charged(const cf_analysis_t *a)
{
    return a->charged;
}

size_t cf_analysis_ncaveats(const cf_analysis_t *a)
{
    return a->ncaveat;
}

const char *cf_analysis_caveat(const cf_analysis_t *a, size_t i)
{
    return i < a->ncaveat ? a->caveat[i] : NULL;
}
