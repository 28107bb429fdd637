/* The list of modules (cf_module.h): the only file that names them all.
 * Their order is the order of their hooks on every rank and of their
 * sections in the profile.  To add one, see cf_null.c. */
#include "cf_calibrate.h"
#include "cf_callsite.h"
#include "cf_failed.h"
#include "cf_matrix.h"
#include "cf_module.h"
#include "cf_papi.h"
#include "cf_protocol.h"
#include "cf_sched.h"
#include "cf_spill.h"
#include "cf_ucx.h"
#ifdef COMMFIT_NULL_MODULE
#include "cf_null.h"
#endif

/* The batch system's job (lib/cf_sched.c), read on rank 0. */
static json_t *cf_sched_section(const cf_fin_t *f)
{
    (void)f;
    return cf_g.world_rank == 0 ? cf_sched_collect() : NULL;
}

const cf_module_t cf_modules[] = {
    {.name = "papi", .init = cf_papi_init, .section = cf_papi_section},
    {.name = "ucx", .init = cf_ucx_init, .section = cf_ucx_section},
    {.name = "matrix", .thread_init = cf_matrix_thread_init, .section = cf_matrix_section},
    {.name = "callsites", .init = cf_site_init, .thread_init = cf_site_thread_init, .section = cf_callsite_section},
    {.name = "failed_calls", .section = cf_failed_section},
    {.name = "protocol", .section = cf_protocol_section},
    {.name = "calibration", .before_merge = cf_calibrate_run, .section = cf_calibrate_section},
    {.name = CF_SCHED_KEY, .section = cf_sched_section},
    /* the spool of a job that does not finish, with its refresh thread (cf_refresh.c) */
    {.name = "spill", .init = cf_spill_init, .fini = cf_spill_finalized, .abort = cf_spill_abort},
#ifdef COMMFIT_NULL_MODULE
    {.name = "null", .init = cf_null_init, .thread_init = cf_null_thread_init, .section = cf_null_section,
     .fini = cf_null_fini, .abort = cf_null_abort},
#endif
};
const size_t cf_nmodules = CF_ARRAY_LEN(cf_modules);
