/* The UCX layer (cf_ucx.c): UCP calls beneath MPI, recorded with the MPI
 * operation above them.  Without UCX support the hooks are empty. */
#ifndef CF_UCX_H
#define CF_UCX_H

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "cf_module.h"

#ifdef CF_HAVE_UCX
/* At MPI_Init, on every rank: reads COMMFIT_UCX, learns which world rank
 * owns each UCX worker (one allgather) and starts recording. */
CF_HIDDEN void cf_ucx_init(void);
/* Collective at finalize: the "ucx" section on rank 0 (transports per path,
 * endpoint and request counts), NULL elsewhere. */
CF_HIDDEN json_t *cf_ucx_section(const cf_fin_t *f);
#else
static inline void cf_ucx_init(void) {}
static inline json_t *cf_ucx_section(const cf_fin_t *f)
{
    (void)f;
    return NULL;
}
#endif

#endif
