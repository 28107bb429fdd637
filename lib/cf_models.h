/* Cost models of collective operations (reference: docs/models.md).
 *
 * A collective on p ranks with payload n (the nccl-tests size convention of
 * docs/models.md) under an algorithm costs
 *
 *     T = A(p) alpha + C(p) n / B + G(p) n gamma
 *
 * with alpha the per-message startup (s), B the link bandwidth (bytes/s)
 * and gamma the reduction cost (s/byte).  Logarithms are ceil(log2 p): the
 * algorithms take whole rounds, and for powers of two nothing changes. */
#ifndef CF_MODELS_H
#define CF_MODELS_H

#include "cf_common.h"

/* How busbw follows from algbw (nccl-tests). */
typedef enum {
    CF_BUS_2P, /* 2(p-1)/p */
    CF_BUS_P,  /* (p-1)/p */
    CF_BUS_1   /* 1 */
} cf_bus_kind_t;

/* X(ID, name, busbw kind, default algorithm) */
#define CF_COLL_LIST(X)                                                     \
    X(ALLREDUCE, "allreduce", CF_BUS_2P, "ring")                            \
    X(ALLGATHER, "allgather", CF_BUS_P, "ring")                             \
    X(REDUCE_SCATTER, "reduce_scatter", CF_BUS_P, "ring")                   \
    X(REDUCE_SCATTER_BLOCK, "reduce_scatter_block", CF_BUS_P, "ring")       \
    X(BCAST, "bcast", CF_BUS_1, "binomial")                                 \
    X(REDUCE, "reduce", CF_BUS_1, "binomial")                               \
    X(GATHER, "gather", CF_BUS_P, "binomial")                               \
    X(SCATTER, "scatter", CF_BUS_P, "binomial")                             \
    X(ALLTOALL, "alltoall", CF_BUS_P, "pairwise")                           \
    X(BARRIER, "barrier", CF_BUS_1, "dissemination")                        \
    X(SCAN, "scan", CF_BUS_1, "recursive_doubling")                         \
    X(EXSCAN, "exscan", CF_BUS_1, "recursive_doubling")                     \
    X(P2P, "p2p", CF_BUS_1, "direct")

typedef enum {
    CF_COLL_NONE = -1,
#define CF_COLL_ENUM_(id, name, bus, algo) CF_COLL_##id,
    CF_COLL_LIST(CF_COLL_ENUM_)
#undef CF_COLL_ENUM_
    CF_COLL_COUNT
} cf_coll_t;

/* "allreduce", "p2p" (also "sendrecv"), and MPI names, case-insensitive:
 * "MPI_Allreduce", "MPI_Iallreduce", "MPI_Allreduce_init", "MPI_Allgatherv",
 * "MPI_Alltoallw" (v/w variants map to their base).  MPI names classify
 * collectives only: "MPI_Send", "MPI_Sendrecv", neighbourhood collectives
 * and "MPI_Reduce_local" give CF_COLL_NONE, as does anything unknown. */
CF_HIDDEN cf_coll_t cf_coll_from_name(const char *s);
/* Name used on the command line and in reports; NULL for CF_COLL_NONE. */
CF_HIDDEN const char *cf_coll_name(cf_coll_t c);
/* 1 for the real collectives, 0 for CF_COLL_P2P and CF_COLL_NONE. */
CF_HIDDEN int cf_coll_is_collective(cf_coll_t c);

/* busbw = algbw x factor (nccl-tests): allreduce 2(p-1)/p; reduce_scatter,
 * allgather, alltoall, gather, scatter (p-1)/p; bcast, reduce, scan, p2p,
 * barrier 1.  NaN for CF_COLL_NONE or p < 1. */
CF_HIDDEN double cf_busbw_factor(cf_coll_t c, int p);

/* Algorithms of c: index 0 is the default; NULL past the end. */
CF_HIDDEN const char *cf_model_algo_name(cf_coll_t c, int i);
CF_HIDDEN const char *cf_model_default_algo(cf_coll_t c);
/* The cost written out, e.g. "2(p-1) alpha + 2(p-1)/p n/B + (p-1)/p n gamma";
 * NULL for an unknown collective or algorithm. */
CF_HIDDEN const char *cf_model_formula(cf_coll_t c, const char *algo);
/* The algorithm's canonical name (algo NULL or "default": the default;
 * '-' and '_' and case do not matter); NULL when unknown. */
CF_HIDDEN const char *cf_model_algo_canonical(cf_coll_t c, const char *algo);

/* Coefficients of T = A alpha + C n/B + G n gamma.  algo NULL: the default
 * (ring for allreduce, allgather, reduce_scatter).  CF_ERR_INVALID for an
 * unknown collective or algorithm, CF_ERR_RANGE for p < 1. */
CF_HIDDEN int cf_model_coeffs(cf_coll_t c, const char *algo, int p, double *A_p, double *C_p,
                              double *G_p);
/* Predicted time; NaN on the errors of cf_model_coeffs.  B may be INFINITY;
 * gamma 0 leaves out the reduction. */
CF_HIDDEN double cf_model_time(cf_coll_t c, const char *algo, int p, double n, double alpha,
                               double B, double gamma);
/* Lower bound over all algorithms (docs/models.md): allreduce ceil(lg p) alpha +
 * 2(p-1)/p n/B; allgather, reduce_scatter, gather, scatter, alltoall
 * ceil(lg p) alpha + (p-1)/p n/B; bcast, reduce, scan ceil(lg p) alpha +
 * n/B; barrier ceil(lg p) alpha; p2p alpha + n/B.  NaN on bad arguments. */
CF_HIDDEN double cf_model_lower_bound(cf_coll_t c, int p, double n, double alpha, double B);
/* Size at which the startup part equals the payload part:
 * A alpha B / C (ring allreduce: p alpha B).  INFINITY when C is 0. */
CF_HIDDEN double cf_model_n_half(cf_coll_t c, const char *algo, int p, double alpha, double B);

/* Inverts a fitted collective line T = a_c + n/B_c under an algorithm into
 * per-hop alpha = a_c / A and B = C B_c (any reduction cost stays folded
 * into B).  B_p is INFINITY for barrier.  CF_ERR_RANGE when A is 0 (p = 1);
 * CF_ERR_INVALID for negative or NaN inputs or an unknown algorithm. */
CF_HIDDEN int cf_model_per_hop(cf_coll_t c, const char *algo, int p, double a_c, double B_c,
                               double *alpha_p, double *B_p);

#endif
