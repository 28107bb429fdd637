/* The protocol limits the MPI library declares: the message sizes at which
 * its point-to-point transports change protocol (inline -> copy, eager ->
 * rendezvous), read from the MPI tool interface's control variables.  The
 * fit (lib/cf_fit.h) puts a segment break at each of them: a switch the
 * library states need not be found from a sweep's few, noisy sizes.
 *
 * LIMITS is the one list of names.  A transport's variables exist only
 * while its component is open (Open MPI unregisters the others), so what
 * is found is what the job could use.  Read once, on rank 0, at finalize,
 * and only where the merged records have a fit to break (cf_fin_t);
 * nothing here touches a call's path, and a variable that cannot be read
 * is left out, never fatal. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>

#include "cf_protocol.h"

/* path: which message path the limit governs; "intra-node" shared-memory
 * limits first: when none of them is registered, a network transport
 * carries intra-node messages too (see below). */
static const struct {
    const char *name, *path, *what;
} LIMITS[] = {
    /* Open MPI 4 (ob1 with the vader shared-memory BTL, TCP BTL) */
    {"btl_vader_max_inline_send", "intra-node", "inline send"},
    {"btl_vader_eager_limit", "intra-node", "eager limit"},
    /* Open MPI 5 (vader renamed sm) */
    {"btl_sm_max_inline_send", "intra-node", "inline send"},
    {"btl_sm_eager_limit", "intra-node", "eager limit"},
    {"btl_tcp_eager_limit", "inter-node", "eager limit"},
};
#define NLIMITS (sizeof(LIMITS) / sizeof(LIMITS[0]))

/* Other network BTLs: where one of them is open too, which one carries the
 * inter-node messages is not known, and TCP's limit is not claimed. */
static const char *const OTHER_NET[] = {"btl_openib_eager_limit", "btl_uct_eager_limit", "btl_ofi_eager_limit",
                                        "btl_usnic_eager_limit", "btl_ugni_eager_limit",
                                        "btl_portals4_eager_limit"};
#define NOTHER_NET (sizeof(OTHER_NET) / sizeof(OTHER_NET[0]))

/* Open MPI keeps the variables of the point-to-point layer (PML) it
 * selected and unregisters the others': which of these is there names
 * it.  The BTL limits govern messages under ob1 only. */
static const char *const PMLS[] = {"ob1", "ucx", "cm"};
#define NPMLS (sizeof(PMLS) / sizeof(PMLS[0]))

/* The integer value of control variable index i, when it is a scalar
 * without an object binding. */
static int read_cvar(int i, long long *v)
{
    char name[256], desc[8];
    int nl = (int)sizeof(name), dl = (int)sizeof(desc), verb, bind, scope, count = 0;
    MPI_Datatype dt;
    MPI_T_enum en;
    MPI_T_cvar_handle h;
    /* room for a few values, whatever the count the handle reports */
    union {
        int i[16];
        unsigned u[16];
        long l[8];
        unsigned long ul[8];
        long long ll[8];
        unsigned long long ull[8];
    } buf;
    int ok = 0;

    if (PMPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope) != MPI_SUCCESS ||
        bind != MPI_T_BIND_NO_OBJECT)
        return 0;
    if (PMPI_T_cvar_handle_alloc(i, NULL, &h, &count) != MPI_SUCCESS)
        return 0;
    memset(&buf, 0, sizeof(buf));
    if (count == 1 && PMPI_T_cvar_read(h, &buf) == MPI_SUCCESS) {
        ok = 1;
        if (dt == MPI_INT)
            *v = buf.i[0];
        else if (dt == MPI_UNSIGNED)
            *v = buf.u[0];
        else if (dt == MPI_LONG)
            *v = buf.l[0];
        else if (dt == MPI_UNSIGNED_LONG)
            *v = (long long)buf.ul[0];
        else if (dt == MPI_LONG_LONG)
            *v = buf.ll[0];
        else if (dt == MPI_UNSIGNED_LONG_LONG)
            *v = (long long)buf.ull[0];
        else
            ok = 0;
    }
    PMPI_T_cvar_handle_free(&h);
    return ok;
}

static json_t *limit_entry(const char *name, long long bytes, const char *path, const char *what)
{
    json_t *e = json_object();
    if (e != NULL) {
        json_object_set_new(e, "name", json_string(name));
        json_object_set_new(e, "bytes", json_integer(bytes));
        json_object_set_new(e, "path", json_string(path));
        json_object_set_new(e, "what", json_string(what));
    }
    return e;
}

static json_t *cf_protocol_read(void)
{
    int provided, level, n = 0, found[NLIMITS], pml[NPMLS] = {0}, npml = 0;
    long long val[NLIMITS];
    int shm = 0, sm5 = 0, other_net = 0;
    const char *selected = NULL;
    json_t *sec, *arr;

    /* at the job's own thread level: Open MPI's first MPI_T_init_thread
     * sets the library's level to the one asked for, and the job's
     * MPI_THREAD_MULTIPLE would read as SINGLE through MPI_Finalize */
    if (PMPI_Query_thread(&level) != MPI_SUCCESS)
        level = MPI_THREAD_SINGLE;
    if (PMPI_T_init_thread(level, &provided) != MPI_SUCCESS)
        return NULL;
    memset(found, 0, sizeof(found));
    if (PMPI_T_cvar_get_num(&n) == MPI_SUCCESS) {
        for (int i = 0; i < n; i++) {
            char name[256], desc[8];
            int nl = (int)sizeof(name), dl = (int)sizeof(desc), verb, bind, scope;
            MPI_Datatype dt;
            MPI_T_enum en;
            if (PMPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope) != MPI_SUCCESS)
                continue;
            for (size_t k = 0; k < NLIMITS; k++)
                if (!found[k] && strcmp(name, LIMITS[k].name) == 0 && read_cvar(i, &val[k]) && val[k] > 0)
                    found[k] = 1;
            for (size_t k = 0; k < NOTHER_NET; k++)
                other_net |= strcmp(name, OTHER_NET[k]) == 0;
            for (size_t k = 0; k < NPMLS; k++) {
                char want[32];
                snprintf(want, sizeof(want), "pml_%s_priority", PMLS[k]);
                pml[k] |= strcmp(name, want) == 0;
            }
        }
    }
    for (size_t k = 0; k < NPMLS; k++)
        if (pml[k]) {
            selected = PMLS[k];
            npml++;
        }
    if (npml != 1)
        selected = NULL;
    /* Open MPI 5 keeps vader's names as synonyms of sm's: one set */
    for (size_t k = 0; k < NLIMITS; k++)
        sm5 |= found[k] && strncmp(LIMITS[k].name, "btl_sm_", 7) == 0;
    for (size_t k = 0; sm5 && k < NLIMITS; k++)
        if (strncmp(LIMITS[k].name, "btl_vader_", 10) == 0)
            found[k] = 0;
    /* The variables can be read only between these two calls: finalizing
     * the tool interface after MPI_Finalize crashes Open MPI 4.1. */
    PMPI_T_finalize();

    arr = json_array();
    if (arr == NULL)
        return NULL;
    for (size_t k = 0; k < NLIMITS; k++)
        if (found[k] && strcmp(LIMITS[k].path, "intra-node") == 0)
            shm = 1;
    for (size_t k = 0; k < NLIMITS; k++) {
        if (!found[k] || (other_net && strcmp(LIMITS[k].path, "inter-node") == 0))
            continue;
        json_array_append_new(arr, limit_entry(LIMITS[k].name, val[k], LIMITS[k].path, LIMITS[k].what));
        /* no shared-memory transport: the network one carries intra-node
         * messages as well */
        if (!shm && strcmp(LIMITS[k].path, "inter-node") == 0)
            json_array_append_new(arr, limit_entry(LIMITS[k].name, val[k], "intra-node", LIMITS[k].what));
    }
    sec = json_object();
    if (sec == NULL) {
        json_decref(arr);
        return NULL;
    }
    json_object_set_new(sec, "source", json_string("MPI_T control variables"));
    /* the selected PML where one alone is registered, else null */
    json_object_set_new(sec, "pml", selected != NULL ? json_string(selected) : json_null());
    json_object_set_new(sec, "limits", arr);
    return sec;
}

json_t *cf_protocol_section(const cf_fin_t *f)
{
    if (cf_g.world_rank != 0 || !cf_g.cfg.protocol)
        return NULL;
    if (f->p2p_sizes)
        return cf_protocol_read();
    /* Starting the tool interface is most of a small job's finalize (Open
     * MPI 4.1 opens every component, 0.2 s on some installations), and
     * the limits serve one fit only: not read where that fit cannot
     * break between sizes. */
    return json_pack("{s:s, s:n, s:[], s:s}", "source", "MPI_T control variables", "pml", "limits", "not_read",
                     "no path carries blocking point-to-point calls of two sizes or more, the only fit the limits "
                     "serve");
}
