/* Hardware counters around MPI calls (cf_papi.c): COMMFIT_PAPI_EVENTS names
 * the events; cf_papi_begin/cf_papi_end (cf_runtime.h) read them around
 * each outermost MPI call and add the difference to the operation's sum. */
#ifndef CF_PAPI_H
#define CF_PAPI_H

#include <jansson.h>
#include "cf_common.h"

/* End of cf_runtime_init: reads COMMFIT_PAPI_EVENTS, checks each event on
 * this machine, and switches counting on (cf_g.papi_on) when one can be
 * counted.  Never fails the job: what cannot be counted is noted. */
CF_HIDDEN void cf_papi_init(void);
/* Collective at finalize: the "papi" section on rank 0 (requested,
 * available, reason, events with totals), NULL elsewhere and when no rank
 * asked for counters. */
CF_HIDDEN json_t *cf_papi_section(void);
/* Adds section under key to *extra_p (made when NULL); NULL does nothing. */
CF_HIDDEN void cf_extra_put(json_t **extra_p, const char *key, json_t *section);

#endif
