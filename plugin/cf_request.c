/* Requests in flight: a lock-free table of the handles posted, so that
 * their completion (cf_complete.c) is booked to the call that posted them
 * and feeds the sampler's message streams (cf_sample.h). */
#include "cf_request.h"

void cf_req_post(cf_thread_t *t, MPI_Request req, unsigned op, const cf_comm_t *c, unsigned path, uint64_t bytes,
                 unsigned flags, uint64_t t_post, uint64_t t_end, int peer, int tag)
{
    if (req == MPI_REQUEST_NULL || !cf_g.req_key)
        return;
    if (cf_req_shared(req)) {
        /* complete already, and the handle is shared: record it now */
        unsigned region = atomic_load_explicit(&cf_g.region, memory_order_relaxed);
        uint64_t key = cf_key_make(CF_LAYER_MPI, op, cf_comm_id(c), path, region, cf_size_bin(bytes));
        cf_stat_t *st = cf_table_get(&t->table, key);
        if (st) {
            /* it completed inside its post, whose exit the wrapper read the clock at */
            uint64_t pns = cf_ticks_to_ns(t_end - t_post);
            cf_stat_add(st, bytes, pns);
            st->t_post += pns;
        }
        if (!(flags & (CF_REQ_RECV | CF_REQ_COLL | CF_REQ_PERSISTENT | CF_REQ_NOMSG)))
            cf_p2p_sent(t, cf_comm_id(c), cf_world_of(c, peer), tag, key, bytes, t_post, 1);
        return;
    }
    cf_req_t *r = cf_req_claim(req);
    if (!r)
        return;
    r->t_post = t_post;
    if (flags & CF_REQ_PERSISTENT) {
        r->post_ns = 0; /* an init is not a post: its starts are */
    } else {
        uint64_t pns = cf_ticks_to_ns(t_end - t_post);
        r->post_ns = pns > UINT32_MAX ? UINT32_MAX : (uint32_t)pns;
    }
    uint32_t comm_id = cf_comm_id(c);
    r->bytes = bytes;
    r->key = cf_key_make(CF_LAYER_MPI, op, comm_id, path, atomic_load_explicit(&cf_g.region, memory_order_relaxed),
                         cf_size_bin(bytes));
    r->flags = (uint8_t)(flags & CF_REQ_PERSISTENT ? flags : flags | CF_REQ_ACTIVE);
    r->epoch = cf_req_epoch();
    r->comm = c;
    r->peer = cf_world_of(c, peer);
    r->tag = tag;
    if (!(flags & (CF_REQ_RECV | CF_REQ_COLL | CF_REQ_PERSISTENT | CF_REQ_NOMSG)))
        cf_p2p_sent(t, comm_id, r->peer, tag, r->key, bytes, t_post, 1);
}

void cf_req_start(cf_thread_t *t, MPI_Request req, uint64_t t_post)
{
    uintptr_t w;
    uint32_t s = cf_req_find(req, &w);
    if (s == UINT32_MAX)
        return;
    cf_req_t *r = &cf_g.req_val[s];
    r->t_post = t_post;
    r->flags |= CF_REQ_ACTIVE;
    r->epoch = cf_req_epoch();
    if (!(r->flags & (CF_REQ_RECV | CF_REQ_COLL | CF_REQ_NOMSG)))
        cf_p2p_sent(t, cf_key_comm(r->key), r->peer, r->tag, r->key, r->bytes, t_post, 1);
}

int cf_req_snap_all(const MPI_Request *reqs, int n, cf_req_snap_t *snaps)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        cf_req_snap(reqs[i], &snaps[i]);
        k += cf_snap_counts(&snaps[i]);
    }
    return k;
}

/* cf_req_snap_all for a call that may return with requests pending: a
 * snapshot the thread's last completion call over this position took is
 * kept where it still holds the request: the same post (the handle, and
 * the key word with its generation, which a new claim of the slot moves
 * on) and an entry unchanged since (a persistent request's start moves its
 * t_post, a cancel or a release its flags).  A Testall that polls a list
 * of requests, or one that grows by a post at a time (hooks that post per
 * tensor and poll), then reads three words of each instead of finding and
 * copying its entry again.  Only a snapshot of the handle's first slot in
 * probe order (home) is kept, the one a lookup meets first: an entry
 * further on may be a stale one (never released: a completion while
 * recording was paused) that a new post of the same handle shadows from a
 * slot before it (cf_req_claim); those few are found again.  The scratch
 * starts zeroed: no handle matches.
 * A Waitall, which completes them all, keeps cf_req_snap_all: the check
 * would cost it more than it saves. */
int cf_req_snap_polled(const MPI_Request *reqs, int n, cf_req_snap_t *snaps)
{
    _Atomic uintptr_t *keys = cf_g.req_key;
    const cf_req_t *vals = cf_g.req_val;
    uint32_t mask = cf_g.req_mask;
    int k = 0;
    if (keys == NULL)
        return cf_req_snap_all(reqs, n, snaps);
    for (int i = 0; i < n; i++) {
        cf_req_snap_t *s = &snaps[i];
        uint32_t slot = s->slot;
        if (!(slot <= mask && s->home && (s->word & CF_REQ_HANDLE_MASK) == cf_req_handle_bits(reqs[i]) &&
              atomic_load_explicit(&keys[slot], memory_order_acquire) == s->word &&
              vals[slot].t_post == s->req.t_post && vals[slot].flags == s->req.flags))
            cf_req_snap(reqs[i], s);
        k += cf_snap_counts(s);
    }
    return k;
}

uint64_t cf_req_done_counted(cf_thread_t *t, const cf_req_snap_t *snap, const MPI_Status *st, uint64_t t_done,
                             unsigned *path_p, uint64_t blocked_ns)
{
    return cf_req_done_one(t, snap, st, t_done, path_p, blocked_ns);
}

uint64_t cf_req_done_all(cf_thread_t *t, const cf_req_snap_t *snaps, int n, const MPI_Status *sts, uint64_t t_done,
                         unsigned *path_p, uint64_t blocked_ns)
{
    uint64_t bytes = 0;
    for (int i = 0; i < n; i++)
        bytes += cf_req_done_one(t, &snaps[i], sts ? &sts[i] : NULL, t_done, path_p, blocked_ns);
    return bytes;
}

void cf_req_failed(const cf_req_snap_t *snap)
{
    if (cf_snap_counts(snap))
        cf_req_release(snap);
}

/* An active request left without its completion: booked in into as one
 * call of its operation with the time inside its post and its posted
 * bytes; a receive, a file access (what arrived is not known) or a
 * cancelled one (whether it was is not known) is not booked. */
static void cf_req_book_unfinished(const cf_req_t *r, cf_table_t *into)
{
    if (r->flags & (CF_REQ_RECV | CF_REQ_STATUS | CF_REQ_CANCEL))
        return;
    cf_stat_t *st = cf_table_get(into, r->key);
    if (st == NULL)
        return;
    cf_stat_add(st, r->bytes, r->post_ns);
    st->t_post += r->post_ns;
}

void cf_req_forget(cf_thread_t *t, const cf_req_snap_t *snap)
{
    if (snap->slot == CF_SNAP_NULL || snap->slot == CF_SNAP_UNTRACKED)
        return;
    /* the word copied before the call: a handle MPI has given to another
     * post since is that post's entry, not this one's */
    uintptr_t w = snap->word;
    if (!atomic_compare_exchange_strong(&cf_g.req_key[snap->slot], &w, w & ~(uintptr_t)CF_REQ_HANDLE_MASK) ||
        !(snap->req.flags & CF_REQ_ACTIVE) || cf_req_unseen(&snap->req))
        return;
    cf_req_book_unfinished(&snap->req, &t->table);
    t->unfinished++;
}

uint64_t cf_req_unfinished(cf_table_t *into)
{
    uint64_t n = 0;
    for (uint32_t s = 0; cf_g.req_key != NULL && s <= cf_g.req_mask; s++) {
        const cf_req_t *r = &cf_g.req_val[s];
        if ((atomic_load_explicit(&cf_g.req_key[s], memory_order_acquire) & CF_REQ_HANDLE_MASK) == 0 ||
            !(r->flags & CF_REQ_ACTIVE) || cf_req_unseen(r))
            continue;
        cf_req_book_unfinished(r, into);
        n++;
    }
    return n;
}

void cf_req_cancel(MPI_Request req)
{
    uintptr_t w;
    uint32_t s = cf_req_find(req, &w);
    if (s != UINT32_MAX)
        cf_g.req_val[s].flags |= CF_REQ_CANCEL;
}
