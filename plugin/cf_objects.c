/* Files, windows and matched messages (cf_objects.h): the calls that make
 * and free them, the matched receives, and MPI_Cancel. */
#include "cf_objects.h"
#include "cf_sample.h"
#include "cf_site.h"

cf_objtab_t cf_files, cf_wins, cf_msgs;

/* Notes k with its communicator (and aux); a full window of slots leaves it out. */
static void cf_obj_put(cf_objtab_t *tab, uintptr_t k, const cf_comm_t *c, int aux)
{
    if (!k)
        return;
    uint32_t i = cf_hash_ptr(k);
    for (unsigned n = 0; n < 16; n++) {
        uint32_t s = (i + n) & (CF_OBJ_SLOTS - 1);
        uintptr_t e = atomic_load_explicit(&tab->key[s], memory_order_relaxed);
        if (e == k || (e == 0 && atomic_compare_exchange_strong(&tab->key[s], &e, (uintptr_t)1))) {
            /* claimed (1: being written), then published with the key */
            tab->comm[s] = c;
            tab->aux[s] = aux;
            atomic_store_explicit(&tab->key[s], k, memory_order_release);
            return;
        }
    }
}

/* Forgets k; returns whether it was there, with its communicator and aux. */
static int cf_obj_take(cf_objtab_t *tab, uintptr_t k, const cf_comm_t **c_p, int *aux_p)
{
    int s = k ? cf_obj_slot(tab, k) : -1;
    if (s < 0)
        return 0;
    uintptr_t w = k;
    if (c_p)
        *c_p = tab->comm[s];
    if (aux_p)
        *aux_p = tab->aux[s];
    return atomic_compare_exchange_strong(&tab->key[s], &w, (uintptr_t)0);
}

int cf_neighbours(MPI_Comm comm, int out)
{
    int kind = MPI_UNDEFINED, n = 0;
    if (PMPI_Topo_test(comm, &kind) != MPI_SUCCESS)
        return 0;
    if (kind == MPI_CART) {
        if (PMPI_Cartdim_get(comm, &n) != MPI_SUCCESS)
            return 0;
        return 2 * n; /* a source and a destination per dimension, MPI_PROC_NULL ones too */
    }
    if (kind == MPI_GRAPH) {
        int rank;
        if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS || PMPI_Graph_neighbors_count(comm, rank, &n) != MPI_SUCCESS)
            return 0;
        return n;
    }
    if (kind == MPI_DIST_GRAPH) {
        int in = 0, outd = 0, weighted = 0;
        if (PMPI_Dist_graph_neighbors_count(comm, &in, &outd, &weighted) != MPI_SUCCESS)
            return 0;
        return out ? outd : in;
    }
    return 0;
}

/* One call on an object, with no payload: on the communicator's path, or
 * on self for a file (the file system is not a network path). */
static void cf_record_obj(cf_thread_t *t, unsigned op, const cf_comm_t *c, int file, uint64_t t0, uint64_t t1,
                          void *ra)
{
    cf_record_call(t, op, cf_comm_id(c), c && !file ? c->path : CF_PATH_SELF, 0, t0, t1);
    cf_site_note(t, op, cf_comm_id(c), ra, 0, t0, t1);
}

/* ---- files ---- */

int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    cf_thread_t *t = cf_enter(CF_OP_MPI_File_open);
    if (!t)
        return PMPI_File_open(comm, filename, amode, info, fh);
    uint64_t t0 = cf_ticks();
    int rc = PMPI_File_open(comm, filename, amode, info, fh);
    uint64_t t1 = cf_ticks();
    if (rc != MPI_SUCCESS)
        return cf_fail(t, CF_OP_MPI_File_open, rc, t0, t1);
    cf_comm_t *c = cf_comm_get(comm);
    cf_obj_put(&cf_files, CF_HANDLE(*fh), c, 0);
    cf_record_call(t, CF_OP_MPI_File_open, cf_comm_id(c), CF_PATH_SELF, 0, t0, t1);
    cf_site_note(t, CF_OP_MPI_File_open, cf_comm_id(c), CF_SITE_RA, 0, t0, t1);
    cf_leave(t);
    return rc;
}

/* Freeing a file or window: recorded under its communicator, then forgotten. */
#define CF_OBJ_FREE(name, tab, handle_p, comm_of, file)                                                           \
    {                                                                                                        \
        cf_thread_t *t = cf_enter(CF_OP_##name);                                                             \
        uintptr_t k = CF_HANDLE(*(handle_p));                                                                \
        if (!t) {                                                                                            \
            cf_obj_take(&(tab), k, NULL, NULL);                                                              \
            return P##name(handle_p);                                                                        \
        }                                                                                                    \
        const cf_comm_t *c = comm_of(*(handle_p));                                                           \
        uint64_t t0 = cf_ticks();                                                                            \
        int rc = P##name(handle_p);                                                                          \
        uint64_t t1 = cf_ticks();                                                                            \
        if (rc != MPI_SUCCESS)                                                                               \
            return cf_fail(t, CF_OP_##name, rc, t0, t1);                                                     \
        cf_obj_take(&(tab), k, NULL, NULL);                                                                  \
        cf_record_obj(t, CF_OP_##name, c, file, t0, t1, CF_SITE_RA);                                         \
        cf_leave(t);                                                                                         \
        return rc;                                                                                           \
    }

int MPI_File_close(MPI_File *fh)
    CF_OBJ_FREE(MPI_File_close, cf_files, fh, cf_file_comm, 1)

/* ---- windows: every constructor takes the communicator last but the window ---- */

#define CF_WIN_MAKE(name, call, comm, win)                                                                   \
    {                                                                                                        \
        cf_thread_t *t = cf_enter(CF_OP_##name);                                                             \
        if (!t)                                                                                              \
            return P##call;                                                                                  \
        uint64_t t0 = cf_ticks();                                                                            \
        int rc = P##call;                                                                                    \
        uint64_t t1 = cf_ticks();                                                                            \
        if (rc != MPI_SUCCESS)                                                                               \
            return cf_fail(t, CF_OP_##name, rc, t0, t1);                                                     \
        cf_comm_t *c = cf_comm_get(comm);                                                                    \
        cf_obj_put(&cf_wins, CF_HANDLE(*(win)), c, 0);                                                       \
        cf_record_obj(t, CF_OP_##name, c, 0, t0, t1, CF_SITE_RA);                                            \
        cf_leave(t);                                                                                         \
        return rc;                                                                                           \
    }

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
    CF_WIN_MAKE(MPI_Win_create, MPI_Win_create(base, size, disp_unit, info, comm, win), comm, win)

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
    CF_WIN_MAKE(MPI_Win_allocate, MPI_Win_allocate(size, disp_unit, info, comm, baseptr, win), comm, win)

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                            MPI_Win *win)
    CF_WIN_MAKE(MPI_Win_allocate_shared, MPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win), comm,
                win)

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
    CF_WIN_MAKE(MPI_Win_create_dynamic, MPI_Win_create_dynamic(info, comm, win), comm, win)

#if MPI_VERSION >= 4
int MPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
    CF_WIN_MAKE(MPI_Win_create_c, MPI_Win_create_c(base, size, disp_unit, info, comm, win), comm, win)

int MPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
    CF_WIN_MAKE(MPI_Win_allocate_c, MPI_Win_allocate_c(size, disp_unit, info, comm, baseptr, win), comm, win)

int MPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                              MPI_Win *win)
    CF_WIN_MAKE(MPI_Win_allocate_shared_c, MPI_Win_allocate_shared_c(size, disp_unit, info, comm, baseptr, win),
                comm, win)
#endif

int MPI_Win_free(MPI_Win *win)
    CF_OBJ_FREE(MPI_Win_free, cf_wins, win, cf_win_comm, 0)

/* ---- matched probes and receives ----
 * A matched message is noted with its communicator and source at the
 * probe, and taken at the receive: MPI_Mrecv has no communicator. */

static void cf_probed(cf_thread_t *t, unsigned op, MPI_Comm comm, int got, const MPI_Message *message,
                      const MPI_Status *sp, int source, uint64_t t0, uint64_t t1, void *ra)
{
    cf_comm_t *c = cf_comm_get(comm);
    int src = got ? sp->MPI_SOURCE : source;
    uint64_t b = got ? cf_status_bytes(sp) : 0;
    if (got && *message != MPI_MESSAGE_NO_PROC)
        cf_obj_put(&cf_msgs, CF_HANDLE(*message), c, src);
    cf_record_call(t, op, cf_comm_id(c), cf_comm_peer_path(c, src), b, t0, t1);
    cf_site_note(t, op, cf_comm_id(c), ra, b, t0, t1);
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    cf_thread_t *t = cf_enter(CF_OP_MPI_Mprobe);
    if (!t)
        return PMPI_Mprobe(source, tag, comm, message, status);
    MPI_Status st;
    MPI_Status *sp = status == MPI_STATUS_IGNORE ? &st : status;
    uint64_t t0 = cf_ticks();
    int rc = PMPI_Mprobe(source, tag, comm, message, sp);
    uint64_t t1 = cf_ticks();
    if (rc != MPI_SUCCESS)
        return cf_fail(t, CF_OP_MPI_Mprobe, rc, t0, t1);
    cf_probed(t, CF_OP_MPI_Mprobe, comm, 1, message, sp, source, t0, t1, CF_SITE_RA);
    cf_leave(t);
    return rc;
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
    cf_thread_t *t = cf_enter(CF_OP_MPI_Improbe);
    if (!t)
        return PMPI_Improbe(source, tag, comm, flag, message, status);
    MPI_Status st;
    MPI_Status *sp = status == MPI_STATUS_IGNORE ? &st : status;
    uint64_t t0 = cf_ticks();
    int rc = PMPI_Improbe(source, tag, comm, flag, message, sp);
    uint64_t t1 = cf_ticks();
    if (rc != MPI_SUCCESS)
        return cf_fail(t, CF_OP_MPI_Improbe, rc, t0, t1);
    cf_probed(t, CF_OP_MPI_Improbe, comm, *flag, message, sp, source, t0, t1, CF_SITE_RA);
    cf_leave(t);
    return rc;
}

/* The communicator and source of a matched message, taken from the table:
 * NULL and MPI_PROC_NULL for MPI_MESSAGE_NO_PROC, NULL and
 * MPI_ANY_SOURCE for a message probed unseen. */
static const cf_comm_t *cf_message_take(MPI_Message message, int *src_p)
{
    const cf_comm_t *c = NULL;
    *src_p = message == MPI_MESSAGE_NO_PROC ? MPI_PROC_NULL : MPI_ANY_SOURCE;
    if (message != MPI_MESSAGE_NO_PROC && !cf_obj_take(&cf_msgs, CF_HANDLE(message), &c, src_p)) {
        c = NULL;
        *src_p = MPI_ANY_SOURCE;
    }
    return c;
}

static int cf_mrecv(unsigned op, void *buf, MPI_Count count, MPI_Datatype type, MPI_Message *message,
                    MPI_Status *status, int large, void *ra)
{
    cf_thread_t *t = cf_enter(op);
#if MPI_VERSION >= 4
#define CF_MRECV_CALL (large ? PMPI_Mrecv_c(buf, count, type, message, sp) : PMPI_Mrecv(buf, (int)count, type, message, sp))
#else
    (void)large;
#define CF_MRECV_CALL PMPI_Mrecv(buf, (int)count, type, message, sp)
#endif
    MPI_Status st;
    MPI_Status *sp = status;
    if (!t)
        return CF_MRECV_CALL;
    sp = status == MPI_STATUS_IGNORE ? &st : status;
    int src;
    const cf_comm_t *c = cf_message_take(*message, &src);
    uint64_t t0 = cf_ticks();
    int rc = CF_MRECV_CALL;
#undef CF_MRECV_CALL
    uint64_t t1 = cf_ticks();
    if (rc != MPI_SUCCESS)
        return cf_fail(t, op, rc, t0, t1);
    uint64_t b = cf_status_bytes(sp);
    src = sp->MPI_SOURCE;
    uint64_t k = cf_record_call(t, op, cf_comm_id(c), cf_comm_peer_path(c, src), b, t0, t1);
    cf_p2p_received(t, cf_comm_id(c), cf_world_of(c, src), sp->MPI_TAG, k, b, t0, t1);
    cf_site_note(t, op, cf_comm_id(c), ra, b, t0, t1);
    cf_leave(t);
    return rc;
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status)
{
    return cf_mrecv(CF_OP_MPI_Mrecv, buf, count, type, message, status, 0, CF_SITE_RA);
}

static int cf_imrecv(unsigned op, void *buf, MPI_Count count, MPI_Datatype type, MPI_Message *message,
                     MPI_Request *request, int large, void *ra)
{
    cf_thread_t *t = cf_enter(op);
#if MPI_VERSION >= 4
#define CF_IMRECV_CALL (large ? PMPI_Imrecv_c(buf, count, type, message, request) \
                              : PMPI_Imrecv(buf, (int)count, type, message, request))
#else
    (void)large;
#define CF_IMRECV_CALL PMPI_Imrecv(buf, (int)count, type, message, request)
#endif
    if (!t)
        return CF_IMRECV_CALL;
    int src;
    const cf_comm_t *c = cf_message_take(*message, &src);
    uint64_t t0 = cf_ticks();
    int rc = CF_IMRECV_CALL;
#undef CF_IMRECV_CALL
    uint64_t t1 = cf_ticks();
    if (rc != MPI_SUCCESS)
        return cf_fail(t, op, rc, t0, t1);
    t->mpi_ns += cf_ticks_to_ns(t1 - t0);
    uint64_t b = count > 0 ? (uint64_t)count * cf_type_size(type) : 0;
    cf_req_post(t, *request, op, c, cf_comm_peer_path(c, src), b, CF_REQ_RECV, t0, t1, src, 0);
    cf_site_note(t, op, cf_comm_id(c), ra, b, t0, t1);
    cf_leave(t);
    return rc;
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *request)
{
    return cf_imrecv(CF_OP_MPI_Imrecv, buf, count, type, message, request, 0, CF_SITE_RA);
}

#if MPI_VERSION >= 4
int MPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype type, MPI_Message *message, MPI_Status *status)
{
    return cf_mrecv(CF_OP_MPI_Mrecv_c, buf, count, type, message, status, 1, CF_SITE_RA);
}

int MPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype type, MPI_Message *message, MPI_Request *request)
{
    return cf_imrecv(CF_OP_MPI_Imrecv_c, buf, count, type, message, request, 1, CF_SITE_RA);
}
#endif

/* ---- cancel: the request's completion is then checked with
 * MPI_Test_cancelled, and a cancelled one is not a transfer ---- */
int MPI_Cancel(MPI_Request *request)
{
    cf_thread_t *t = cf_enter(CF_OP_MPI_Cancel);
    if (!t)
        return PMPI_Cancel(request);
    uint64_t t0 = cf_ticks();
    int rc = PMPI_Cancel(request);
    uint64_t t1 = cf_ticks();
    if (rc != MPI_SUCCESS)
        return cf_fail(t, CF_OP_MPI_Cancel, rc, t0, t1);
    cf_req_cancel(*request);
    cf_record_call(t, CF_OP_MPI_Cancel, CF_COMM_ID_NONE, CF_PATH_SELF, 0, t0, t1);
    cf_site_note(t, CF_OP_MPI_Cancel, CF_COMM_ID_NONE, CF_SITE_RA, 0, t0, t1);
    cf_leave(t);
    return rc;
}
