/* Runtime state of the plugin: configuration, threads, communicators and
 * requests.  Locks are taken only to register a thread or a communicator.
 * MPI_Init's order of work, which starts the modules, is cf_init.c's. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cf_module.h"
#include "cf_runtime.h"
#include "cf_site.h"
#include "cf_units.h"

cf_global_t cf_g;
__thread cf_thread_t *cf_self;
__thread int cf_refused;
__thread cf_type_cache_t cf_type_cache[8];
_Atomic unsigned cf_type_gen = 1;
_Atomic uint64_t cf_memo_gen = CF_MEMO_GEN_FIRST;
cf_comm_t *cf_comm_world;
/* the first handle table, static so that lookups before any growth need no allocation */
#define CF_COMM_SLOTS0 1024
static _Atomic uintptr_t cf_comm_keys0[CF_COMM_SLOTS0];
static cf_comm_t *_Atomic cf_comm_vals0[CF_COMM_SLOTS0];
static cf_comm_tab_t cf_comm_tab0 = {CF_COMM_SLOTS0 - 1, 0, cf_comm_keys0, cf_comm_vals0};
cf_comm_tab_t *_Atomic cf_comm_tab = &cf_comm_tab0;

const char *const cf_op_names[CF_OP_COUNT] = {
    "none",
#define CF_X(name, kind) #name,
    CF_MPI_OPS(CF_X)
#undef CF_X
};
const char *const cf_op_kinds[CF_OP_COUNT] = {
    "other",
#define CF_X(name, kind) kind,
    CF_MPI_OPS(CF_X)
#undef CF_X
};

/* The name (what = 0) or profile kind (what = 1) of an operation of a layer. */
static const char *cf_layer_op_lookup(unsigned layer, unsigned op, int what)
{
    if (layer == CF_LAYER_MPI && op < CF_OP_COUNT)
        return what ? cf_op_kinds[op] : cf_op_names[op];
#ifdef CF_HAVE_UCX
    if (layer == CF_LAYER_UCX && op < cf_ucx_op_count)
        return what ? cf_ucx_op_kinds[op] : cf_ucx_op_names[op];
#endif
    return what ? "other" : "unknown";
}

const char *cf_layer_op_name(unsigned layer, unsigned op) { return cf_layer_op_lookup(layer, op, 0); }
const char *cf_layer_op_kind(unsigned layer, unsigned op) { return cf_layer_op_lookup(layer, op, 1); }

static pthread_mutex_t cf_lock = PTHREAD_MUTEX_INITIALIZER;
static cf_thread_t **cf_threads;
static _Atomic uint32_t cf_nthreads;
static _Atomic uint64_t cf_threads_refused;

void cf_log(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    fprintf(stderr, "commfit: %s\n", buf);
}

/* ---- configuration ---- */

static int cf_env_uint(const char *name, uint32_t lo, uint32_t hi, uint32_t def, uint32_t *v, int complain)
{
    const char *s = getenv(name);
    *v = def;
    if (!s || !*s)
        return 0;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || x < lo || x > hi) {
        if (complain)
            cf_log("%s='%s' is not a whole number from %u to %u; using %u", name, s, lo, hi, def);
        return CF_ERR_INVALID;
    }
    *v = (uint32_t)x;
    return 0;
}

static int cf_env_bool(const char *name, int def, int *v, int complain)
{
    const char *s = getenv(name);
    *v = def;
    if (!s || !*s)
        return 0;
    if (!strcmp(s, "1") || !strcasecmp(s, "yes") || !strcasecmp(s, "true") || !strcasecmp(s, "on"))
        *v = 1;
    else if (!strcmp(s, "0") || !strcasecmp(s, "no") || !strcasecmp(s, "false") || !strcasecmp(s, "off"))
        *v = 0;
    else {
        if (complain)
            cf_log("%s='%s' is not a boolean (1/0, yes/no, true/false, on/off); using %d", name, s, def);
        return CF_ERR_INVALID;
    }
    return 0;
}

static void cf_env_path(const char *name, char *out, size_t len, const char *def, int complain)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return;
    if (strlen(s) >= len) {
        if (complain)
            cf_log("%s is longer than %zu characters; using %s", name, len - 1, def);
    } else
        cf_strlcpy(out, s, len);
}

/* COMMFIT_CALIBRATE: auto (-1), 0 (off) or a duration up to an hour;
 * COMMFIT_CALIBRATE_MAX_BYTES: a size from 0 to 1 TiB. */
static void cf_env_calibrate(cf_config_t *c, int complain)
{
    const char *s = getenv("COMMFIT_CALIBRATE");
    double v;
    c->calibrate_s = -1;
    if (s && *s && strcasecmp(s, "auto") != 0) {
        if (cf_parse_time(s, &v) == CF_OK && v <= 3600)
            c->calibrate_s = v;
        else if (complain)
            cf_log("COMMFIT_CALIBRATE='%s' is not auto, 0 or a duration of at most an hour (2s, 300ms); "
                   "using auto (1%% of the run's time, at most 0.5 s)", s);
    }
    s = getenv("COMMFIT_CALIBRATE_MAX_BYTES");
    c->calibrate_max_bytes = UINT64_C(64) << 20;
    if (s && *s) {
        if (cf_parse_size(s, &v) == CF_OK && v <= 1099511627776.0)
            c->calibrate_max_bytes = (uint64_t)v;
        else if (complain)
            cf_log("COMMFIT_CALIBRATE_MAX_BYTES='%s' is not a size of at most 1 TiB (64MiB, 1048576); "
                   "using 64 MiB", s);
    }
}

/* COMMFIT_TIMER: auto, tsc or monotonic (cf_clock_init). */
static void cf_env_timer(cf_config_t *c, int complain)
{
    const char *s = getenv("COMMFIT_TIMER");
    c->timer = CF_TIMER_AUTO;
    if (!s || !*s || !strcasecmp(s, "auto"))
        return;
    if (!strcasecmp(s, "tsc"))
        c->timer = CF_TIMER_TSC;
    else if (!strcasecmp(s, "monotonic"))
        c->timer = CF_TIMER_MONOTONIC;
    else if (complain)
        cf_log("COMMFIT_TIMER='%s' is not auto, tsc or monotonic; using auto", s);
}

/* Reads every COMMFIT_* variable; messages only where complain is set (rank 0). */
void cf_config_read(cf_config_t *c, int complain)
{
    uint32_t v;
    memset(c, 0, sizeof(*c));
    cf_env_bool("COMMFIT_DISABLE", 0, &c->disable, complain);
    cf_env_bool("COMMFIT_SUMMARY", 1, &c->summary, complain);
    cf_env_bool("COMMFIT_VERBOSE", 0, &c->verbose, complain);
    cf_env_uint("COMMFIT_TABLE_SIZE", 64, 1u << 20, 1024, &c->table_size, complain);
    cf_env_uint("COMMFIT_MAX_REQUESTS", 64, 1u << 24, 65536, &c->max_requests, complain);
    cf_env_uint("COMMFIT_MERGE_MAX", 64, 1u << 20, 16384, &c->merge_max, complain);
    cf_env_uint("COMMFIT_MERGE_COMMS", 64, 1u << 24, 65536, &c->merge_comms, complain);
    cf_env_uint("COMMFIT_MAX_THREADS", 1, 4096, 64, &v, complain);
    c->max_threads = v;
    cf_env_uint("COMMFIT_SAMPLES", 0, 1u << 22, 16384, &c->samples, complain);
    if (cf_env_uint("COMMFIT_SAMPLE_EVERY", 1, 1u << 16, 16, &c->sample_every, complain) == 0 &&
        (c->sample_every & (c->sample_every - 1))) {
        if (complain)
            cf_log("COMMFIT_SAMPLE_EVERY=%u is not a power of two; using 16", c->sample_every);
        c->sample_every = 16;
    }
    cf_env_uint("COMMFIT_TRACE", 0, 1u << 20, 256, &c->trace, complain);
    cf_env_path("COMMFIT_OUTPUT", c->output, sizeof(c->output), "the default name", complain);
    cf_env_bool("COMMFIT_SPILL", 1, &c->spill, complain);
    cf_env_bool("COMMFIT_PROTOCOL", 1, &c->protocol, complain);
    cf_env_bool("COMMFIT_GATHER", 0, &c->gather, complain);
    cf_env_uint("COMMFIT_SPOOL_FANOUT", 0, 1u << 30, 256, &c->spool_fanout, complain);
    cf_env_uint("COMMFIT_CALLSITE_DEPTH", 0, CF_SITE_DEPTH_MAX, 1, &c->site_depth, complain);
    /* 0 leaves the call sites out of the profile; the table of one frame
     * stays, for its memos (cf_site.h), which keep the calls they hold off
     * the record's lookup: without them every call took the full path, and
     * call sites off cost more than call sites on */
    c->sites_shown = c->site_depth > 0;
    if (c->site_depth == 0)
        c->site_depth = 1;
    cf_env_uint("COMMFIT_CALLSITES_MAX", 16, 1u << 16, 512, &c->sites_max, complain);
    cf_env_path("COMMFIT_SPOOL", c->spool, sizeof(c->spool), "the profile's name with .parts", complain);
    cf_env_calibrate(c, complain);
    cf_env_timer(c, complain);
    static const char *const known[] = {"COMMFIT_DISABLE", "COMMFIT_SUMMARY", "COMMFIT_VERBOSE",
                                        "COMMFIT_TABLE_SIZE", "COMMFIT_MAX_REQUESTS", "COMMFIT_MERGE_MAX",
                                        "COMMFIT_MAX_THREADS", "COMMFIT_OUTPUT", "COMMFIT_LIB",
                                        "COMMFIT_SAMPLES", "COMMFIT_SAMPLE_EVERY", "COMMFIT_TRACE", "COMMFIT_PAPI_EVENTS", "COMMFIT_TEST_CLOCK_OFFSET",
                                        "COMMFIT_UCX", "COMMFIT_SPILL", "COMMFIT_GATHER", "COMMFIT_SPOOL",
                                        "COMMFIT_SPOOL_FANOUT", "COMMFIT_MERGE_COMMS", "COMMFIT_CALLSITE_DEPTH",
                                        "COMMFIT_CALLSITES_MAX", "COMMFIT_PROTOCOL", "COMMFIT_CALIBRATE",
                                        "COMMFIT_CALIBRATE_MAX_BYTES", "COMMFIT_JOB_NONCE", "COMMFIT_SPOOL_EVERY",
                                        "COMMFIT_SPOOL_BEFORE", "COMMFIT_DEADLINE", "COMMFIT_TIMER"};
    extern char **environ;
    for (char **e = environ; complain && e && *e; e++) {
        if (strncmp(*e, "COMMFIT_", 8) != 0)
            continue;
        size_t n = strcspn(*e, "=");
        int ok = 0;
        for (size_t i = 0; i < CF_ARRAY_LEN(known); i++)
            ok |= strlen(known[i]) == n && strncmp(*e, known[i], n) == 0;
        if (!ok)
            cf_log("unknown variable %.*s ignored", (int)n, *e);
    }
}

/* ---- threads ---- */

/* The modules whose thread_init a thread's registration runs, registered at
 * MPI_Init (cf_init.c): the core names none of them. */
static const cf_module_t *cf_mods;
static size_t cf_nmods;

void cf_modules_register(const cf_module_t *list, size_t n)
{
    cf_mods = list;
    cf_nmods = n;
}

const cf_module_t *cf_module_list(size_t *n)
{
    *n = cf_nmods;
    return cf_mods;
}

int cf_threads_alloc(void)
{
    cf_threads = calloc(cf_g.cfg.max_threads, sizeof(*cf_threads));
    return cf_threads != NULL;
}

void cf_threads_free(void)
{
    free(cf_threads);
    cf_threads = NULL;
}

uint32_t cf_thread_count(void)
{
    return cf_threads ? atomic_load(&cf_nthreads) : 0;
}

cf_thread_t *cf_thread_at(uint32_t i)
{
    return cf_threads[i];
}

uint64_t cf_thread_refused(void)
{
    return atomic_load(&cf_threads_refused);
}

/* ---- the recording switch ---- */

/* enabled keeps the hooks' bit beside the switch (cf_enter) */
static int cf_rec_hooks(void)
{
    return cf_g.enter_hook || cf_g.leave_hook ? CF_REC_HOOKS : 0;
}

/* An armed post (cf_runtime.h, cf_post_mark), entered at t0 ticks and
 * left at t1, its time added to mpi_ns: the framework's time from the
 * completion call that armed it, where no MPI call came between. */
static void cf_post_lead(cf_thread_t *t, uint64_t t0, uint64_t t1)
{
    uint64_t p1 = t->poll_t1;
    t->poll_t1 = 0;
    if (t->mpi_ns - cf_ticks_to_ns(t1 - t0) != t->poll_mpi_ns ||
        t->poll_gen != atomic_load_explicit(&cf_memo_gen, memory_order_relaxed) || t0 < p1)
        return;
    if (t->post_lead == NULL && (t->post_lead = calloc(1, sizeof(*t->post_lead))) == NULL)
        return;
    cf_stat_add(t->post_lead, 0, cf_ticks_to_ns(t0 - p1));
}

/* The mark of a nonblocking collective's post (cf_runtime.h, cf_post_mark):
 * the clock after the post's bookkeeping, the thread's MPI time and
 * generation, and the posts to skip before the next mark, 0 to 62; an
 * armed post first measures its lead. */
void cf_post_mark_slow(cf_thread_t *t, uint64_t t0, uint64_t t1)
{
    t->post_forced = t->poll_t1 != 0;
    if (t->post_forced)
        cf_post_lead(t, t0, t1);
    uint32_t x = t->post_rng ? t->post_rng : 2463534242u; /* xorshift32 */
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    t->post_rng = x;
    t->post_left = x % 63; /* posts skipped before the next mark: 0 to 62 */
    t->post_t1 = cf_ticks();
    t->post_mpi_ns = t->mpi_ns;
    t->post_gen = atomic_load_explicit(&cf_memo_gen, memory_order_relaxed);
}

/* The switch, and cf_g.fast beside it (cf_site.h: the inline hit reads
 * the TSC and the memo of a call site of one frame) */
static void cf_rec_set(int enabled)
{
    atomic_store(&cf_g.fast,
                 enabled == CF_REC_ON && cf_clock.use_tsc && cf_g.cfg.site_depth == 1 && cf_g.tail_calls);
    /* back on after a pause: the requests posted before may have completed
     * unseen (cf_req_unseen); one exchange, so that a pause between a test
     * and the store cannot leave recording on with no resume counted (a post
     * stamped in between takes the old count: left out, never booked) */
    if (atomic_exchange(&cf_g.enabled, enabled) == 0 && enabled != 0)
        atomic_fetch_add(&cf_g.rec_epoch, 1);
}

void cf_recording_resume(void)
{
    cf_rec_set(CF_REC_ON | cf_rec_hooks());
}

int cf_recording_pause(void)
{
    /* a post's mark does not reach over a pause (cf_post_mark); the memos
     * refill after it */
    atomic_fetch_add(&cf_memo_gen, 1);
    atomic_store(&cf_g.fast, 0);
    return atomic_exchange(&cf_g.enabled, 0) != 0;
}

void cf_recording_restore(int on)
{
    cf_rec_set(on ? CF_REC_ON | cf_rec_hooks() : 0);
}

void cf_call_hooks(void (*enter)(cf_thread_t *t), void (*leave)(cf_thread_t *t, unsigned op))
{
    cf_g.enter_hook = enter;
    cf_g.leave_hook = leave;
    int on = atomic_load(&cf_g.enabled) != 0;
    cf_rec_set(on ? CF_REC_ON | cf_rec_hooks() : 0);
}

/* A call that cf_enter's inline test did not let through: nested, recording
 * off, or hooks to run. */
cf_thread_t *cf_enter_slow(cf_thread_t *t, unsigned op)
{
    if (t->in_wrapper || !cf_recording())
        return NULL;
    t->in_wrapper = CF_IN_HOOKED;
    t->cur_op = op;
    if (cf_g.enter_hook)
        cf_g.enter_hook(t);
    return t;
}

void cf_leave_slow(cf_thread_t *t)
{
    if (cf_g.leave_hook)
        cf_g.leave_hook(t, t->cur_op);
    t->cur_op = 0;
    t->in_wrapper = 0;
}

cf_thread_t *cf_thread_register(void)
{
    cf_thread_t *t = NULL;
    /* a thread refused once is not retried: that would take the lock on
     * every call it makes */
    if (cf_refused)
        return NULL;
    pthread_mutex_lock(&cf_lock);
    uint32_t n = atomic_load(&cf_nthreads);
    if (atomic_load(&cf_g.state) != 1 || n >= cf_g.cfg.max_threads) {
        atomic_fetch_add(&cf_threads_refused, 1);
        goto out;
    }
    t = calloc(1, sizeof(*t));
    if (!t)
        goto out;
    t->snaps = calloc(CF_SCRATCH, sizeof(*t->snaps)); /* zeroed: no snapshot to reuse (cf_req_snap_all) */
    t->status_buf = malloc(CF_SCRATCH * sizeof(*t->status_buf));
    t->scratch_cap = CF_SCRATCH;
    t->chan_key = calloc(CF_CHANNELS, sizeof(uint64_t));
    t->chan = calloc(CF_CHANNELS, sizeof(*t->chan));
    /* room for every record of the thread's table, at most half full */
    uint32_t ne = 64;
    while (ne < 2 * cf_g.cfg.table_size)
        ne <<= 1;
    t->elig = calloc(ne, sizeof(*t->elig));
    t->elig_mask = ne - 1;
    if (!t->snaps || !t->status_buf || !t->chan_key || !t->chan || !t->elig ||
        cf_table_init(&t->table, cf_g.cfg.table_size) != CF_OK) {
        free(t->chan_key);
        free(t->chan);
        free(t->elig);
        free(t->snaps);
        free(t->status_buf);
        free(t);
        t = NULL;
        atomic_fetch_add(&cf_threads_refused, 1);
        goto out;
    }
    /* the modules' state (the matrix, call sites): without room for it
     * the thread records the rest */
    for (size_t m = 0; m < cf_nmods; m++)
        if (cf_mods[m].thread_init)
            cf_mods[m].thread_init(t);
    cf_threads[n] = t;
    atomic_store(&cf_nthreads, n + 1);
    cf_self = t;
out:
    pthread_mutex_unlock(&cf_lock);
    if (!t && atomic_load(&cf_g.state) == 1)
        cf_refused = 1;
    return t;
}

/* ---- datatypes and statuses ---- */

uint64_t cf_type_size_miss(MPI_Datatype t, cf_type_cache_t *e, unsigned gen)
{
    MPI_Count n = 0;
    if (t == MPI_DATATYPE_NULL)
        return 0;
    if (PMPI_Type_size_x(t, &n) != MPI_SUCCESS || n < 0)
        n = 0;
    e->type = t;
    e->gen = gen;
    e->size = (uint64_t)n;
    return (uint64_t)n;
}

#ifndef OPEN_MPI
uint64_t cf_status_bytes(const MPI_Status *st)
{
    int n = 0;
    if (PMPI_Get_count(st, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED || n < 0)
        return 0;
    return (uint64_t)n;
}
#endif

cf_stat_t *cf_table_walk(cf_table_t *tb, uint64_t key)
{
    return cf_table_get(tb, key);
}

/* ---- communicators ---- */

static uint32_t cf_fnv1a(const int *v, int n)
{
    uint32_t h = 2166136261u;
    for (int i = 0; i < n; i++) {
        uint32_t x = (uint32_t)v[i];
        for (int b = 0; b < 4; b++) {
            h ^= (x >> (8 * b)) & 0xffu;
            h *= 16777619u;
        }
    }
    return h;
}

static int *cf_group_world_ranks(MPI_Group g, int n)
{
    int *in = malloc((size_t)(n ? n : 1) * sizeof(int));
    int *out = malloc((size_t)(n ? n : 1) * sizeof(int));
    MPI_Group wg;
    if (!in || !out || PMPI_Comm_group(cf_g.world_handle, &wg) != MPI_SUCCESS) {
        free(in);
        free(out);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        in[i] = i;
    if (PMPI_Group_translate_ranks(g, n, in, wg, out) != MPI_SUCCESS) {
        free(out);
        out = NULL;
    }
    PMPI_Group_free(&wg);
    free(in);
    return out;
}

static int cf_cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

/* An intercommunicator is named by both its groups, sorted, so that the two
 * sides, which see each other as the remote group, agree on its id. */
static uint32_t cf_inter_hash(MPI_Comm comm, const cf_comm_t *c)
{
    MPI_Group lg;
    uint32_t h = 0x1e7e5u;
    if (PMPI_Comm_group(comm, &lg) != MPI_SUCCESS)
        return h;
    int *local = cf_group_world_ranks(lg, c->local_size);
    PMPI_Group_free(&lg);
    int *all = malloc((size_t)(c->local_size + c->size + 1) * sizeof(int));
    if (local && all && c->world) {
        memcpy(all, local, (size_t)c->local_size * sizeof(int));
        memcpy(all + c->local_size, c->world, (size_t)c->size * sizeof(int));
        qsort(all, (size_t)(c->local_size + c->size), sizeof(int), cf_cmp_int);
        h = cf_fnv1a(all, c->local_size + c->size) ^ 0x85ebca6bu;
    }
    free(local);
    free(all);
    return h;
}

static void cf_comm_classify(cf_comm_t *c)
{
    int n = c->size, me = cf_g.world_rank;
    int mynode = cf_g.node;
    char *seen = calloc((size_t)cf_g.nnodes + 1, 1);
    c->peer_path = malloc((size_t)(n ? n : 1));
    c->nodes = 0;
    int any_inter = 0;
    for (int i = 0; i < n; i++) {
        int w = c->world ? c->world[i] : MPI_UNDEFINED;
        int node = (w >= 0 && w < cf_g.world_size) ? cf_g.world_node[w] : -1;
        unsigned path = w == me ? CF_PATH_SELF : node == mynode ? CF_PATH_INTRA : CF_PATH_INTER;
        if (c->peer_path)
            c->peer_path[i] = (uint8_t)path;
        if (node >= 0 && seen && !seen[node]) {
            seen[node] = 1;
            c->nodes++;
        }
        any_inter |= path == CF_PATH_INTER;
    }
    free(seen);
    if (c->inter)
        c->path = any_inter ? CF_PATH_INTER : CF_PATH_INTRA;
    else
        c->path = n <= 1 ? CF_PATH_SELF : c->nodes > 1 ? CF_PATH_INTER : CF_PATH_INTRA;
}

/* ---- the handle table (under cf_lock) ---- */

static int cf_tab_put(cf_comm_tab_t *tb, uintptr_t k, cf_comm_t *c)
{
    uint32_t i = cf_hash_ptr(k);
    for (unsigned n = 0; n < CF_COMM_PROBE; n++) {
        uint32_t s = (i + n) & tb->mask;
        uintptr_t e = atomic_load(&tb->keys[s]);
        if (e == k || e == 0) {
            atomic_store_explicit(&tb->vals[s], c, memory_order_relaxed);
            atomic_store_explicit(&tb->keys[s], k, memory_order_release);
            tb->used += e == 0;
            return 1;
        }
    }
    return 0;
}

/* The description a live handle has, or NULL. */
static cf_comm_t *cf_tab_get(const cf_comm_tab_t *tb, uintptr_t k, uint32_t *slot_p)
{
    uint32_t i = cf_hash_ptr(k);
    for (unsigned n = 0; n < CF_COMM_PROBE; n++) {
        uint32_t s = (i + n) & tb->mask;
        if (atomic_load(&tb->keys[s]) == k) {
            if (slot_p)
                *slot_p = s;
            return atomic_load(&tb->vals[s]);
        }
    }
    return NULL;
}

/* A table twice as large with every live handle, published for the
 * readers; the old one stays as it is for those still probing it. */
static int cf_tab_grow(void)
{
    cf_comm_tab_t *old = atomic_load(&cf_comm_tab);
    for (uint32_t cap = 2 * (old->mask + 1); cap && cap <= (1u << 30); cap *= 2) {
        cf_comm_tab_t *tb = calloc(1, sizeof(*tb));
        _Atomic uintptr_t *keys = calloc(cap, sizeof(*keys));
        cf_comm_t *_Atomic *vals = calloc(cap, sizeof(*vals));
        if (!tb || !keys || !vals) {
            free(tb);
            free(keys);
            free(vals);
            return 0;
        }
        tb->mask = cap - 1;
        tb->keys = keys;
        tb->vals = vals;
        int ok = 1;
        for (uint32_t s = 0; ok && s <= old->mask; s++) {
            uintptr_t k = atomic_load(&old->keys[s]);
            if (k)
                ok = cf_tab_put(tb, k, atomic_load(&old->vals[s]));
        }
        if (ok) {
            atomic_store_explicit(&cf_comm_tab, tb, memory_order_release);
            return 1;
        }
        free(keys);
        free(vals);
        free(tb);
    }
    return 0;
}

static void cf_comm_insert(cf_comm_t *c)
{
    uintptr_t k = (uintptr_t)c->handle;
    cf_comm_tab_t *tb = atomic_load(&cf_comm_tab);
    /* at most half full, so that probe windows stay short */
    if (2 * (tb->used + 1) > tb->mask + 1 && cf_tab_grow())
        tb = atomic_load(&cf_comm_tab);
    while (!cf_tab_put(tb, k, c)) {
        if (!cf_tab_grow())
            return; /* no memory: lookups of this one take the slow path */
        tb = atomic_load(&cf_comm_tab);
    }
}

/* ---- descriptions, one per id ----
 * Every description made stays for the profile (and for requests still in
 * flight on a freed communicator, which refer to it).  A freed one is
 * dormant; the next communicator of the same group, made the same way, in
 * the same place among the live ones of that group, takes it and its id
 * back: a loop of MPI_Comm_dup and MPI_Comm_free costs one description and
 * one set of records, whatever its length. */
cf_comm_t **_Atomic cf_comm_all; /* read without the lock by cf_spill.c */
_Atomic size_t cf_comm_nall;
static size_t cf_comm_cap;
static uint32_t *cf_id_key, *cf_id_idx; /* id -> index + 1 into cf_comm_all, open addressing */
static size_t cf_id_mask;

static cf_comm_t *cf_id_find(uint32_t id)
{
    if (!cf_id_key)
        return NULL;
    for (size_t i = cf_hash_ptr(id) & cf_id_mask; cf_id_idx[i]; i = (i + 1) & cf_id_mask)
        if (cf_id_key[i] == id)
            return atomic_load(&cf_comm_all)[cf_id_idx[i] - 1];
    return NULL;
}

static void cf_id_put(uint32_t *keys, uint32_t *idx, size_t mask, uint32_t id, uint32_t at)
{
    size_t i = cf_hash_ptr(id) & mask;
    while (idx[i])
        i = (i + 1) & mask;
    keys[i] = id;
    idx[i] = at + 1;
}

/* Appends c to the descriptions; 0 when there is no memory. */
static int cf_comm_keep(cf_comm_t *c)
{
    size_t n = atomic_load(&cf_comm_nall);
    if (n == cf_comm_cap) {
        size_t cap = cf_comm_cap ? 2 * cf_comm_cap : 64;
        cf_comm_t **a = malloc(cap * sizeof(*a));
        if (!a)
            return 0;
        if (n)
            memcpy(a, atomic_load(&cf_comm_all), n * sizeof(*a));
        /* the old array stays readable for a signal handler that loaded it */
        atomic_store(&cf_comm_all, a);
        cf_comm_cap = cap;
    }
    if (2 * (n + 1) > cf_id_mask) {
        size_t cap = cf_id_mask ? 2 * (cf_id_mask + 1) : 128;
        uint32_t *k = calloc(cap, sizeof(*k)), *x = calloc(cap, sizeof(*x));
        if (!k || !x) {
            free(k);
            free(x);
            return 0;
        }
        for (size_t i = 0; i < n; i++)
            cf_id_put(k, x, cap - 1, atomic_load(&cf_comm_all)[i]->id, (uint32_t)i);
        free(cf_id_key);
        free(cf_id_idx);
        cf_id_key = k;
        cf_id_idx = x;
        cf_id_mask = cap - 1;
    }
    atomic_load(&cf_comm_all)[n] = c;
    cf_id_put(cf_id_key, cf_id_idx, cf_id_mask, c->id, (uint32_t)n);
    atomic_store(&cf_comm_nall, n + 1);
    return 1;
}

static int cf_same_group(const cf_comm_t *a, const cf_comm_t *b)
{
    return a->inter == b->inter && a->size == b->size && a->local_size == b->local_size && a->world && b->world &&
           memcmp(a->world, b->world, (size_t)a->size * sizeof(int)) == 0;
}

/* Marks the description of a live handle dormant and drops the handle. */
static void cf_comm_drop(MPI_Comm comm)
{
    cf_comm_tab_t *tb = atomic_load(&cf_comm_tab);
    uint32_t s;
    cf_comm_t *c = cf_tab_get(tb, (uintptr_t)comm, &s);
    if (!c)
        return;
    atomic_store(&tb->keys[s], 0);
    tb->used--;
    if (c != cf_comm_world)
        c->handle = MPI_COMM_NULL;
}

static cf_comm_t *cf_comm_describe(MPI_Comm comm, const char *how)
{
    cf_comm_t *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->handle = comm;
    int flag = 0;
    PMPI_Comm_test_inter(comm, &flag);
    c->inter = flag;
    PMPI_Comm_rank(comm, &c->rank);
    PMPI_Comm_size(comm, &c->local_size);
    MPI_Group g;
    if (flag) {
        PMPI_Comm_remote_size(comm, &c->size);
        PMPI_Comm_remote_group(comm, &g);
    } else {
        PMPI_Comm_size(comm, &c->size);
        PMPI_Comm_group(comm, &g);
    }
    c->world = cf_group_world_ranks(g, c->size);
    PMPI_Group_free(&g);
    cf_strlcpy(c->name, how, sizeof(c->name));
    c->instances = 1;
    if (comm == cf_g.world_handle)
        c->id = CF_COMM_ID_WORLD;
    else if (comm == MPI_COMM_SELF)
        c->id = CF_COMM_ID_SELF;
    else {
        uint32_t h = c->world ? cf_fnv1a(c->world, c->size) : 0x5eedu;
        if (flag)
            h = cf_inter_hash(comm, c);
        /* the two sides of an intercommunicator are made by different
         * calls (accept and connect): its groups name it alone */
        for (const char *q = how; !flag && *q; q++)
            h = (h ^ (unsigned char)*q) * 16777619u;
        /* the first place among the live communicators of this group and
         * constructor: the same on every rank, which make and free them in
         * the same order */
        for (uint32_t slot = 0;; slot++) {
            uint32_t id = h ^ (slot * 0x9E3779B9u);
            id = id <= CF_COMM_ID_SELF ? id + 3 : id;
            cf_comm_t *d = cf_id_find(id);
            if (!d) {
                c->id = id;
                break;
            }
            if (d->handle == MPI_COMM_NULL && cf_same_group(d, c)) {
                /* a freed one of the same group: it comes back */
                d->handle = comm;
                d->rank = c->rank;
                d->instances++;
                free(c->world);
                free(c);
                return d;
            }
        }
    }
    cf_comm_classify(c);
    if (!cf_comm_keep(c)) {
        free(c->world);
        free(c->peer_path);
        free(c);
        return NULL;
    }
    return c;
}

void cf_comm_register(MPI_Comm comm, const char *how)
{
    if (comm == MPI_COMM_NULL)
        return;
    pthread_mutex_lock(&cf_lock);
    /* a handle MPI gives out again was freed behind our back */
    cf_comm_drop(comm);
    cf_comm_t *c = cf_comm_describe(comm, how);
    if (c) {
        if (comm == cf_g.world_handle)
            cf_comm_world = c;
        cf_comm_insert(c);
    }
    pthread_mutex_unlock(&cf_lock);
}

cf_comm_t *cf_comm_lookup_slow(MPI_Comm comm)
{
    if (comm == MPI_COMM_NULL || atomic_load(&cf_g.state) != 1)
        return NULL;
    pthread_mutex_lock(&cf_lock);
    cf_comm_t *c = cf_tab_get(atomic_load(&cf_comm_tab), (uintptr_t)comm, NULL);
    if (!c) {
        /* made by a constructor we do not wrap: describe it on first use */
        c = cf_comm_describe(comm, "other");
        if (c)
            cf_comm_insert(c);
    }
    pthread_mutex_unlock(&cf_lock);
    return c;
}

void cf_comm_unregister(MPI_Comm comm)
{
    pthread_mutex_lock(&cf_lock);
    cf_comm_drop(comm);
    pthread_mutex_unlock(&cf_lock);
}


int cf_fail(cf_thread_t *t, unsigned op, int rc, uint64_t t0, uint64_t t1)
{
    int cls = rc;
    if (PMPI_Error_class(rc, &cls) != MPI_SUCCESS || cls < 0 || cls > UINT16_MAX)
        cls = MPI_ERR_UNKNOWN;
    t->mpi_ns += cf_ticks_to_ns(t1 - t0);
    t->failed++;
    /* a few kinds of failure per thread; the last slot takes the calls of
     * the kinds beyond them (op 0, class 0: "other") */
    cf_fail_t *f = &t->fail[CF_FAILS - 1];
    for (unsigned i = 0; i < CF_FAILS - 1; i++)
        if (t->fail[i].calls == 0 || (t->fail[i].op == op && t->fail[i].cls == cls)) {
            f = &t->fail[i];
            f->op = (uint16_t)op;
            f->cls = (uint16_t)cls;
            break;
        }
    f->calls++;
    cf_leave(t);
    return rc;
}
