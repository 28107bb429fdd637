/* The failed calls' section (cf_failed.c). */
#ifndef CF_FAILED_H
#define CF_FAILED_H

#include "cf_module.h"

/* Collective, when some call failed on some rank (f->failed_calls): the
 * section on rank 0, [{op, class, calls}]; NULL elsewhere. */
CF_HIDDEN json_t *cf_failed_section(const cf_fin_t *f);

#endif
