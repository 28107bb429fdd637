/* Wire messages beneath MPI calls: the UCX layer's records of a profile,
 * grouped by the MPI operation that was active when each was posted, and
 * held against message-level models of the collective algorithms.
 *
 * Counts are per rank and per MPI call: the profile sums both the UCX
 * records and the MPI records over ranks, so their ratio is the average
 * over the ranks that took part.  Payload n follows docs/models.md (allreduce:
 * the vector; allgather, alltoall, reduce_scatter_block: p x block).
 *
 * Message-level models (per rank, per call; n the payload):
 *   allreduce  ring                 2(p-1) messages of n/p
 *              recursive_doubling   lg p messages of n (p a power of two;
 *                                   otherwise 2r extra ones for r = p - 2^floor(lg p))
 *              rabenseifner         2 lg p messages, n/2 ... n/p ... n/2 (otherwise 4r
 *                                   extra ones: halves folded in, whole results sent back)
 *              reduce_bcast         2(p-1)/p messages of n (Open MPI basic_linear, nonoverlapping)
 *   allgather, reduce_scatter(_block)
 *              ring                 p-1 messages of n/p
 *              recursive_doubling / recursive_halving / bruck
 *                                   ceil(lg p) messages, n/p ... n/2
 *   alltoall   pairwise             p-1 messages of n/p;  bruck: ceil(lg p) of about n/2
 *   bcast      binomial             (p-1)/p messages of n;  scatter_allgather: (p-1)/p + (p-1) of n/p
 *   reduce     binomial             (p-1)/p messages of n
 *   barrier    dissemination        ceil(lg p) messages of 0 bytes
 * A rooted tree and a linear root look alike in averages over ranks. */
#ifndef CF_WIRE_H
#define CF_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include "cf_bins.h"
#include "cf_common.h"
#include "cf_fit.h"
#include "cf_models.h"
#include "cf_profile.h"

typedef struct {
    uint64_t size_lo, size_hi; /* bin bounds (bytes) */
    uint64_t msgs, bytes;      /* wire messages sent in the bin, all ranks */
} cf_wire_bin_t;

typedef struct {
    char op[40];              /* the MPI operation above, "" for traffic outside any */
    cf_coll_t coll;           /* its collective, CF_COLL_NONE for point to point and others */
    uint32_t comm;            /* the communicator that carried most calls (CF_COMM_ID_NONE: none) */
    int comm_size;            /* its size, 0 unknown */
    int path;                 /* its path class (cf_path_t), -1 unknown */
    int mixed_comms;          /* calls on communicators of different sizes */
    uint64_t mpi_calls;       /* calls of the MPI operation, all ranks */
    uint64_t mpi_bytes;       /* their payload, all ranks */
    uint64_t size_lo, size_hi; /* size bins of its calls, all communicators (0, 0: none) */
    double payload_lo, payload_hi; /* mean payload of its records of fewest and most bytes per call */
    uint64_t msgs, msg_bytes; /* messages this side started (UCX kinds send and rma) */
    uint64_t recvs, recv_bytes;
    double msgs_per_call;     /* msgs / mpi_calls; NaN without MPI calls */
    double bytes_per_call;    /* msg_bytes / mpi_calls */
    double payload;           /* n: mpi_bytes / mpi_calls */
    double msg_size_mean;     /* msg_bytes / msgs */
    size_t nbin;
    cf_wire_bin_t bin[CF_SIZE_BINS]; /* ascending sizes, only bins with messages */
} cf_wire_op_t;

/* One entry per MPI operation with UCX records under it, most messages
 * first.  *ops_p is allocated (free()); CF_ERR_NODATA (and *n_p = 0) when
 * the profile has no UCX record. */
CF_HIDDEN int cf_wire_ops(const cf_profile_t *p, cf_wire_op_t **ops_p, size_t *n_p);

/* Expected wire traffic of one algorithm, per rank and call. */
typedef struct {
    const char *algo;         /* canonical name (cf_models.h spelling) */
    double msgs;              /* messages sent */
    double bytes;             /* bytes sent, as a multiple of n */
    double size_lo, size_hi;  /* message sizes, as multiples of n */
    const char *shape;        /* "2(p-1) messages of n/p" */
} cf_wire_model_t;

/* The i-th algorithm of c that has a message-level model; NULL past the end. */
CF_HIDDEN const char *cf_wire_algo_name(cf_coll_t c, int i);
/* CF_ERR_INVALID for an unknown collective or algorithm, CF_ERR_RANGE for p < 2. */
CF_HIDDEN int cf_wire_model(cf_coll_t c, const char *algo, int p, cf_wire_model_t *m_p);

typedef struct {
    const char *algo;          /* the model observed, NULL when none is close enough */
    const char *closest;       /* the nearest model in any case */
    double distance;           /* |ln(msgs / expected)| + |ln(bytes / expected)| of the nearest */
    double second;             /* the same for the runner-up (INFINITY if none) */
    cf_wire_model_t expected;  /* the nearest model */
    int p;
} cf_wire_infer_t;

#define CF_WIRE_MATCH 0.2 /* largest distance called a match: about 20 % off in count and bytes together */

/* Which algorithm the messages of o look like, using its communicator size.
 * CF_ERR_NODATA without MPI calls or messages, or p unknown; CF_ERR_UNSUPPORTED
 * when the operation has no model (point to point, v variants of rooted ones). */
CF_HIDDEN int cf_wire_infer(const cf_wire_op_t *o, cf_wire_infer_t *inf_p);

/* Per-hop points of one path class: the UCX records of kind "send" on that
 * path, one point per size bin (mean size, call-weighted median time, calls),
 * ascending sizes.  Fills at most max points; *n_p gets the number. */
CF_HIDDEN int cf_wire_hop_points(const cf_profile_t *p, int path, cf_point_t *pts, size_t max, size_t *n_p);
/* cf_fit_hockney on those points. */
CF_HIDDEN int cf_wire_hop_fit(const cf_profile_t *p, int path, cf_fit_t *fit_p);

/* The Open MPI setting that selects algo for c in coll/tuned, e.g.
 * "--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4"
 * (Open MPI 4.1 numbering); NULL when there is none. */
CF_HIDDEN const char *cf_wire_ompi_setting(cf_coll_t c, const char *algo, char *buf, size_t len);

/* The transports UCX selected, from the profile's "ucx" section:
 * {"intra-node": ["sysv/memory", ...], ...}; borrowed, NULL when absent. */
CF_HIDDEN json_t *cf_wire_transports(const cf_profile_t *p);

#endif
