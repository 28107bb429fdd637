/* The Fortran bindings (cf_fortran.h): the library's entries, its
 * sentinels, and the calls written by hand.  Start, end and the completion
 * calls convert their Fortran arguments as the library's own bindings do
 * (handles with the _f2c/_c2f functions, MPI_STATUS(ES)_IGNORE, 1-based
 * indices, logicals) and go through the C wrappers, so that a request
 * posted from Fortran completes as one posted from C. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cf_fortran.h"
#include "cf_request.h"
#include "cf_site.h"

#if CF_FORTRAN

const void *cf_f_in_place[4], *cf_f_bottom[4];

/* name, name_, name__ and NAME of a Fortran symbol, from the library */
static void *cf_fortran_sym(void *handle, const char *name)
{
    static const char *const tails[] = {"_", "__", ""};
    char buf[128];
    void *p = NULL;
    for (unsigned i = 0; i < 3 && !p; i++) {
        snprintf(buf, sizeof(buf), "%s%s", name, tails[i]);
        p = dlsym(handle, buf);
    }
    if (!p) {
        size_t n = 0;
        for (; name[n] && n + 1 < sizeof(buf); n++)
            buf[n] = (char)toupper((unsigned char)name[n]);
        buf[n] = '\0';
        p = dlsym(handle, buf);
    }
    return p;
}

/* The Fortran sentinels of Open MPI (common blocks under each name). */
static void cf_fortran_sentinels(void)
{
    static _Atomic int done;
    if (atomic_load_explicit(&done, memory_order_acquire))
        return;
    static const char *const in_place[] = {"mpi_fortran_in_place_", "mpi_fortran_in_place__", "mpi_fortran_in_place",
                                           "MPI_FORTRAN_IN_PLACE"};
    static const char *const bottom[] = {"mpi_fortran_bottom_", "mpi_fortran_bottom__", "mpi_fortran_bottom",
                                         "MPI_FORTRAN_BOTTOM"};
    for (unsigned i = 0; i < 4; i++) {
        cf_f_in_place[i] = dlsym(RTLD_DEFAULT, in_place[i]);
        cf_f_bottom[i] = dlsym(RTLD_DEFAULT, bottom[i]);
    }
    atomic_store_explicit(&done, 1, memory_order_release);
}

void *cf_fortran_real(void **cache, const char *name)
{
    void *p = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (p)
        return p;
    cf_fortran_sentinels();
    p = cf_fortran_sym(RTLD_NEXT, name);
    __atomic_store_n(cache, p, __ATOMIC_RELEASE);
    return p;
}

/* ierr is optional in mpi_f08: NULL when the caller left it out */
static inline void cf_f_ierr(MPI_Fint *ierr, int rc)
{
    if (ierr)
        *ierr = rc;
}

#define CF_F_REAL(type, name)                                                                                \
    static void *cf_fn;                                                                                      \
    type *cf_real = (type *)cf_fortran_real(&cf_fn, name);                                                   \
    if (!cf_real) {                                                                                          \
        cf_f_ierr(ierr, MPI_ERR_INTERN);                                                                     \
        return;                                                                                              \
    }

/* ---- start and end: the library's own Fortran entries, then ours ---- */
typedef void cf_ft_ierr(MPI_Fint *ierr);
typedef void cf_ft_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr);

CF_FORTRAN_API void mpi_init_(MPI_Fint *ierr)
{
    CF_F_REAL(cf_ft_ierr, "pmpi_init")
    MPI_Fint rc = MPI_SUCCESS;
    cf_real(&rc);
    if (rc == MPI_SUCCESS)
        cf_runtime_init(MPI_THREAD_SINGLE);
    cf_f_ierr(ierr, rc);
}
CF_FORTRAN_EXPORT(mpi_init, MPI_INIT)

CF_FORTRAN_API void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    CF_F_REAL(cf_ft_init_thread, "pmpi_init_thread")
    MPI_Fint rc = MPI_SUCCESS;
    cf_real(required, provided, &rc);
    if (rc == MPI_SUCCESS)
        cf_runtime_init((int)*provided);
    cf_f_ierr(ierr, rc);
}
CF_FORTRAN_EXPORT(mpi_init_thread, MPI_INIT_THREAD)

CF_FORTRAN_API void mpi_finalize_(MPI_Fint *ierr)
{
    CF_F_REAL(cf_ft_ierr, "pmpi_finalize")
    MPI_Fint rc = MPI_SUCCESS;
    cf_runtime_finalize();
    cf_real(&rc);
    cf_f_ierr(ierr, rc);
}
CF_FORTRAN_EXPORT(mpi_finalize, MPI_FINALIZE)

/* ---- completion, through the C wrappers ---- */

/* Scratch for n requests and statuses: on the stack up to CF_F_STACK, else
 * allocated; NULL when out of memory (the call then goes to the library
 * unrecorded). */
#define CF_F_STACK 64
typedef struct {
    MPI_Request rs[CF_F_STACK];
    MPI_Status ss[CF_F_STACK];
    int is[CF_F_STACK];
    MPI_Request *r;
    MPI_Status *s;
    int *i;
} cf_f_scratch_t;

static int cf_f_scratch(cf_f_scratch_t *x, int n)
{
    x->r = x->rs, x->s = x->ss, x->i = x->is;
    if (n <= CF_F_STACK)
        return 1;
    x->r = malloc((size_t)n * sizeof(*x->r));
    x->s = malloc((size_t)n * sizeof(*x->s));
    x->i = malloc((size_t)n * sizeof(*x->i));
    return x->r && x->s && x->i;
}

static void cf_f_scratch_free(cf_f_scratch_t *x)
{
    if (x->r != x->rs) {
        free(x->r);
        free(x->s);
        free(x->i);
    }
}

static void cf_f_requests_in(cf_f_scratch_t *x, const MPI_Fint *f, int n)
{
    for (int k = 0; k < n; k++)
        x->r[k] = PMPI_Request_f2c(f[k]);
}

/* the requests back (completed ones are MPI_REQUEST_NULL now), and the
 * statuses of the first n (or of those the indices name) */
static void cf_f_requests_out(const cf_f_scratch_t *x, MPI_Fint *f, int n)
{
    for (int k = 0; k < n; k++)
        f[k] = PMPI_Request_c2f(x->r[k]);
}

static void cf_f_statuses_out(const MPI_Status *s, MPI_Fint *f, int n)
{
    if (f == MPI_F_STATUSES_IGNORE)
        return;
    for (int k = 0; k < n; k++)
        PMPI_Status_c2f(&s[k], &f[k * CF_F_STATUS_SIZE]);
}

typedef void cf_ft_array(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierr);

CF_FORTRAN_API void mpi_wait_(MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Request r = PMPI_Request_f2c(*request);
    MPI_Status s;
    int ignore = cf_f_status_ignored(status);
    int rc = cf_wait_from(&r, ignore ? MPI_STATUS_IGNORE : &s, __builtin_return_address(0));
    if (rc == MPI_SUCCESS) {
        *request = PMPI_Request_c2f(r);
        if (!ignore)
            PMPI_Status_c2f(&s, status);
    }
    cf_f_ierr(ierr, rc);
}
CF_FORTRAN_EXPORT(mpi_wait, MPI_WAIT)

CF_FORTRAN_API void mpi_test_(MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Request r = PMPI_Request_f2c(*request);
    MPI_Status s;
    int ignore = cf_f_status_ignored(status), f = 0;
    int rc = cf_test_from(&r, &f, ignore ? MPI_STATUS_IGNORE : &s, __builtin_return_address(0));
    if (rc == MPI_SUCCESS) {
        *request = PMPI_Request_c2f(r);
        *flag = f ? 1 : 0;
        if (f && !ignore)
            PMPI_Status_c2f(&s, status);
    }
    cf_f_ierr(ierr, rc);
}
CF_FORTRAN_EXPORT(mpi_test, MPI_TEST)

CF_FORTRAN_API void mpi_waitall_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierr)
{
    CF_SITE_CALLER();
    cf_f_scratch_t x;
    int n = (int)*count;
    if (n < 0 || !cf_f_scratch(&x, n)) {
        cf_f_scratch_free(&x);
        CF_F_REAL(cf_ft_array, "pmpi_waitall")
        MPI_Fint rc = MPI_SUCCESS;
        cf_real(count, requests, statuses, &rc);
        cf_f_ierr(ierr, rc);
        return;
    }
    cf_f_requests_in(&x, requests, n);
    int ignore = statuses == MPI_F_STATUSES_IGNORE;
    int rc = MPI_Waitall(n, x.r, ignore ? MPI_STATUSES_IGNORE : x.s);
    if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) {
        cf_f_requests_out(&x, requests, n);
        cf_f_statuses_out(x.s, ignore ? MPI_F_STATUSES_IGNORE : statuses, n);
    }
    cf_f_scratch_free(&x);
    cf_f_ierr(ierr, rc);
}
CF_FORTRAN_EXPORT(mpi_waitall, MPI_WAITALL)

typedef void cf_ft_testall(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag, MPI_Fint *statuses, MPI_Fint *ierr);

CF_FORTRAN_API void mpi_testall_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag, MPI_Fint *statuses,
                                 MPI_Fint *ierr)
{
    CF_SITE_CALLER();
    cf_f_scratch_t x;
    int n = (int)*count, f = 0;
    if (n < 0 || !cf_f_scratch(&x, n)) {
        cf_f_scratch_free(&x);
        CF_F_REAL(cf_ft_testall, "pmpi_testall")
        MPI_Fint rc = MPI_SUCCESS;
        cf_real(count, requests, flag, statuses, &rc);
        cf_f_ierr(ierr, rc);
        return;
    }
    cf_f_requests_in(&x, requests, n);
    int ignore = statuses == MPI_F_STATUSES_IGNORE;
    int rc = MPI_Testall(n, x.r, &f, ignore ? MPI_STATUSES_IGNORE : x.s);
    if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) {
        *flag = f ? 1 : 0;
        cf_f_requests_out(&x, requests, n);
        if (f)
            cf_f_statuses_out(x.s, ignore ? MPI_F_STATUSES_IGNORE : statuses, n);
    }
    cf_f_scratch_free(&x);
    cf_f_ierr(ierr, rc);
}
CF_FORTRAN_EXPORT(mpi_testall, MPI_TESTALL)

typedef void cf_ft_any(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *flag, MPI_Fint *status,
                       MPI_Fint *ierr);

/* Waitany (flag NULL) and Testany: the index is 1-based in Fortran */
static void cf_f_any(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *flag, MPI_Fint *status,
                     MPI_Fint *ierr)
{
    cf_f_scratch_t x;
    int n = (int)*count, i = MPI_UNDEFINED, f = 1;
    if (n < 0 || !cf_f_scratch(&x, n)) {
        cf_f_scratch_free(&x);
        cf_f_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    cf_f_requests_in(&x, requests, n);
    int ignore = cf_f_status_ignored(status);
    MPI_Status s;
    int rc = flag ? MPI_Testany(n, x.r, &i, &f, ignore ? MPI_STATUS_IGNORE : &s)
                  : MPI_Waitany(n, x.r, &i, ignore ? MPI_STATUS_IGNORE : &s);
    if (rc == MPI_SUCCESS) {
        if (flag)
            *flag = f ? 1 : 0;
        *index = i == MPI_UNDEFINED ? MPI_UNDEFINED : i + 1;
        if (i != MPI_UNDEFINED && i >= 0 && i < n)
            requests[i] = PMPI_Request_c2f(x.r[i]);
        if (f && !ignore)
            PMPI_Status_c2f(&s, status);
    }
    cf_f_scratch_free(&x);
    cf_f_ierr(ierr, rc);
}

CF_FORTRAN_API void mpi_waitany_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *status,
                                 MPI_Fint *ierr)
{
    CF_SITE_CALLER();
    cf_f_any(count, requests, index, NULL, status, ierr);
}
CF_FORTRAN_EXPORT(mpi_waitany, MPI_WAITANY)

CF_FORTRAN_API void mpi_testany_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *flag,
                                 MPI_Fint *status, MPI_Fint *ierr)
{
    CF_SITE_CALLER();
    cf_f_any(count, requests, index, flag, status, ierr);
}
CF_FORTRAN_EXPORT(mpi_testany, MPI_TESTANY)

/* Waitsome and Testsome: indices 1-based */
static void cf_f_some(int test, MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                      MPI_Fint *statuses, MPI_Fint *ierr)
{
    cf_f_scratch_t x;
    int n = (int)*incount, out = 0;
    if (n < 0 || !cf_f_scratch(&x, n)) {
        cf_f_scratch_free(&x);
        cf_f_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    cf_f_requests_in(&x, requests, n);
    int ignore = statuses == MPI_F_STATUSES_IGNORE;
    int rc = test ? MPI_Testsome(n, x.r, &out, x.i, ignore ? MPI_STATUSES_IGNORE : x.s)
                  : MPI_Waitsome(n, x.r, &out, x.i, ignore ? MPI_STATUSES_IGNORE : x.s);
    if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) {
        *outcount = out;
        for (int k = 0; out != MPI_UNDEFINED && k < out; k++) {
            indices[k] = x.i[k] + 1;
            requests[x.i[k]] = PMPI_Request_c2f(x.r[x.i[k]]);
        }
        if (out != MPI_UNDEFINED)
            cf_f_statuses_out(x.s, ignore ? MPI_F_STATUSES_IGNORE : statuses, out);
    }
    cf_f_scratch_free(&x);
    cf_f_ierr(ierr, rc);
}

CF_FORTRAN_API void mpi_waitsome_(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                                  MPI_Fint *statuses, MPI_Fint *ierr)
{
    CF_SITE_CALLER();
    cf_f_some(0, incount, requests, outcount, indices, statuses, ierr);
}
CF_FORTRAN_EXPORT(mpi_waitsome, MPI_WAITSOME)

CF_FORTRAN_API void mpi_testsome_(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                                  MPI_Fint *statuses, MPI_Fint *ierr)
{
    CF_SITE_CALLER();
    cf_f_some(1, incount, requests, outcount, indices, statuses, ierr);
}
CF_FORTRAN_EXPORT(mpi_testsome, MPI_TESTSOME)

CF_FORTRAN_API void mpi_start_(MPI_Fint *request, MPI_Fint *ierr)
{
    CF_SITE_CALLER();
    MPI_Request r = PMPI_Request_f2c(*request);
    cf_f_ierr(ierr, MPI_Start(&r));
}
CF_FORTRAN_EXPORT(mpi_start, MPI_START)

CF_FORTRAN_API void mpi_startall_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *ierr)
{
    CF_SITE_CALLER();
    cf_f_scratch_t x;
    int n = (int)*count;
    if (n < 0 || !cf_f_scratch(&x, n)) {
        cf_f_scratch_free(&x);
        cf_f_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    cf_f_requests_in(&x, requests, n);
    cf_f_ierr(ierr, MPI_Startall(n, x.r));
    cf_f_scratch_free(&x);
}
CF_FORTRAN_EXPORT(mpi_startall, MPI_STARTALL)

/* Freeing a handle from Fortran: through the C wrapper, then the Fortran
 * handle becomes the null one */
#define CF_F_FREE(lower, upper, type, f2c, c2f, cfree, null)                                                 \
    CF_FORTRAN_API void lower##_(MPI_Fint *handle, MPI_Fint *ierr)                                           \
    {                                                                                                        \
        CF_SITE_CALLER();                                                                                    \
        type h = f2c(*handle);                                                                               \
        int rc = cfree(&h);                                                                                  \
        if (rc == MPI_SUCCESS)                                                                               \
            *handle = c2f(null);                                                                             \
        cf_f_ierr(ierr, rc);                                                                                 \
    }                                                                                                        \
    CF_FORTRAN_EXPORT(lower, upper)

CF_F_FREE(mpi_request_free, MPI_REQUEST_FREE, MPI_Request, PMPI_Request_f2c, PMPI_Request_c2f, MPI_Request_free,
          MPI_REQUEST_NULL)

/* communicators made from Fortran are described when made, as from C */
CF_FORTRAN_API void mpi_comm_dup_(MPI_Fint *comm, MPI_Fint *newcomm, MPI_Fint *ierr)
{
    MPI_Comm n = MPI_COMM_NULL;
    int rc = MPI_Comm_dup(PMPI_Comm_f2c(*comm), &n);
    if (rc == MPI_SUCCESS)
        *newcomm = PMPI_Comm_c2f(n);
    cf_f_ierr(ierr, rc);
}
CF_FORTRAN_EXPORT(mpi_comm_dup, MPI_COMM_DUP)

CF_FORTRAN_API void mpi_comm_split_(MPI_Fint *comm, MPI_Fint *color, MPI_Fint *key, MPI_Fint *newcomm, MPI_Fint *ierr)
{
    MPI_Comm n = MPI_COMM_NULL;
    int rc = MPI_Comm_split(PMPI_Comm_f2c(*comm), (int)*color, (int)*key, &n);
    if (rc == MPI_SUCCESS)
        *newcomm = PMPI_Comm_c2f(n);
    cf_f_ierr(ierr, rc);
}
CF_FORTRAN_EXPORT(mpi_comm_split, MPI_COMM_SPLIT)

/* The other constructors: the new communicator back to Fortran.  Fortran
 * logicals (arrays too) are C ints of 0 or 1 with gfortran. */
static void cf_f_comm_made(int rc, MPI_Comm c, MPI_Fint *newcomm, MPI_Fint *ierr)
{
    if (rc == MPI_SUCCESS)
        *newcomm = PMPI_Comm_c2f(c);
    cf_f_ierr(ierr, rc);
}
#define CF_F_COMM_MAKER(lower, upper, params, call)                                                          \
    CF_FORTRAN_API void lower##_ params                                                                      \
    {                                                                                                        \
        MPI_Comm n = MPI_COMM_NULL;                                                                          \
        int rc = call;                                                                                       \
        cf_f_comm_made(rc, n, newcomm, ierr);                                                                \
    }                                                                                                        \
    CF_FORTRAN_EXPORT(lower, upper)
#define CF_C(h) PMPI_Comm_f2c(*(h))

CF_F_COMM_MAKER(mpi_comm_create, MPI_COMM_CREATE, (MPI_Fint *comm, MPI_Fint *group, MPI_Fint *newcomm, MPI_Fint *ierr),
                MPI_Comm_create(CF_C(comm), PMPI_Group_f2c(*group), &n))
CF_F_COMM_MAKER(mpi_comm_create_group, MPI_COMM_CREATE_GROUP,
                (MPI_Fint *comm, MPI_Fint *group, MPI_Fint *tag, MPI_Fint *newcomm, MPI_Fint *ierr),
                MPI_Comm_create_group(CF_C(comm), PMPI_Group_f2c(*group), (int)*tag, &n))
CF_F_COMM_MAKER(mpi_comm_dup_with_info, MPI_COMM_DUP_WITH_INFO,
                (MPI_Fint *comm, MPI_Fint *info, MPI_Fint *newcomm, MPI_Fint *ierr),
                MPI_Comm_dup_with_info(CF_C(comm), PMPI_Info_f2c(*info), &n))
CF_F_COMM_MAKER(mpi_comm_split_type, MPI_COMM_SPLIT_TYPE,
                (MPI_Fint *comm, MPI_Fint *split_type, MPI_Fint *key, MPI_Fint *info, MPI_Fint *newcomm,
                 MPI_Fint *ierr),
                MPI_Comm_split_type(CF_C(comm), (int)*split_type, (int)*key, PMPI_Info_f2c(*info), &n))
CF_F_COMM_MAKER(mpi_cart_create, MPI_CART_CREATE,
                (MPI_Fint *comm, MPI_Fint *ndims, MPI_Fint *dims, MPI_Fint *periods, MPI_Fint *reorder,
                 MPI_Fint *newcomm, MPI_Fint *ierr),
                MPI_Cart_create(CF_C(comm), (int)*ndims, dims, periods, *reorder != 0, &n))
CF_F_COMM_MAKER(mpi_cart_sub, MPI_CART_SUB, (MPI_Fint *comm, MPI_Fint *remain_dims, MPI_Fint *newcomm, MPI_Fint *ierr),
                MPI_Cart_sub(CF_C(comm), remain_dims, &n))
CF_F_COMM_MAKER(mpi_graph_create, MPI_GRAPH_CREATE,
                (MPI_Fint *comm, MPI_Fint *nnodes, MPI_Fint *index, MPI_Fint *edges, MPI_Fint *reorder,
                 MPI_Fint *newcomm, MPI_Fint *ierr),
                MPI_Graph_create(CF_C(comm), (int)*nnodes, index, edges, *reorder != 0, &n))
CF_F_COMM_MAKER(mpi_intercomm_create, MPI_INTERCOMM_CREATE,
                (MPI_Fint *comm, MPI_Fint *local_leader, MPI_Fint *peer_comm, MPI_Fint *remote_leader,
                 MPI_Fint *tag, MPI_Fint *newcomm, MPI_Fint *ierr),
                MPI_Intercomm_create(CF_C(comm), (int)*local_leader, CF_C(peer_comm), (int)*remote_leader,
                                     (int)*tag, &n))
CF_F_COMM_MAKER(mpi_intercomm_merge, MPI_INTERCOMM_MERGE,
                (MPI_Fint *comm, MPI_Fint *high, MPI_Fint *newcomm, MPI_Fint *ierr),
                MPI_Intercomm_merge(CF_C(comm), *high != 0, &n))
#undef CF_C

CF_FORTRAN_API void mpi_comm_idup_(MPI_Fint *comm, MPI_Fint *newcomm, MPI_Fint *request, MPI_Fint *ierr)
{
    /* the new handle is valid at once (MPI-3): converted now, usable at completion */
    MPI_Comm n = MPI_COMM_NULL;
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = MPI_Comm_idup(PMPI_Comm_f2c(*comm), &n, &r);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
    cf_f_comm_made(rc, n, newcomm, ierr);
}
CF_FORTRAN_EXPORT(mpi_comm_idup, MPI_COMM_IDUP)

/* ---- files, windows, matched messages and cancel: noted as from C ---- */

/* a Fortran string: its hidden length, trailing blanks not part of it */
static char *cf_f_string(const char *s, size_t len)
{
    while (len > 0 && s[len - 1] == ' ')
        len--;
    char *c = malloc(len + 1);
    if (c) {
        memcpy(c, s, len);
        c[len] = '\0';
    }
    return c;
}

CF_FORTRAN_API void mpi_file_open_(MPI_Fint *comm, char *filename, MPI_Fint *amode, MPI_Fint *info, MPI_Fint *fh,
                                   MPI_Fint *ierr, size_t filename_len)
{
    CF_SITE_CALLER();
    char *name = cf_f_string(filename, filename_len);
    MPI_File f = MPI_FILE_NULL;
    int rc = name ? MPI_File_open(PMPI_Comm_f2c(*comm), name, (int)*amode, PMPI_Info_f2c(*info), &f) : MPI_ERR_NO_MEM;
    free(name);
    if (rc == MPI_SUCCESS)
        *fh = PMPI_File_c2f(f);
    cf_f_ierr(ierr, rc);
}
CF_FORTRAN_EXPORT(mpi_file_open, MPI_FILE_OPEN)

CF_F_FREE(mpi_file_close, MPI_FILE_CLOSE, MPI_File, PMPI_File_f2c, PMPI_File_c2f, MPI_File_close, MPI_FILE_NULL)

static void cf_f_win_made(int rc, MPI_Win w, MPI_Fint *win, MPI_Fint *ierr)
{
    if (rc == MPI_SUCCESS)
        *win = PMPI_Win_c2f(w);
    cf_f_ierr(ierr, rc);
}

CF_FORTRAN_API void mpi_win_create_(void *base, MPI_Aint *size, MPI_Fint *disp_unit, MPI_Fint *info, MPI_Fint *comm,
                                    MPI_Fint *win, MPI_Fint *ierr)
{
    CF_SITE_CALLER();
    MPI_Win w = MPI_WIN_NULL;
    int rc = MPI_Win_create(base, *size, (int)*disp_unit, PMPI_Info_f2c(*info), PMPI_Comm_f2c(*comm), &w);
    cf_f_win_made(rc, w, win, ierr);
}
CF_FORTRAN_EXPORT(mpi_win_create, MPI_WIN_CREATE)

/* baseptr: the INTEGER(KIND=MPI_ADDRESS_KIND) that receives the address, as the C call's void ** */
typedef int cf_win_alloc_t(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win);
static void cf_f_win_alloc(cf_win_alloc_t *alloc, MPI_Aint *size, MPI_Fint *disp_unit, MPI_Fint *info,
                           MPI_Fint *comm, MPI_Aint *baseptr, MPI_Fint *win, MPI_Fint *ierr)
{
    MPI_Win w = MPI_WIN_NULL;
    int rc = alloc(*size, (int)*disp_unit, PMPI_Info_f2c(*info), PMPI_Comm_f2c(*comm), baseptr, &w);
    cf_f_win_made(rc, w, win, ierr);
}

CF_FORTRAN_API void mpi_win_allocate_(MPI_Aint *size, MPI_Fint *disp_unit, MPI_Fint *info, MPI_Fint *comm,
                                      MPI_Aint *baseptr, MPI_Fint *win, MPI_Fint *ierr)
{
    CF_SITE_CALLER();
    cf_f_win_alloc(MPI_Win_allocate, size, disp_unit, info, comm, baseptr, win, ierr);
}
CF_FORTRAN_EXPORT(mpi_win_allocate, MPI_WIN_ALLOCATE)

CF_FORTRAN_API void mpi_win_allocate_shared_(MPI_Aint *size, MPI_Fint *disp_unit, MPI_Fint *info, MPI_Fint *comm,
                                             MPI_Aint *baseptr, MPI_Fint *win, MPI_Fint *ierr)
{
    CF_SITE_CALLER();
    cf_f_win_alloc(MPI_Win_allocate_shared, size, disp_unit, info, comm, baseptr, win, ierr);
}
CF_FORTRAN_EXPORT(mpi_win_allocate_shared, MPI_WIN_ALLOCATE_SHARED)

CF_FORTRAN_API void mpi_win_create_dynamic_(MPI_Fint *info, MPI_Fint *comm, MPI_Fint *win, MPI_Fint *ierr)
{
    CF_SITE_CALLER();
    MPI_Win w = MPI_WIN_NULL;
    int rc = MPI_Win_create_dynamic(PMPI_Info_f2c(*info), PMPI_Comm_f2c(*comm), &w);
    cf_f_win_made(rc, w, win, ierr);
}
CF_FORTRAN_EXPORT(mpi_win_create_dynamic, MPI_WIN_CREATE_DYNAMIC)

CF_FORTRAN_API void mpi_win_free_(MPI_Fint *win, MPI_Fint *ierr)
{
    CF_SITE_CALLER();
    MPI_Win w = PMPI_Win_f2c(*win);
    int rc = MPI_Win_free(&w);
    cf_f_win_made(rc, MPI_WIN_NULL, win, ierr);
}
CF_FORTRAN_EXPORT(mpi_win_free, MPI_WIN_FREE)

/* the status of a probe or matched receive back to Fortran */
static void cf_f_status_out(int rc, const MPI_Status *s, MPI_Fint *status)
{
    if (rc == MPI_SUCCESS && !cf_f_status_ignored(status))
        PMPI_Status_c2f(s, status);
}

CF_FORTRAN_API void mpi_mprobe_(MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *message, MPI_Fint *status,
                                MPI_Fint *ierr)
{
    CF_SITE_CALLER();
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_Status s;
    int rc = MPI_Mprobe((int)*source, (int)*tag, PMPI_Comm_f2c(*comm), &m, &s);
    if (rc == MPI_SUCCESS)
        *message = PMPI_Message_c2f(m);
    cf_f_status_out(rc, &s, status);
    cf_f_ierr(ierr, rc);
}
CF_FORTRAN_EXPORT(mpi_mprobe, MPI_MPROBE)

CF_FORTRAN_API void mpi_improbe_(MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *flag, MPI_Fint *message,
                                 MPI_Fint *status, MPI_Fint *ierr)
{
    CF_SITE_CALLER();
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_Status s;
    int f = 0;
    int rc = MPI_Improbe((int)*source, (int)*tag, PMPI_Comm_f2c(*comm), &f, &m, &s);
    if (rc == MPI_SUCCESS) {
        *flag = f ? 1 : 0;
        if (f)
            *message = PMPI_Message_c2f(m);
    }
    cf_f_status_out(f ? rc : MPI_ERR_OTHER, &s, status);
    cf_f_ierr(ierr, rc);
}
CF_FORTRAN_EXPORT(mpi_improbe, MPI_IMPROBE)

CF_FORTRAN_API void mpi_mrecv_(void *buf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *message, MPI_Fint *status,
                               MPI_Fint *ierr)
{
    CF_SITE_CALLER();
    MPI_Message m = PMPI_Message_f2c(*message);
    MPI_Status s;
    int rc = MPI_Mrecv((void *)cf_f_buffer(buf), (int)*count, PMPI_Type_f2c(*datatype), &m, &s);
    if (rc == MPI_SUCCESS)
        *message = PMPI_Message_c2f(m);
    cf_f_status_out(rc, &s, status);
    cf_f_ierr(ierr, rc);
}
CF_FORTRAN_EXPORT(mpi_mrecv, MPI_MRECV)

CF_FORTRAN_API void mpi_imrecv_(void *buf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *message, MPI_Fint *request,
                                MPI_Fint *ierr)
{
    CF_SITE_CALLER();
    MPI_Message m = PMPI_Message_f2c(*message);
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = MPI_Imrecv((void *)cf_f_buffer(buf), (int)*count, PMPI_Type_f2c(*datatype), &m, &r);
    if (rc == MPI_SUCCESS) {
        *message = PMPI_Message_c2f(m);
        *request = PMPI_Request_c2f(r);
    }
    cf_f_ierr(ierr, rc);
}
CF_FORTRAN_EXPORT(mpi_imrecv, MPI_IMRECV)

CF_FORTRAN_API void mpi_cancel_(MPI_Fint *request, MPI_Fint *ierr)
{
    CF_SITE_CALLER();
    MPI_Request r = PMPI_Request_f2c(*request);
    cf_f_ierr(ierr, MPI_Cancel(&r));
}
CF_FORTRAN_EXPORT(mpi_cancel, MPI_CANCEL)

/* a freed communicator's handle may come back for another one */
CF_F_FREE(mpi_comm_free, MPI_COMM_FREE, MPI_Comm, PMPI_Comm_f2c, PMPI_Comm_c2f, MPI_Comm_free, MPI_COMM_NULL)
CF_F_FREE(mpi_comm_disconnect, MPI_COMM_DISCONNECT, MPI_Comm, PMPI_Comm_f2c, PMPI_Comm_c2f, MPI_Comm_disconnect,
          MPI_COMM_NULL)
/* a freed datatype's handle may come back as a type of another size (the size cache) */
CF_F_FREE(mpi_type_free, MPI_TYPE_FREE, MPI_Datatype, PMPI_Type_f2c, PMPI_Type_c2f, MPI_Type_free, MPI_DATATYPE_NULL)

#endif
