/* Start, end, regions and communicator bookkeeping. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "cf_module.h"
#include "cf_runtime.h"
#include "cf_text.h"

/* MPI_Comm_set_name may be called by several threads */
static pthread_mutex_t cf_name_lock = PTHREAD_MUTEX_INITIALIZER;

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        cf_runtime_init(MPI_THREAD_SINGLE);
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        cf_runtime_init(*provided);
    return rc;
}

int MPI_Finalize(void)
{
    cf_runtime_finalize();
    return PMPI_Finalize();
}

/* The job ends here: the modules' abort hooks first (the spill writes this
 * rank's part; the runtime then kills the other ranks, which spill on its
 * signal). */
int MPI_Abort(MPI_Comm comm, int errorcode)
{
    size_t nmod = 0;
    const cf_module_t *mod = cf_module_list(&nmod);
    for (size_t m = 0; m < nmod; m++)
        if (mod[m].abort)
            mod[m].abort(errorcode);
    return PMPI_Abort(comm, errorcode);
}

/* What a communicator is called in descriptions of those made from it:
 * "world", "self", its MPI_Comm_set_name name, or its own description. */
static const char *cf_comm_ref(MPI_Comm comm, char *buf, size_t len)
{
    const cf_comm_t *c = comm == cf_g.world_handle || comm == MPI_COMM_SELF ? NULL : cf_comm_get(comm);
    if (comm == cf_g.world_handle)
        snprintf(buf, len, "world");
    else if (comm == MPI_COMM_SELF)
        snprintf(buf, len, "self");
    else if (c != NULL && c->user_name[0])
        snprintf(buf, len, "'%s'", c->user_name);
    else if (c != NULL && c->desc[0])
        snprintf(buf, len, "%s", c->desc);
    else
        snprintf(buf, len, "a communicator made outside the wrapped constructors");
    return buf;
}

/* "cart 4x4" into shape, ", periodic" or ", periodic in 1, 3" (1-based) into per */
static const char *cf_cart_shape(int rc, int ndims, const int dims[], const int periods[], char *shape, char *per,
                                 size_t len)
{
    size_t n = (size_t)snprintf(shape, len, "cart "), m = 0;
    int nper = 0;
    per[0] = '\0';
    if (rc != MPI_SUCCESS)
        return shape;
    for (int d = 0; d < ndims && n < len; d++) {
        n += (size_t)snprintf(shape + n, len - n, "%s%d", d ? "x" : "", dims[d]);
        nper += periods[d] != 0;
    }
    if (nper == ndims && ndims > 0)
        snprintf(per, len, ", periodic");
    else
        for (int d = 0, k = 0; nper > 0 && d < ndims && m < len; d++)
            if (periods[d])
                m += (size_t)snprintf(per + m, len - m, "%s%d", k++ ? ", " : ", periodic in ", d + 1);
    return shape;
}

/* "sub (dims 2)" into what: the dimensions of the Cartesian parent kept;
 * ", where dim 1 = 0" into at: this rank's place in those dropped, which
 * tells the communicators of one Cart_sub apart (1-based dimensions) */
static const char *cf_cart_kept(int rc, MPI_Comm comm, const int remain_dims[], char *what, char *at, size_t len)
{
    int ndims = 0, rank, coords[16];
    size_t n = (size_t)snprintf(what, len, "sub"), m = 0;
    at[0] = '\0';
    if (rc != MPI_SUCCESS || PMPI_Cartdim_get(comm, &ndims) != MPI_SUCCESS || ndims > 16)
        return what;
    for (int d = 0, k = 0; d < ndims && n < len; d++)
        if (remain_dims[d])
            n += (size_t)snprintf(what + n, len - n, "%s%d", k++ ? ", " : " (dims ", d + 1);
    if (n < len && n > 3)
        snprintf(what + n, len - n, ")");
    if (PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS && PMPI_Cart_coords(comm, rank, ndims, coords) == MPI_SUCCESS)
        for (int d = 0, k = 0; d < ndims && m < len; d++)
            if (!remain_dims[d])
                m += (size_t)snprintf(at + m, len - m, "%s%d = %d", k++ ? ", dim " : ", where dim ", d + 1, coords[d]);
    return what;
}

/* Describes a new communicator before the call returns to the application,
 * so its first operation finds it on the fast path, as "WHAT of PARENT"
 * and the details (printf format), e.g. "split of world, colour 3".  A
 * long parent is cut, never the details.  No other thread can use the
 * handle yet, and the description is read at finalize. */
static int cf_comm_made(int rc, const MPI_Comm *newcomm, const char *how, const char *what, MPI_Comm parent,
                        const char *detail, ...) __attribute__((format(printf, 6, 7)));
static int cf_comm_made(int rc, const MPI_Comm *newcomm, const char *how, const char *what, MPI_Comm parent,
                        const char *detail, ...)
{
    char ref[CF_COMM_DESC_LEN], tail[CF_COMM_DESC_LEN];
    cf_comm_t *c;
    va_list ap;
    int room;

    cf_post_unmark();
    if (rc != MPI_SUCCESS || atomic_load(&cf_g.state) != 1 || *newcomm == MPI_COMM_NULL)
        return rc;
    /* the parent first: it may be described now, on first use */
    cf_comm_ref(parent, ref, sizeof(ref));
    cf_comm_register(*newcomm, how);
    c = cf_comm_get(*newcomm);
    if (c == NULL)
        return rc;
    va_start(ap, detail);
    vsnprintf(tail, sizeof(tail), detail, ap);
    va_end(ap);
    room = (int)sizeof(c->desc) - 1 - (int)strlen(what) - 4 - (int)strlen(tail);
    if (room < 8)
        room = 8;
    if ((int)strlen(ref) > room)
        snprintf(ref + room - 3, sizeof(ref) - (size_t)(room - 3), "...");
    if (snprintf(c->desc, sizeof(c->desc), "%s of %s%s", what, ref, tail) >= (int)sizeof(c->desc))
        c->desc[sizeof(c->desc) - 1] = '\0'; /* cut: the details were longer than a description */
    return rc;
}


int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    return cf_comm_made(PMPI_Comm_dup(comm, newcomm), newcomm, "MPI_Comm_dup", "dup", comm, "%s", "");
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    return cf_comm_made(PMPI_Comm_split(comm, color, key, newcomm), newcomm, "MPI_Comm_split", "split", comm,
                        ", colour %d", color);
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    return cf_comm_made(PMPI_Comm_split_type(comm, split_type, key, info, newcomm), newcomm, "MPI_Comm_split_type",
                        split_type == MPI_COMM_TYPE_SHARED ? "shared-memory split" : "split by type", comm, "%s", "");
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    return cf_comm_made(PMPI_Comm_create(comm, group, newcomm), newcomm, "MPI_Comm_create", "group", comm, "%s", "");
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    return cf_comm_made(PMPI_Comm_create_group(comm, group, tag, newcomm), newcomm, "MPI_Comm_create_group", "group",
                        comm, "%s", "");
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    return cf_comm_made(PMPI_Comm_dup_with_info(comm, info, newcomm), newcomm, "MPI_Comm_dup_with_info", "dup", comm,
                        "%s", "");
}

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm *comm_cart)
{
    char shape[CF_COMM_DESC_LEN], per[CF_COMM_DESC_LEN];
    int rc = PMPI_Cart_create(comm_old, ndims, dims, periods, reorder, comm_cart);
    return cf_comm_made(rc, comm_cart, "MPI_Cart_create",
                        cf_cart_shape(rc, ndims, dims, periods, shape, per, sizeof(shape)), comm_old, "%s", per);
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    char kept[CF_COMM_DESC_LEN], at[CF_COMM_DESC_LEN];
    int rc = PMPI_Cart_sub(comm, remain_dims, newcomm);
    return cf_comm_made(rc, newcomm, "MPI_Cart_sub", cf_cart_kept(rc, comm, remain_dims, kept, at, sizeof(kept)), comm,
                        "%s", at);
}

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                     MPI_Comm *comm_graph)
{
    return cf_comm_made(PMPI_Graph_create(comm_old, nnodes, index, edges, reorder, comm_graph), comm_graph,
                        "MPI_Graph_create", "graph", comm_old, ", %d nodes", nnodes);
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
                                   int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm *comm_dist_graph)
{
    return cf_comm_made(PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree,
                                                       destinations, destweights, info, reorder, comm_dist_graph),
                        comm_dist_graph, "MPI_Dist_graph_create_adjacent", "distributed graph", comm_old, "%s", "");
}

int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                         MPI_Comm *newintercomm)
{
    return cf_comm_made(PMPI_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag, newintercomm),
                        newintercomm, "MPI_Intercomm_create", "intercommunicator", local_comm, "%s", "");
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    return cf_comm_made(PMPI_Intercomm_merge(intercomm, high, newintracomm), newintracomm, "MPI_Intercomm_merge",
                        "merge", intercomm, "%s", "");
}

/* A communicator freed or disconnected gives back what it took: a later
 * one that gets the handle back (MPI_Comm_idup) must not be booked to it. */
static int cf_comm_gone(int rc, MPI_Comm h)
{
    cf_post_unmark();
    if (rc == MPI_SUCCESS && atomic_load(&cf_g.state) == 1)
        cf_comm_unregister(h);
    return rc;
}

int MPI_Comm_free(MPI_Comm *comm)
{
    MPI_Comm h = *comm;
    return cf_comm_gone(PMPI_Comm_free(comm), h);
}

int MPI_Comm_disconnect(MPI_Comm *comm)
{
    MPI_Comm h = *comm;
    return cf_comm_gone(PMPI_Comm_disconnect(comm), h);
}

/* The new handle is valid when the call returns (usable once the request
 * completes): it is described now, locally, like any other. */
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    return cf_comm_made(PMPI_Comm_idup(comm, newcomm, request), newcomm, "MPI_Comm_idup", "dup", comm, "%s", "");
}

int MPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                   MPI_Comm *intercomm, int array_of_errcodes[])
{
    return cf_comm_made(PMPI_Comm_spawn(command, argv, maxprocs, info, root, comm, intercomm, array_of_errcodes),
                        intercomm, "MPI_Comm_spawn", "spawn", comm, ", %d processes", maxprocs);
}

int MPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    return cf_comm_made(PMPI_Comm_accept(port_name, info, root, comm, newcomm), newcomm, "MPI_Comm_accept", "accept",
                        comm, "%s", "");
}

int MPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    return cf_comm_made(PMPI_Comm_connect(port_name, info, root, comm, newcomm), newcomm, "MPI_Comm_connect",
                        "connect", comm, "%s", "");
}

/* The name the program gives a communicator is what reports call it. */
int MPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    int rc = PMPI_Comm_set_name(comm, comm_name);
    cf_post_unmark();
    if (rc == MPI_SUCCESS && atomic_load(&cf_g.state) == 1 && comm_name != NULL) {
        cf_comm_t *c = cf_comm_get(comm);
        if (c != NULL) {
            /* text a report can show (UTF-8 kept): the name goes into reports and pages */
            pthread_mutex_lock(&cf_name_lock);
            cf_text_copy(c->user_name, sizeof(c->user_name), comm_name);
            pthread_mutex_unlock(&cf_name_lock);
        }
    }
    return rc;
}

int MPI_Type_free(MPI_Datatype *datatype)
{
    int rc = PMPI_Type_free(datatype);
    /* a freed handle may come back as a type of another size */
    atomic_fetch_add(&cf_type_gen, 1);
    atomic_fetch_add(&cf_memo_gen, 1);
    return rc;
}

/* The name is a varargs argument the caller may not have passed, which
 * cannot be told from the call: it is read only where a name is expected.
 * While recording is paused (after MPI_Pcontrol(0)), level 1 is the resume
 * and has no name; otherwise level 1 opens the region it names and -1
 * closes it. */
int MPI_Pcontrol(const int level, ...)
{
    cf_post_unmark();
    const char *name = NULL;
    int paused = atomic_load(&cf_g.state) == 1 && !cf_recording();
    if ((level == 1 && !paused) || level == -1) {
        va_list ap;
        va_start(ap, level);
        name = va_arg(ap, const char *);
        va_end(ap);
    }
    cf_pcontrol(level, name);
    /* a tool below us gets the call too (the name is not forwarded: whether
     * the caller passed one is what cannot be known) */
    return PMPI_Pcontrol(level);
}
