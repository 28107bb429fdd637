/* The profile's assembly, shared by the plugin's finalize and the spool
 * merge (cf_assemble.h). */
#include <stdio.h>
#include <string.h>
#include "cf_assemble.h"
#include "cf_common.h"

/* ---- the job ---- */

void cf_assemble_oversubscription(cf_profile_t *p)
{
    p->oversubscribed = -1;
    for (size_t i = 0; i < p->nrank; i++) {
        const cf_rank_info_t *r = &p->rank[i];
        if (r->node_ranks <= 0 || r->node_cpus <= 0)
            continue;
        if (p->oversubscribed < 0)
            p->oversubscribed = 0;
        if (r->node_ranks > r->node_cpus)
            p->oversubscribed = 1;
        if (r->node_ranks > p->ranks_per_node_max)
            p->ranks_per_node_max = r->node_ranks;
        if (!p->cpus_per_node_min || r->node_cpus < p->cpus_per_node_min)
            p->cpus_per_node_min = r->node_cpus;
    }
}

/* ---- what was lost ---- */

/* "NAME=limit", or NAME alone when the limit is not known */
static const char *cf_limit(char *buf, size_t len, const char *name, uint32_t limit)
{
    if (limit)
        snprintf(buf, len, "%s=%u", name, limit);
    else
        snprintf(buf, len, "%s", name);
    return buf;
}

/* The one sentence of the records dropped: the calls the threads' tables
 * had no room for (COMMFIT_TABLE_SIZE) and, at finalize, the keys a rank's
 * merged table had none for (COMMFIT_MERGE_MAX), each with its limit. */
static void cf_records_lost(cf_profile_t *p, const cf_losses_t *l)
{
    char a[64], b[64], limits[160];
    if (!l->records && !l->merge_keys)
        return;
    cf_limit(a, sizeof(a), "COMMFIT_TABLE_SIZE", l->table_size);
    cf_limit(b, sizeof(b), "COMMFIT_MERGE_MAX", l->merge_max);
    snprintf(limits, sizeof(limits), "%s%s%s", l->records ? a : "", l->records && l->merge_keys ? ", " : "",
             l->merge_keys ? b : "");
    cf_profile_add_partial_reason(p, "records dropped: %llu %s found the tables full (%s); each record says how many "
                                  "ranks' calls it may lack (ranks_missing)",
                                  (unsigned long long)(l->records + l->merge_keys),
                                  !l->merge_keys ? "calls" : l->records ? "calls or keys" : "keys", limits);
}

void cf_assemble_losses(cf_profile_t *p, const cf_losses_t *l)
{
    char a[64];
    if (l->threads)
        cf_profile_add_partial_reason(p, "%llu threads not recorded (%s)", (unsigned long long)l->threads,
                                      cf_limit(a, sizeof(a), "COMMFIT_MAX_THREADS", l->max_threads));
    cf_records_lost(p, l);
    if (l->requests)
        cf_profile_add_partial_reason(p, "%llu requests not tracked (%s)", (unsigned long long)l->requests,
                                      cf_limit(a, sizeof(a), "COMMFIT_MAX_REQUESTS", l->max_requests));
}

void cf_assemble_region_losses(cf_profile_t *p, uint64_t full, uint64_t deep)
{
    if (full)
        cf_profile_add_partial_reason(p, "%llu MPI_Pcontrol region opens found the region table full (%u regions): "
                                      "their calls are in the region around them", (unsigned long long)full,
                                      CF_REGION_MASK);
    if (deep)
        cf_profile_add_partial_reason(p, "%llu MPI_Pcontrol region opens nested deeper than %d were not opened: "
                                      "their calls are in the region %d deep", (unsigned long long)deep,
                                      CF_REGION_DEPTH, CF_REGION_DEPTH);
}

/* ---- records ---- */

static double cf_s(uint64_t ns) { return (double)ns * 1e-9; }

static void cf_record_from_stat(cf_record_t *r, const cf_stat_t *s, const char *op, const char *kind, const char *parent_op)
{
    r->layer = (int)cf_key_layer(s->key);
    cf_strlcpy(r->op, op, sizeof(r->op));
    cf_strlcpy(r->kind, kind, sizeof(r->kind));
    r->comm = cf_key_comm(s->key);
    if (r->layer == CF_LAYER_UCX) {
        /* the communicator field of a UCX key holds the MPI operation above it */
        cf_strlcpy(r->parent_op, parent_op ? parent_op : "", sizeof(r->parent_op));
        r->comm = CF_COMM_ID_NONE;
    }
    r->path = (int)cf_key_path(s->key);
    r->size_lo = cf_size_bin_lo(cf_key_bin(s->key));
    r->size_hi = cf_size_bin_hi(cf_key_bin(s->key));
    r->calls = s->calls;
    r->bytes = s->bytes;
    r->t_sum = cf_s(s->t_sum);
    r->t_min = cf_s(s->t_min);
    r->t_max = cf_s(s->t_max);
    r->t_p50 = cf_hist_quantile(s->hist, 0.5, (double)s->t_min, (double)s->t_max) * 1e-9;
    r->t_p99 = cf_hist_quantile(s->hist, 0.99, (double)s->t_min, (double)s->t_max) * 1e-9;
    /* the records' own wait field holds the blocked time charged at completion (ns) */
    r->blocked_s = cf_s(s->t_wait);
    r->post_s = cf_s(s->t_post);
}

cf_record_t *cf_assemble_record(cf_profile_t *p, const cf_stat_t *s, const char *op, const char *kind,
                                const char *parent_op, unsigned region, uint32_t ranks_missing)
{
    cf_record_t *r = &p->rec[p->nrec++];
    cf_record_from_stat(r, s, op, kind, parent_op);
    r->region = region;
    r->ranks_missing = ranks_missing;
    return r;
}
