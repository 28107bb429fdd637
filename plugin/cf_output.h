/* The profile's and the spool's names, the profile's writing, and the names
 * the profile gives what the MPI library reports (cf_output.c): beside the
 * core, for the end of the run and the spill alike. */
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
/* The executable's file name into prog, and into *fw CF_FW_KNOWN with the
 * frameworks the process mapped (0: /proc/self/maps unreadable). */
CF_HIDDEN void cf_program_info(char *prog, size_t len, unsigned *fw);

/* "MPI_ERR_RANK" for MPI_ERR_RANK, NULL for a class it does not know.
 * Async-signal-safe (a static table): the failed calls' section and the
 * spill's parts name error classes with it. */
CF_HIDDEN const char *cf_error_class_name(int cls);

#endif
