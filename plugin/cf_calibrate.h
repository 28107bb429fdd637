/* Calibration at the end of the run (cf_calibrate.c): the paths and the
 * program's whole-world collectives measured at the sizes fusion advice
 * weighs, within a time budget (COMMFIT_CALIBRATE). */
#ifndef CF_CALIBRATE_H
#define CF_CALIBRATE_H

#include "cf_module.h"

/* Collective over the world: every rank calls it once at finalize, with
 * recording off and before the merge, so that none of its traffic enters
 * the program's records (the module's before_merge). */
CF_HIDDEN void cf_calibrate_run(void);
/* The "calibration" section it measured, on rank 0 (NULL on the other
 * ranks, and everywhere when COMMFIT_CALIBRATE=0). */
CF_HIDDEN json_t *cf_calibrate_section(const cf_fin_t *f);

#endif
