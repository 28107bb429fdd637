/* The UCX layer: the UCP calls Open MPI's UCX components make beneath an
 * MPI call, each recorded with the MPI operation active on the calling
 * thread (the key's communicator field holds it).
 *
 * Interposition: libcommfit.so exports the ucp_* entry points listed in
 * ucx_calls.spec; their wrappers (cf_ucx_wrappers.c) are generated from it
 * and call this file through cf_ucx_calls.h; the few that are not (worker
 * and endpoint creation, request release, generic datatypes) are here.  The
 * library is preloaded, so the MPI components bind to them, and each
 * forwards to the next definition (dlsym RTLD_NEXT, or the already loaded
 * libucp when the components were opened privately).  We never link
 * libucp: a job that does not use UCX does not load it.
 *
 * Timing: an operation that returns a request is timed from post to its
 * completion callback.  The caller's parameters are copied with our
 * callback and a pooled context as user data; the context keeps the
 * caller's callback and user data, which are called after our bookkeeping.
 * The old _nb/_nbr forms are posted through the _nbx form with the
 * parameters UCX itself builds for them.  Operations that complete in place
 * are recorded at return; a request the caller frees before it completes
 * (UCX then calls no callback) is found by its address and its context
 * returned.  Operations without a completion callback (put/get_nbi,
 * atomic_post, atomic_fetch_nb, am_send_nb) are timed over the call.
 *
 * Peer path: every UCX worker has a unique id in its address.  Each rank's
 * workers are known when MPI_Init returns (we wrap ucp_worker_create); one
 * allgather maps ids to world ranks, and an endpoint's path class follows
 * from the id in the remote address it was created with (ucp_ep_create)
 * and the node map.  Endpoints to workers created after MPI_Init (one-
 * sided windows) are classified by their transports.  A tag receive is
 * posted on a worker, not an endpoint: it gets the class of the world.
 *
 * Hot path: no lock, no allocation (contexts come from a pool sized by
 * COMMFIT_MAX_REQUESTS, claimed with one CAS; a returned request's address
 * is kept in a lock-free map), no MPI call. */
#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "cf_ucx_calls.h"
#include "cf_ucx.h"
#include "cf_sample.h"

static _Atomic int cf_ucx_missing_said;
ucs_status_t cf_ucx_missing(const char *name)
{
    if (!atomic_exchange(&cf_ucx_missing_said, 1))
        cf_log("%s: no UCP library defines it in this process; the call fails with UCS_ERR_UNSUPPORTED", name);
    return UCS_ERR_UNSUPPORTED;
}

/* ---- layer state ---- */
#define CF_UCX_PATH_UNKNOWN 0xffu
#define CF_UCX_WORKERS 4    /* workers per process whose ids are exchanged */
#define CF_UCX_EP_SLOTS 8192 /* endpoints whose path is known; more fall back to the world class */
#define CF_UCX_EP_PROBE 64
#define CF_UCX_EP_DEAD ((uintptr_t)1)
#define CF_UCX_REQ_PROBE 16
#define CF_UCX_TL_MAX 16
#define CF_UCX_TL_LEN 32
#define CF_UCX_PRINT_PER_PATH 32 /* endpoints per path whose transports are read at finalize */

/* rare events, counted per process */
enum {
    CF_UCX_N_WORKERS,
    CF_UCX_N_EPS,
    CF_UCX_N_EPS_BY_ID,
    CF_UCX_N_EPS_BY_TRANSPORT,
    CF_UCX_N_AT_POST,     /* no context left: timed over the call */
    CF_UCX_N_FREED_EARLY, /* freed by the caller before completion */
    CF_UCX_N_FAILED,      /* completed with an error or cancelled */
    CF_UCX_N_UNTRACKED,   /* request address not kept: an early free would leak its context */
    CF_UCX_N_LOST,        /* completion on a thread that could not be registered */
    CF_UCX_N_COUNT
};
static const char *const cf_ucx_n_names[CF_UCX_N_COUNT] = {
    "workers", "endpoints", "endpoints_by_worker_id", "endpoints_by_transport", "timed_over_call",
    "freed_before_completion", "failed_or_cancelled", "untracked", "lost"};

typedef struct {
    _Atomic uintptr_t ep; /* 0 empty, CF_UCX_EP_DEAD closed */
    uint64_t uid;         /* remote worker id, 0 unknown */
    _Atomic int32_t rank; /* world rank of the remote worker, -1 unknown */
    _Atomic uint8_t path;
} cf_ucx_ep_t;

struct cf_ucx_ctx {
    _Atomic uint32_t refs;  /* 0 free; the poster and the completion hold one each */
    _Atomic uint32_t state; /* generation << 1 | completed */
    _Atomic(void *) req;    /* request returned by UCX, for an early free */
    __typeof__(((ucp_request_param_t *)0)->cb) cb;
    void (*old_cb)(void); /* the callback of an _nb form (cast back before the call) */
    void *user_data;
    uint64_t t_post, bytes;
    uint32_t parent;
    uint16_t region;
    uint8_t op, path, has_cb, recv;
};

static struct {
    int wanted;            /* COMMFIT_UCX */
    int ready;             /* worker ids known (under lock) */
    uint8_t recv_path;     /* class of the world: receives and unknown peers */
    pthread_mutex_t lock;  /* endpoint and worker bookkeeping */
    uint64_t local_uid[CF_UCX_WORKERS];
    unsigned nlocal;
    struct cf_ucx_peer {
        uint64_t uid;
        int rank;
    } *peer; /* sorted by uid */
    size_t npeer;
    cf_ucx_ep_t ep[CF_UCX_EP_SLOTS];
    cf_ucx_ctx_t *pool;
    uint32_t pool_mask;
    _Atomic uint64_t *reqmap; /* (generation << 32 | context index + 1) */
    uint32_t reqmap_mask;
    _Atomic uint64_t n[CF_UCX_N_COUNT];
} cf_ucx = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* MPI operations that are collectives, for the matrix (set at init) */
static uint8_t cf_ucx_coll_parent[CF_OP_COUNT];

/* set while this thread is inside a UCP call we forwarded: UCP's own calls
 * to its public functions pass straight through */
__thread int cf_ucx_busy;
static __thread uint32_t cf_ucx_cursor __attribute__((tls_model("initial-exec")));

static inline void cf_ucx_count(unsigned what)
{
    atomic_fetch_add_explicit(&cf_ucx.n[what], 1, memory_order_relaxed);
}

static inline uint32_t cf_ucx_hash(uintptr_t p)
{
    return (uint32_t)(((uint64_t)p * 0x9E3779B97F4A7C15ull) >> 32);
}

/* Thread state when this call is to be recorded, NULL to pass it through. */
static inline cf_thread_t *cf_ucx_enter(void)
{
    if (!cf_recording() ||
        atomic_load_explicit(&cf_g.state, memory_order_acquire) != 1)
        return NULL;
    cf_thread_t *t = cf_self;
    if (__builtin_expect(t == NULL, 0))
        t = cf_thread_register();
    return t;
}

static inline void cf_ucx_record(cf_thread_t *t, unsigned op, unsigned parent, unsigned path, unsigned region,
                                 uint64_t bytes, uint64_t ticks)
{
    uint64_t key = cf_key_make(CF_LAYER_UCX, op, parent, path, region, cf_size_bin(bytes));
    cf_stat_t *s = cf_stat_of(&t->table, key); /* a key that repeats: found on the first probe, inline */
    if (s)
        cf_stat_add(s, bytes, cf_ticks_to_ns(ticks));
}

/* ---- payload ---- */
/* Generic datatypes (Open MPI's non-contiguous MPI types) are packed by the
 * caller's callbacks; their size comes from the same callbacks, so their
 * operations are kept from ucp_dt_create_generic to ucp_dt_destroy.  Not
 * with MPICH, whose callbacks hold the MPI type's references: its
 * non-contiguous sends count 0 bytes in the UCX layer. */
#define CF_UCX_GENERIC_SLOTS 1024
#define CF_UCX_GENERIC_PROBE 32
static struct {
    _Atomic uintptr_t dt; /* 0 empty, 1 destroyed */
    ucp_generic_dt_ops_t ops;
    void *context;
} cf_ucx_generic[CF_UCX_GENERIC_SLOTS];
static pthread_mutex_t cf_ucx_generic_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t cf_ucx_generic_bytes(ucp_datatype_t dt, const void *buffer, size_t count)
{
    uint32_t h = (uint32_t)(((uint64_t)dt * 0x9E3779B97F4A7C15ull) >> 32);
    for (unsigned n = 0; n < CF_UCX_GENERIC_PROBE; n++) {
        __typeof__(cf_ucx_generic[0]) *g = &cf_ucx_generic[(h + n) & (CF_UCX_GENERIC_SLOTS - 1)];
        uintptr_t v = atomic_load_explicit(&g->dt, memory_order_acquire);
        if (v == 0)
            break;
        if (v != dt || !g->ops.start_pack || !g->ops.packed_size || !g->ops.finish)
            continue;
#ifndef OPEN_MPI
        /* MPICH's finish releases the reference its send took on the MPI
         * type: a pack state of our own would release it twice */
        return 0;
#endif
        void *state = g->ops.start_pack(g->context, buffer, count);
        if (!state)
            return 0;
        uint64_t size = g->ops.packed_size(state);
        g->ops.finish(state);
        return size;
    }
    return 0; /* a generic type we did not see made */
}

/* Bytes of count elements of dt at buffer; a generic type's only for sends. */
static inline uint64_t cf_ucx_dt_bytes(ucp_datatype_t dt, const void *buffer, size_t count, int send)
{
    switch (dt & UCP_DATATYPE_CLASS_MASK) {
    case UCP_DATATYPE_CONTIG:
        return (uint64_t)count * (dt >> UCP_DATATYPE_SHIFT);
    case UCP_DATATYPE_IOV: {
        const ucp_dt_iov_t *iov = buffer;
        uint64_t s = 0;
        for (size_t i = 0; iov && i < count; i++)
            s += iov[i].length;
        return s;
    }
    case UCP_DATATYPE_GENERIC:
        return send ? cf_ucx_generic_bytes(dt, buffer, count) : 0;
    default:
        return 0;
    }
}

/* ---- endpoints ---- */
static cf_ucx_ep_t *cf_ucx_ep_find(uintptr_t k)
{
    uint32_t i = cf_ucx_hash(k);
    for (unsigned n = 0; n < CF_UCX_EP_PROBE; n++) {
        cf_ucx_ep_t *e = &cf_ucx.ep[(i + n) & (CF_UCX_EP_SLOTS - 1)];
        uintptr_t v = atomic_load_explicit(&e->ep, memory_order_acquire);
        if (v == k)
            return e;
        if (v == 0)
            return NULL;
    }
    return NULL;
}

/* Path of an endpoint, and in *rank_p the world rank it leads to (-1 when
 * its worker id was not among those exchanged at init). */
static inline unsigned cf_ucx_ep_path(ucp_ep_h ep, int *rank_p)
{
    cf_ucx_ep_t *e = cf_ucx_ep_find((uintptr_t)ep);
    unsigned p = e ? atomic_load_explicit(&e->path, memory_order_relaxed) : CF_UCX_PATH_UNKNOWN;
    *rank_p = e ? atomic_load_explicit(&e->rank, memory_order_relaxed) : -1;
    return p != CF_UCX_PATH_UNKNOWN ? p : cf_ucx.recv_path;
}

/* Lanes of an endpoint as "tl/device" names (ucp_ep_print_info). */
static unsigned cf_ucx_ep_lanes(ucp_ep_h ep, char names[][CF_UCX_TL_LEN], unsigned max)
{
    __typeof__(&ucp_ep_print_info) print = CF_UCX_REAL(ucp_ep_print_info);
    static char buf[16384]; /* under cf_ucx.lock */
    unsigned n = 0;
    if (!print)
        return 0;
    memset(buf, 0, sizeof(buf));
    FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");
    if (!f)
        return 0;
    cf_ucx_busy++;
    print(ep, f);
    cf_ucx_busy--;
    fclose(f);
    /* "#   lane[0]:  3:sysv/memory.0 md[2]  -> md[2]/sysv/sysdev[255] am am_bw#0" */
    for (char *line = buf; line && *line && n < max; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        char *p = strstr(line, "lane[");
        char *end = strchr(line, '\n');
        if (!p || (end && p > end) || !(p = strchr(p, ':')))
            continue;
        p++;
        while (*p == ' ')
            p++;
        while (*p >= '0' && *p <= '9')
            p++;
        if (*p++ != ':')
            continue;
        size_t len = strcspn(p, " \t\n");
        char name[CF_UCX_TL_LEN];
        if (len == 0 || len >= sizeof(name))
            continue;
        memcpy(name, p, len);
        name[len] = 0;
        char *dot = strrchr(name, '.'); /* ".0": the path index on the device */
        if (dot && dot[1] >= '0' && dot[1] <= '9' && strspn(dot + 1, "0123456789") == strlen(dot + 1))
            *dot = 0;
        unsigned j;
        for (j = 0; j < n && strcmp(names[j], name); j++)
            ;
        if (j == n)
            cf_strlcpy(names[n++], name, CF_UCX_TL_LEN);
    }
    return n;
}

static int cf_ucx_tl_is(const char *name, const char *const *tls)
{
    size_t len = strcspn(name, "/");
    for (; *tls; tls++)
        if (strlen(*tls) == len && strncmp(name, *tls, len) == 0)
            return 1;
    return 0;
}

/* Path class from the transports alone: UCX's "self" transport reaches only
 * the same worker; shared memory only this node. */
static unsigned cf_ucx_path_by_lanes(ucp_ep_h ep)
{
    static const char *const self_tls[] = {"self", NULL};
    static const char *const shm_tls[] = {"posix", "sysv", "xpmem", "cma", "knem", NULL};
    char names[CF_UCX_TL_MAX][CF_UCX_TL_LEN];
    unsigned n = cf_ucx_ep_lanes(ep, names, CF_UCX_TL_MAX), self = 0, shm = 0;
    for (unsigned i = 0; i < n; i++) {
        self += cf_ucx_tl_is(names[i], self_tls);
        shm += cf_ucx_tl_is(names[i], shm_tls);
    }
    if (self)
        return CF_PATH_SELF;
    if (shm || cf_g.nnodes <= 1)
        return CF_PATH_INTRA;
    return n ? CF_PATH_INTER : CF_UCX_PATH_UNKNOWN;
}

static int cf_ucx_peer_rank(uint64_t uid)
{
    size_t lo = 0, hi = cf_ucx.npeer;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cf_ucx.peer[mid].uid < uid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < cf_ucx.npeer && cf_ucx.peer[lo].uid == uid ? cf_ucx.peer[lo].rank : -1;
}

/* Path of an endpoint once the worker ids are known; under cf_ucx.lock. */
static void cf_ucx_ep_resolve(cf_ucx_ep_t *e)
{
    int r = e->uid ? cf_ucx_peer_rank(e->uid) : -1;
    unsigned path;
    if (r >= 0 && r < cf_g.world_size && cf_g.world_node) {
        path = r == cf_g.world_rank ? CF_PATH_SELF
               : cf_g.world_node[r] == cf_g.node ? CF_PATH_INTRA : CF_PATH_INTER;
        atomic_store_explicit(&e->rank, r, memory_order_relaxed);
        cf_ucx_count(CF_UCX_N_EPS_BY_ID);
    } else {
        path = cf_ucx_path_by_lanes((ucp_ep_h)atomic_load(&e->ep));
        cf_ucx_count(CF_UCX_N_EPS_BY_TRANSPORT);
    }
    atomic_store_explicit(&e->path, (uint8_t)path, memory_order_relaxed);
}

static uint64_t cf_ucx_address_uid(const ucp_address_t *addr)
{
    __typeof__(&ucp_worker_address_query) query = CF_UCX_REAL(ucp_worker_address_query);
    ucp_worker_address_attr_t a = {.field_mask = UCP_WORKER_ADDRESS_ATTR_FIELD_UID};
    if (!query || !addr || query((ucp_address_t *)addr, &a) != UCS_OK)
        return 0;
    return a.worker_uid;
}

static void cf_ucx_ep_note(ucp_ep_h ep, const ucp_ep_params_t *params)
{
    uint64_t uid = 0;
    if (params && (params->field_mask & UCP_EP_PARAM_FIELD_REMOTE_ADDRESS))
        uid = cf_ucx_address_uid(params->address);
    uintptr_t k = (uintptr_t)ep;
    pthread_mutex_lock(&cf_ucx.lock);
    cf_ucx_ep_t *e = cf_ucx_ep_find(k), *slot = e;
    uint32_t i = cf_ucx_hash(k);
    for (unsigned n = 0; !slot && n < CF_UCX_EP_PROBE; n++) {
        cf_ucx_ep_t *c = &cf_ucx.ep[(i + n) & (CF_UCX_EP_SLOTS - 1)];
        uintptr_t v = atomic_load(&c->ep);
        if (v == 0 || v == CF_UCX_EP_DEAD)
            slot = c;
    }
    if (slot) {
        slot->uid = uid;
        atomic_store(&slot->rank, -1);
        atomic_store(&slot->path, (uint8_t)CF_UCX_PATH_UNKNOWN);
        atomic_store_explicit(&slot->ep, k, memory_order_release);
        if (!e)
            cf_ucx_count(CF_UCX_N_EPS);
        if (cf_ucx.ready)
            cf_ucx_ep_resolve(slot);
    }
    pthread_mutex_unlock(&cf_ucx.lock);
}

void cf_ucx_ep_forget(ucp_ep_h ep)
{
    pthread_mutex_lock(&cf_ucx.lock);
    cf_ucx_ep_t *e = cf_ucx_ep_find((uintptr_t)ep);
    if (e)
        atomic_store_explicit(&e->ep, CF_UCX_EP_DEAD, memory_order_release);
    pthread_mutex_unlock(&cf_ucx.lock);
}

/* ---- contexts of operations in flight ---- */
static cf_ucx_ctx_t *cf_ucx_ctx_get(cf_thread_t *t)
{
    cf_ucx_ctx_t *pool = cf_ucx.pool;
    if (!pool)
        return NULL;
    if (__builtin_expect(cf_ucx_cursor == 0, 0))
        cf_ucx_cursor = cf_ucx_hash((uintptr_t)t) | 1;
    /* from the context this thread took last: when operations complete as
     * fast as they are posted, the same few stay in cache */
    for (unsigned n = 0; n < 64; n++, cf_ucx_cursor++) {
        cf_ucx_ctx_t *c = &pool[cf_ucx_cursor & cf_ucx.pool_mask];
        uint32_t zero = 0;
        if (atomic_load_explicit(&c->refs, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_strong(&c->refs, &zero, 2)) {
            uint32_t gen = (atomic_load(&c->state) >> 1) + 1;
            atomic_store(&c->state, gen << 1);
            atomic_store_explicit(&c->req, NULL, memory_order_relaxed);
            return c;
        }
    }
    return NULL;
}

static inline void cf_ucx_ctx_put(cf_ucx_ctx_t *c)
{
    atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel);
}

/* An entry of the request map is stale once its context moved on. */
static inline int cf_ucx_word_live(uint64_t w, cf_ucx_ctx_t **c_p)
{
    if (!w)
        return 0;
    cf_ucx_ctx_t *c = &cf_ucx.pool[(uint32_t)w - 1];
    *c_p = c;
    return atomic_load(&c->state) == (uint32_t)(w >> 32) << 1;
}

/* The operation is over (completion callback, completion in place, or an
 * early free): record it if this caller is the first to say so, and give
 * back the completion's reference.  Inline in each completion callback: a
 * call there costs the register saves around it on every operation. */
CF_HOT void cf_ucx_complete(cf_ucx_ctx_t *c, ucs_status_t status, uint64_t bytes, int early)
{
    if (atomic_fetch_or(&c->state, 1u) & 1u)
        return;
    uint64_t now = cf_ticks();
    if (status != UCS_OK) {
        cf_ucx_count(CF_UCX_N_FAILED);
    } else if (cf_recording() &&
               atomic_load_explicit(&cf_g.state, memory_order_acquire) == 1) {
        cf_thread_t *t = cf_self;
        if (!t)
            t = cf_thread_register();
        if (t)
            cf_ucx_record(t, c->op, c->parent, c->path, c->region, bytes, now - c->t_post);
        else
            cf_ucx_count(CF_UCX_N_LOST);
        if (early)
            cf_ucx_count(CF_UCX_N_FREED_EARLY);
    }
    cf_ucx_ctx_put(c);
}

/* Keeps the request's address so that an early free finds the context. */
static void cf_ucx_track(cf_ucx_ctx_t *c, void *req)
{
    atomic_store_explicit(&c->req, req, memory_order_relaxed);
    uint32_t st = atomic_load(&c->state);
    if (st & 1u)
        return; /* completed inside the call */
    uint64_t word = (uint64_t)(st >> 1) << 32 | (uint64_t)(c - cf_ucx.pool + 1);
    uint32_t h = cf_ucx_hash((uintptr_t)req);
    for (unsigned n = 0; n < CF_UCX_REQ_PROBE; n++) {
        _Atomic uint64_t *slot = &cf_ucx.reqmap[(h + n) & cf_ucx.reqmap_mask];
        uint64_t v = atomic_load(slot);
        cf_ucx_ctx_t *o;
        if ((v == 0 || !cf_ucx_word_live(v, &o)) && atomic_compare_exchange_strong(slot, &v, word)) {
            if (atomic_load(&c->state) & 1u) /* completed meanwhile on another thread */
                atomic_compare_exchange_strong(slot, &word, 0);
            return;
        }
    }
    cf_ucx_count(CF_UCX_N_UNTRACKED);
}

/* ---- posting (cf_ucx_calls.h) ---- */
static void cf_ucx_send_done(void *request, ucs_status_t status, void *user_data);
static void cf_ucx_tag_recv_done(void *request, ucs_status_t status, const ucp_tag_recv_info_t *info,
                                 void *user_data);
static void cf_ucx_stream_recv_done(void *request, ucs_status_t status, size_t length, void *user_data);

int cf_ucx_post(cf_ucx_post_t *ps, unsigned op, int flavor, ucp_ep_h ep, ucp_datatype_t dt, const void *buffer,
                size_t count, uint64_t extra, const ucp_request_param_t *in, ucp_request_param_t *out,
                cf_ucx_oldcb_t old_cb, int can_time)
{
    ps->t = cf_ucx_enter();
    if (!ps->t)
        return CF_UCX_PASS;
    uint64_t bytes = extra + cf_ucx_dt_bytes(dt, buffer, count, flavor == CF_UCX_SEND);
    int peer = -1;
    ps->op = op;
    ps->path = ep ? cf_ucx_ep_path(ep, &peer) : cf_ucx.recv_path;
    /* the collectives' share of the matrix: a send beneath a blocking
     * collective to a peer whose worker is known (the communicator of the
     * parent call is not known here: all communicators) */
    if (flavor == CF_UCX_SEND && peer >= 0 && ps->t->cur_op < CF_OP_COUNT && cf_ucx_coll_parent[ps->t->cur_op])
        cf_peer_count(ps->t, CF_COMM_ID_NONE, peer, CF_PEER_UCX, bytes);
    ps->bytes = bytes;
    ps->caller_mask = in ? in->op_attr_mask : 0;
    ps->c = can_time ? cf_ucx_ctx_get(ps->t) : NULL;
    if (!ps->c) {
        if (can_time)
            cf_ucx_count(CF_UCX_N_AT_POST);
        ps->t0 = cf_ticks();
        return CF_UCX_UNTIMED;
    }
    cf_ucx_ctx_t *c = ps->c;
    if (in)
        *out = *in;
    else
        memset(out, 0, sizeof(*out));
    c->has_cb = (out->op_attr_mask & UCP_OP_ATTR_FIELD_CALLBACK) != 0;
    c->cb = out->cb;
    c->old_cb = old_cb;
    c->user_data = (out->op_attr_mask & UCP_OP_ATTR_FIELD_USER_DATA) ? out->user_data : NULL;
    c->bytes = bytes;
    c->op = (uint8_t)op;
    c->recv = flavor != CF_UCX_SEND;
    c->path = (uint8_t)ps->path;
    c->parent = ps->t->cur_op;
    c->region = (uint16_t)atomic_load_explicit(&cf_g.region, memory_order_relaxed);
    out->op_attr_mask |= UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    out->user_data = c;
    if (flavor == CF_UCX_SEND)
        out->cb.send = cf_ucx_send_done;
    else if (flavor == CF_UCX_TAG_RECV)
        out->cb.recv = cf_ucx_tag_recv_done;
    else
        out->cb.recv_stream = cf_ucx_stream_recv_done;
    ps->t0 = c->t_post = cf_ticks();
    return CF_UCX_TIMED;
}

ucs_status_ptr_t cf_ucx_end(const cf_ucx_post_t *ps, ucs_status_ptr_t ret, uint64_t bytes)
{
    cf_ucx_ctx_t *c = ps->c;
    if (!c) {
        if (UCS_PTR_IS_ERR(ret)) {
            cf_ucx_count(CF_UCX_N_FAILED);
        } else {
            cf_ucx_record(ps->t, ps->op, ps->t->cur_op, ps->path,
                          (unsigned)atomic_load_explicit(&cf_g.region, memory_order_relaxed), bytes,
                          cf_ticks() - ps->t0);
        }
        return ret;
    }
    uint32_t st = atomic_load_explicit(&c->state, memory_order_relaxed);
    if (ret == NULL && !(st & 1u)) {
        /* completed in place, no callback ran: UCX calls none now and gave
         * no request to free, so both references are ours and no other
         * thread sees the context; what cf_ucx_complete does, without its
         * atomics */
        atomic_store_explicit(&c->state, st | 1u, memory_order_relaxed);
        if (cf_recording() && atomic_load_explicit(&cf_g.state, memory_order_acquire) == 1)
            cf_ucx_record(ps->t, c->op, c->parent, c->path, c->region, bytes, cf_ticks() - c->t_post);
        atomic_store_explicit(&c->refs, 0, memory_order_release);
        return ret;
    }
    if (ret == NULL)
        cf_ucx_complete(c, UCS_OK, bytes, 0);
    else if (UCS_PTR_IS_ERR(ret))
        cf_ucx_complete(c, UCS_PTR_STATUS(ret), 0, 0);
    else if (!(ps->caller_mask & UCP_OP_ATTR_FIELD_REQUEST)) /* the caller's own memory is never freed */
        cf_ucx_track(c, ret);
    cf_ucx_ctx_put(c);
    return ret;
}

/* ---- completion callbacks: our bookkeeping, then the caller's ---- */
static void cf_ucx_send_done(void *request, ucs_status_t status, void *user_data)
{
    cf_ucx_ctx_t *c = user_data;
    ucp_send_nbx_callback_t cb = c->has_cb ? c->cb.send : NULL;
    ucp_send_callback_t old = (ucp_send_callback_t)c->old_cb;
    void *ud = c->user_data;
    cf_ucx_complete(c, status, c->bytes, 0);
    if (old)
        old(request, status);
    else if (cb)
        cb(request, status, ud);
}

static void cf_ucx_tag_recv_done(void *request, ucs_status_t status, const ucp_tag_recv_info_t *info,
                                 void *user_data)
{
    cf_ucx_ctx_t *c = user_data;
    ucp_tag_recv_nbx_callback_t cb = c->has_cb ? c->cb.recv : NULL;
    ucp_tag_recv_callback_t old = (ucp_tag_recv_callback_t)c->old_cb;
    void *ud = c->user_data;
    cf_ucx_complete(c, status, info ? info->length : 0, 0);
    if (old) /* the old form's info is not const; UCX passes its own */
        old(request, status, (ucp_tag_recv_info_t *)info);
    else if (cb)
        cb(request, status, info, ud);
}

static void cf_ucx_stream_recv_done(void *request, ucs_status_t status, size_t length, void *user_data)
{
    cf_ucx_ctx_t *c = user_data;
    ucp_stream_recv_nbx_callback_t cb = c->has_cb ? c->cb.recv_stream : NULL;
    ucp_stream_recv_callback_t old = (ucp_stream_recv_callback_t)c->old_cb;
    void *ud = c->user_data;
    cf_ucx_complete(c, status, length, 0);
    if (old)
        old(request, status, length);
    else if (cb)
        cb(request, status, length, ud);
}

/* ---- receives completed in place ---- */
/* Size of a receive that completed in place.  Some UCX versions (1.13) do
 * not fill recv_info then; a request in the caller's memory still holds it,
 * otherwise the buffer's size is the bound we know. */
uint64_t cf_ucx_recv_length(const ucp_request_param_t *caller_param, ucp_tag_recv_info_t *info,
                            ucp_tag_recv_info_t *caller_info, uint64_t capacity)
{
    if (info->length != CF_UCX_LEN_UNSET) {
        if (caller_info)
            *caller_info = *info;
        return info->length;
    }
    if (caller_param && (caller_param->op_attr_mask & UCP_OP_ATTR_FIELD_REQUEST)) {
        __typeof__(&ucp_tag_recv_request_test) test = CF_UCX_REAL(ucp_tag_recv_request_test);
        ucp_tag_recv_info_t held;
        if (test && test(caller_param->request, &held) != UCS_INPROGRESS)
            return held.length;
    }
    return capacity;
}

/* ---- requests the caller releases ---- */
static void cf_ucx_release(void *request, void (*real)(void *))
{
    uint64_t w = 0;
    _Atomic uint64_t *slot = NULL;
    cf_ucx_ctx_t *c = NULL;
    /* no context was handed out (the layer off), or UCX frees its own */
    if (!atomic_load_explicit(&cf_ucx_on, memory_order_relaxed) || cf_ucx_busy || !request) {
        real(request);
        return;
    }
    __typeof__(&ucp_request_check_status) status = CF_UCX_REAL(ucp_request_check_status);
    /* UCX marks a request complete after its callback ran: only one still in
     * flight can have a context we must take back */
    if (status && status(request) == UCS_INPROGRESS) {
        uint32_t h = cf_ucx_hash((uintptr_t)request);
        for (unsigned n = 0; n < CF_UCX_REQ_PROBE && !slot; n++) {
            _Atomic uint64_t *s = &cf_ucx.reqmap[(h + n) & cf_ucx.reqmap_mask];
            uint64_t v = atomic_load(s);
            if (cf_ucx_word_live(v, &c) && atomic_load_explicit(&c->req, memory_order_relaxed) == request) {
                slot = s;
                w = v;
            }
        }
    }
    cf_ucx_busy++;
    real(request);
    cf_ucx_busy--;
    if (!slot)
        return;
    /* UCX calls no callback after the release: unless it completed before,
     * the operation is over for us now */
    uint32_t live = (uint32_t)(w >> 32) << 1;
    if (atomic_load(&c->state) == live) {
        /* a receive freed early never says how much arrived: not counted */
        if (c->recv) {
            if (atomic_compare_exchange_strong(&c->state, &live, live | 1u)) {
                cf_ucx_count(CF_UCX_N_FREED_EARLY);
                cf_ucx_ctx_put(c);
            }
        } else {
            cf_ucx_complete(c, UCS_OK, c->bytes, 1);
        }
    }
    atomic_compare_exchange_strong(slot, &w, 0);
}

void ucp_request_free(void *request)
{
    __typeof__(&ucp_request_free) real = CF_UCX_REAL(ucp_request_free);
    if (real)
        cf_ucx_release(request, real);
}

void ucp_request_release(void *request)
{
    __typeof__(&ucp_request_release) real = CF_UCX_REAL(ucp_request_release);
    if (real)
        cf_ucx_release(request, real);
}

/* ---- generic datatypes ---- */
ucs_status_t ucp_dt_create_generic(const ucp_generic_dt_ops_t *ops, void *context, ucp_datatype_t *datatype_p)
{
    __typeof__(&ucp_dt_create_generic) real = CF_UCX_REAL(ucp_dt_create_generic);
    if (!real)
        return cf_ucx_missing(__func__);
    cf_ucx_busy++;
    ucs_status_t st = real(ops, context, datatype_p);
    cf_ucx_busy--;
    if (st != UCS_OK || !ops || !datatype_p)
        return st;
    uintptr_t dt = *datatype_p;
    uint32_t h = (uint32_t)(((uint64_t)dt * 0x9E3779B97F4A7C15ull) >> 32);
    pthread_mutex_lock(&cf_ucx_generic_lock);
    for (unsigned n = 0; n < CF_UCX_GENERIC_PROBE; n++) {
        __typeof__(cf_ucx_generic[0]) *g = &cf_ucx_generic[(h + n) & (CF_UCX_GENERIC_SLOTS - 1)];
        uintptr_t v = atomic_load(&g->dt);
        if (v == 0 || v == 1 || v == dt) {
            /* readers skip the slot while it is rewritten */
            atomic_store(&g->dt, (uintptr_t)1);
            g->ops = *ops;
            g->context = context;
            atomic_store_explicit(&g->dt, dt, memory_order_release);
            break;
        }
    }
    pthread_mutex_unlock(&cf_ucx_generic_lock);
    return st;
}

void cf_ucx_generic_forget(ucp_datatype_t dt)
{
    uint32_t h = (uint32_t)(((uint64_t)dt * 0x9E3779B97F4A7C15ull) >> 32);
    pthread_mutex_lock(&cf_ucx_generic_lock);
    for (unsigned n = 0; n < CF_UCX_GENERIC_PROBE; n++) {
        __typeof__(cf_ucx_generic[0]) *g = &cf_ucx_generic[(h + n) & (CF_UCX_GENERIC_SLOTS - 1)];
        uintptr_t v = atomic_load(&g->dt);
        if (v == 0)
            break;
        if (v == dt)
            atomic_store(&g->dt, (uintptr_t)1);
    }
    pthread_mutex_unlock(&cf_ucx_generic_lock);
}

/* ---- workers and endpoints ---- */
ucs_status_t ucp_worker_create(ucp_context_h context, const ucp_worker_params_t *params, ucp_worker_h *worker_p)
{
    __typeof__(&ucp_worker_create) real = CF_UCX_REAL(ucp_worker_create);
    if (!real)
        return cf_ucx_missing(__func__);
    cf_ucx_busy++;
    ucs_status_t st = real(context, params, worker_p);
    cf_ucx_busy--;
    __typeof__(&ucp_worker_query) query = CF_UCX_REAL(ucp_worker_query);
    __typeof__(&ucp_worker_release_address) rel = CF_UCX_REAL(ucp_worker_release_address);
    if (st != UCS_OK || !query || !rel)
        return st;
    ucp_worker_attr_t attr = {.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS};
    if (query(*worker_p, &attr) != UCS_OK)
        return st;
    uint64_t uid = cf_ucx_address_uid(attr.address);
    rel(*worker_p, attr.address);
    cf_ucx_count(CF_UCX_N_WORKERS);
    pthread_mutex_lock(&cf_ucx.lock);
    if (uid && cf_ucx.nlocal < CF_UCX_WORKERS)
        cf_ucx.local_uid[cf_ucx.nlocal++] = uid;
    pthread_mutex_unlock(&cf_ucx.lock);
    return st;
}

ucs_status_t ucp_ep_create(ucp_worker_h worker, const ucp_ep_params_t *params, ucp_ep_h *ep_p)
{
    __typeof__(&ucp_ep_create) real = CF_UCX_REAL(ucp_ep_create);
    if (!real)
        return cf_ucx_missing(__func__);
    int nested = cf_ucx_busy++;
    ucs_status_t st = real(worker, params, ep_p);
    cf_ucx_busy--;
    /* endpoints the plugin's finalize makes (its own messages, to ranks
     * the program never spoke to) are not the program's */
    if (st == UCS_OK && ep_p && *ep_p && !nested && !atomic_load_explicit(&cf_g.finalizing, memory_order_relaxed))
        cf_ucx_ep_note(*ep_p, params);
    return st;
}

/* ---- start and end of the run ---- */
static int cf_ucx_cmp_peer(const void *a, const void *b)
{
    const struct cf_ucx_peer *x = a, *y = b;
    return x->uid < y->uid ? -1 : x->uid > y->uid;
}

static int cf_ucx_env_on(int complain)
{
    const char *s = getenv("COMMFIT_UCX");
    if (!s || !*s)
        return 1;
    if (!strcmp(s, "1") || !strcasecmp(s, "yes") || !strcasecmp(s, "true") || !strcasecmp(s, "on"))
        return 1;
    if (!strcmp(s, "0") || !strcasecmp(s, "no") || !strcasecmp(s, "false") || !strcasecmp(s, "off"))
        return 0;
    if (complain)
        cf_log("COMMFIT_UCX='%s' is not a boolean (1/0, yes/no, true/false, on/off); using 1", s);
    return 1;
}

void cf_ucx_init(void)
{
    for (unsigned op = 0; op < CF_OP_COUNT; op++)
        cf_ucx_coll_parent[op] = strcmp(cf_op_kinds[op], "collective") == 0;
    int size = cf_g.world_size > 0 ? cf_g.world_size : 1;
    cf_ucx.wanted = cf_ucx_env_on(cf_g.world_rank == 0);
    cf_ucx.recv_path = size <= 1 ? CF_PATH_SELF : cf_g.nnodes > 1 ? CF_PATH_INTER : CF_PATH_INTRA;

    /* which world rank owns each worker: every rank takes part */
    uint64_t mine[CF_UCX_WORKERS] = {0};
    pthread_mutex_lock(&cf_ucx.lock);
    memcpy(mine, cf_ucx.local_uid, sizeof(mine));
    pthread_mutex_unlock(&cf_ucx.lock);
    uint64_t *all = calloc((size_t)size * CF_UCX_WORKERS, sizeof(uint64_t));
    struct cf_ucx_peer *peer = calloc((size_t)size * CF_UCX_WORKERS, sizeof(*peer));
    /* all ranks agree first, so that one without memory holds no one up */
    int ok = all && peer, all_ok = 0;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, cf_g.tool_comm);
    if (all_ok)
        PMPI_Allgather(mine, CF_UCX_WORKERS, MPI_UINT64_T, all, CF_UCX_WORKERS, MPI_UINT64_T, cf_g.tool_comm);
    else if (cf_g.world_rank == 0)
        cf_log("no memory to map UCX workers to ranks; UCX endpoints are classed by their transports");
    size_t np = 0;
    for (size_t i = 0; all_ok && i < (size_t)size * CF_UCX_WORKERS; i++)
        if (all[i]) {
            peer[np].uid = all[i];
            peer[np++].rank = (int)(i / CF_UCX_WORKERS);
        }
    free(all);
    if (peer)
        qsort(peer, np, sizeof(*peer), cf_ucx_cmp_peer);

    pthread_mutex_lock(&cf_ucx.lock);
    cf_ucx.peer = peer;
    cf_ucx.npeer = peer ? np : 0;
    for (unsigned i = 0; i < CF_UCX_EP_SLOTS; i++) {
        uintptr_t v = atomic_load(&cf_ucx.ep[i].ep);
        if (v && v != CF_UCX_EP_DEAD)
            cf_ucx_ep_resolve(&cf_ucx.ep[i]);
    }
    cf_ucx.ready = 1; /* endpoints made from now on are placed when made */
    pthread_mutex_unlock(&cf_ucx.lock);

    if (!cf_ucx.wanted)
        return;
    uint32_t cap = 64;
    while (cap < cf_g.cfg.max_requests)
        cap <<= 1;
    cf_ucx.pool = calloc(cap, sizeof(*cf_ucx.pool));
    cf_ucx.reqmap = calloc((size_t)cap * 2, sizeof(*cf_ucx.reqmap));
    if (!cf_ucx.pool || !cf_ucx.reqmap) {
        free(cf_ucx.pool);
        free((void *)cf_ucx.reqmap);
        cf_ucx.pool = NULL;
        cf_ucx.reqmap = NULL;
        if (cf_g.world_rank == 0)
            cf_log("no memory for %u UCX operations in flight; the UCX layer is off", cap);
        return;
    }
    cf_ucx.pool_mask = cap - 1;
    cf_ucx.reqmap_mask = cap * 2 - 1;
    atomic_store(&cf_ucx_on, 1);
}

/* Transports of the live endpoints, per path, and the counters: one
 * reduction to rank 0 with an operator that merges the name sets. */
typedef struct {
    char tl[3][CF_UCX_TL_MAX][CF_UCX_TL_LEN];
    uint64_t n[CF_UCX_N_COUNT];
    uint64_t eps_path[3];
} cf_ucx_wire_t;

static void cf_ucx_wire_add(cf_ucx_wire_t *w, unsigned path, const char *name)
{
    unsigned j;
    for (j = 0; j < CF_UCX_TL_MAX && w->tl[path][j][0]; j++)
        if (!strncmp(w->tl[path][j], name, CF_UCX_TL_LEN))
            return;
    if (j < CF_UCX_TL_MAX)
        cf_strlcpy(w->tl[path][j], name, CF_UCX_TL_LEN);
}

static void cf_ucx_wire_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    cf_ucx_wire_t *a = in, *b = inout;
    for (int l = 0; l < *len; l++, a++, b++) {
        for (unsigned p = 0; p < 3; p++) {
            for (unsigned j = 0; j < CF_UCX_TL_MAX && a->tl[p][j][0]; j++) {
                char name[CF_UCX_TL_LEN];
                memcpy(name, a->tl[p][j], CF_UCX_TL_LEN);
                name[CF_UCX_TL_LEN - 1] = 0;
                cf_ucx_wire_add(b, p, name);
            }
            b->eps_path[p] += a->eps_path[p];
        }
        for (unsigned i = 0; i < CF_UCX_N_COUNT; i++)
            b->n[i] += a->n[i];
    }
}

static int cf_ucx_cmp_name(const void *a, const void *b)
{
    return strncmp(a, b, CF_UCX_TL_LEN);
}

json_t *cf_ucx_section(const cf_fin_t *f)
{
    (void)f;
    /* without memory a rank still takes part, with nothing to add */
    static cf_ucx_wire_t empty, sum_fallback;
    cf_ucx_wire_t *w = calloc(1, sizeof(*w));
    cf_ucx_wire_t *mine = w ? w : &empty;
    cf_ucx_wire_t *sum = NULL;
    if (cf_g.world_rank == 0) {
        sum = calloc(1, sizeof(*sum));
        if (!sum)
            memset(sum = &sum_fallback, 0, sizeof(sum_fallback));
    }
    if (w) {
        unsigned printed[3] = {0, 0, 0};
        pthread_mutex_lock(&cf_ucx.lock);
        for (unsigned i = 0; i < CF_UCX_EP_SLOTS; i++) {
            uintptr_t v = atomic_load(&cf_ucx.ep[i].ep);
            unsigned path = atomic_load(&cf_ucx.ep[i].path);
            if (!v || v == CF_UCX_EP_DEAD || path > CF_PATH_INTER)
                continue;
            w->eps_path[path]++;
            if (printed[path]++ >= CF_UCX_PRINT_PER_PATH)
                continue;
            char names[CF_UCX_TL_MAX][CF_UCX_TL_LEN];
            unsigned n = cf_ucx_ep_lanes((ucp_ep_h)v, names, CF_UCX_TL_MAX);
            for (unsigned j = 0; j < n; j++)
                cf_ucx_wire_add(w, path, names[j]);
        }
        pthread_mutex_unlock(&cf_ucx.lock);
        for (unsigned i = 0; i < CF_UCX_N_COUNT; i++)
            w->n[i] = atomic_load(&cf_ucx.n[i]);
    }
    MPI_Datatype t;
    MPI_Op op;
    PMPI_Type_contiguous((int)sizeof(cf_ucx_wire_t), MPI_BYTE, &t);
    PMPI_Type_commit(&t);
    PMPI_Op_create(cf_ucx_wire_op, 1, &op);
    PMPI_Reduce(mine, sum, 1, t, op, 0, cf_g.tool_comm);
    PMPI_Op_free(&op);
    PMPI_Type_free(&t);
    free(w);
    if (!sum)
        return NULL;

    json_t *s = json_object();
    json_object_set_new(s, "enabled", json_boolean(cf_ucx.wanted && cf_ucx.pool));
    json_t *tls = json_object(), *eps = json_object();
    for (unsigned p = 0; p < 3; p++) {
        json_t *arr = json_array();
        unsigned ntl = 0;
        while (ntl < CF_UCX_TL_MAX && sum->tl[p][ntl][0])
            ntl++;
        qsort(sum->tl[p], ntl, CF_UCX_TL_LEN, cf_ucx_cmp_name); /* the same order whatever the reduction's */
        for (unsigned j = 0; j < ntl; j++)
            json_array_append_new(arr, json_stringn(sum->tl[p][j], strnlen(sum->tl[p][j], CF_UCX_TL_LEN)));
        if (json_array_size(arr))
            json_object_set_new(tls, cf_path_name(p), arr);
        else
            json_decref(arr);
        if (sum->eps_path[p])
            json_object_set_new(eps, cf_path_name(p), json_integer((json_int_t)sum->eps_path[p]));
    }
    json_object_set_new(s, "transports", tls);
    json_object_set_new(s, "endpoints_by_path", eps);
    for (unsigned i = 0; i < CF_UCX_N_COUNT; i++)
        json_object_set_new(s, cf_ucx_n_names[i], json_integer((json_int_t)sum->n[i]));
    json_object_set_new(s, "receive_path",
                        json_string("class of the world (a receive is posted on a worker, not an endpoint)"));
    if (sum != &sum_fallback)
        free(sum);
    return s;
}
