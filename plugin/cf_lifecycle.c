/* Start, end, regions and communicator bookkeeping. */
#include <stdarg.h>
#include <string.h>
#include "cf_runtime.h"
#include "cf_spill.h"

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

/* The job ends here: this rank's records go to the spool first (the
 * runtime then kills the other ranks, which spill on its signal). */
int MPI_Abort(MPI_Comm comm, int errorcode)
{
    cf_spill_abort(errorcode);
    return PMPI_Abort(comm, errorcode);
}

/* Describes a new communicator before the call returns to the application,
 * so its first operation finds it on the fast path. */
static int cf_comm_created(int rc, const MPI_Comm *newcomm, const char *how)
{
    if (rc == MPI_SUCCESS && atomic_load(&cf_g.state) == 1)
        cf_comm_register(*newcomm, how);
    return rc;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    return cf_comm_created(PMPI_Comm_dup(comm, newcomm), newcomm, "MPI_Comm_dup");
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    return cf_comm_created(PMPI_Comm_split(comm, color, key, newcomm), newcomm, "MPI_Comm_split");
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    return cf_comm_created(PMPI_Comm_split_type(comm, split_type, key, info, newcomm), newcomm, "MPI_Comm_split_type");
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    return cf_comm_created(PMPI_Comm_create(comm, group, newcomm), newcomm, "MPI_Comm_create");
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    return cf_comm_created(PMPI_Comm_create_group(comm, group, tag, newcomm), newcomm, "MPI_Comm_create_group");
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    return cf_comm_created(PMPI_Comm_dup_with_info(comm, info, newcomm), newcomm, "MPI_Comm_dup_with_info");
}

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm *comm_cart)
{
    return cf_comm_created(PMPI_Cart_create(comm_old, ndims, dims, periods, reorder, comm_cart), comm_cart,
                           "MPI_Cart_create");
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    return cf_comm_created(PMPI_Cart_sub(comm, remain_dims, newcomm), newcomm, "MPI_Cart_sub");
}

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                     MPI_Comm *comm_graph)
{
    return cf_comm_created(PMPI_Graph_create(comm_old, nnodes, index, edges, reorder, comm_graph), comm_graph,
                           "MPI_Graph_create");
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
                                   int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm *comm_dist_graph)
{
    return cf_comm_created(PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree,
                                                          destinations, destweights, info, reorder, comm_dist_graph),
                           comm_dist_graph, "MPI_Dist_graph_create_adjacent");
}

int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                         MPI_Comm *newintercomm)
{
    return cf_comm_created(PMPI_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag,
                                                 newintercomm),
                           newintercomm, "MPI_Intercomm_create");
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    return cf_comm_created(PMPI_Intercomm_merge(intercomm, high, newintracomm), newintracomm,
                           "MPI_Intercomm_merge");
}

/* A communicator freed or disconnected gives back what it took: a later
 * one that gets the handle back (MPI_Comm_idup) must not be booked to it. */
static int cf_comm_gone(int rc, MPI_Comm h)
{
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
    return cf_comm_created(PMPI_Comm_idup(comm, newcomm, request), newcomm, "MPI_Comm_idup");
}

int MPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                   MPI_Comm *intercomm, int array_of_errcodes[])
{
    return cf_comm_created(PMPI_Comm_spawn(command, argv, maxprocs, info, root, comm, intercomm, array_of_errcodes),
                           intercomm, "MPI_Comm_spawn");
}

int MPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    return cf_comm_created(PMPI_Comm_accept(port_name, info, root, comm, newcomm), newcomm, "MPI_Comm_accept");
}

int MPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    return cf_comm_created(PMPI_Comm_connect(port_name, info, root, comm, newcomm), newcomm, "MPI_Comm_connect");
}

int MPI_Type_free(MPI_Datatype *datatype)
{
    int rc = PMPI_Type_free(datatype);
    /* a freed handle may come back as a type of another size */
    atomic_fetch_add(&cf_type_gen, 1);
    return rc;
}

/* The name is a varargs argument the caller may not have passed, which
 * cannot be told from the call: it is read only where a name is expected.
 * While recording is paused (after MPI_Pcontrol(0)), level 1 is the resume
 * and has no name; otherwise level 1 opens the region it names and -1
 * closes it. */
int MPI_Pcontrol(const int level, ...)
{
    const char *name = NULL;
    int paused = atomic_load(&cf_g.state) == 1 && !atomic_load(&cf_g.enabled);
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
