/* MPI objects other than communicators that calls are made on: files,
 * windows and matched messages.  Each is noted with the communicator it
 * belongs to when it is made (MPI_File_open, MPI_Win_create...,
 * MPI_Mprobe), so that a call on it is recorded under that communicator
 * and a one-sided call under the path to its target.  Lookup is lock-free
 * and makes no MPI call; an object made before recording started, or when
 * its table was full, is found as NULL (no communicator). */
#ifndef CF_OBJECTS_H
#define CF_OBJECTS_H

#include "cf_runtime.h"

/* Handles are pointers in Open MPI and integers in MPICH: either way a
 * word, nonzero for a valid object. */
#define CF_HANDLE(h) ((uintptr_t)(h))

#define CF_OBJ_SLOTS 1024
typedef struct {
    _Atomic uintptr_t key[CF_OBJ_SLOTS];
    const cf_comm_t *comm[CF_OBJ_SLOTS];
    int aux[CF_OBJ_SLOTS]; /* matched messages: the source rank */
} cf_objtab_t;

CF_HIDDEN extern cf_objtab_t cf_files, cf_wins, cf_msgs;

static inline int cf_obj_slot(cf_objtab_t *tab, uintptr_t k)
{
    uint32_t i = cf_hash_ptr(k);
    for (unsigned n = 0; n < 16; n++) {
        uint32_t s = (i + n) & (CF_OBJ_SLOTS - 1);
        if (atomic_load_explicit(&tab->key[s], memory_order_acquire) == k)
            return (int)s;
    }
    return -1;
}

static inline const cf_comm_t *cf_obj_comm(cf_objtab_t *tab, uintptr_t k)
{
    int s = k ? cf_obj_slot(tab, k) : -1;
    return s >= 0 ? tab->comm[s] : NULL;
}

static inline const cf_comm_t *cf_file_comm(MPI_File fh) { return cf_obj_comm(&cf_files, CF_HANDLE(fh)); }
static inline const cf_comm_t *cf_win_comm(MPI_Win win) { return cf_obj_comm(&cf_wins, CF_HANDLE(win)); }

/* Neighbours of this rank in comm's topology: sources (out = 0) or
 * destinations (out = 1); 0 without a topology.  Local MPI calls, made
 * only by the neighbourhood collectives. */
CF_HIDDEN int cf_neighbours(MPI_Comm comm, int out);

#endif
