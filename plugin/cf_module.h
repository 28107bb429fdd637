/* Modules: the parts of the plugin that the core starts and ends without
 * knowing them (Darshan's runtime is the model).  The core (cf_runtime.c,
 * cf_merge.c) owns the state, the hot path and the profile's records; a
 * module keeps its state file-static and hands the core a descriptor.  The
 * descriptors are listed in cf_modules.c, the only file that names every
 * module, and handed to the core at MPI_Init (cf_init.c); their order is the order of the hooks' calls on every rank (which
 * makes collective hooks safe) and of the sections in the profile.
 *
 * The hot path does not go through this table: what a wrapper records it
 * records through the inline helpers of cf_runtime.h, cf_sample.h and
 * cf_site.h (the core's), and the hooks around every call are cf_call_hooks'. */
#ifndef CF_MODULE_H
#define CF_MODULE_H

#include <jansson.h>
#include "cf_runtime.h"

/* What the core's merge learnt that a module's section may need (every rank). */
typedef struct {
    uint64_t failed_calls; /* calls that returned an error, summed over the ranks */
    /* rank 0: some path has blocking point-to-point records of two sizes
     * or more, which a fit of that path may break between */
    int p2p_sizes;
} cf_fin_t;

typedef struct {
    /* the key of its section in the profile */
    const char *name;
    /* At MPI_Init, on every rank, the core recording (collective through
     * cf_g.tool_comm allowed). */
    void (*init)(void);
    /* A thread registers (under the registry's lock): the module's
     * per-thread state, left NULL when there is no room. */
    void (*thread_init)(cf_thread_t *t);
    /* Start of MPI_Finalize, recording off, before the core merges anything
     * (collective): what must not see the merge's own traffic. */
    void (*before_merge)(void);
    /* After the core's merge (collective): the section on rank 0, NULL
     * elsewhere or for none.  The core puts it under name. */
    json_t *(*section)(const cf_fin_t *f);
    /* End of MPI_Finalize, the profile written, every rank. */
    void (*fini)(void);
    /* MPI_Abort on this rank, before the library kills the job: what must
     * be saved now (the other ranks learn of the end by a signal). */
    void (*abort)(int errorcode);
} cf_module_t;

/* The list (cf_modules.c), which only MPI_Init's start (cf_init.c) names. */
CF_HIDDEN extern const cf_module_t cf_modules[];
CF_HIDDEN extern const size_t cf_nmodules;

/* The core keeps the list it is given at MPI_Init and runs the hooks from
 * it (a thread's registration, the finalize): it names no module. */
CF_HIDDEN void cf_modules_register(const cf_module_t *list, size_t n);
CF_HIDDEN const cf_module_t *cf_module_list(size_t *n);

#endif
