/* The failed calls' section (cf_failed.c). */
#ifndef CF_FAILED_H
#define CF_FAILED_H

#include "cf_module.h"

/* Collective, when some call failed on some rank (f->failed_calls): the
 * section on rank 0, [{op, class, calls}]; NULL elsewhere. */
CF_HIDDEN json_t *cf_failed_section(const cf_fin_t *f);
/* "MPI_ERR_RANK" for MPI_ERR_RANK, NULL for a class it does not know.
 * Async-signal-safe (a static table): the spill names a part's failed
 * calls with it. */
CF_HIDDEN const char *cf_error_class_name(int cls);

#endif
