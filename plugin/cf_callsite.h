/* The call-site module: the lifecycle of the call sites whose hot path is
 * the core's (cf_site.h): at MPI_Init what backtrace() needs, each
 * thread's table, and at finalize the addresses as module + offset
 * (symbolized), merged over the ranks into the profile's "callsites"
 * section (cf_callsite.c).  Only the list of modules (cf_modules.c) and
 * the module's own file include this header. */
#ifndef CF_CALLSITE_H
#define CF_CALLSITE_H

#include <jansson.h>

#include "cf_module.h"
#include "cf_runtime.h"

/* A thread's table (t->site, t->site_mask), NULL when there is no memory
 * (kept with call sites off: it holds the memos). */
CF_HIDDEN void cf_site_thread_init(cf_thread_t *t);
/* At MPI_Init: loads what backtrace() needs when the depth asks for it. */
CF_HIDDEN void cf_site_init(void);
/* The profile's "callsites" section on rank 0 (collective over the world;
 * NULL elsewhere and when call sites are off). */
CF_HIDDEN json_t *cf_callsite_section(const cf_fin_t *f);

#endif
