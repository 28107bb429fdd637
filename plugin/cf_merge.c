/* End of run: the tables of every thread and rank become one profile on
 * rank 0.  Every step is a PMPI collective over fixed-size arrays, so the
 * cost is a reduction tree, not a receive loop at rank 0. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cf_calibrate.h"
#include "cf_callsite.h"
#include "cf_profile.h"
#include "cf_merge.h"
#include "cf_region.h"
#include "cf_papi.h"
#include "cf_protocol.h"
#include "cf_runtime.h"
#include "cf_sched.h"
#include "cf_sample.h"
#include "cf_spill.h"
#include "cf_spool.h"
#include "cf_summary.h"
#include "cf_sync.h"
#include "cf_ucx.h"

CF_HIDDEN extern cf_thread_t **cf_threads;
CF_HIDDEN extern _Atomic uint32_t cf_nthreads;
CF_HIDDEN extern _Atomic uint64_t cf_threads_refused;

/* ---- union of sorted key lists: buffer = [count | overflow bit, keys...] ---- */
#define CF_OVERFLOW (1ull << 63)
static uint32_t cf_union_cap;

static void cf_union_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    uint64_t *a = in, *b = inout;
    uint64_t *tmp = malloc((cf_union_cap + 1) * sizeof(uint64_t));
    for (int l = 0; l < *len; l++, a += cf_union_cap + 1, b += cf_union_cap + 1) {
        uint64_t na = a[0] & ~CF_OVERFLOW, nb = b[0] & ~CF_OVERFLOW;
        int over = ((a[0] | b[0]) & CF_OVERFLOW) != 0;
        if (!tmp) {
            b[0] |= CF_OVERFLOW;
            continue;
        }
        size_t n = cf_keys_union(a + 1, na, b + 1, nb, tmp, cf_union_cap, &over);
        memcpy(b + 1, tmp, n * sizeof(uint64_t));
        b[0] = n | (over ? CF_OVERFLOW : 0);
    }
    free(tmp);
}

static int cf_cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* Sorts and dedups keys[0..n), then replaces them with the union over all ranks.
 * Returns the union's size; *overflow_p is set when it did not fit cap. */
int cf_all_ok(int ok)
{
    int all = 0;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, cf_g.tool_comm);
    return all;
}

uint64_t *cf_union_keys(uint64_t *keys, size_t n, uint32_t cap, size_t *n_p, int *overflow_p)
{
    /* the union holds at most the sum of the ranks' counts: a buffer that
     * size, not cap, so that the reduction moves what the job has (a few
     * hundred bytes for a few records, not cap words through every step) */
    uint64_t sum = 0, mine = n;
    PMPI_Allreduce(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, cf_g.tool_comm);
    if (sum < cap)
        cap = (uint32_t)sum;
    uint64_t *buf = calloc((size_t)cap + 1, sizeof(uint64_t));
    if (!cf_all_ok(buf != NULL)) {
        free(buf);
        *n_p = 0;
        *overflow_p = 1;
        return NULL;
    }
    qsort(keys, n, sizeof(uint64_t), cf_cmp_u64);
    size_t m = 0;
    for (size_t i = 0; i < n && m < cap; i++)
        if (m == 0 || keys[i] != buf[m])
            buf[1 + m++] = keys[i];
    buf[0] = m | (n > m && m == cap ? CF_OVERFLOW : 0);
    cf_union_cap = cap;
    MPI_Datatype t;
    MPI_Op op;
    PMPI_Type_contiguous((int)cap + 1, MPI_UINT64_T, &t);
    PMPI_Type_commit(&t);
    PMPI_Op_create(cf_union_op, 1, &op);
    PMPI_Allreduce(MPI_IN_PLACE, buf, 1, t, op, cf_g.tool_comm);
    PMPI_Op_free(&op);
    PMPI_Type_free(&t);
    *n_p = buf[0] & ~CF_OVERFLOW;
    *overflow_p = (buf[0] & CF_OVERFLOW) != 0;
    memmove(buf, buf + 1, *n_p * sizeof(uint64_t));
    return buf;
}

/* ---- reduction of stats, element-wise ---- */
static void cf_stat_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    cf_stat_t *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        b[i].key = a[i].key ? a[i].key : b[i].key;
        cf_stat_merge(&b[i], &a[i]);
    }
}

typedef struct {
    uint32_t id;
    int size, nodes;
    uint64_t instances;
    char name[48];
    char desc[CF_COMM_DESC_LEN], user_name[CF_COMM_USER_LEN];
} cf_comm_wire_t;

/* One description per id whatever the order of the ranks: a described one
 * over none, then the smallest (ranks that first used a communicator
 * outside the wrapped constructors know less about it). */
static void cf_comm_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    cf_comm_wire_t *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        uint64_t n = a[i].instances > b[i].instances ? a[i].instances : b[i].instances;
        int c = strcmp(a[i].desc, b[i].desc);
        if ((b[i].size == 0 && a[i].size != 0) ||
            (a[i].size != 0 && (b[i].desc[0] == 0 ? a[i].desc[0] != 0 : a[i].desc[0] != 0 && c < 0)))
            b[i] = a[i];
        else if (a[i].size != 0 && c == 0 && strcmp(a[i].user_name, b[i].user_name) > 0)
            cf_strlcpy(b[i].user_name, a[i].user_name, sizeof(b[i].user_name));
        b[i].instances = n;
    }
}

static int cf_cmp_comm_id(const void *x, const void *y)
{
    uint32_t a = (*(cf_comm_t *const *)x)->id, b = (*(cf_comm_t *const *)y)->id;
    return a < b ? -1 : a > b;
}

/* The library's name and version, its first line up to a comma, tabs as
 * spaces ("MPICH Version:\t4.0.2" -> "MPICH Version: 4.0.2"). */
void cf_library_version(char *out, size_t len)
{
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    int vlen = 0;
    PMPI_Get_library_version(ver, &vlen);
    ver[strcspn(ver, "\n,")] = 0;
    for (char *c = ver; *c; c++)
        if (*c == '\t')
            *c = ' ';
    cf_strlcpy(out, ver, len);
}

int cf_reduce_bytes(void *buf, size_t n, size_t elem, MPI_User_function *fn, int root)
{
    MPI_Datatype t;
    MPI_Op op;
    PMPI_Type_contiguous((int)elem, MPI_BYTE, &t);
    PMPI_Type_commit(&t);
    PMPI_Op_create(fn, 1, &op);
    int rc = MPI_SUCCESS;
    /* in pieces, so the temporary buffers MPI allocates stay small */
    size_t chunk = (1u << 20) / elem + 1;
    for (size_t off = 0; off < n && rc == MPI_SUCCESS; off += chunk) {
        int cnt = (int)(n - off < chunk ? n - off : chunk);
        char *p = (char *)buf + off * elem;
        if (cf_g.world_rank == root)
            rc = PMPI_Reduce(MPI_IN_PLACE, p, cnt, t, op, root, cf_g.tool_comm);
        else
            rc = PMPI_Reduce(p, NULL, cnt, t, op, root, cf_g.tool_comm);
    }
    PMPI_Op_free(&op);
    PMPI_Type_free(&t);
    return rc;
}

cf_stat_t *cf_merge_table(cf_table_t *mine, uint32_t cap, size_t *n_p, int *overflow_p,
                          int (*lacks)(uint64_t key, const cf_table_t *mine), int dropping, uint32_t **missing_p)
{
    if (missing_p)
        *missing_p = NULL;
    uint64_t *keys = malloc(((size_t)mine->used + 1) * sizeof(uint64_t));
    size_t nkeys = 0, nu = 0;
    for (uint32_t s = 0; keys && s < mine->cap; s++)
        if (mine->slots[s].key)
            keys[nkeys++] = mine->slots[s].key;
    /* every rank must take part even when it has no memory left */
    uint64_t none = 0;
    uint64_t *ukeys = cf_union_keys(keys ? keys : &none, keys ? nkeys : 0, cap, &nu, overflow_p);
    free(keys);
    cf_stat_t *stats = calloc(nu ? nu : 1, sizeof(cf_stat_t));
    if (!cf_all_ok(stats && ukeys)) {
        free(stats);
        free(ukeys);
        *overflow_p = 1;
        *n_p = 0;
        return NULL;
    }
    for (size_t i = 0; stats && ukeys && i < nu; i++) {
        cf_stat_t *s = cf_table_get(mine, ukeys[i]);
        if (s)
            stats[i] = *s;
        stats[i].key = ukeys[i];
    }
    /* records some rank could not keep: which ranks, per record */
    int any = 0;
    if (missing_p)
        PMPI_Allreduce(&dropping, &any, 1, MPI_INT, MPI_LOR, cf_g.tool_comm);
    uint32_t *miss = any ? calloc(nu ? nu : 1, sizeof(uint32_t)) : NULL;
    if (any && cf_all_ok(miss != NULL)) {
        for (size_t i = 0; dropping && i < nu; i++)
            miss[i] = lacks(ukeys[i], mine) != 0;
        for (size_t off = 0; off < nu; off += 1u << 20) {
            int cnt = (int)(nu - off < (1u << 20) ? nu - off : 1u << 20);
            if (cf_g.world_rank == 0)
                PMPI_Reduce(MPI_IN_PLACE, miss + off, cnt, MPI_UINT32_T, MPI_SUM, 0, cf_g.tool_comm);
            else
                PMPI_Reduce(miss + off, NULL, cnt, MPI_UINT32_T, MPI_SUM, 0, cf_g.tool_comm);
        }
        if (cf_g.world_rank == 0)
            *missing_p = miss;
        else
            free(miss);
    } else
        free(miss);
    free(ukeys);
    if (stats)
        cf_reduce_bytes(stats, nu, sizeof(cf_stat_t), cf_stat_op, 0);
    if (cf_g.world_rank != 0) {
        free(stats);
        stats = NULL;
    }
    *n_p = nu;
    return stats;
}

typedef struct {
    int rank, node;
    char host[64];
    double wall_s, mpi_s, wait_s, xfer_s;
    uint64_t dropped;
    int node_ranks, node_cpus;
    double copy_Bps; /* the node's copy bandwidth, on its first rank; 0 elsewhere */
} cf_rank_wire_t;

/* Losses counted on every rank and summed on rank 0, for the reasons of a
 * partial profile. */
enum { CF_LOSS_THREADS, CF_LOSS_RECORDS, CF_LOSS_REQUESTS, CF_LOSS_STREAMS, CF_LOSS_FAILED, CF_LOSS_N };
/* Conditions some rank met at finalize. */
enum { CF_FAIL_NOMEM, CF_FAIL_MERGE, CF_FAIL_COMMS, CF_FAIL_REGIONS, CF_FAIL_N };

/* ---- output path ---- */
static void cf_default_name(char *buf, size_t len, const char *dir)
{
    char date[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof(date), "%Y%m%d-%H%M%S", &tm);
    char job[256];
    if (cf_sched_job_tag(job, sizeof(job)) != 0)
        snprintf(job, sizeof(job), "%ld", (long)getpid());
    snprintf(buf, len, "%s%scommfit-%s-%s.json", dir ? dir : "", dir ? "/" : "", date, job);
    for (int i = 1; i < 1000 && access(buf, F_OK) == 0; i++)
        snprintf(buf, len, "%s%scommfit-%s-%s.%d.json", dir ? dir : "", dir ? "/" : "", date, job, i);
}

/* A spawned job's name for COMMFIT_OUTPUT: "out.json" -> "out.spawn-<pid>.json",
 * so that it never replaces its parent's profile and can be told apart. */
static void cf_spawned_name(char *buf, size_t len, const char *out)
{
    size_t n = strlen(out);
    int has_ext = n > 5 && strcmp(out + n - 5, ".json") == 0;
    snprintf(buf, len, "%.*s.spawn-%ld.json", (int)(has_ext ? n - 5 : n), out, (long)getpid());
}

void cf_profile_output(char *buf, size_t len)
{
    buf[0] = 0;
    if (cf_g.cfg.output[0] && cf_g.spawned)
        cf_spawned_name(buf, len, cf_g.cfg.output);
    else if (cf_g.cfg.output[0])
        snprintf(buf, len, "%s", cf_g.cfg.output);
}

/* COMMFIT_SPOOL, else the profile's name with .parts for .json (rank 0, at
 * MPI_Init); a spawned job's own. */
void cf_spool_default(char *buf, size_t len)
{
    char out[4200];
    if (cf_g.cfg.spool[0]) {
        if (cf_g.spawned)
            snprintf(out, sizeof(out), "%s.spawn-%ld", cf_g.cfg.spool, (long)getpid());
        else
            snprintf(out, sizeof(out), "%s", cf_g.cfg.spool);
    } else {
        cf_profile_output(out, sizeof(out));
        if (!out[0])
            cf_default_name(out, sizeof(out), NULL);
        size_t n = strlen(out);
        if (n > 5 && strcmp(out + n - 5, ".json") == 0)
            out[n - 5] = 0;
        cf_strlcpy(out + strlen(out), ".parts", sizeof(out) - strlen(out));
    }
    /* absolute: the message names it, and merge may run elsewhere */
    cf_path_absolute(out, sizeof(out));
    if (strlen(out) + 64 >= len) {
        buf[0] = 0; /* no room for the part names: nothing is spilled */
        if (cf_g.world_rank == 0)
            cf_log("the spool path %s is too long; a job that does not finish leaves no records", out);
        return;
    }
    cf_strlcpy(buf, out, len);
}

static void cf_write_profile(const cf_profile_t *p)
{
    char path[4200], err[512], out[4200];
    if (cf_g.cfg.output[0]) {
        if (cf_g.spawned)
            cf_spawned_name(out, sizeof(out), cf_g.cfg.output);
        else
            snprintf(out, sizeof(out), "%s", cf_g.cfg.output);
        if (cf_profile_write(p, out, err, sizeof(err)) == CF_OK) {
            if (cf_g.cfg.summary || cf_g.spawned)
                cf_log("profile written to %s%s", out, cf_g.spawned ? " (a spawned job: its own file)" : "");
            return;
        }
        cf_log("cannot write the profile to COMMFIT_OUTPUT=%s (%s)", out, err);
    }
    const char *dirs[] = {NULL, getenv("TMPDIR"), "/tmp"};
    for (size_t i = 0; i < CF_ARRAY_LEN(dirs); i++) {
        if (i > 0 && !dirs[i])
            continue;
        cf_default_name(path, sizeof(path), dirs[i]);
        if (cf_profile_write(p, path, err, sizeof(err)) == CF_OK) {
            if (cf_g.cfg.summary || cf_g.cfg.output[0])
                cf_log("profile written to %s", path);
            return;
        }
        cf_log("cannot write the profile to %s (%s)", path, err);
    }
    cf_log("no profile was written");
}

static double cf_ns_to_s(double ns) { return ns * 1e-9; }

/* Copy bandwidth of this node, for what the advice charges for packing
 * tensors into a fusion bucket and out again (2 x fused bytes / memcpy_Bps,
 * lib/cf_advice.c): the best of three copies of CF_COPY_BYTES, a bucket of
 * the size frameworks pack (a few MiB) and past a core's private caches,
 * after one that faults the destination in.  Measured by the first rank of
 * each node (cf_node_first) and the job's figure is the slowest node's:
 * one 8 MiB footprint per node, a few ms. */
#define CF_COPY_BYTES (4u << 20)
static double cf_memcpy_bandwidth(void)
{
    size_t n = CF_COPY_BYTES;
    char *a = malloc(2 * n), *b = a + n;
    double best = 0;
    if (!a)
        return 0;
    memset(a, 1, n);
    for (int i = 0; i < 4; i++) {
        uint64_t t0 = cf_clock_mono_ns();
        memcpy(b, a, n);
        uint64_t t1 = cf_clock_mono_ns();
        if (i > 0 && t1 > t0 && (double)n * 1e9 / (double)(t1 - t0) > best)
            best = (double)n * 1e9 / (double)(t1 - t0);
        a[i] = b[n - 1 - (size_t)i]; /* keep the copies observable */
    }
    free(a);
    return best;
}

/* Whether this rank is the first world rank of its node. */
static int cf_node_first(void)
{
    for (int i = 0; cf_g.world_node && i < cf_g.world_rank; i++)
        if (cf_g.world_node[i] == cf_g.node)
            return 0;
    return 1;
}

/* The clock, sampling and last-arrival sections (rank 0). */
static void cf_profile_add_sections(cf_profile_t *p, cf_sample_result_t *sres)
{
    if (!p->extra)
        p->extra = json_object();
    if (sres->clock)
        json_object_set_new(p->extra, "clock", sres->clock);
    json_object_set_new(p->extra, "sampling",
                        json_pack("{s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:I}", "first", CF_SAMPLE_FIRST, "every",
                                  (int)cf_g.cfg.sample_every, "collective_calls", (json_int_t)sres->coll_used,
                                  "collective_calls_incomplete", (json_int_t)sres->coll_incomplete, "messages_matched",
                                  (json_int_t)sres->p2p_matched, "messages_receive_posted_late",
                                  (json_int_t)sres->p2p_late_recv, "messages_unmatched",
                                  (json_int_t)sres->p2p_unmatched, "not_sampled_buffer_full", (json_int_t)sres->lost));
    if (sres->late) {
        /* {comm id: {rank: times last}} -> [{comm, instances, last: [{rank, count}]}] */
        json_t *arr = json_array();
        const char *cid;
        json_t *ranks;
        json_object_foreach(sres->late, cid, ranks) {
            json_t *last = json_array();
            const char *rk;
            json_t *cnt;
            json_int_t total = 0;
            json_object_foreach(ranks, rk, cnt) {
                json_array_append_new(last, json_pack("{s:i, s:I}", "rank", atoi(rk), "count", json_integer_value(cnt)));
                total += json_integer_value(cnt);
            }
            json_array_append_new(arr, json_pack("{s:I, s:I, s:o}", "comm", (json_int_t)strtoul(cid, NULL, 10),
                                                 "instances", total, "last", last));
        }
        json_object_set_new(p->extra, "late_arrivals", arr);
        json_decref(sres->late);
    }
    if (sres->trace)
        json_object_set_new(p->extra, "samples", sres->trace);
}

/* Rank 0: job.partial_reasons, from the losses of all ranks. */
static void cf_partial_reasons(cf_profile_t *p, const uint64_t *loss, const int *fail, uint64_t samples_lost)
{
    const cf_config_t *c = &cf_g.cfg;
    if (fail[CF_FAIL_NOMEM])
        cf_profile_add_partial_reason(p, "out of memory at finalize on some rank: records left out");
    if (loss[CF_LOSS_THREADS])
        cf_profile_add_partial_reason(p, "%llu threads not recorded (COMMFIT_MAX_THREADS=%u)",
                                      (unsigned long long)loss[CF_LOSS_THREADS], c->max_threads);
    if (loss[CF_LOSS_RECORDS])
        cf_profile_add_partial_reason(p, "records dropped: %llu calls or keys found the tables full "
                                      "(COMMFIT_TABLE_SIZE=%u, COMMFIT_MERGE_MAX=%u); each record says how many "
                                      "ranks' calls it may lack (ranks_missing)",
                                      (unsigned long long)loss[CF_LOSS_RECORDS], c->table_size, c->merge_max);
    if (loss[CF_LOSS_REQUESTS])
        cf_profile_add_partial_reason(p, "%llu requests not tracked (COMMFIT_MAX_REQUESTS=%u)",
                                      (unsigned long long)loss[CF_LOSS_REQUESTS], c->max_requests);
    if (fail[CF_FAIL_MERGE])
        cf_profile_add_partial_reason(p, "more distinct records over the job than COMMFIT_MERGE_MAX=%u: some left out",
                                      c->merge_max);
    if (fail[CF_FAIL_COMMS])
        cf_profile_add_partial_reason(p, "communicators not all described (more distinct ones over the job than "
                                      "COMMFIT_MERGE_COMMS=%u, or no memory)", c->merge_comms);
    if (fail[CF_FAIL_REGIONS])
        cf_profile_add_partial_reason(p, "region names not all kept (too many regions)");
    if (samples_lost)
        cf_profile_add_partial_reason(p, "samples ran out: %llu calls chosen for sampling were not sampled "
                                      "(COMMFIT_SAMPLES=%u per process)",
                                      (unsigned long long)samples_lost, c->samples);
    if (loss[CF_LOSS_STREAMS])
        cf_profile_add_partial_reason(p, "%llu messages not sampled: more than %d message streams on a thread",
                                      (unsigned long long)loss[CF_LOSS_STREAMS], CF_CHANNELS);
}

/* Rank 0: the job's oversubscription, from each rank's node figures. */
static void cf_oversubscription(cf_profile_t *p)
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

/* Whether this rank may have calls of key that no table of it kept: a key
 * gets into a table at its first call or never (slots are never freed), so
 * a thread that dropped records and has no entry of key may have dropped
 * it, and so may the rank's own merged table. */
static int cf_rank_lacks(uint64_t key, const cf_table_t *mine)
{
    if (mine->dropped && !cf_table_find(mine, key))
        return 1;
    uint32_t n = atomic_load(&cf_nthreads);
    for (uint32_t i = 0; i < n; i++) {
        const cf_table_t *t = &cf_threads[i]->table;
        if (t->dropped && !cf_table_find(t, key))
            return 1;
    }
    return 0;
}

/* MPI's error classes by name, for the failed calls */
static const struct {
    int cls;
    const char *name;
} cf_error_classes[] = {
#define CF_E(c) {c, #c}
    CF_E(MPI_ERR_BUFFER), CF_E(MPI_ERR_COUNT), CF_E(MPI_ERR_TYPE), CF_E(MPI_ERR_TAG), CF_E(MPI_ERR_COMM),
    CF_E(MPI_ERR_RANK), CF_E(MPI_ERR_REQUEST), CF_E(MPI_ERR_ROOT), CF_E(MPI_ERR_GROUP), CF_E(MPI_ERR_OP),
    CF_E(MPI_ERR_TOPOLOGY), CF_E(MPI_ERR_DIMS), CF_E(MPI_ERR_ARG), CF_E(MPI_ERR_UNKNOWN), CF_E(MPI_ERR_TRUNCATE),
    CF_E(MPI_ERR_OTHER), CF_E(MPI_ERR_INTERN), CF_E(MPI_ERR_IN_STATUS), CF_E(MPI_ERR_PENDING),
    CF_E(MPI_ERR_KEYVAL), CF_E(MPI_ERR_NO_MEM), CF_E(MPI_ERR_BASE), CF_E(MPI_ERR_INFO_KEY),
    CF_E(MPI_ERR_INFO_VALUE), CF_E(MPI_ERR_INFO_NOKEY), CF_E(MPI_ERR_SPAWN), CF_E(MPI_ERR_PORT),
    CF_E(MPI_ERR_SERVICE), CF_E(MPI_ERR_NAME), CF_E(MPI_ERR_WIN), CF_E(MPI_ERR_SIZE), CF_E(MPI_ERR_DISP),
    CF_E(MPI_ERR_INFO), CF_E(MPI_ERR_LOCKTYPE), CF_E(MPI_ERR_ASSERT), CF_E(MPI_ERR_RMA_CONFLICT),
    CF_E(MPI_ERR_RMA_SYNC), CF_E(MPI_ERR_RMA_RANGE), CF_E(MPI_ERR_RMA_ATTACH), CF_E(MPI_ERR_RMA_SHARED),
    CF_E(MPI_ERR_RMA_FLAVOR), CF_E(MPI_ERR_FILE), CF_E(MPI_ERR_NOT_SAME), CF_E(MPI_ERR_AMODE),
    CF_E(MPI_ERR_UNSUPPORTED_DATAREP), CF_E(MPI_ERR_UNSUPPORTED_OPERATION), CF_E(MPI_ERR_NO_SUCH_FILE),
    CF_E(MPI_ERR_FILE_EXISTS), CF_E(MPI_ERR_BAD_FILE), CF_E(MPI_ERR_ACCESS), CF_E(MPI_ERR_NO_SPACE),
    CF_E(MPI_ERR_QUOTA), CF_E(MPI_ERR_READ_ONLY), CF_E(MPI_ERR_FILE_IN_USE), CF_E(MPI_ERR_DUP_DATAREP),
    CF_E(MPI_ERR_CONVERSION), CF_E(MPI_ERR_IO),
#undef CF_E
};

const char *cf_error_class_name(int cls)
{
    for (size_t e = 0; e < CF_ARRAY_LEN(cf_error_classes); e++)
        if (cf_error_classes[e].cls == cls)
            return cf_error_classes[e].name;
    return NULL;
}

/* The profile's "failed_calls" section: the calls that returned an error,
 * summed over ranks by operation and error class, [{op, class, calls}]
 * (op "other": beyond the kinds a thread keeps, CF_FAILS).  Collective:
 * the union of (op, class) keys, then their counts reduced to rank 0. */
static json_t *cf_fail_section(void)
{
    uint32_t nthreads = atomic_load(&cf_nthreads);
    uint64_t *keys = malloc(((size_t)nthreads * CF_FAILS + 1) * sizeof(uint64_t)), none = 0;
    size_t n = 0, nu = 0;
    int overflow = 0;
    for (uint32_t i = 0; keys && i < nthreads; i++)
        for (unsigned j = 0; j < CF_FAILS; j++)
            if (cf_threads[i]->fail[j].calls) /* nonzero: op 0 class 0 is a key too */
                keys[n++] = UINT64_C(1) << 40 | (uint64_t)cf_threads[i]->fail[j].op << 16 | cf_threads[i]->fail[j].cls;
    uint64_t *u = cf_union_keys(keys ? keys : &none, keys ? n : 0, (uint32_t)cf_g.world_size * CF_FAILS + CF_FAILS,
                                &nu, &overflow);
    free(keys);
    uint64_t *calls = u ? calloc(nu ? nu : 1, sizeof(uint64_t)) : NULL;
    if (!u || !cf_all_ok(calls != NULL)) {
        free(u);
        free(calls);
        return NULL;
    }
    for (uint32_t i = 0; i < nthreads; i++)
        for (unsigned j = 0; j < CF_FAILS; j++) {
            const cf_fail_t *f = &cf_threads[i]->fail[j];
            uint64_t k = UINT64_C(1) << 40 | (uint64_t)f->op << 16 | f->cls;
            for (size_t m = 0; f->calls && m < nu; m++)
                if (u[m] == k)
                    calls[m] += f->calls;
        }
    if (cf_g.world_rank == 0)
        PMPI_Reduce(MPI_IN_PLACE, calls, (int)nu, MPI_UINT64_T, MPI_SUM, 0, cf_g.tool_comm);
    else
        PMPI_Reduce(calls, NULL, (int)nu, MPI_UINT64_T, MPI_SUM, 0, cf_g.tool_comm);
    json_t *arr = cf_g.world_rank == 0 ? json_array() : NULL;
    for (size_t m = 0; arr && m < nu; m++) {
        unsigned op = (unsigned)(u[m] >> 16 & 0xffffu), cls = (unsigned)(u[m] & 0xffffu);
        char buf[32];
        const char *cname = cf_error_class_name((int)cls);
        if (!cname) {
            snprintf(buf, sizeof(buf), op ? "class %u" : "other", cls);
            cname = buf;
        }
        json_array_append_new(arr, json_pack("{s:s, s:s, s:I}", "op", op && op < CF_OP_COUNT ? cf_op_names[op] : "other",
                                             "class", cname, "calls", (json_int_t)calls[m]));
    }
    free(u);
    free(calls);
    return arr;
}

/* Rank 0 builds and writes the profile alone.  The other ranks wait for it
 * here asleep, polling every 200 us, not spinning in PMPI_Finalize: on an
 * oversubscribed node, spinning ranks take the CPU that rank 0 needs. */
static void cf_quiet_wait(void)
{
    MPI_Request r;
    int done = 0;
    if (PMPI_Ibarrier(cf_g.tool_comm, &r) != MPI_SUCCESS)
        return;
    if (cf_g.world_rank == 0) {
        PMPI_Wait(&r, MPI_STATUS_IGNORE);
        return;
    }
    while (PMPI_Test(&r, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done)
        nanosleep(&(struct timespec){0, 200000}, NULL);
}

void cf_runtime_finalize(void)
{
    if (atomic_load(&cf_g.state) != 1)
        return;
    /* our own PMPI calls below are not the application's */
    atomic_store(&cf_g.enabled, 0);
    uint64_t end_mono = cf_clock_mono_ns();
    /* measured before the merge, with recording off: none of its traffic
     * is the program's (collective; the section is rank 0's) */
    json_t *calibration = cf_calibrate();

    /* 1. this rank's threads into one table */
    cf_table_t mine;
    uint32_t nthreads = atomic_load(&cf_nthreads);
    /* read once: the counts below must add up to what was loaded here */
    uint64_t refused = atomic_load(&cf_threads_refused), req_dropped = atomic_load(&cf_g.req_dropped);
    uint64_t dropped = refused + req_dropped;
    uint64_t mpi_ns = 0, missed = 0, streams_full = 0, failed = 0;
    cf_table_t elig; /* calls = eligible for sampling, bytes = selected */
    int ok_mine = cf_table_init(&mine, cf_g.cfg.merge_max * 2) == CF_OK;
    int ok_elig = cf_table_init(&elig, cf_g.cfg.merge_max * 2) == CF_OK;
    int ok = ok_mine && ok_elig;
    if (!cf_all_ok(ok)) {
        if (!ok || cf_g.world_rank == 0)
            cf_log("rank %d: out of memory at finalize%s; no profile", cf_g.world_rank,
                   ok ? " on some rank" : "");
        if (ok_mine)
            cf_table_fini(&mine);
        if (ok_elig)
            cf_table_fini(&elig);
        json_decref(calibration);
        atomic_store(&cf_g.state, 2);
        return;
    }
    for (uint32_t i = 0; i < nthreads; i++) {
        cf_thread_t *t = cf_threads[i];
        mpi_ns += t->mpi_ns;
        dropped += t->table.dropped;
        missed += t->missed;
        streams_full += t->chan_full;
        failed += t->failed;
        for (uint32_t s = 0; s <= t->elig_mask; s++) {
            const cf_elig_t *e = &t->elig[s];
            cf_stat_t *dst = e->key ? cf_table_get(&elig, e->key) : NULL;
            if (dst) {
                dst->calls += e->eligible;
                dst->bytes += e->selected;
            }
        }
        for (uint32_t s = 0; s < t->table.cap; s++) {
            cf_stat_t *src = &t->table.slots[s];
            if (!src->key)
                continue;
            cf_stat_t *dst = cf_table_get(&mine, src->key);
            if (dst)
                cf_stat_merge(dst, src);
        }
    }
    dropped += mine.dropped;
    uint64_t loss[CF_LOSS_N] = {refused, dropped - refused - req_dropped, req_dropped, streams_full, failed};
    uint64_t loss_all[CF_LOSS_N];
    /* on every rank: the failed calls' section is made only when some call failed */
    PMPI_Allreduce(loss, loss_all, CF_LOSS_N, MPI_UINT64_T, MPI_SUM, cf_g.tool_comm);
    if (cf_g.cfg.verbose)
        cf_log("rank %d: %u threads recorded, %llu refused (COMMFIT_MAX_THREADS), %llu records dropped "
               "(COMMFIT_TABLE_SIZE), %llu requests not tracked (COMMFIT_MAX_REQUESTS), %llu completions of "
               "requests posted outside the profiler",
               cf_g.world_rank, nthreads, (unsigned long long)refused,
               (unsigned long long)(dropped - refused - req_dropped), (unsigned long long)req_dropped,
               (unsigned long long)missed);

    /* 2. samples: wait at collectives, one-way message times, clocks */
    cf_sample_result_t sres;
    int have_samples = cf_samples_finalize(&sres) == CF_OK;

    /* 3. stats, and transfer stats, summed over ranks */
    int overflow = 0, xoverflow = 0;
    size_t nu = 0, nx = 0;
    uint32_t *missing = NULL;
    cf_stat_t *stats = cf_merge_table(&mine, cf_g.cfg.merge_max, &nu, &overflow, cf_rank_lacks, dropped > refused + req_dropped,
                                      &missing);
    cf_table_fini(&mine);
    cf_stat_t *xstats = NULL, *estats = NULL;
    size_t ne = 0;
    int eoverflow = 0;
    if (have_samples) {
        xstats = cf_merge_table(&sres.xfer, cf_g.cfg.merge_max, &nx, &xoverflow, NULL, 0, NULL);
        cf_table_fini(&sres.xfer);
    }
    if (have_samples) /* agreed by all ranks */
        estats = cf_merge_table(&elig, cf_g.cfg.merge_max, &ne, &eoverflow, NULL, 0, NULL);
    cf_table_fini(&elig);

    /* 4. communicators: union of ids, then their descriptions.  The
     * union holds at most the sum of the ranks' counts: room for that, up
     * to COMMFIT_MERGE_COMMS */
    size_t nall = atomic_load(&cf_comm_nall);
    cf_comm_t **mycomms = malloc((nall + 1) * sizeof(*mycomms));
    uint64_t *cids = malloc((nall + 1) * sizeof(uint64_t)), no_comm = 0, sum_cids = 0;
    size_t ncid = 0, nuc = 0;
    if (mycomms && cids) {
        memcpy(mycomms, atomic_load(&cf_comm_all), nall * sizeof(*mycomms));
        qsort(mycomms, nall, sizeof(*mycomms), cf_cmp_comm_id);
        for (size_t i = 0; i < nall; i++)
            cids[ncid++] = mycomms[i]->id;
    }
    PMPI_Allreduce(&(uint64_t){ncid}, &sum_cids, 1, MPI_UINT64_T, MPI_SUM, cf_g.tool_comm);
    int coverflow = !cids || !mycomms;
    uint32_t ccap = sum_cids < cf_g.cfg.merge_comms ? (uint32_t)sum_cids + 1 : cf_g.cfg.merge_comms;
    uint64_t *ucids = cf_union_keys(cids && mycomms ? cids : &no_comm, cids && mycomms ? ncid : 0, ccap, &nuc,
                                    &coverflow);
    free(cids);
    cf_comm_wire_t *cw = ucids ? calloc(nuc ? nuc : 1, sizeof(*cw)) : NULL;
    for (size_t i = 0, j = 0; cw && mycomms && i < nuc; i++) {
        cw[i].id = (uint32_t)ucids[i];
        /* both sorted by id */
        while (j < nall && mycomms[j]->id < cw[i].id)
            j++;
        if (j < nall && mycomms[j]->id == cw[i].id) {
            cw[i].size = mycomms[j]->size;
            cw[i].nodes = mycomms[j]->nodes;
            cw[i].instances = mycomms[j]->instances;
            cf_strlcpy(cw[i].name, mycomms[j]->name, sizeof(cw[i].name));
            cf_strlcpy(cw[i].desc, mycomms[j]->desc, sizeof(cw[i].desc));
            cf_strlcpy(cw[i].user_name, mycomms[j]->user_name, sizeof(cw[i].user_name));
        }
    }
    free(mycomms);
    if (ucids && cf_all_ok(cw != NULL))
        cf_reduce_bytes(cw, nuc, sizeof(*cw), cf_comm_op, 0);
    else {
        free(cw);
        cw = NULL;
    }

    /* 5. per-rank figures */
    cf_rank_wire_t me = {.rank = cf_g.world_rank, .node = cf_g.node};
    gethostname(me.host, sizeof(me.host) - 1);
    me.wall_s = cf_ns_to_s((double)(end_mono - cf_g.init_mono_ns));
    me.mpi_s = cf_ns_to_s((double)mpi_ns);
    me.dropped = dropped;
    me.node_ranks = cf_g.node_ranks;
    me.node_cpus = cf_g.node_cpus;
    me.copy_Bps = cf_node_first() ? cf_memcpy_bandwidth() : 0;
    if (have_samples) {
        me.wait_s = cf_ns_to_s(sres.wait_ns);
        me.xfer_s = cf_ns_to_s(sres.xfer_ns);
    }
    cf_rank_wire_t *all = cf_g.world_rank == 0 ? calloc((size_t)cf_g.world_size, sizeof(*all)) : NULL;
    if (cf_all_ok(cf_g.world_rank != 0 || all))
        PMPI_Gather(&me, (int)sizeof(me), MPI_BYTE, all, (int)sizeof(me), MPI_BYTE, 0, cf_g.tool_comm);
    /* 6. region names */
    cf_profile_t p;
    cf_profile_init(&p);
    unsigned *rids = NULL;
    int rlost = cf_regions_merge(cf_g.world_rank == 0 ? &p : NULL, &rids) != CF_OK;

    int fail[CF_FAIL_N] = {(cf_g.world_rank == 0 && !stats) || !cw, overflow, coverflow, rlost}, fail_all[CF_FAIL_N];
    PMPI_Allreduce(fail, fail_all, CF_FAIL_N, MPI_INT, MPI_LOR, cf_g.tool_comm);
    json_t *papi_section = cf_papi_section(), *ucx_section = cf_ucx_section(); /* collective */
    json_t *matrix_section = cf_matrix_section();                                /* collective */
    json_t *site_section = cf_callsite_section();                                /* collective */
    json_t *fail_section = loss_all[CF_LOSS_FAILED] ? cf_fail_section() : NULL;  /* collective */

    if (cf_g.world_rank == 0) {
        p.ranks = cf_g.world_size;
        p.nodes = cf_g.nnodes;
        p.clock_hz = cf_clock.hz;
        p.partial = p.npartial_reason > 0; /* the regions' losses, if any */
        cf_library_version(p.mpi_library, sizeof(p.mpi_library));
        time_t t0 = (time_t)cf_g.init_wall;
        struct tm tm;
        gmtime_r(&t0, &tm);
        strftime(p.start_time, sizeof(p.start_time), "%Y-%m-%dT%H:%M:%SZ", &tm);
        p.rank = calloc((size_t)cf_g.world_size, sizeof(*p.rank));
        for (int i = 0; p.rank && all && i < cf_g.world_size; i++) {
            cf_rank_info_t *r = &p.rank[p.nrank++];
            r->rank = all[i].rank;
            r->node = all[i].node;
            cf_strlcpy(r->host, all[i].host, sizeof(r->host));
            r->wall_s = all[i].wall_s;
            r->mpi_s = all[i].mpi_s;
            r->dropped = all[i].dropped;
            r->wait_s = all[i].wait_s;
            r->xfer_s = all[i].xfer_s;
            r->node_ranks = all[i].node_ranks;
            r->node_cpus = all[i].node_cpus;
            if (all[i].copy_Bps > 0 && (!(p.memcpy_Bps > 0) || all[i].copy_Bps < p.memcpy_Bps))
                p.memcpy_Bps = all[i].copy_Bps;
            if (r->wall_s > p.wall_s)
                p.wall_s = r->wall_s;
        }
        cf_oversubscription(&p);
        cf_partial_reasons(&p, loss_all, fail_all, have_samples ? sres.lost : 0);
        p.failed_calls = loss_all[CF_LOSS_FAILED];
        p.comm = calloc(nuc ? nuc : 1, sizeof(*p.comm));
        for (size_t i = 0; p.comm && cw && i < nuc; i++) {
            cf_comm_info_t *c = &p.comm[p.ncomm++];
            c->id = cw[i].id;
            c->size = cw[i].size;
            c->nodes = cw[i].nodes;
            c->instances = cw[i].instances;
            cf_strlcpy(c->name, cw[i].name, sizeof(c->name));
            cf_strlcpy(c->desc, cw[i].desc, sizeof(c->desc));
            cf_strlcpy(c->user_name, cw[i].user_name, sizeof(c->user_name));
        }
        p.rec = calloc(nu ? nu : 1, sizeof(*p.rec));
        size_t xi = 0, ei = 0;
        for (size_t i = 0; p.rec && stats && i < nu; i++) {
            const cf_stat_t *s = &stats[i];
            if (!s->calls)
                continue;
            cf_record_t *r = &p.rec[p.nrec++];
            unsigned op = cf_key_op(s->key), layer = cf_key_layer(s->key), parent = cf_key_comm(s->key);
            cf_record_from_stat(r, s, cf_layer_op_name(layer, op), cf_layer_op_kind(layer, op),
                                layer == CF_LAYER_UCX && parent ? cf_layer_op_name(CF_LAYER_MPI, parent) : "");
            unsigned rid = cf_key_region(s->key);
            for (size_t k = 0; rid && rids && k < p.nregion; k++)
                if (rids[k] == rid)
                    r->region = (unsigned)k + 1;
            if (missing)
                r->ranks_missing = missing[i];
            /* transfer stats of the same key, both arrays sorted by key */
            while (xstats && xi < nx && xstats[xi].key < s->key)
                xi++;
            if (xstats && xi < nx && xstats[xi].key == s->key && xstats[xi].calls) {
                const cf_stat_t *x = &xstats[xi];
                r->wait_s = cf_ns_to_s((double)x->t_wait);
                r->xfer_n = x->calls;
                r->xfer_sum = cf_ns_to_s((double)x->t_sum);
                r->xfer_p50 = cf_ns_to_s(cf_hist_quantile(x->hist, 0.5, (double)x->t_min, (double)x->t_max));
                r->xfer_p99 = cf_ns_to_s(cf_hist_quantile(x->hist, 0.99, (double)x->t_min, (double)x->t_max));
            }
            while (estats && ei < ne && estats[ei].key < s->key)
                ei++;
            if (estats && ei < ne && estats[ei].key == s->key) {
                r->sample_eligible = estats[ei].calls;
                r->sample_selected = estats[ei].bytes;
            }
        }
        if (have_samples)
            cf_profile_add_sections(&p, &sres);
        for (size_t i = 0; i < p.npartial_reason; i++)
            cf_log("the profile is partial: %s", p.partial_reason[i]);
        cf_extra_put(&p.extra, "papi", papi_section);
        cf_extra_put(&p.extra, "ucx", ucx_section);
        cf_extra_put(&p.extra, "matrix", matrix_section);
        cf_extra_put(&p.extra, "callsites", site_section);
        cf_extra_put(&p.extra, "failed_calls", fail_section);
        if (cf_g.cfg.protocol)
            cf_extra_put(&p.extra, "protocol", cf_protocol_section());
        cf_extra_put(&p.extra, "calibration", calibration);
        cf_extra_put(&p.extra, CF_SCHED_KEY, cf_sched_collect());
        cf_write_profile(&p);
        if (cf_g.cfg.summary)
            cf_summary_print(&p, stderr);
        cf_profile_free(&p);
    }
    cf_quiet_wait();
    free(all);
    free(stats);
    free(missing);
    free(xstats);
    free(estats);
    free(rids);
    free(cw);
    free(ucids);
    cf_spill_finalized();
    atomic_store(&cf_g.state, 2);
}
