/* The communication matrix (cf_matrix.c): a thread counts its messages
 * per (communicator, world rank) through cf_peer_count (cf_sample.h, on
 * the hot path); at finalize they become the profile's "matrix" section. */
#ifndef CF_MATRIX_H
#define CF_MATRIX_H

#include "cf_module.h"

/* A thread's table of peers (CF_PEERS slots), NULL when there is no room. */
CF_HIDDEN void cf_matrix_thread_init(cf_thread_t *t);
/* Collective over the world: the section on rank 0, NULL elsewhere. */
CF_HIDDEN json_t *cf_matrix_section(const cf_fin_t *f);

#endif
