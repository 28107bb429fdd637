/* Regions opened and closed with MPI_Pcontrol (cf_region.c). */
#ifndef CF_REGION_H
#define CF_REGION_H

#include "cf_coll.h"
#include "cf_profile.h"
#include "cf_runtime.h"
#include "cf_spool.h"

/* every region id there is (ids 1..CF_REGION_MASK) */
#define CF_MAX_REGIONS CF_REGION_MASK

/* Collective: the region names of every rank.  On rank 0 (p not NULL) they
 * go into p->region and its extra "region_entries" section, and *ids_p gets
 * the region id of each p->region entry (malloc'ed). */
CF_HIDDEN int cf_regions_merge(cf_profile_t *p, unsigned **ids_p);

/* The regions of this rank, for its part (async-signal-safe), and its opens
 * refused because the table was full or they were nested too deep. */
CF_HIDDEN size_t cf_regions_copy(cf_spill_region_t *out, size_t max, uint64_t *full_p, uint64_t *deep_p);

/* This rank's entries of the outermost region around region id ("step"
 * for "step/allreduce"); 0 for none. */
CF_HIDDEN uint64_t cf_region_outer_entries(unsigned id);

/* Per entry of this rank's outermost region with the most entries (at
 * least 3), between its first entry and its last, in the steady state: the
 * process's minor page faults (memory the kernel mapped in afresh), its
 * involuntary context switches (the scheduler taking a CPU from one of its
 * threads: the machine's load as the job felt it) and the time from one
 * entry to the next (the step's period); its name in name.  NaN (name "")
 * without such a region. */
typedef struct {
    double faults, preempt, period_s;
} cf_region_step_t;
CF_HIDDEN cf_region_step_t cf_region_step(char *name, size_t len);

#endif
