/* Stage "ranks": MPI time per rank and its imbalance, regions, late
 * arrivals.  See cf_an_stage.h for the pipeline. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_an_stage.h"

void cf_an_rank_figures(const cf_profile_t *p, cf_an_ranks_t *rk)
{
    double wall = 0;

    memset(rk, 0, sizeof(*rk));
    rk->mpi_mean_s = rk->mpi_min_s = rk->mpi_max_s = rk->wall_mean_s = NAN;
    rk->mpi_fraction = rk->imbalance = NAN;
    rk->min_rank = rk->max_rank = -1;
    for (size_t i = 0; i < p->nrank; i++) {
        const cf_rank_info_t *r = &p->rank[i];
        double m = cf_an_pos(r->mpi_s);
        if (rk->n == 0 || m < rk->mpi_min_s) {
            rk->mpi_min_s = m;
            rk->min_rank = r->rank;
        }
        if (rk->n == 0 || m > rk->mpi_max_s) {
            rk->mpi_max_s = m;
            rk->max_rank = r->rank;
        }
        rk->mpi_total_s += m;
        wall += cf_an_pos(r->wall_s);
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
        o->op = r->op;
        o->kind = r->kind;
        o->comm = r->comm;
        o->comm_size = cf_an_comm_size(p, r->comm);
        o->path = r->path;
    }
    o->calls += r->calls;
    o->bytes += r->bytes;
    o->time_s += cf_an_pos(r->t_sum);
    g->time_s += cf_an_pos(r->t_sum);
    return CF_OK;
}

int cf_an_regions_build(cf_analysis_t *a)
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
        /* the ranked time: a nonblocking span is not a cost here either */
        if (!(r->layer == CF_LAYER_MPI && r->calls > 0) || cf_op_nonblocking(r->op, r->kind))
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
int cf_an_late_build(cf_analysis_t *a)
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
        l->comm_size = cf_an_comm_size(a->p, l->comm);
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


/* ---- caveats: what limits every number of the report ---- */

static json_int_t sampling_count(const cf_profile_t *p, const char *key)
{
    json_t *s = p->extra != NULL ? json_object_get(p->extra, "sampling") : NULL;
    json_t *v = json_is_object(s) ? json_object_get(s, key) : NULL;
    return json_is_integer(v) && json_integer_value(v) > 0 ? json_integer_value(v) : 0;
}

static void caveat(cf_analysis_t *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void caveat(cf_analysis_t *a, const char *fmt, ...)
{
    va_list ap;
    if (a->ncaveat >= CF_AN_MAX_CAVEATS)
        return;
    va_start(ap, fmt);
    vsnprintf(a->caveat[a->ncaveat++], sizeof(a->caveat[0]), fmt, ap);
    va_end(ap);
}

void cf_an_caveats_build(cf_analysis_t *a)
{
    const cf_profile_t *p = a->p;
    json_int_t lost = sampling_count(p, "not_sampled_buffer_full");
    int few = 0, bins = 0;

    if (p->oversubscribed == 1) {
        /* the most crowded machine's own pair (the job's maximum and minimum
         * can come from different ones) */
        int nr = p->ranks_per_node_max, nc = p->cpus_per_node_min;
        double worst = 0;
        for (size_t i = 0; i < p->nrank; i++) {
            const cf_rank_info_t *r = &p->rank[i];
            if (r->node_cpus > 0 && (double)r->node_ranks / r->node_cpus > worst) {
                worst = (double)r->node_ranks / r->node_cpus;
                nr = r->node_ranks;
                nc = r->node_cpus;
            }
        }
        caveat(a, "oversubscribed: %d ranks share %d CPU%s on a machine, so a call's time includes "
                  "waiting for a CPU; alpha, B and the verdicts can be off many times over: run one rank "
                  "per core to trust them",
               nr, nc, nc == 1 ? "" : "s");
    }
    if (p->partial)
        caveat(a, "partial profile: some calls were not recorded or not sampled (budgets exceeded, or a job that "
                  "did not finish)%s",
               p->npartial_reason > 0 ? ":" : "");
    for (size_t i = 0; i < p->npartial_reason; i++)
        caveat(a, "  %s", p->partial_reason[i]);
    if (p->failed_calls > 0)
        caveat(a, "%llu call%s returned an error: counted as MPI time, not as traffic (by operation and error "
                  "class: the profile's failed_calls section)",
               (unsigned long long)p->failed_calls, p->failed_calls == 1 ? "" : "s");
    if (p->unfinished_requests > 0)
        caveat(a,
               "%llu nonblocking operation%s completion no recorded call saw (freed while active, or pending at "
               "MPI_Finalize): a send or collective is counted as a call with its posted bytes and the time "
               "inside its post; a receive, file access or cancelled one is not counted (what arrived is not "
               "known)",
               (unsigned long long)p->unfinished_requests, p->unfinished_requests == 1 ? " whose" : "s whose");
    {
        int said = 0;
        for (size_t i = 0; i < p->npartial_reason; i++)
            said |= strstr(p->partial_reason[i], "samples ran out") != NULL;
        if (lost > 0 && !said)
            caveat(a, "samples ran out: %lld calls were not sampled for transfer times (raise "
                      "COMMFIT_SAMPLES)", (long long)lost);
    }
    /* each bin once: the operations' own fits, not the joint ones that
     * repeat their bins, nor spans */
    for (size_t i = 0; i < a->nfit; i++) {
        if (a->fit[i].joint || a->fit[i].nonblocking)
            continue;
        few += a->fit[i].few_sample_bins;
        bins += (int)a->fit[i].nbin;
    }
    if (few > 0)
        caveat(a, "%d of %d size bins had too few timed transfers (fewer than %d, or most receives "
                  "posted after their sends): their medians are call durations, waiting for the "
                  "partner included", few, bins, CF_AN_MIN_SAMPLES);
}
