/* The UCP functions the UCX layer interposes, in one place.
 *
 * CF_UCX_OPS(X): X(function, kind) -- calls that move data; each is an
 * operation of the UCX layer in the profile (index = position + 1, so that
 * 0 stays "none").  Kinds: "send" and "recv" (tag, stream, active message),
 * "rma" (put, get), "atomic".  Appending keeps existing indices.
 *
 * CF_UCX_HELPERS(X): X(function) -- further functions the layer forwards or
 * calls: request release, generic datatypes, endpoint and worker
 * bookkeeping. */
#ifndef CF_UCX_CALLS_H
#define CF_UCX_CALLS_H

#define CF_UCX_OPS(X)                 \
    X(ucp_tag_send_nb, "send")        \
    X(ucp_tag_send_nbr, "send")       \
    X(ucp_tag_send_nbx, "send")       \
    X(ucp_tag_send_sync_nb, "send")   \
    X(ucp_tag_send_sync_nbx, "send")  \
    X(ucp_tag_recv_nb, "recv")        \
    X(ucp_tag_recv_nbr, "recv")       \
    X(ucp_tag_recv_nbx, "recv")       \
    X(ucp_tag_msg_recv_nb, "recv")    \
    X(ucp_tag_msg_recv_nbx, "recv")   \
    X(ucp_stream_send_nb, "send")     \
    X(ucp_stream_send_nbx, "send")    \
    X(ucp_stream_recv_nb, "recv")     \
    X(ucp_stream_recv_nbx, "recv")    \
    X(ucp_am_send_nb, "send")         \
    X(ucp_am_send_nbx, "send")        \
    X(ucp_put_nbi, "rma")             \
    X(ucp_put_nb, "rma")              \
    X(ucp_put_nbx, "rma")             \
    X(ucp_get_nbi, "rma")             \
    X(ucp_get_nb, "rma")              \
    X(ucp_get_nbx, "rma")             \
    X(ucp_atomic_post, "atomic")      \
    X(ucp_atomic_fetch_nb, "atomic")  \
    X(ucp_atomic_op_nbx, "atomic")

#define CF_UCX_HELPERS(X)          \
    X(ucp_request_free)            \
    X(ucp_request_release)         \
    X(ucp_request_check_status)    \
    X(ucp_tag_recv_request_test)   \
    X(ucp_dt_create_generic)       \
    X(ucp_dt_destroy)              \
    X(ucp_worker_create)           \
    X(ucp_worker_query)            \
    X(ucp_worker_release_address)  \
    X(ucp_worker_address_query)    \
    X(ucp_ep_create)               \
    X(ucp_ep_destroy)              \
    X(ucp_ep_close_nb)             \
    X(ucp_ep_close_nbx)            \
    X(ucp_disconnect_nb)           \
    X(ucp_ep_print_info)

#endif
