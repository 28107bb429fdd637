/* The profile's and the spool's names, and the profile's writing (cf_output.c). */
#ifndef CF_OUTPUT_H
#define CF_OUTPUT_H

#include <stddef.h>
#include "cf_profile.h"
#include "cf_runtime.h"

/* The profile path rank 0 writes ("" for the default name), and the spool
 * directory of the job. */
CF_HIDDEN void cf_profile_output(char *buf, size_t len);
CF_HIDDEN void cf_spool_default(char *buf, size_t len);
/* Rank 0: writes p to COMMFIT_OUTPUT, else under its default name in the
 * working directory, $TMPDIR or /tmp, and says where. */
CF_HIDDEN void cf_write_profile(const cf_profile_t *p);
/* The MPI library's version line, as the profile names it. */
CF_HIDDEN void cf_library_version(char *out, size_t len);

#endif
