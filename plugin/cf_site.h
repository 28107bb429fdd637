/* Call sites on the hot path, a part of the core: each MPI call also
 * counted under where the program called MPI (the return address of the
 * wrapper; with COMMFIT_CALLSITE_DEPTH > 1 that many frames, from
 * backtrace()).  A small open-addressing table per thread,
 * COMMFIT_CALLSITES_MAX entries, keyed by (operation, communicator id,
 * frames); calls that find it full are counted, not recorded.  What every
 * wrapper does inline is here: the slot's layout, the hash, the return
 * address (and the Fortran caller that stands in for it), the probe, and
 * the memo a repeated call is recorded from; cf_site.c holds the probe's
 * slow path.  The call-site module (cf_callsite.[ch]) keeps the rest of
 * their life: the tables' allocation per thread, and at finalize the
 * addresses as module + offset, merged over the ranks (file and line come
 * at report time).  No file of the core includes cf_callsite.h. */
#ifndef CF_SITE_H
#define CF_SITE_H

#include <stdint.h>

#include "cf_runtime.h"
#include "cf_sample.h"

#define CF_SITE_DEPTH_MAX 8

/* What the last call from a site resolved to, for the next call from
 * there with the same arguments (the memo, below): its communicator,
 * record, key and payload, and for a send the slots of its message stream
 * and matrix peer.  It lives in the frame words that a site of one frame
 * (the default) leaves unused; gen 0 holds nothing. */
typedef struct {
    cf_comm_t *comm; /* the communicator's description */
    uintptr_t type;  /* the call's datatype and count */
    int64_t count;
    int32_t dest, tag; /* as the program passed them (tag: of the stream held) */
    uint64_t gen;      /* cf_memo_gen when it was filled */
    cf_stat_t *rec;
    uint64_t key, nb;
    int32_t world;       /* sends: world rank sent to, -1 for none */
    uint16_t chan, peer; /* sends: stream and matrix slots, CF_MEMO_NONE when not counted */
} cf_memo_t;
#define CF_MEMO_NONE 0xffffu

/* 128 bytes, 64-aligned: what one call touches (tag to ra[0]) is one cache line */
typedef struct cf_site {
    uint64_t tag; /* op << 32 | communicator id */
    uint64_t calls, bytes;
    uint64_t t_sum, t_min, t_max; /* ticks */
    union {
        uintptr_t ra[CF_SITE_DEPTH_MAX + 2]; /* ra[0] = 0: empty slot; the last two words pad */
        struct {
            uintptr_t ra0;
            cf_memo_t memo;
        } one; /* COMMFIT_CALLSITE_DEPTH=1 */
    };
} cf_site_t;

/* The slot of (tag, ra[0..depth-1]), taken if new; NULL when the probe
 * window is full (counted in t->site_full).  cf_site.c, as the rest of
 * the hot path's out-of-line part. */
CF_HIDDEN cf_site_t *cf_site_slot(cf_thread_t *t, uint64_t tag, const uintptr_t *ra);
/* Depth > 1: the frames above ra from backtrace(), then cf_site_slot. */
CF_HIDDEN cf_site_t *cf_site_slot_deep(cf_thread_t *t, uint64_t tag, void *ra);

/* The Fortran wrappers that go through the C ones (the completion calls
 * other than MPI_Wait and MPI_Test, which take it as an argument, start,
 * request free: cf_fortran.c) name their own caller here, for the C
 * function to take instead of its return address (in the plugin). */
CF_HIDDEN extern __thread void *cf_site_caller __attribute__((tls_model("initial-exec")));
static inline void *cf_site_ra(void *ra)
{
    void *c = cf_site_caller;
    if (__builtin_expect(c != NULL, 0)) {
        cf_site_caller = NULL;
        return c;
    }
    return ra;
}
/* In a hand-written C wrapper: where its call site is. */
#define CF_SITE_RA cf_site_ra(__builtin_return_address(0))
static inline void cf_site_caller_end(void **scope)
{
    (void)scope;
    cf_site_caller = NULL;
}
/* At the top of such a Fortran wrapper: its caller, until it returns. */
#define CF_SITE_CALLER()                                                                                      \
    __attribute__((cleanup(cf_site_caller_end), unused)) void *cf_site_scope = cf_site_caller =               \
        __builtin_return_address(0)

/* ---- a wrapper in two parts (gen_wrappers.py) ----
 * A call that a memo can hold: the exported wrapper is a dispatch of two
 * tail calls, which saves no register.  When cf_g.fast says the hit's part
 * may record (recording, no hooks, the TSC as the clock, call sites of one
 * frame, and tail calls made: below), to that part, which holds the memo's
 * hit timed by the TSC and nothing else; else to the full wrapper, out of
 * line, which holds the hit too (timed by either clock) and the full path.
 * The hit then keeps across the MPI call only what it records, and saves no
 * register that only the full path needs.  A call the hit's part entered and
 * missed is handed to the full path entered, with its call site, and goes
 * straight to its full part; any other call (another clock, call sites deeper
 * than one frame, hooks, recording paused, a new thread, a nested call) reaches it unentered,
 * its call site in cf_split_ra.  The hit's part takes the program's call
 * site as its own return address, which holds only if the dispatch was a
 * tail call: cf_tail_calls checks at MPI_Init that the compiler made one in
 * the wrappers' file (a build without tail calls, -Og or -O0, then sends
 * every call to the full path). */
#define CF_IN_HANDED 3
CF_HIDDEN extern __thread void *cf_split_ra __attribute__((tls_model("initial-exec")));
static inline int cf_split_fast(void)
{
    return atomic_load_explicit(&cf_g.fast, memory_order_relaxed) == 1;
}
/* cf_enter_fast for the hit's part, which the dispatch reached with
 * cf_g.fast 1: a registered thread, not nested */
CF_HOT cf_thread_t *cf_enter_split(unsigned op)
{
    cf_thread_t *t = cf_self;
    if (__builtin_expect(t == NULL, 0) || __builtin_expect(t->in_wrapper != 0, 0))
        return NULL;
    t->in_wrapper = 1;
    t->cur_op = op;
    return t;
}
/* Entered, the memo missed: to the full path with its call site. */
static inline void cf_hand(cf_thread_t *t, void *ra)
{
    t->in_wrapper = CF_IN_HANDED;
    t->handed = ra;
}
/* Unentered: the call site for the full path. */
static inline void cf_hand_site(void *ra)
{
    cf_split_ra = ra;
}
/* At the top of the full path: the thread, entered, and the call site in
 * *ra_p; *handed_p 1 for a call handed over entered (its memo missed).
 * NULL to pass the call through. */
static inline cf_thread_t *cf_take(unsigned op, void **ra_p, int *handed_p)
{
    cf_thread_t *t = cf_self;
    if (t != NULL && t->in_wrapper == CF_IN_HANDED) {
        t->in_wrapper = 1;
        *ra_p = t->handed;
        *handed_p = 1;
        return t;
    }
    *handed_p = 0;
    *ra_p = cf_split_ra;
    return cf_enter(op);
}

/* Where the slot of (tag, frames) starts its probe: the operation and the
 * frames, not the communicator (the sites of one call on several
 * communicators are neighbours), so that a call finds the memo of its site
 * (below) before it looks its communicator up. */
static inline uint32_t cf_site_hash(uint64_t tag, const uintptr_t *ra, unsigned depth)
{
    /* one frame, every call's: a multiply by a constant that fits an
     * instruction's immediate (sign-extended, odd) and the operation added
     * after it, which the compiler folds, three instructions */
    if (depth == 1)
        return (uint32_t)(((uint64_t)ra[0] * (uint64_t)(int64_t)-0x61C8864F) >> 32) +
               (uint32_t)(tag >> 32) * 0x85EBCA6Bu;
    uint64_t h = (tag >> 32) * 0x9E3779B97F4A7C15ull;
    for (unsigned i = 0; i < depth; i++)
        h = (h ^ ra[i]) * 0xff51afd7ed558ccdull;
    return (uint32_t)(h >> 32);
}

/* One call at site s that moved bytes between ticks t0 and t1. */
CF_HOT void cf_site_add(cf_site_t *s, uint64_t bytes, uint64_t t0, uint64_t t1)
{
    uint64_t d = t1 - t0;
    /* three adds, not vector adds built around them */
    s->calls++;
    CF_OPAQUE(s);
    s->bytes += bytes;
    CF_OPAQUE(s);
    s->t_sum += d;
    if (d < s->t_min)
        s->t_min = d;
    if (d > s->t_max)
        s->t_max = d;
}

/* The slot of a call of op on communicator comm made from ra, NULL when
 * the thread has no table or it has no room.  Depth 1: one multiply, and
 * one compare in the slot the hash names (the first probe). */
CF_HOT cf_site_t *cf_site_of(cf_thread_t *t, unsigned op, uint32_t comm, void *ra)
{
    if (t->site == NULL)
        return NULL;
    uint64_t tag = (uint64_t)op << 32 | comm;
    uintptr_t a = (uintptr_t)ra;
    if (__builtin_expect(cf_g.cfg.site_depth > 1, 0))
        return cf_site_slot_deep(t, tag, ra);
    cf_site_t *s = &t->site[cf_site_hash(tag, &a, 1) & t->site_mask];
    if (s->ra[0] != a || s->tag != tag)
        s = cf_site_slot(t, tag, &a);
    return s;
}

/* The slot where the site of a call of op from ra starts its probe, which
 * holds the memo such a call looks at first; NULL when the thread has no table.
 * Deeper than one frame, the slots hold no memo, and the frame in place of
 * its generation is no generation (cf_memo_gen): the memo never holds. */
CF_HOT cf_site_t *cf_site_first(cf_thread_t *t, unsigned op, void *ra)
{
    if (t->site == NULL)
        return NULL;
    uintptr_t a = (uintptr_t)ra;
    return &t->site[cf_site_hash((uint64_t)op << 32, &a, 1) & t->site_mask];
}

/* One call of op on communicator comm, made from ra (the wrapper's return
 * address), that moved bytes between ticks t0 and t1.  Returns its slot. */
CF_HOT cf_site_t *cf_site_note(cf_thread_t *t, unsigned op, uint32_t comm, void *ra, uint64_t bytes, uint64_t t0,
                               uint64_t t1)
{
    cf_site_t *s = cf_site_of(t, op, comm, ra);
    if (s)
        cf_site_add(s, bytes, t0, t1);
    return s;
}

/* ---- the memo: a call that repeats its site's last call ----
 * A call from a site of one frame with the same communicator, datatype and
 * count (a send or receive: also peer) as the site's last call, no
 * datatype freed and the region unchanged since (cf_memo_gen, which either
 * moves on: one compare), is recorded from what that
 * call resolved to: record, key, payload, matrix and stream slots.  All of
 * it is in the thread's own tables, whose slots never move, and a
 * communicator's description lives to the end of the run; what is
 * recorded is what the full path records.  The full path fills it.
 * The call finds it in the first slot of its site's probe (cf_site_first),
 * before any lookup of its communicator: the memo's description must still
 * be that of the handle (a freed communicator's description lets its
 * handle go, and one that comes back is the same communicator). */

/* What the memo of a call must find: its record (blocking calls; a post's
 * is made at completion), the matrix and stream slots of the message it
 * sends (world >= 0). */
enum { CF_MEMO_REC = 1, CF_MEMO_MSG = 2 };
#define CF_MEMO_REFILL 8 /* a live memo a call missed: refilled at one call in 8 (a power of two) */
CF_HIDDEN void cf_memo_fill(cf_thread_t *t, cf_site_t *s, cf_comm_t *c, MPI_Datatype type, int64_t count, int dest,
                            int tag, uint64_t key, uint64_t nb, int world, unsigned need);

/* The memo of slot s (cf_site_first) if it holds this call of op from ra
 * on comm, NULL otherwise.  The generation first: an empty memo has none.
 * dest CF_MEMO_ANY_DEST: a collective, whose memo the operation names alone
 * (the compare is folded away; where it is not, the memo holds the same). */
#define CF_MEMO_ANY_DEST INT_MIN
CF_HOT const cf_memo_t *cf_memo_of(const cf_site_t *s, unsigned op, void *ra, MPI_Comm comm, MPI_Datatype type,
                                   int64_t count, int dest)
{
    const cf_memo_t *m = &s->one.memo;
    if (m->gen != atomic_load_explicit(&cf_memo_gen, memory_order_relaxed) || s->one.ra0 != (uintptr_t)ra ||
        (uint32_t)(s->tag >> 32) != op || m->comm->handle != comm || m->type != (uintptr_t)type ||
        m->count != count || (!(__builtin_constant_p(dest) && dest == CF_MEMO_ANY_DEST) && m->dest != dest))
        return NULL;
    return m;
}

/* The memo of slot s (cf_site_first) if it holds a completion call of op
 * from ra (communicator: none) whose record has this call's path and size
 * bin, NULL otherwise.  The memo's generation says its region is the
 * current one, so its key is this call's when these two agree. */
CF_HOT const cf_memo_t *cf_memo_done(const cf_site_t *s, unsigned op, void *ra, unsigned path, uint64_t bytes)
{
    const cf_memo_t *m = &s->one.memo;
    if (m->gen != atomic_load_explicit(&cf_memo_gen, memory_order_relaxed) || s->one.ra0 != (uintptr_t)ra ||
        s->tag != ((uint64_t)op << 32 | CF_COMM_ID_NONE) ||
        (m->key & 0x1ff) != ((uint64_t)path << 7 | cf_size_bin(bytes)))
        return NULL;
    return m;
}

/* cf_coll_sample (cf_sample.h) for a call the memo knows, whose
 * communicator is never NULL; its key read only for a chosen one. */
CF_HOT void cf_coll_sample_memo(cf_thread_t *t, const cf_memo_t *m, int root, uint64_t t0, uint64_t t1)
{
    uint64_t seq;
    if (__builtin_expect(cf_coll_count(m->comm, &seq), 0))
        cf_coll_sample_slow(t, m->comm, m->key, root, seq, t0, t1);
}

/* The record and the call site of a call the memo knows. */
CF_HOT void cf_memo_record(cf_thread_t *t, cf_site_t *s, const cf_memo_t *m, uint64_t t0, uint64_t t1)
{
    uint64_t ns = cf_ticks_to_ns(t1 - t0);
    t->mpi_ns += ns;
    cf_stat_add_more(m->rec, m->nb, ns); /* the full path recorded its call before it filled the memo */
    cf_site_add(s, m->nb, t0, t1);
}

/* The message of tag a memo's send (posted at t_post) sent: what
 * cf_p2p_sent counts.  The memo holds the stream of its own tag; another
 * tag's is looked up. */
CF_HOT void cf_memo_sent(cf_thread_t *t, const cf_memo_t *m, int tag, uint64_t t_post)
{
    if (m->world < 0)
        return;
    if (m->peer != CF_MEMO_NONE) {
        cf_peer_t *p = &t->peer[m->peer];
        p->msgs++;
        CF_OPAQUE(p);
        p->bytes += m->nb;
    }
    if (m->chan != CF_MEMO_NONE) {
        cf_chan_t *ch = tag == m->tag ? &t->chan[m->chan]
                                      : cf_chan_of(t, cf_key_comm(m->key), m->world, tag, 0, cf_key_bin(m->key));
        int pick = ch && cf_chan_pick(ch);
        cf_elig_note(t, m->key, pick);
        if (pick)
            cf_p2p_sample(0, m->key, cf_key_comm(m->key), cf_g.world_rank, m->world, tag, cf_key_bin(m->key),
                          ch->seq - 1, t_post, 0);
    }
}

#endif
