/* The plugin's runtime: per-thread tables, communicators, requests.
 * Everything the generated wrappers call is here and inline: no lock, no
 * allocation and no MPI call on the hot path other than the wrapped one. */
#ifndef CF_RUNTIME_H
#define CF_RUNTIME_H

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
/* The wrappers are the library's interface: default visibility, which
 * Open MPI's mpi.h declares and MPICH's leaves to the build (everything
 * else here is hidden).  A definition keeps its first declaration's. */
#pragma GCC visibility push(default)
#include <mpi.h>
#pragma GCC visibility pop
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include "cf_bins.h"
#include "cf_clock.h"
#include "cf_common.h"
#include "cf_ops.h"

/* ---- operations: indices come from the generated list (mpi_calls.spec) ---- */
enum {
    CF_OP_NONE = 0,
#define CF_X(name, kind) CF_OP_##name,
    CF_MPI_OPS(CF_X)
#undef CF_X
    CF_OP_COUNT
};
CF_HIDDEN extern const char *const cf_op_names[CF_OP_COUNT];
CF_HIDDEN extern const char *const cf_op_kinds[CF_OP_COUNT];
/* Name and profile kind of an operation of a layer (MPI, or UCX beneath it). */
CF_HIDDEN const char *cf_layer_op_name(unsigned layer, unsigned op);
CF_HIDDEN const char *cf_layer_op_kind(unsigned layer, unsigned op);
#ifdef CF_HAVE_UCX
/* Defined by the UCX layer (cf_ucx.c): index 0 is unused. */
CF_HIDDEN extern const char *const cf_ucx_op_names[];
CF_HIDDEN extern const char *const cf_ucx_op_kinds[];
CF_HIDDEN extern const unsigned cf_ucx_op_count;
#endif

/* ---- configuration, from COMMFIT_* variables ---- */
typedef struct {
    int disable;
    int summary;
    int verbose;
    uint32_t table_size;   /* stats entries per thread */
    uint32_t max_requests; /* in-flight requests tracked */
    uint32_t merge_max;    /* distinct keys in the merged profile */
    uint32_t merge_comms;  /* distinct communicators in the merged profile */
    uint32_t max_threads;
    uint32_t samples;      /* sample buffer entries (collectives, sends, receives each) */
    uint32_t sample_every; /* after the first ones, 1 in this many (a power of two) */
    uint32_t trace;        /* sampled collective instances per rank kept for commfit trace */
    int spill;             /* a job that does not finish leaves its records in the spool */
    int protocol;          /* read the library's protocol limits at finalize (COMMFIT_PROTOCOL) */
    int gather;            /* commfit run gathers the spool (ranks stay quiet) */
    uint32_t spool_fanout; /* ranks per subdirectory of the spool, 0 = one directory */
    uint32_t site_depth;   /* frames per call site (COMMFIT_CALLSITE_DEPTH; 1 when it is 0) */
    int sites_shown;       /* call sites in the profile: COMMFIT_CALLSITE_DEPTH > 0 */
    uint32_t sites_max;    /* call-site slots per thread (COMMFIT_CALLSITES_MAX) */
    double calibrate_s;    /* calibration budget at finalize (COMMFIT_CALIBRATE): -1 auto, 0 off */
    uint64_t calibrate_max_bytes; /* largest calibration buffer (COMMFIT_CALIBRATE_MAX_BYTES) */
    int timer;             /* COMMFIT_TIMER: a CF_TIMER_* (cf_clock.h) */
    char output[4096];     /* "" = default name */
    char spool[4096];      /* "" = from the profile's name */
} cf_config_t;

/* ---- communicators ---- */
typedef struct {
    MPI_Comm handle;
    uint32_t id;
    int size;       /* of the group peers are named in: the remote one of an intercommunicator */
    int local_size; /* of the group this rank belongs to */
    int rank, nodes;
    int inter;
    uint8_t path;         /* class of the communicator as a whole */
    uint8_t *peer_path;   /* path to each rank of the (remote) group */
    int *world;           /* world rank of each rank of the (remote) group */
    _Atomic uint64_t seq; /* collective sequence number (cf_sample.h) */
    _Atomic uint64_t sample_next; /* the next sequence number the sampler chooses (cf_sample.h) */
    uint64_t instances;   /* communicators that held this description (and id) over the run */
    char name[48];
    /* written by the constructor's wrapper (cf_lifecycle.c) before the handle
     * reaches the program, and by MPI_Comm_set_name; read at finalize */
    char desc[CF_COMM_DESC_LEN];      /* "split of world, colour 3"; "" when unknown */
    char user_name[CF_COMM_USER_LEN]; /* MPI_Comm_set_name; "" when not set */
} cf_comm_t;

/* ---- requests in flight ---- */
/* a request table's key word: the handle in its low 48 bits, the slot's
 * generation above (cf_request.h) */
#define CF_REQ_HANDLE_MASK ((UINT64_C(1) << 48) - 1)
/* NOMSG: not a message, left out of message matching (files, one-sided,
 * partitioned, Isendrecv); STATUS: its bytes are in the completion's status
 * (file accesses); CANCEL: MPI_Cancel was called on it */
enum {
    CF_REQ_RECV = 1,
    CF_REQ_PERSISTENT = 2,
    CF_REQ_ACTIVE = 4,
    CF_REQ_COLL = 8,
    CF_REQ_NOMSG = 16,
    CF_REQ_STATUS = 32,
    CF_REQ_CANCEL = 64
};
typedef struct {
    uint64_t t_post; /* ticks */
    uint64_t bytes;  /* posted payload; receives: upper bound until the status says */
    /* the record key of the post (operation, communicator id, path, region, size bin of
     * bytes): the completion's, which a receive's status may give another path and bin */
    uint64_t key;
    const cf_comm_t *comm; /* descriptions live until the end of the run */
    /* world rank of the peer posted (-1: none, any source) and tag: a send's, for message
     * matching; a receive's world rank is its message's source when there is one */
    int32_t peer, tag;
    uint32_t post_ns; /* time inside the call that posted it (0 for persistent requests) */
    uint8_t flags;
    /* cf_g.rec_epoch at its post or start (its low 16 bits, in the entry's
     * padding): another since, and recording was off for a while, when its
     * completion may have come unseen (cf_req_unseen) */
    uint16_t epoch;
} cf_req_t;

typedef struct {
    uint32_t slot; /* or one of the two below */
    /* a tracked slot is its handle's first in probe order, the one a
     * lookup meets first: no later post of the handle can shadow it
     * (cf_req_snap_polled) */
    uint32_t home;
    uintptr_t word;
    cf_req_t req;
} cf_req_snap_t;

#define CF_SNAP_NULL UINT32_MAX             /* MPI_REQUEST_NULL: nothing to note */
#define CF_SNAP_UNTRACKED (UINT32_MAX - 1)  /* a request we never saw posted */

/* ---- per-thread state ---- */
#define CF_SCRATCH 4096
/* a message stream's count and the next of its messages the sampler
 * chooses (cf_sample.h): 32 bits, as the samples' sequence numbers */
typedef struct {
    uint32_t seq, next;
} cf_chan_t;
/* calls of one record the sampler saw, and those it chose (cf_sample.h) */
typedef struct {
    uint64_t key, eligible, selected;
} cf_elig_t;
/* one peer of the communication matrix: key the communicator id in the
 * high 32 bits, world rank + 1 in the low ones (CF_PEER_UCX set for the
 * sends the UCX layer saw beneath collectives), 0 empty */
typedef struct {
    uint64_t msgs, bytes;
    uint64_t key;
} cf_peer_t;
#define CF_PEER_UCX 0x80000000u
/* calls that returned an error, by operation and error class (cf_fail) */
#define CF_FAILS 16
typedef struct {
    uint16_t op, cls; /* op 0: the calls that found every slot taken */
    uint64_t calls;
} cf_fail_t;
typedef struct {
    int in_wrapper;
    unsigned cur_op; /* MPI operation in progress on this thread, 0 if none */
    void *handed; /* a call handed to its full path entered (cf_site.h): where it was made */
    cf_table_t table;
    uint64_t mpi_ns;   /* time inside intercepted calls */
    uint64_t missed;   /* completions of requests that were not tracked */
    uint64_t charged_ns; /* of the completion call in progress: time charged to its requests */
    cf_req_snap_t *snaps;
    MPI_Status *status_buf;
    size_t scratch_cap; /* entries of snaps and status_buf (CF_SCRATCH, grown for more) */
    void *papi; /* counter state (cf_papi.c), NULL when counters are off */
    uint64_t *chan_key; /* message streams (cf_sample.c): keys, and their counts */
    cf_chan_t *chan;
    uint64_t chan_last_key[2];
    uint32_t chan_last_slot[2];
    uint64_t chan_full; /* messages not sampled: no room for their stream */
    uint64_t failed;    /* calls that returned an error */
    cf_fail_t fail[CF_FAILS];
    cf_elig_t *elig;    /* per record key, open addressing */
    uint32_t elig_mask, elig_last, elig_prev;
    uint64_t elig_dropped;
    /* messages and bytes sent per (communicator, world rank) (cf_matrix.c), CF_PEERS
     * slots touched as peers appear; NULL when there was no room */
    cf_peer_t *peer;
    uint32_t peer_last;
    uint64_t peer_full; /* messages to peers beyond the table */
    /* call sites (cf_site.h): site_mask + 1 slots, NULL when off */
    struct cf_site *site;
    uint32_t site_mask, site_used;
    uint64_t site_full; /* calls that found no slot */
    /* the framework's time outside MPI after a nonblocking collective's
     * post (cf_post_mark, cf_post_gap): the post's exit, in ticks (0: none
     * pending), the thread's MPI time and cf_memo_gen then, and the gaps,
     * in ns (NULL until the first) */
    uint64_t post_t1, post_mpi_ns, post_gen;
    cf_stat_t *post_gap;
    /* and before the next post: the exit of the completion call that
     * measured a gap (0: none pending), the thread's MPI time and
     * cf_memo_gen after it, 1 while the marked post was itself such a next
     * post, and the times from that call to the next post, in ns
     * (cf_post_lead; NULL until the first) */
    uint64_t poll_t1, poll_mpi_ns, poll_gen;
    uint32_t post_forced;
    cf_stat_t *post_lead;
    /* posts to the next mark, and the generator that draws it (cf_post_mark) */
    uint32_t post_left, post_rng;
    uint64_t unfinished; /* requests freed while active (cf_req_forget): counted, booked if a send or collective */
} cf_thread_t;
#define CF_PEERS 1024
#define CF_CHANNELS 4096

typedef struct {
    _Atomic int state; /* 0 before init, 1 recording, 2 finalized */
    /* 1 from the start of the plugin's finalize: the communication from
     * then on (calibration, merge) is the plugin's own, and the UCX
     * endpoints it makes (to ranks the program never spoke to) are not the
     * program's.  (Those its start in MPI_Init makes are counted: the
     * program goes on to use them.) */
    _Atomic int finalizing;
    _Atomic int enabled;
    /* the times recording came back on after being off (cf_rec_set): the
     * requests posted before the last of them may have completed unseen */
    _Atomic uint32_t rec_epoch;
    /* 1 when a call may take the hit's part of a wrapper in two parts
     * (cf_site.h): enabled is CF_REC_ON (recording, no hooks), the clock
     * is the TSC, call sites are of one frame and the wrappers' dispatch
     * is a tail call (tail_calls, from MPI_Init); set with enabled */
    _Atomic int fast;
    int tail_calls;
    _Atomic unsigned region; /* current region id, 0 = none */
    cf_config_t cfg;
    int world_rank, world_size;
    int node, nnodes;
    int *world_node; /* node index of each world rank */
    int node_ranks, node_cpus; /* ranks on this node, CPUs they may use (0 = unknown) */
    int spawned;               /* started by MPI_Comm_spawn: its profile is its own */
    MPI_Comm world_handle;
    MPI_Comm tool_comm; /* our own duplicate of world, for our messages */
    uint64_t init_ticks, init_mono_ns;
    double init_wall;
    /* request table: keys (handles) and values, lock-free */
    _Atomic uintptr_t *req_key;
    cf_req_t *req_val;
    uint32_t req_mask;
    _Atomic uint64_t req_dropped;
    /* around every recorded call, when a module set them (cf_call_hooks):
     * NULL costs one test each, as a flag would */
    void (*enter_hook)(cf_thread_t *t);
    void (*leave_hook)(cf_thread_t *t, unsigned op);
    /* a shared, already complete request some libraries hand out for
     * operations that finished inside the call (Open MPI: ompi_request_empty) */
    MPI_Request req_done_shared;
    /* the PML's own object, whose requests are shared by the operations that
     * completed inside their post (Open MPI's UCX PML: completed_send_req);
     * 0 and 0 where there is none */
    uintptr_t req_pml_shared_lo, req_pml_shared_len;
} cf_global_t;

CF_HIDDEN extern cf_global_t cf_g;
CF_HIDDEN extern __thread cf_thread_t *cf_self __attribute__((tls_model("initial-exec")));
CF_HIDDEN extern __thread int cf_refused __attribute__((tls_model("initial-exec")));

CF_HIDDEN cf_thread_t *cf_thread_register(void);
CF_HIDDEN cf_comm_t *cf_comm_lookup_slow(MPI_Comm comm);
CF_HIDDEN extern cf_comm_t *cf_comm_world;

/* ---- the thread registry (cf_runtime.c): the threads recorded, in the
 * order they registered; safe in a signal handler ---- */
CF_HIDDEN uint32_t cf_thread_count(void);
CF_HIDDEN cf_thread_t *cf_thread_at(uint32_t i);
/* threads refused: beyond COMMFIT_MAX_THREADS or short of memory */
CF_HIDDEN uint64_t cf_thread_refused(void);

/* ---- the recording switch (cf_runtime.c owns it): MPI_Pcontrol, the
 * finalize and the spill pause and resume it ---- */
/* cf_g.enabled: 0 off, else CF_REC_ON, with CF_REC_HOOKS when hooks are set */
#define CF_REC_ON 1
#define CF_REC_HOOKS 2
static inline int cf_recording(void)
{
    return atomic_load_explicit(&cf_g.enabled, memory_order_relaxed) != 0;
}
CF_HIDDEN void cf_recording_resume(void);
/* Pauses; returns whether recording was on, for cf_recording_restore. */
CF_HIDDEN int cf_recording_pause(void);
CF_HIDDEN void cf_recording_restore(int on);

/* Sets the hooks run around every recorded call (a module's init, e.g.
 * the counters of cf_papi.c); leave gets the call's operation. */
CF_HIDDEN void cf_call_hooks(void (*enter)(cf_thread_t *t), void (*leave)(cf_thread_t *t, unsigned op));

/* The hot path's helpers are inlined into every wrapper whatever the
 * compiler's size limits say (a call costs its register saves and restores
 * on every intercepted call); what they rarely need is out of line. */
#define CF_HOT static inline __attribute__((always_inline))
/* Hides where p points from the optimiser, at no cost: two counters side
 * by side, updated through p before and after it, stay two adds instead of
 * a vector add built around them (three times as many instructions). */
#define CF_OPAQUE(p) __asm__("" : "+r"(p))

/* Thread state if this call of op is to be recorded, NULL to pass it through.
 * cf_g.enabled is CF_REC_ON when recording with no hooks, the one case the
 * inline path takes: one compare for the switch and the hooks together.
 * in_wrapper is 1 there, CF_IN_HOOKED when the call runs the hooks (its
 * leave does too). */
#define CF_IN_HOOKED 2
CF_HIDDEN cf_thread_t *cf_enter_slow(cf_thread_t *t, unsigned op);
CF_HIDDEN void cf_leave_slow(cf_thread_t *t);
/* cf_enter's common case, which makes no call: the thread state, entered,
 * for a registered thread, not nested, recording with no hooks; NULL when
 * cf_enter must decide (and nothing done).  The rest, out of line or rare,
 * follows it in cf_enter. */
CF_HOT cf_thread_t *cf_enter_fast(unsigned op)
{
    cf_thread_t *t = cf_self;
    if (__builtin_expect(t == NULL, 0) || __builtin_expect(t->in_wrapper != 0, 0) ||
        __builtin_expect(atomic_load_explicit(&cf_g.enabled, memory_order_relaxed) != CF_REC_ON, 0))
        return NULL;
    t->in_wrapper = 1;
    t->cur_op = op;
    return t;
}
/* Moves on whenever the memo of a call site (cf_site.h) may no longer hold:
 * a datatype freed (cf_type_gen moves too), the region changed, recording
 * paused.  Its values have the top bit set, which no return address has:
 * the word a memo's generation takes in a site of several frames never
 * equals it. */
CF_HIDDEN extern _Atomic uint64_t cf_memo_gen;

/* A nonblocking collective's post, about to return (its time added to
 * mpi_ns): the completion call that comes next, with no MPI call between
 * (mpi_ns unchanged; cf_memo_gen too: no region entered or left, no
 * datatype freed, recording not paused; the calls that make or free
 * communicators unmark, cf_post_unmark), measures when it calls MPI the
 * framework's time from here to it (cf_post_gap: a hook's bindings between
 * its post and its poll, which fewer, fused posts save).  The thread's
 * first post is marked, then one after every 1 to 63 posts, drawn at
 * random (32 on average), so that a step of 32 posts does not mark the
 * same hook every time: measuring every post cost a post and the Wait
 * after it 60 instructions, a countdown and the check costs 8.
 * cf_post_mark_slow reads the clock there, after the post's bookkeeping.
 * The completion call that measured a gap also arms the next post (its
 * countdown set to 0): that post, entered at t0 ticks and left at t1,
 * measures the framework's time from that call's exit to it, where no MPI
 * call came between (cf_post_lead: the bindings before a post, with the
 * hook's own work and any computation between, whose shortest tenth the
 * profile keeps); it is marked as any, and arms none.  About 1 post in 16
 * is marked, as when every mark was drawn 1 to 31 posts apart: arming the
 * next of those cost a post and its Wait 14 instructions more, arming the
 * next of these 5 (bench-ir, iallreduce: 141.2 -> 143.7 a call). */
CF_HIDDEN void cf_post_mark_slow(cf_thread_t *t, uint64_t t0, uint64_t t1) __attribute__((noinline));
static inline void cf_post_mark(cf_thread_t *t, uint64_t t0, uint64_t t1)
{
    if (__builtin_expect(t->post_left-- == 0, 0))
        cf_post_mark_slow(t, t0, t1);
}
CF_HIDDEN void cf_post_gap(cf_thread_t *t, uint64_t t0, uint64_t t1) __attribute__((noinline));
/* A wrapped call that moves no MPI time (communicators made or freed,
 * names, MPI_Pcontrol): no gap reaches over it. */
static inline void cf_post_unmark(void)
{
    cf_thread_t *t = cf_self;
    if (t != NULL)
        t->post_t1 = t->poll_t1 = 0;
}

/* 1 when the dispatch of the wrappers in two parts is a tail call, as this
 * build compiled them (cf_site.h; generated beside the wrappers) */
CF_HIDDEN int cf_tail_calls(void);

CF_HOT cf_thread_t *cf_enter(unsigned op)
{
    cf_thread_t *t = cf_enter_fast(op);
    if (__builtin_expect(t != NULL, 1))
        return t;
    t = cf_self;
    if (t == NULL) {
        if (cf_refused || atomic_load_explicit(&cf_g.state, memory_order_acquire) != 1)
            return NULL;
        t = cf_thread_register();
        if (!t)
            return NULL;
    }
    return cf_enter_slow(t, op);
}
/* cf_leave where the call was entered by cf_enter_split (in_wrapper 1,
 * which nothing in between changes: a nested call passes through). */
CF_HOT void cf_leave_fast(cf_thread_t *t)
{
    t->cur_op = 0;
    t->in_wrapper = 0;
}
CF_HOT void cf_leave(cf_thread_t *t)
{
    if (__builtin_expect(t->in_wrapper != 1, 0)) {
        cf_leave_slow(t);
        return;
    }
    t->cur_op = 0;
    t->in_wrapper = 0;
}

/* ---- communicator lookup: world first, then a lock-free hash on the handle ----
 * The table of live handles grows under the lock (a new one is published,
 * the old one stays readable), so a lookup is one probe window whatever the
 * number of communicators. */
#define CF_COMM_PROBE 16
typedef struct {
    uint32_t mask, used;
    _Atomic uintptr_t *keys;
    cf_comm_t *_Atomic *vals;
} cf_comm_tab_t;
CF_HIDDEN extern cf_comm_tab_t *_Atomic cf_comm_tab;
/* Every description, one per id, for the merge and the spill (append-only). */
CF_HIDDEN extern cf_comm_t **_Atomic cf_comm_all;
CF_HIDDEN extern _Atomic size_t cf_comm_nall;

static inline uint32_t cf_hash_ptr(uintptr_t p)
{
    return (uint32_t)(((uint64_t)p * 0x9E3779B97F4A7C15ull) >> 32);
}

/* The description of comm if it has one already (no lock, no MPI call). */
CF_HOT cf_comm_t *cf_comm_find(MPI_Comm comm)
{
    if (comm == cf_g.world_handle)
        return cf_comm_world;
    const cf_comm_tab_t *tb = atomic_load_explicit(&cf_comm_tab, memory_order_acquire);
    uintptr_t k = (uintptr_t)comm;
    uint32_t i = cf_hash_ptr(k);
    for (unsigned n = 0; n < CF_COMM_PROBE; n++) {
        uint32_t s = (i + n) & tb->mask;
        if (atomic_load_explicit(&tb->keys[s], memory_order_acquire) == k)
            return atomic_load_explicit(&tb->vals[s], memory_order_relaxed);
    }
    return NULL;
}

CF_HOT cf_comm_t *cf_comm_get(MPI_Comm comm)
{
    cf_comm_t *c = cf_comm_find(comm);
    return c ? c : cf_comm_lookup_slow(comm);
}

static inline unsigned cf_comm_peer_path(const cf_comm_t *c, int peer)
{
    if (!c)
        return CF_PATH_SELF;
    if (peer >= 0 && peer < c->size && c->peer_path)
        return c->peer_path[peer];
    if (peer == MPI_PROC_NULL)
        return CF_PATH_SELF;
    return c->path; /* MPI_ANY_SOURCE before the status is known */
}
static inline uint32_t cf_comm_id(const cf_comm_t *c) { return c ? c->id : CF_COMM_ID_NONE; }
static inline int cf_comm_size(const cf_comm_t *c) { return c ? c->size : 1; }
static inline int cf_comm_local_size(const cf_comm_t *c) { return c ? c->local_size : 1; }

/* ---- payload helpers ---- */
/* Per-thread cache of datatype sizes; MPI_Type_free bumps the generation. */
CF_HIDDEN extern _Atomic unsigned cf_type_gen;
#define CF_MEMO_GEN_FIRST (UINT64_C(1) << 63 | 1)
typedef struct {
    MPI_Datatype type;
    unsigned gen;
    uint64_t size;
} cf_type_cache_t;
CF_HIDDEN extern __thread cf_type_cache_t cf_type_cache[8] __attribute__((tls_model("initial-exec")));

/* The size of a datatype that missed the cache, which it then holds. */
CF_HIDDEN uint64_t cf_type_size_miss(MPI_Datatype t, cf_type_cache_t *e, unsigned gen);
CF_HOT uint64_t cf_type_size(MPI_Datatype t)
{
    /* MPI_DATATYPE_NULL is never held (its size is 0), and no handle is 0 */
    cf_type_cache_t *e = &cf_type_cache[((uintptr_t)t >> 4) & 7];
    unsigned gen = atomic_load_explicit(&cf_type_gen, memory_order_relaxed);
    if (__builtin_expect(e->type == t && e->gen == gen, 1))
        return e->size;
    return cf_type_size_miss(t, e, gen);
}
CF_HOT uint64_t cf_bytes(int64_t count, MPI_Datatype t)
{
    return count > 0 ? (uint64_t)count * cf_type_size(t) : 0;
}
#ifdef OPEN_MPI
/* What PMPI_Get_count(st, MPI_BYTE) says, read from the status as Open
 * MPI's own MPI_Get_count does (the byte count it keeps, MPI_UNDEFINED
 * past INT_MAX): a receive's size without a call into the library. */
CF_HOT uint64_t cf_status_bytes(const MPI_Status *st)
{
    return st->_ucount <= (size_t)INT_MAX ? (uint64_t)st->_ucount : 0;
}
#else
CF_HIDDEN uint64_t cf_status_bytes(const MPI_Status *st);
#endif

/* ---- recording ---- */
static inline uint64_t cf_key_of(unsigned op, uint32_t comm_id, unsigned path, uint64_t bytes)
{
    return cf_key_make(CF_LAYER_MPI, op, comm_id, path, atomic_load_explicit(&cf_g.region, memory_order_relaxed),
                       cf_size_bin(bytes));
}

/* The record of key, inserted if new (cf_table_get): the first probe
 * inline, where a key that repeats is found, the walk out of line.  The
 * hash is cf_table_get's. */
CF_HIDDEN cf_stat_t *cf_table_walk(cf_table_t *tb, uint64_t key);
CF_HOT cf_stat_t *cf_stat_of(cf_table_t *tb, uint64_t key)
{
    cf_stat_t *s = &tb->slots[(uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 40) & (tb->cap - 1)];
    return __builtin_expect(s->key == key, 1) ? s : cf_table_walk(tb, key);
}

/* A call that returned: its time counts as time in MPI.  Returns its key. */
/* The same, returning the record's slot (NULL when the table had no room). */
CF_HOT cf_stat_t *cf_record_stat(cf_thread_t *t, unsigned op, uint32_t comm_id, unsigned path, uint64_t bytes,
                                        uint64_t t0, uint64_t t1, uint64_t *key_p)
{
    uint64_t ns = cf_ticks_to_ns(t1 - t0);
    uint64_t key = cf_key_of(op, comm_id, path, bytes);
    t->mpi_ns += ns;
    cf_stat_t *s = cf_stat_of(&t->table, key);
    if (s)
        cf_stat_add(s, bytes, ns);
    *key_p = key;
    return s;
}

CF_HOT uint64_t cf_record_call(cf_thread_t *t, unsigned op, uint32_t comm_id, unsigned path, uint64_t bytes,
                                      uint64_t t0, uint64_t t1)
{
    uint64_t key;
    cf_record_stat(t, op, comm_id, path, bytes, t0, t1, &key);
    return key;
}

/* A call that returned an error (rc) moved nothing: no record books it,
 * whatever it was asked to move.  Its time is MPI time, and it is counted
 * by operation and error class (cf_runtime.c).  Leaves the wrapper
 * (cf_leave) and returns rc, which the wrapper returns unchanged.  Out of
 * line: the success path pays one compare for it. */
CF_HIDDEN int cf_fail(cf_thread_t *t, unsigned op, int rc, uint64_t t0, uint64_t t1) __attribute__((cold, noinline));

/* ---- requests (cf_request.c) ----
 * A request handle is freed inside the MPI completion call, and another
 * thread may get the same handle back before we have noted the completion.
 * So the entry is copied before the call (cf_req_snap), and released after
 * it only if its key word, which carries a generation count, is unchanged. */
/* A request handle shared by operations that completed inside their call:
 * Open MPI's empty request, MPICH's builtin requests (handle kind 1 in the
 * top two bits), and any request inside Open MPI's UCX PML object, which
 * returns its one completed_send_req for every send that completed inside
 * MPI_Isend.  Such an operation is recorded when posted. */
static inline int cf_req_shared(MPI_Request req)
{
#ifdef MPICH_VERSION
    return ((unsigned)req >> 30 & 3u) == 1u;
#else
    return req == cf_g.req_done_shared || (uintptr_t)req - cf_g.req_pml_shared_lo < cf_g.req_pml_shared_len;
#endif
}
/* t_post, t_end: the posting call's entry and exit (ticks) */
CF_HIDDEN void cf_req_post(cf_thread_t *t, MPI_Request req, unsigned op, const cf_comm_t *c, unsigned path,
                           uint64_t bytes, unsigned flags, uint64_t t_post, uint64_t t_end, int peer, int tag);
CF_HIDDEN void cf_req_start(cf_thread_t *t, MPI_Request req, uint64_t t_post);
/* cf_req_snap of each of n requests; returns how many of them cf_req_done
 * will record (cf_snap_counts).  _polled: a snapshot the last call took
 * that still holds its request is kept (cf_request.c). */
CF_HIDDEN int cf_req_snap_all(const MPI_Request *reqs, int n, cf_req_snap_t *snaps);
CF_HIDDEN int cf_req_snap_polled(const MPI_Request *reqs, int n, cf_req_snap_t *snaps);
/* A snapshot that cf_req_done will record (tracked and active). */
static inline int cf_snap_counts(const cf_req_snap_t *s)
{
    return s->slot < CF_SNAP_UNTRACKED && (s->req.flags & CF_REQ_ACTIVE);
}
/* Records the completion of a snapshotted request that counts
 * (cf_snap_counts); returns its payload. *path_p gets its path class.
 * blocked_ns, the completion call's share of time for this request, is
 * charged to the request's record and added to t->charged_ns. */
CF_HIDDEN uint64_t cf_req_done_counted(cf_thread_t *t, const cf_req_snap_t *snap, const MPI_Status *st,
                                       uint64_t t_done, unsigned *path_p, uint64_t blocked_ns);
/* cf_req_done of n snapshots with their statuses (sts NULL: none), each
 * charged blocked_ns; returns their payload. */
CF_HIDDEN uint64_t cf_req_done_all(cf_thread_t *t, const cf_req_snap_t *snaps, int n, const MPI_Status *sts,
                                   uint64_t t_done, unsigned *path_p, uint64_t blocked_ns);
/* A snapshotted request that completed with an error: let go, not booked. */
CF_HIDDEN void cf_req_failed(const cf_req_snap_t *snap);
/* MPI_Request_free succeeded on the request snap was taken of before the
 * call: its entry let go; one still active (a send freed before it
 * completed, the program never to see its completion) is counted in
 * t->unfinished and booked as cf_req_unfinished says. */
CF_HIDDEN void cf_req_forget(cf_thread_t *t, const cf_req_snap_t *snap);
/* MPI_Cancel was called on req: its completion is checked with MPI_Test_cancelled. */
CF_HIDDEN void cf_req_cancel(MPI_Request req);
/* At MPI_Finalize: the requests the program posted (or started) and never
 * completed, each booked in into as one call of its operation, with the
 * time inside its post (its completion never came) and its posted bytes (a
 * call MPI made is counted); a receive, a file access or a cancelled one
 * is not (what arrived is not known), nor one that recording was off for
 * since its post (cf_req_unseen).  How many were left, booked or not
 * (those aside). */
CF_HIDDEN uint64_t cf_req_unfinished(cf_table_t *into);
/* The epoch a post or start stamps its entry with (cf_req_t.epoch). */
static inline uint16_t cf_req_epoch(void)
{
    return (uint16_t)atomic_load_explicit(&cf_g.rec_epoch, memory_order_relaxed);
}
/* Recording came back on since r was posted: its completion may have come
 * while recording was off, unseen, so r left in the table says nothing. */
static inline int cf_req_unseen(const cf_req_t *r)
{
    return r->epoch != cf_req_epoch();
}

/* ---- lifecycle (cf_init.c, cf_merge.c; the modules' part: cf_module.h) ---- */
CF_HIDDEN void cf_runtime_init(int provided);
/* The COMMFIT_* variables read into c; rank 0 complains of wrong ones. */
CF_HIDDEN void cf_config_read(cf_config_t *c, int complain);
/* The thread registry's room, for cf_g.cfg.max_threads: 0 when there is none. */
CF_HIDDEN int cf_threads_alloc(void);
CF_HIDDEN void cf_threads_free(void);
CF_HIDDEN void cf_runtime_finalize(void);
CF_HIDDEN void cf_comm_register(MPI_Comm comm, const char *how);
CF_HIDDEN void cf_comm_unregister(MPI_Comm comm);
CF_HIDDEN void cf_pcontrol(int level, const char *name);
CF_HIDDEN void cf_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
