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

/* The entry of a completed request: a persistent one stays, inactive (the
 * handle is valid and ours until MPI_Request_free); another is let go if its
 * key word is the one copied before the call. */
static void cf_req_release(const cf_req_snap_t *snap)
{
    if (snap->req.flags & CF_REQ_PERSISTENT) {
        cf_g.req_val[snap->slot].flags &= (uint8_t)~(CF_REQ_ACTIVE | CF_REQ_CANCEL);
    } else {
        uintptr_t w = snap->word;
        atomic_compare_exchange_strong(&cf_g.req_key[snap->slot], &w, w & ~(uintptr_t)CF_REQ_HANDLE_MASK);
    }
}

static inline __attribute__((always_inline)) uint64_t cf_req_done_one(cf_thread_t *t, const cf_req_snap_t *snap,
                                                                       const MPI_Status *st, uint64_t t_done,
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
    if ((r->flags & CF_REQ_RECV) && !(r->flags & CF_REQ_NOMSG) && st && !cancelled)
        cf_p2p_received(t, cf_key_comm(key), cf_world_of(r->comm, st->MPI_SOURCE), st->MPI_TAG, key, bytes,
                        r->t_post, t_done);
    cf_req_release(snap);
    if (path_p)
        *path_p = path;
    return bytes;
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

void cf_req_forget(MPI_Request req)
{
    uintptr_t w;
    uint32_t s = cf_req_find(req, &w);
    if (s != UINT32_MAX)
        atomic_compare_exchange_strong(&cf_g.req_key[s], &w, w & ~(uintptr_t)CF_REQ_HANDLE_MASK);
}

void cf_req_cancel(MPI_Request req)
{
    uintptr_t w;
    uint32_t s = cf_req_find(req, &w);
    if (s != UINT32_MAX)
        cf_g.req_val[s].flags |= CF_REQ_CANCEL;
}
