/* The UCX layer (cf_ucx.c): UCP calls beneath MPI, recorded with the MPI
 * operation above them.  Without UCX support the hooks are empty. */
#ifndef CF_UCX_H
#define CF_UCX_H

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <jansson.h>
#include "cf_common.h"

#ifdef CF_HAVE_UCX
/* End of cf_runtime_init, on every rank: reads COMMFIT_UCX, learns which
 * world rank owns each UCX worker (one allgather) and starts recording. */
CF_HIDDEN void cf_ucx_init(void);
/* Collective at finalize: the "ucx" section on rank 0 (transports per path,
 * endpoint and request counts), NULL elsewhere. */
CF_HIDDEN json_t *cf_ucx_section(void);
#else
static inline void cf_ucx_init(void) {}
static inline json_t *cf_ucx_section(void) { return NULL; }
#endif

#endif
