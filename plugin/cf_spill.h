/* Records of a rank whose job does not reach MPI_Finalize (cf_spill.c). */
#ifndef CF_SPILL_H
#define CF_SPILL_H

#include <stddef.h>
#include "cf_common.h"

/* At MPI_Init, after the runtime (collective over world): names the spool,
 * prepares the part and arms the signal handlers and the exit hook. */
CF_HIDDEN void cf_spill_init(void);
/* MPI_Abort: writes the part before the job is killed. */
CF_HIDDEN void cf_spill_abort(int errorcode);
/* End of MPI_Finalize: nothing more to spill (a stale part is removed). */
CF_HIDDEN void cf_spill_finalized(void);

#endif
