/* A part that is never older than an interval: each rank rewrites its
 * spool part in the background (cf_refresh.c), so that a job killed with no
 * warning (SIGKILL, a node lost, the end of a batch script) keeps what its
 * ranks recorded up to then. */
#ifndef CF_REFRESH_H
#define CF_REFRESH_H

#include "cf_common.h"

/* At MPI_Init, after cf_spill_init (collective over world): reads
 * COMMFIT_SPOOL_EVERY and COMMFIT_SPOOL_BEFORE, learns the job's end (rank 0)
 * and starts the thread. */
CF_HIDDEN void cf_refresh_init(void);
/* The thread ends (MPI_Finalize). */
CF_HIDDEN void cf_refresh_stop(void);
/* The part as it stands, the job going on (cf_spill.c): 0 when written. */
CF_HIDDEN int cf_spill_refresh(void);

#endif
