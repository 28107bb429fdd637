/* The accessors of an analysis, declared in cf_an_result.h: what the stages
 * left in it, looked up by index or by stream.  They read; they run
 * nothing, and no stage is called from here. */
#include "cf_an_result.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cf_an_stage.h"

const char *cf_an_kind_name(cf_an_kind_t kind)
{
    return kind == CF_AN_COLLECTIVE ? "collective" : kind == CF_AN_IO ? "io" : "p2p";
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
