/* The profile's assembly, shared by the plugin's finalize (plugin/cf_merge.c)
 * and the merge of a spool (cf_spool_merge, for a job that did not finish):
 * the job's oversubscription, the sentences of what the tables lost, and
 * the records with their regions.  One place for each, so that a profile
 * says the same thing however it was made. */
#ifndef CF_ASSEMBLE_H
#define CF_ASSEMBLE_H

#include <stdint.h>
#include "cf_bins.h"
#include "cf_profile.h"

/* Region opens nest at most this deep (plugin/cf_region.c). */
#define CF_REGION_DEPTH 16

/* The job's oversubscription, ranks per node and CPUs per node, from the
 * node figures of p->rank (ranks without them do not count). */
void cf_assemble_oversubscription(cf_profile_t *p);

/* What the tables lost, summed over the ranks, and the limits that made the
 * loss: a limit of 0 is not known (a part of an older plugin does not carry
 * it), and its sentence names the variable alone.  The same loss makes the
 * same sentence from the finalize and from a spool. */
typedef struct {
    uint64_t threads;    /* threads not recorded */
    uint64_t records;    /* calls that found a thread's table full */
    uint64_t merge_keys; /* at finalize: keys a rank's merged table had no room for */
    uint64_t requests;   /* requests not tracked */
    uint32_t max_threads, table_size, merge_max, max_requests;
} cf_losses_t;

/* Their partial reasons, in this order: threads, records, requests. */
void cf_assemble_losses(cf_profile_t *p, const cf_losses_t *l);

/* The partial reasons for region opens refused (summed over ranks): the
 * table full, nested too deep. */
void cf_assemble_region_losses(cf_profile_t *p, uint64_t full, uint64_t deep);

/* The next record of p (p->rec has room) from merged stats (ns): its
 * operation's names, its region (index + 1 in p->region, 0 for none) and the
 * ranks whose calls it may lack. */
cf_record_t *cf_assemble_record(cf_profile_t *p, const cf_stat_t *s, const char *op, const char *kind,
                                const char *parent_op, unsigned region, uint32_t ranks_missing);

#endif
