/* A part that is never older than an interval: each rank rewrites its
 * spool part in the background (cf_refresh.c), so that a job killed with no
 * warning (SIGKILL, a node lost, the end of a batch script) keeps what its
 * ranks recorded up to then. */
#ifndef CF_REFRESH_H
#define CF_REFRESH_H

#include "cf_common.h"

/* At MPI_Init, from the spill's init (collective over world): reads
 * COMMFIT_SPOOL_EVERY and COMMFIT_SPOOL_BEFORE, learns the job's end (rank 0)
 * and starts the thread, which writes the part with write (0 when written). */
CF_HIDDEN void cf_refresh_init(int (*write)(void));
/* The thread ends (MPI_Finalize, from the spill's end). */
CF_HIDDEN void cf_refresh_stop(void);

#endif
