/* Merging across ranks: reductions over fixed-size arrays (cf_coll.c),
 * for the core and the modules alike. */
#ifndef CF_COLL_H
#define CF_COLL_H

#include "cf_runtime.h"

/* Sorts and dedups keys[0..n) (in place), then returns the sorted union over
 * all ranks (malloc'ed, *n_p entries); *overflow_p when it exceeded cap. */
CF_HIDDEN uint64_t *cf_union_keys(uint64_t *keys, size_t n, uint32_t cap, size_t *n_p, int *overflow_p);
/* The same, and *flag made true on every rank where it is on some rank
 * (in the same reduction). */
CF_HIDDEN uint64_t *cf_union_keys_flag(uint64_t *keys, size_t n, uint32_t cap, size_t *n_p, int *overflow_p,
                                       int *flag);

/* The stats of every rank's table, summed key by key: on rank 0 an array
 * sorted by key (*n_p entries); elsewhere NULL after taking part.  With
 * missing_p, rank 0 also gets per entry the ranks that may lack calls of it:
 * those for which lacks(key) is true (called only where the rank dropped
 * records, and only when some rank did; otherwise *missing_p is NULL). */
CF_HIDDEN cf_stat_t *cf_merge_table(cf_table_t *mine, uint32_t cap, size_t *n_p, int *overflow_p,
                                    int (*lacks)(uint64_t key, const cf_table_t *mine), int dropping,
                                    uint32_t **missing_p);

/* Whether every rank can go on (collective): a rank short of memory must
 * not leave the others waiting in the next reduction, so all skip it. */
CF_HIDDEN int cf_all_ok(int ok);

/* Reduces n elements of elem bytes to root with fn, in pieces. */
CF_HIDDEN int cf_reduce_bytes(void *buf, size_t n, size_t elem, MPI_User_function *fn, int root);

#endif
