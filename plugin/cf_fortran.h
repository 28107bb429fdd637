/* The Fortran bindings (mpif.h and use mpi).  Open MPI's call PMPI_
 * directly, past the C wrappers, so their symbols get wrappers of their
 * own, generated from the same spec (gen_wrappers.py), under every name
 * gfortran gives a Fortran MPI_SEND: mpi_send_, mpi_send__ (the g77
 * convention of -fsecond-underscore), mpi_send and MPI_SEND, and
 * mpi_send_f08_ of use mpi_f08.  MPICH's
 * Fortran bindings call the C MPI_ functions: the C wrappers see them, and
 * no Fortran wrapper is built (CF_FORTRAN 0). */
#ifndef CF_FORTRAN_H
#define CF_FORTRAN_H

#include "cf_runtime.h"

#ifdef OPEN_MPI
#define CF_FORTRAN 1
#else
#define CF_FORTRAN 0
#endif

/* a Fortran MPI_Status is MPI_STATUS_SIZE integers, the size of the C one */
#define CF_F_STATUS_SIZE ((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))
#define CF_F_STATUS_INTS 16

#define CF_FORTRAN_API __attribute__((visibility("default")))
/* The other names of a Fortran wrapper defined as lower_, mpi_f08's among
 * them (lower_f08_: Open MPI's use-mpi-f08 procedures pass handles, buffers
 * and statuses as mpif.h does, and ierror is optional, NULL when absent:
 * every wrapper takes a NULL ierr). */
#define CF_FORTRAN_EXPORT(lower, upper)                                                                      \
    CF_FORTRAN_API __typeof__(lower##_) lower##__ __attribute__((alias(#lower "_")));                        \
    CF_FORTRAN_API __typeof__(lower##_) lower __attribute__((alias(#lower "_")));                            \
    CF_FORTRAN_API __typeof__(lower##_) upper __attribute__((alias(#lower "_")));                            \
    CF_FORTRAN_API __typeof__(lower##_) lower##_f08_ __attribute__((alias(#lower "_")));

/* The library's Fortran entry NAME (pmpi_send) under whichever of its names
 * it has, found once and kept in *cache; NULL if it has none. */
CF_HIDDEN void *cf_fortran_real(void **cache, const char *name);

/* MPI_IN_PLACE and MPI_BOTTOM as Fortran passes them: the addresses of the
 * library's Fortran sentinels, turned into the C constants. */
CF_HIDDEN extern const void *cf_f_in_place[4], *cf_f_bottom[4];
static inline const void *cf_f_buffer(const void *p)
{
    for (int i = 0; i < 4; i++) {
        if (p == cf_f_in_place[i] && p)
            return MPI_IN_PLACE;
        if (p == cf_f_bottom[i] && p)
            return MPI_BOTTOM;
    }
    return p;
}

/* MPI_STATUS_IGNORE as Fortran passes it (MPI-3's MPI_F_STATUS_IGNORE) */
static inline int cf_f_status_ignored(const MPI_Fint *s)
{
    return s == MPI_F_STATUS_IGNORE;
}

#endif
