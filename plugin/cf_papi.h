/* Hardware counters around MPI calls (cf_papi.c): COMMFIT_PAPI_EVENTS names
 * the events; the hooks it sets (cf_call_hooks) read them around each
 * outermost MPI call and add the difference to the operation's sum. */
#ifndef CF_PAPI_H
#define CF_PAPI_H

#include "cf_module.h"

/* At MPI_Init: reads COMMFIT_PAPI_EVENTS, checks each event on this
 * machine, and sets the hooks when one can be counted.  Never fails the
 * job: what cannot be counted is noted. */
CF_HIDDEN void cf_papi_init(void);
/* Collective at finalize: the "papi" section on rank 0 (requested,
 * available, reason, events with totals), NULL elsewhere and when no rank
 * asked for counters. */
CF_HIDDEN json_t *cf_papi_section(const cf_fin_t *f);

#endif
