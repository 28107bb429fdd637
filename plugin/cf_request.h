/* Requests in flight, the part of the hot path every post and completion
 * makes inline: the table's probe and claim, the snapshot taken before a
 * completion call, the post a call site's memo knows, and the record of a
 * completed request (inline in MPI_Wait and MPI_Test, one call of
 * cf_req_done_counted for the others).  The rest is in cf_request.c. */
#ifndef CF_REQUEST_H
#define CF_REQUEST_H

#include "cf_runtime.h"
#include "cf_sample.h"
#include "cf_site.h"

/* ---- requests: a window of 16 slots per hash, keys claimed with CAS ----
 * A key word is the handle in its low 48 bits and the slot's generation in
 * the high 16.  The generation moves on at every claim and survives the
 * release (an empty slot is a word with no handle bits), so a late release
 * cannot remove an entry that another thread posted into the slot since. */

#define CF_REQ_PROBE 16
#define CF_REQ_NEXT_GEN(w) ((((w) >> 48) + 1) & 0xffff) << 48

CF_HOT uintptr_t cf_req_handle_bits(MPI_Request req)
{
    return (uintptr_t)req & CF_REQ_HANDLE_MASK;
}

CF_HOT uint32_t cf_req_find(MPI_Request req, uintptr_t *word_p)
{
    uintptr_t k = cf_req_handle_bits(req);
    uint32_t i = cf_hash_ptr(k);
    for (unsigned n = 0; n < CF_REQ_PROBE; n++) {
        uint32_t s = (i + n) & cf_g.req_mask;
        uintptr_t w = atomic_load_explicit(&cf_g.req_key[s], memory_order_acquire);
        if ((w & CF_REQ_HANDLE_MASK) == k) {
            *word_p = w;
            return s;
        }
    }
    return UINT32_MAX;
}

/* The entry of a request being posted, NULL when its window is full
 * (counted in req_dropped). */
CF_HOT cf_req_t *cf_req_claim(MPI_Request req)
{
    /* One pass over the window, to the first slot that is free or holds the
     * handle already (MPI gave it back before its last user released our
     * entry: that entry is taken over).  An entry of the handle further on
     * is shadowed, lookups meeting this slot first, until its late release
     * clears it.  A handle MPI recycles at once finds its own slot free on
     * the first probe, instead of a whole window searched for it. */
    uintptr_t k = cf_req_handle_bits(req);
    uint32_t i = cf_hash_ptr(k), mask = cf_g.req_mask;
    _Atomic uintptr_t *keys = cf_g.req_key;
    for (unsigned n = 0; n < CF_REQ_PROBE; n++) {
        uint32_t j = (i + n) & mask;
        uintptr_t e = atomic_load_explicit(&keys[j], memory_order_acquire);
        uintptr_t h = e & CF_REQ_HANDLE_MASK;
        if ((h == 0 || h == k) && atomic_compare_exchange_strong(&keys[j], &e, k | CF_REQ_NEXT_GEN(e)))
            return &cf_g.req_val[j];
    }
    atomic_fetch_add_explicit(&cf_g.req_dropped, 1, memory_order_relaxed);
    return NULL;
}

/* The entry of req copied into snap before the call that completes it (MPI
 * frees the handle inside): its slot, CF_SNAP_NULL or CF_SNAP_UNTRACKED. */
CF_HOT void cf_req_snap(MPI_Request req, cf_req_snap_t *snap)
{
    snap->slot = CF_SNAP_NULL;
    if (req == MPI_REQUEST_NULL || cf_req_shared(req) || !cf_g.req_key)
        return;
    uint32_t s = cf_req_find(req, &snap->word);
    snap->slot = CF_SNAP_UNTRACKED;
    if (s == UINT32_MAX)
        return;
    snap->req = cf_g.req_val[s];
    snap->slot = s;
    snap->home = s == (cf_hash_ptr(cf_req_handle_bits(req)) & cf_g.req_mask);
}

/* A nonblocking post (cf_req_post) with what its memo holds; post_ns, the
 * time inside the posting call, the wrapper has already taken for its MPI time. */
CF_HOT void cf_req_post_memo(cf_thread_t *t, MPI_Request req, const cf_memo_t *m, unsigned flags, uint64_t t_post,
                             uint64_t post_ns, int tag)
{
    if (req == MPI_REQUEST_NULL || !cf_g.req_key)
        return;
    int msg = !(flags & (CF_REQ_RECV | CF_REQ_COLL | CF_REQ_NOMSG));
    if (cf_req_shared(req)) {
        /* complete already: recorded now, as cf_req_post does, in the
         * memo's record when the full path had made it (a send's, at its
         * post; a receive's record comes at its completion) */
        cf_stat_t *st = m->rec ? m->rec : cf_stat_of(&t->table, m->key);
        if (st) {
            /* it completed inside its post, whose exit the wrapper read the clock at */
            cf_stat_add(st, m->nb, post_ns);
            st->t_post += post_ns;
        }
        if (msg)
            cf_memo_sent(t, m, tag, t_post);
        return;
    }
    cf_req_t *r = cf_req_claim(req);
    if (!r)
        return;
    r->t_post = t_post;
    r->post_ns = post_ns > UINT32_MAX ? UINT32_MAX : (uint32_t)post_ns; /* never persistent: those are posted at init */
    r->bytes = m->nb;
    r->key = m->key; /* the memo's region is the current one */
    r->flags = (uint8_t)(flags | CF_REQ_ACTIVE);
    r->epoch = cf_req_epoch();
    r->comm = m->comm;
    r->peer = m->world;
    r->tag = tag;
    if (msg)
        cf_memo_sent(t, m, tag, t_post);
}

/* The entry of a completed request: a persistent one stays, inactive (the
 * handle is valid and ours until MPI_Request_free); another is let go if its
 * key word is the one copied before the call. */
CF_HOT void cf_req_release(const cf_req_snap_t *snap)
{
    if (snap->req.flags & CF_REQ_PERSISTENT) {
        cf_g.req_val[snap->slot].flags &= (uint8_t)~(CF_REQ_ACTIVE | CF_REQ_CANCEL);
    } else {
        uintptr_t w = snap->word;
        atomic_compare_exchange_strong(&cf_g.req_key[snap->slot], &w, w & ~(uintptr_t)CF_REQ_HANDLE_MASK);
    }
}

/* The record of a snapshotted request that completed (with status st, or
 * NULL): nothing for MPI_REQUEST_NULL, a shared or inactive one; an
 * untracked one is counted as missed.  What cf_req_done_counted returns. */
CF_HOT uint64_t cf_req_done_one(cf_thread_t *t, const cf_req_snap_t *snap, const MPI_Status *st, uint64_t t_done,
                                unsigned *path_p, uint64_t blocked_ns)
{
    if (snap->slot == CF_SNAP_NULL)
        return 0;
    if (snap->slot == CF_SNAP_UNTRACKED) {
        t->missed++;
        return 0;
    }
    const cf_req_t *r = &snap->req;
    if (!(r->flags & CF_REQ_ACTIVE))
        return 0; /* an inactive persistent request completes at once */
    uint64_t bytes = r->bytes;
    unsigned path = cf_key_path(r->key);
    /* a cancelled request moved nothing (unknown without its status: taken as cancelled) */
    int cancelled = 0;
    if ((r->flags & CF_REQ_CANCEL) && (!st || PMPI_Test_cancelled(st, &cancelled) != MPI_SUCCESS || cancelled))
        bytes = 0, cancelled = 1;
    else if ((r->flags & (CF_REQ_RECV | CF_REQ_STATUS)) && st) {
        bytes = cf_status_bytes(st);
        if (st->MPI_SOURCE == MPI_PROC_NULL && !(r->flags & CF_REQ_STATUS))
            path = CF_PATH_SELF;
    }
    uint64_t ns = cf_ticks_to_ns(t_done - r->t_post);
    /* the post's key, with the path and size bin the status gave */
    uint64_t key = (r->key & ~(uint64_t)0x1ff) | (uint64_t)path << 7 | cf_size_bin(bytes);
    cf_stat_t *stat = cancelled ? NULL : cf_stat_of(&t->table, key);
    if (stat) {
        cf_stat_add(stat, bytes, ns);
        stat->t_wait += blocked_ns;
        CF_OPAQUE(stat);
        stat->t_post += r->post_ns;
        t->charged_ns += blocked_ns;
    }
    /* a receive posted for one source holds its world rank, which the
     * status's source is: the communicator's table is read for the others */
    if ((r->flags & CF_REQ_RECV) && !(r->flags & CF_REQ_NOMSG) && st && !cancelled)
        cf_p2p_received(t, cf_key_comm(key), r->peer >= 0 ? r->peer : cf_world_of(r->comm, st->MPI_SOURCE),
                        st->MPI_TAG, key, bytes, r->t_post, t_done);
    cf_req_release(snap);
    if (path_p)
        *path_p = path;
    return bytes;
}

/* MPI_Wait and MPI_Test on behalf of a binding (Fortran's) called from ra,
 * which they book the call site to (cf_complete.c). */
CF_HIDDEN int cf_wait_from(MPI_Request *request, MPI_Status *status, void *ra);
CF_HIDDEN int cf_test_from(MPI_Request *request, int *flag, MPI_Status *status, void *ra);

#endif
