/* Between the UCP wrappers (cf_ucx_wrappers.c, generated from
 * ucx_calls.spec) and the UCX layer's runtime (cf_ucx.c): the next
 * definition of each function, posting with our callback, recording at
 * return, and the endpoint and datatype bookkeeping the wrappers update.
 *
 * A wrapper of an operation: cf_ucx_begin, then the call with cf_ucx_busy
 * raised (UCP's own calls to its public functions pass straight through),
 * then cf_ucx_end. */
#ifndef CF_UCX_CALLS_H
#define CF_UCX_CALLS_H

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdint.h>
/* the UCP entry points we define are exported, as mpi.h does for MPI's */
#pragma GCC visibility push(default)
#include <ucp/api/ucp.h>
#pragma GCC visibility pop
#include "cf_runtime.h"
#include "cf_ucx_ops.h"

/* Operations of the layer: index = place in the spec + 1, so that 0 stays "none". */
enum {
    CF_UCX_OP_NONE = 0,
#define CF_X(name, kind) CF_UCX_OP_##name,
    CF_UCX_OPS(CF_X)
#undef CF_X
    CF_UCX_OP_COUNT /* cf_ucx_op_count (cf_ucx_names.c) */
};

/* Every function the layer forwards to or calls, resolved once. */
enum {
#define CF_X(name, kind) CF_UCX_FN_##name,
    CF_UCX_OPS(CF_X)
#undef CF_X
#define CF_X(name) CF_UCX_FN_##name,
    CF_UCX_HELPERS(CF_X)
#undef CF_X
    CF_UCX_FN_COUNT
};
/* The next definitions found so far (cf_ucx_names.c); cf_ucx_resolve
 * looks one up (dlsym) the first time it is wanted and keeps it. */
CF_HIDDEN extern void *_Atomic cf_ucx_fn[CF_UCX_FN_COUNT];
CF_HIDDEN void *cf_ucx_resolve(unsigned fn) __attribute__((cold));
/* The next definition of a UCP function, typed as the header declares it:
 * one load, and a branch taken the same way after the first call. */
#define CF_UCX_REAL(name)                                                                                         \
    ((__typeof__(&name))(atomic_load_explicit(&cf_ucx_fn[CF_UCX_FN_##name], memory_order_acquire)                \
                             ?: cf_ucx_resolve(CF_UCX_FN_##name)))
/* No next definition: said once, and the call fails with UCS_ERR_UNSUPPORTED. */
CF_HIDDEN ucs_status_t cf_ucx_missing(const char *name);

/* Set while this thread is inside a UCP call we forwarded. */
CF_HIDDEN extern __thread int cf_ucx_busy __attribute__((tls_model("initial-exec")));
/* The layer records (after MPI_Init, COMMFIT_UCX): off, every wrapper is
 * this one test and the next definition's call. */
CF_HIDDEN extern _Atomic int cf_ucx_on;

/* ---- posting ---- */
typedef struct cf_ucx_ctx cf_ucx_ctx_t;
/* A caller's callback of an old (_nb) form, kept untyped and cast back to
 * its own type before the call. */
typedef void (*cf_ucx_oldcb_t)(void);

enum { CF_UCX_PASS, CF_UCX_TIMED, CF_UCX_UNTIMED };
/* which of our completion callbacks an operation gets */
enum { CF_UCX_SEND, CF_UCX_TAG_RECV, CF_UCX_STREAM_RECV };

/* One call being recorded. */
typedef struct {
    cf_thread_t *t;
    cf_ucx_ctx_t *c;      /* NULL: timed over the call */
    uint64_t t0, bytes;
    uint32_t caller_mask; /* the caller's op_attr_mask */
    unsigned op, path;
} cf_ucx_post_t;

/* How to post: CF_UCX_PASS (not recording), CF_UCX_TIMED (post with *out:
 * the caller's parameters with our callback and a context), or
 * CF_UCX_UNTIMED (post as the caller asked, timed over the call).  ep NULL:
 * a receive on a worker.  The size is extra plus count elements of dt at
 * buffer.  old_cb: the callback of an _nb form, whose parameters in carry
 * none. */
CF_HIDDEN int cf_ucx_post(cf_ucx_post_t *ps, unsigned op, int flavor, ucp_ep_h ep, ucp_datatype_t dt,
                          const void *buffer, size_t count, uint64_t extra, const ucp_request_param_t *in,
                          ucp_request_param_t *out, cf_ucx_oldcb_t old_cb, int can_time);
/* The layer passes a call through: off, or a call of UCP's own. */
#define cf_ucx_passing() (!atomic_load_explicit(&cf_ucx_on, memory_order_relaxed) || cf_ucx_busy)
/* The layer's test first, so that a call passed through computes none of
 * the arguments. */
#define cf_ucx_begin(...) (cf_ucx_passing() ? CF_UCX_PASS : cf_ucx_post(__VA_ARGS__))
/* After the call: completed in place (bytes: its size), failed, or in flight. */
CF_HIDDEN ucs_status_ptr_t cf_ucx_end(const cf_ucx_post_t *ps, ucs_status_ptr_t ret, uint64_t bytes);

static inline ucs_status_ptr_t cf_ucx_status_ptr(ucs_status_t st)
{
    return st == UCS_OK || st == UCS_INPROGRESS ? NULL : UCS_STATUS_PTR(st);
}

static inline ucp_datatype_t cf_ucx_param_dt(const ucp_request_param_t *p)
{
    return p && (p->op_attr_mask & UCP_OP_ATTR_FIELD_DATATYPE) ? p->datatype : ucp_dt_make_contig(1);
}

#define CF_UCX_LEN_UNSET SIZE_MAX

/* Our own place for the size of a message that is there already; returns the caller's. */
static inline ucp_tag_recv_info_t *cf_ucx_recv_info(ucp_request_param_t *p, ucp_tag_recv_info_t *mine)
{
    ucp_tag_recv_info_t *caller = (p->op_attr_mask & UCP_OP_ATTR_FIELD_RECV_INFO) ? p->recv_info.tag_info : NULL;
    mine->length = CF_UCX_LEN_UNSET;
    p->op_attr_mask |= UCP_OP_ATTR_FIELD_RECV_INFO;
    p->recv_info.tag_info = mine;
    return caller;
}

/* Size of a tag receive that completed in place (see cf_ucx_recv_info). */
CF_HIDDEN uint64_t cf_ucx_recv_length(const ucp_request_param_t *caller_param, ucp_tag_recv_info_t *info,
                                      ucp_tag_recv_info_t *caller_info, uint64_t capacity);

/* ---- bookkeeping ---- */
/* The endpoint is closed: its slot is free. */
CF_HIDDEN void cf_ucx_ep_forget(ucp_ep_h ep);
/* The generic datatype is destroyed: its pack callbacks are no longer called. */
CF_HIDDEN void cf_ucx_generic_forget(ucp_datatype_t dt);

#endif
