/* Completion calls.  A nonblocking operation is recorded under its own
 * name (MPI_Isend...) with the time from post to the completion seen here;
 * the Wait/Test call is recorded with the time the rank was blocked in it
 * and the payload it completed.  Our entries for the requests are copied
 * before the call: MPI frees the handles inside it (cf_runtime.h). */
#include "cf_request.h"

#include <string.h>

/* Room for n snapshots and statuses: the fixed scratch, grown (once, to a
 * power of two) for a call over more requests than it holds; 0 when out
 * of memory, and those completions are counted as missed. */
static int cf_scratch_fit(cf_thread_t *t, int n)
{
    size_t cap = t->scratch_cap;
    if ((size_t)n <= cap)
        return 1;
    while (cap < (size_t)n)
        cap *= 2;
    cf_req_snap_t *s = realloc(t->snaps, cap * sizeof(*s));
    if (!s)
        return 0;
    memset(s + t->scratch_cap, 0, (cap - t->scratch_cap) * sizeof(*s)); /* no snapshot to reuse */
    t->snaps = s;
    MPI_Status *st = realloc(t->status_buf, cap * sizeof(*st));
    if (!st)
        return 0;
    t->status_buf = st;
    t->scratch_cap = cap;
    return 1;
}

/* Statuses to use: the caller's, or ours when it passed MPI_STATUSES_IGNORE
 * (NULL when there is no room: receive sizes then fall back to the posted count). */
static MPI_Status *cf_statuses(cf_thread_t *t, MPI_Status *given, int n)
{
    if (given != MPI_STATUSES_IGNORE)
        return given;
    return n >= 0 && (size_t)n <= t->scratch_cap ? t->status_buf : MPI_STATUSES_IGNORE;
}

/* The snapshots of n requests in t->snaps: how many of them count
 * (cf_snap_counts), -1 when they could not be taken; polled, for a call
 * that may return with them pending (cf_req_snap_all). */
static int cf_copy_requests(cf_thread_t *t, const MPI_Request *reqs, int n, int polled)
{
    if (n < 0 || !reqs || !cf_scratch_fit(t, n))
        return -1;
    return polled ? cf_req_snap_polled(reqs, n, t->snaps) : cf_req_snap_all(reqs, n, t->snaps);
}

/* cf_req_done_counted of a snapshot, or 0 for one that does not count
 * (MPI_REQUEST_NULL, a shared or untracked request, an inactive persistent
 * one; an untracked one is counted as missed), inline. */
CF_HOT uint64_t cf_req_done(cf_thread_t *t, const cf_req_snap_t *snap, const MPI_Status *st, uint64_t t_done,
                            unsigned *path_p, uint64_t blocked_ns)
{
    if (__builtin_expect(!cf_snap_counts(snap), 0)) {
        t->missed += snap->slot == CF_SNAP_UNTRACKED;
        return 0;
    }
    return cf_req_done_counted(t, snap, st, t_done, path_p, blocked_ns);
}

/* The time a completion call blocked is charged to the operations whose
 * requests it completed, split evenly among them: a Waitall of 65
 * all-reduces that blocked 8 ms charges each 123 us.  The share of one of
 * n requests, in ns; 0 when none counts. */
static uint64_t cf_share(uint64_t t0, uint64_t t1, int n)
{
    return n > 0 ? cf_ticks_to_ns(t1 - t0) / (uint64_t)n : 0;
}

/* ra: the return address of the MPI function, for its call site; ns: the
 * call's time (t0 to t1) in ns.  The completion call's record keeps, beside
 * its time, the part of it charged to requests (t->charged_ns, reset here).
 * A call whose site's memo holds its record (the path and size bin of the
 * last one) takes it from there, with no lookup of its key or its site. */
CF_HOT void cf_record_wait(cf_thread_t *t, unsigned op, unsigned path, uint64_t bytes, uint64_t t0, uint64_t t1,
                           uint64_t ns, void *ra)
{
    cf_site_t *site = cf_site_first(t, op, ra);
    const cf_memo_t *m = site ? cf_memo_done(site, op, ra, path, bytes) : NULL;
    if (__builtin_expect(t->post_t1 != 0, 0))
        cf_post_gap(t, t0, t1);
    t->mpi_ns += ns;
    if (m) {
        cf_stat_add_more(m->rec, bytes, ns); /* the full path recorded its call before it filled the memo */
        m->rec->t_wait += t->charged_ns;
        t->charged_ns = 0;
        cf_site_add(site, bytes, t0, t1);
        return;
    }
    uint64_t key = cf_key_of(op, CF_COMM_ID_NONE, path, bytes);
    cf_stat_t *s = cf_stat_of(&t->table, key);
    if (s) {
        cf_stat_add(s, bytes, ns);
        s->t_wait += t->charged_ns;
    }
    t->charged_ns = 0;
    site = cf_site_of(t, op, CF_COMM_ID_NONE, ra);
    if (site) {
        cf_site_add(site, bytes, t0, t1);
        /* a memo of no communicator (the world's description stands in:
         * only a call of this operation reads the memo) */
        cf_memo_fill(t, site, cf_comm_world, MPI_DATATYPE_NULL, 0, 0, 0, key, bytes, -1, CF_MEMO_REC);
    }
}

/* The completion call that called MPI at ticks t0 follows a marked
 * nonblocking collective's post (cf_post_mark): the time between them,
 * where no MPI call came between, is one gap.  It holds the completion
 * call's copy of its requests (tens of ns): checked at the entry instead,
 * or defined in another file than its caller, the check cost the Testall
 * of a growing list 10 instructions a call.  The call left at t1; unless
 * its post was an armed one, it arms the next post (cf_runtime.h:
 * cf_post_mark). */
void cf_post_gap(cf_thread_t *t, uint64_t t0, uint64_t t1)
{
    uint64_t p1 = t->post_t1;
    t->post_t1 = 0;
    if (t->mpi_ns != t->post_mpi_ns || t->post_gen != atomic_load_explicit(&cf_memo_gen, memory_order_relaxed) ||
        t0 < p1)
        return;
    if (t->post_gap == NULL && (t->post_gap = calloc(1, sizeof(*t->post_gap))) == NULL)
        return;
    cf_stat_add(t->post_gap, 0, cf_ticks_to_ns(t0 - p1));
    if (!t->post_forced) {
        t->poll_t1 = t1;
        t->poll_mpi_ns = t->mpi_ns + cf_ticks_to_ns(t1 - t0); /* the caller adds it after */
        t->poll_gen = t->post_gen;
        t->post_left = 0;
    }
}

/* A completion call that returned rc, an error: counted as failed
 * (cf_fail), no record.  With MPI_ERR_IN_STATUS, the status of each of the
 * n requests it was about (those of indices, or all) says what became of
 * it: one that succeeded is booked under its own operation, one that failed
 * is let go unbooked, one still pending stays.  Without statuses every
 * request is taken as failed.  Any other error: a request that a single
 * completion named (one, -1 for none) completed with that error. */
static int cf_complete_failed(cf_thread_t *t, unsigned op, int rc, int n, const int *indices, MPI_Status *sts,
                              int one, uint64_t t0, uint64_t t1)
{
    if (rc == MPI_ERR_IN_STATUS && n > 0) {
        int ok = 0;
        for (int j = 0; j < n; j++)
            ok += sts != MPI_STATUSES_IGNORE && sts[j].MPI_ERROR == MPI_SUCCESS;
        uint64_t share = cf_share(t0, t1, ok);
        for (int j = 0; j < n; j++) {
            int i = indices ? indices[j] : j;
            if (i < 0 || (size_t)i >= t->scratch_cap)
                continue;
            const cf_req_snap_t *snap = &t->snaps[i];
            int err = sts == MPI_STATUSES_IGNORE ? MPI_ERR_OTHER : sts[j].MPI_ERROR;
            if (err == MPI_SUCCESS)
                cf_req_done(t, snap, &sts[j], t1, NULL, share);
            else if (err != MPI_ERR_PENDING)
                cf_req_failed(snap);
        }
    } else if (one >= 0)
        cf_req_failed(&t->snaps[one]);
    t->charged_ns = 0;
    return cf_fail(t, op, rc, t0, t1);
}

/* The status to hand a single completion: the caller's, or ours (mine)
 * when it passed MPI_STATUS_IGNORE and the recording needs one, a request
 * that will be recorded from its status (a receive's size and source, a
 * file access's bytes, whether a cancel took effect).  A send or a
 * collective is recorded from its post: MPI need not fill a status. */
static MPI_Status *cf_status_for(const cf_req_snap_t *snap, MPI_Status *status, MPI_Status *mine)
{
    if (status != MPI_STATUS_IGNORE || !cf_snap_counts(snap) ||
        !(snap->req.flags & (CF_REQ_RECV | CF_REQ_STATUS | CF_REQ_CANCEL)))
        return status;
    return mine;
}

/* MPI_Wait called from ra: the program's call site, the return address of
 * MPI_Wait or of the Fortran binding (cf_wait_from), with no thread-local
 * to read for it. */
CF_HOT int cf_wait(MPI_Request *request, MPI_Status *status, void *ra)
{
    cf_thread_t *t = cf_enter(CF_OP_MPI_Wait);
    if (!t)
        return PMPI_Wait(request, status);
    cf_req_snap_t snap;
    cf_req_snap(*request, &snap);
    MPI_Status st;
    MPI_Status *sp = cf_status_for(&snap, status, &st);
    uint64_t t0 = cf_ticks();
    int rc = PMPI_Wait(request, sp);
    uint64_t t1 = cf_ticks();
    if (rc != MPI_SUCCESS) {
        cf_req_failed(&snap);
        return cf_fail(t, CF_OP_MPI_Wait, rc, t0, t1);
    }
    unsigned path = CF_PATH_SELF;
    uint64_t ns = cf_ticks_to_ns(t1 - t0);
    uint64_t bytes = cf_req_done_one(t, &snap, sp == MPI_STATUS_IGNORE ? NULL : sp, t1, &path, ns);
    cf_record_wait(t, CF_OP_MPI_Wait, path, bytes, t0, t1, ns, ra);
    cf_leave(t);
    return rc;
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    return cf_wait(request, status, __builtin_return_address(0));
}

int cf_wait_from(MPI_Request *request, MPI_Status *status, void *ra)
{
    return cf_wait(request, status, ra);
}

/* MPI_Test called from ra, as cf_wait. */
CF_HOT int cf_test(MPI_Request *request, int *flag, MPI_Status *status, void *ra)
{
    cf_thread_t *t = cf_enter(CF_OP_MPI_Test);
    if (!t)
        return PMPI_Test(request, flag, status);
    cf_req_snap_t snap;
    cf_req_snap(*request, &snap);
    MPI_Status st;
    MPI_Status *sp = cf_status_for(&snap, status, &st);
    uint64_t t0 = cf_ticks();
    int rc = PMPI_Test(request, flag, sp);
    uint64_t t1 = cf_ticks();
    if (rc != MPI_SUCCESS) {
        cf_req_failed(&snap);
        return cf_fail(t, CF_OP_MPI_Test, rc, t0, t1);
    }
    unsigned path = CF_PATH_SELF;
    uint64_t ns = cf_ticks_to_ns(t1 - t0);
    uint64_t bytes = *flag ? cf_req_done_one(t, &snap, sp == MPI_STATUS_IGNORE ? NULL : sp, t1, &path, ns) : 0;
    cf_record_wait(t, CF_OP_MPI_Test, path, bytes, t0, t1, ns, ra);
    cf_leave(t);
    return rc;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    return cf_test(request, flag, status, __builtin_return_address(0));
}

int cf_test_from(MPI_Request *request, int *flag, MPI_Status *status, void *ra)
{
    return cf_test(request, flag, status, ra);
}

/* The n requests of an all-completion, of which counted count. */
static uint64_t cf_complete_all(cf_thread_t *t, int n, int counted, MPI_Status *sts, uint64_t t0, uint64_t t1,
                                unsigned *path_p)
{
    return cf_req_done_all(t, t->snaps, n, sts == MPI_STATUSES_IGNORE ? NULL : sts, t1, path_p,
                           cf_share(t0, t1, counted));
}

int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    cf_thread_t *t = cf_enter(CF_OP_MPI_Waitall);
    if (!t)
        return PMPI_Waitall(count, array_of_requests, array_of_statuses);
    int counted = cf_copy_requests(t, array_of_requests, count, 0), copied = counted >= 0;
    MPI_Status *sts = cf_statuses(t, array_of_statuses, count);
    uint64_t t0 = cf_ticks();
    int rc = PMPI_Waitall(count, array_of_requests, sts);
    uint64_t t1 = cf_ticks();
    if (rc != MPI_SUCCESS)
        return cf_complete_failed(t, CF_OP_MPI_Waitall, rc, copied ? count : 0, NULL, sts, -1, t0, t1);
    unsigned path = CF_PATH_SELF;
    uint64_t bytes = 0;
    if (copied)
        bytes = cf_complete_all(t, count, counted, sts, t0, t1, &path);
    else if (!copied)
        t->missed += (uint64_t)(count > 0 ? count : 0);
    cf_record_wait(t, CF_OP_MPI_Waitall, path, bytes, t0, t1, cf_ticks_to_ns(t1 - t0), CF_SITE_RA);
    cf_leave(t);
    return rc;
}

int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[])
{
    cf_thread_t *t = cf_enter(CF_OP_MPI_Testall);
    if (!t)
        return PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
    int counted = cf_copy_requests(t, array_of_requests, count, 1), copied = counted >= 0;
    MPI_Status *sts = cf_statuses(t, array_of_statuses, count);
    uint64_t t0 = cf_ticks();
    int rc = PMPI_Testall(count, array_of_requests, flag, sts);
    uint64_t t1 = cf_ticks();
    if (rc != MPI_SUCCESS)
        return cf_complete_failed(t, CF_OP_MPI_Testall, rc, copied ? count : 0, NULL, sts, -1, t0, t1);
    unsigned path = CF_PATH_SELF;
    uint64_t bytes = 0;
    if (copied && *flag)
        bytes = cf_complete_all(t, count, counted, sts, t0, t1, &path);
    else if (!copied && *flag)
        t->missed += (uint64_t)(count > 0 ? count : 0);
    cf_record_wait(t, CF_OP_MPI_Testall, path, bytes, t0, t1, cf_ticks_to_ns(t1 - t0), CF_SITE_RA);
    cf_leave(t);
    return rc;
}

static uint64_t cf_complete_any(cf_thread_t *t, int count, int index, MPI_Status *sp, uint64_t t0, uint64_t t1,
                                unsigned *path_p)
{
    if (index == MPI_UNDEFINED || index < 0 || index >= count)
        return 0;
    return cf_req_done(t, &t->snaps[index], sp, t1, path_p, cf_share(t0, t1, 1));
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    cf_thread_t *t = cf_enter(CF_OP_MPI_Waitany);
    if (!t)
        return PMPI_Waitany(count, array_of_requests, index, status);
    int copied = cf_copy_requests(t, array_of_requests, count, 1) >= 0;
    MPI_Status st;
    MPI_Status *sp = status == MPI_STATUS_IGNORE ? &st : status;
    uint64_t t0 = cf_ticks();
    int rc = PMPI_Waitany(count, array_of_requests, index, sp);
    uint64_t t1 = cf_ticks();
    if (rc != MPI_SUCCESS)
        return cf_complete_failed(t, CF_OP_MPI_Waitany, rc, 0, NULL, NULL, copied && *index >= 0 && *index < count ? *index : -1,
                                  t0, t1);
    unsigned path = CF_PATH_SELF;
    uint64_t bytes = 0;
    if (copied)
        bytes = cf_complete_any(t, count, *index, sp, t0, t1, &path);
    cf_record_wait(t, CF_OP_MPI_Waitany, path, bytes, t0, t1, cf_ticks_to_ns(t1 - t0), CF_SITE_RA);
    cf_leave(t);
    return rc;
}

int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status)
{
    cf_thread_t *t = cf_enter(CF_OP_MPI_Testany);
    if (!t)
        return PMPI_Testany(count, array_of_requests, index, flag, status);
    int copied = cf_copy_requests(t, array_of_requests, count, 1) >= 0;
    MPI_Status st;
    MPI_Status *sp = status == MPI_STATUS_IGNORE ? &st : status;
    uint64_t t0 = cf_ticks();
    int rc = PMPI_Testany(count, array_of_requests, index, flag, sp);
    uint64_t t1 = cf_ticks();
    if (rc != MPI_SUCCESS)
        return cf_complete_failed(t, CF_OP_MPI_Testany, rc, 0, NULL, NULL, copied && *index >= 0 && *index < count ? *index : -1,
                                  t0, t1);
    unsigned path = CF_PATH_SELF;
    uint64_t bytes = 0;
    if (copied && *flag)
        bytes = cf_complete_any(t, count, *index, sp, t0, t1, &path);
    cf_record_wait(t, CF_OP_MPI_Testany, path, bytes, t0, t1, cf_ticks_to_ns(t1 - t0), CF_SITE_RA);
    cf_leave(t);
    return rc;
}

static uint64_t cf_complete_some(cf_thread_t *t, int incount, int outcount, const int *indices, MPI_Status *sts,
                                 uint64_t t0, uint64_t t1, unsigned *path_p)
{
    uint64_t bytes = 0;
    if (outcount == MPI_UNDEFINED)
        return 0;
    int n = 0;
    for (int j = 0; j < outcount; j++)
        n += indices[j] >= 0 && indices[j] < incount && cf_snap_counts(&t->snaps[indices[j]]);
    uint64_t share = cf_share(t0, t1, n);
    for (int j = 0; j < outcount; j++) {
        int i = indices[j];
        if (i >= 0 && i < incount)
            bytes += cf_req_done(t, &t->snaps[i], sts == MPI_STATUSES_IGNORE ? NULL : &sts[j], t1, path_p, share);
    }
    return bytes;
}

int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                 MPI_Status array_of_statuses[])
{
    cf_thread_t *t = cf_enter(CF_OP_MPI_Waitsome);
    if (!t)
        return PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
    int copied = cf_copy_requests(t, array_of_requests, incount, 1) >= 0;
    MPI_Status *sts = cf_statuses(t, array_of_statuses, incount);
    uint64_t t0 = cf_ticks();
    int rc = PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices, sts);
    uint64_t t1 = cf_ticks();
    if (rc != MPI_SUCCESS)
        return cf_complete_failed(t, CF_OP_MPI_Waitsome, rc, copied && *outcount != MPI_UNDEFINED ? *outcount : 0,
                                  array_of_indices, sts, -1, t0, t1);
    unsigned path = CF_PATH_SELF;
    uint64_t bytes = 0;
    if (copied)
        bytes = cf_complete_some(t, incount, *outcount, array_of_indices, sts, t0, t1, &path);
    cf_record_wait(t, CF_OP_MPI_Waitsome, path, bytes, t0, t1, cf_ticks_to_ns(t1 - t0), CF_SITE_RA);
    cf_leave(t);
    return rc;
}

int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                 MPI_Status array_of_statuses[])
{
    cf_thread_t *t = cf_enter(CF_OP_MPI_Testsome);
    if (!t)
        return PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
    int copied = cf_copy_requests(t, array_of_requests, incount, 1) >= 0;
    MPI_Status *sts = cf_statuses(t, array_of_statuses, incount);
    uint64_t t0 = cf_ticks();
    int rc = PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, sts);
    uint64_t t1 = cf_ticks();
    if (rc != MPI_SUCCESS)
        return cf_complete_failed(t, CF_OP_MPI_Testsome, rc, copied && *outcount != MPI_UNDEFINED ? *outcount : 0,
                                  array_of_indices, sts, -1, t0, t1);
    unsigned path = CF_PATH_SELF;
    uint64_t bytes = 0;
    if (copied)
        bytes = cf_complete_some(t, incount, *outcount, array_of_indices, sts, t0, t1, &path);
    cf_record_wait(t, CF_OP_MPI_Testsome, path, bytes, t0, t1, cf_ticks_to_ns(t1 - t0), CF_SITE_RA);
    cf_leave(t);
    return rc;
}

int MPI_Start(MPI_Request *request)
{
    cf_thread_t *t = cf_enter(CF_OP_MPI_Start);
    if (!t)
        return PMPI_Start(request);
    uint64_t t0 = cf_ticks();
    int rc = PMPI_Start(request);
    uint64_t t1 = cf_ticks();
    if (rc != MPI_SUCCESS)
        return cf_fail(t, CF_OP_MPI_Start, rc, t0, t1);
    cf_req_start(t, *request, t0);
    cf_record_call(t, CF_OP_MPI_Start, CF_COMM_ID_NONE, CF_PATH_SELF, 0, t0, t1);
    cf_site_note(t, CF_OP_MPI_Start, CF_COMM_ID_NONE, CF_SITE_RA, 0, t0, t1);
    cf_leave(t);
    return rc;
}

int MPI_Startall(int count, MPI_Request array_of_requests[])
{
    cf_thread_t *t = cf_enter(CF_OP_MPI_Startall);
    if (!t)
        return PMPI_Startall(count, array_of_requests);
    uint64_t t0 = cf_ticks();
    int rc = PMPI_Startall(count, array_of_requests);
    uint64_t t1 = cf_ticks();
    if (rc != MPI_SUCCESS)
        return cf_fail(t, CF_OP_MPI_Startall, rc, t0, t1);
    for (int i = 0; i < count; i++)
        cf_req_start(t, array_of_requests[i], t0);
    cf_record_call(t, CF_OP_MPI_Startall, CF_COMM_ID_NONE, CF_PATH_SELF, 0, t0, t1);
    cf_site_note(t, CF_OP_MPI_Startall, CF_COMM_ID_NONE, CF_SITE_RA, 0, t0, t1);
    cf_leave(t);
    return rc;
}

int MPI_Request_free(MPI_Request *request)
{
    cf_thread_t *t = cf_enter(CF_OP_MPI_Request_free);
    if (!t)
        return PMPI_Request_free(request);
    cf_req_snap_t snap;
    cf_req_snap(*request, &snap);
    uint64_t t0 = cf_ticks();
    int rc = PMPI_Request_free(request);
    uint64_t t1 = cf_ticks();
    if (rc != MPI_SUCCESS)
        return cf_fail(t, CF_OP_MPI_Request_free, rc, t0, t1);
    cf_req_forget(t, &snap);
    cf_record_call(t, CF_OP_MPI_Request_free, CF_COMM_ID_NONE, CF_PATH_SELF, 0, t0, t1);
    cf_site_note(t, CF_OP_MPI_Request_free, CF_COMM_ID_NONE, CF_SITE_RA, 0, t0, t1);
    cf_leave(t);
    return rc;
}
