/* Analysis of a profile: the Hockney fit T = alpha + M/B per operation,
 * communicator and path, the startup-or-bandwidth verdict, and collectives
 * held against their ideal models.  One analysis serves the end-of-run
 * summary (rank 0, inside the plugin) and `commfit report`.
 *
 * What is fitted
 * - Only records of the MPI layer (the UCX layer runs beneath them and its
 *   time is already inside theirs).  Regions are merged.
 * - Point to point ("p2p"): every operation of kind p2p on one path is
 *   fitted together (op "p2p", comm CF_COMM_ID_NONE): blocking sends,
 *   receives and sendrecv, and nonblocking ones timed from post to
 *   completion.  Blocking sends of eager messages return after a local
 *   copy and receives include waiting for a late sender, so the joint fit
 *   sits between the two; that is the estimate of the link the collectives
 *   are held against.  Each operation is also fitted alone per
 *   (op, comm, path), so MPI_Send and MPI_Recv can be compared.
 * - Collectives: one fit per (op, comm); the path is the communicator's.
 * - File accesses (kind io): one fit per (op, comm), on their own: the
 *   file system's startup and bandwidth, not a network path's.
 * - Completion (Wait/Test), probe, one-sided (rma, sync), local and other
 *   records are not fitted; they appear in the cost ranking.
 *
 * Points: one per size bin.  size = bytes / calls of the bin, time = its
 * median, weight = calls.  When several records fall into one bin (regions,
 * communicators, operations of a joint fit), their medians are combined
 * weighted by calls: an approximation of the median of the union, exact
 * when they agree.  Where the bin has enough timed transfers
 * (CF_AN_MIN_SAMPLES), a record contributes its transfer median instead of
 * the duration median (for messages whose one-way times fall in two modes,
 * their mean: see cf_an_points.c), so the fit sees the cost of moving the
 * data, not the wait for a late partner.
 * Zero-byte bins cannot inform B: they stay out of the fit, are reported
 * as bins, and count as pure startup in the startup share.
 *
 * Verdict: startup share = sum over calls of alpha(M) / sum of T(M) under
 * the fit (per bin: alpha(M) / T(M)); "startup-bound" above 0.5, else
 * "bandwidth-bound".  With fewer than 3 distinct sizes there is no fit
 * ("not enough size range"); the verdict then comes from the reference
 * link under the operation's model when there is one (basis "model").
 *
 * Reference link of a path, for ideal times: the link given in the options
 * (--link), else the joint p2p fit of that path, else the per-hop fit of
 * the UCX sends on that path (source "ucx hop fit": the wire beneath MPI,
 * without MPI's own overhead, and eager sends complete once copied out, so
 * ideal times from it are optimistic at small sizes).  The ideal time of a
 * collective of n bytes on p ranks under the default algorithm (ring for
 * allreduce) with cost A alpha + C n/B is A x T_p2p(C n / A): A messages of
 * the per-hop size C n / A, each costed by the segment of the p2p fit that
 * covers that size.  efficiency = ideal / measured median.
 *
 * Also part of an analysis: the MPI time per region (MPI_Pcontrol), the
 * late arrivals per communicator as the profile records them, the fusion
 * advice of every collective stream (cf_advice.h), and, when the profile
 * has UCX records, the wire messages beneath each MPI operation with the
 * algorithm they reveal (cf_wire.h).
 *
 * This header is the runner's (cf_analysis.c); what an analysis holds and
 * the accessors that answer for it are in cf_an_result.h. */
#ifndef CF_ANALYSIS_H
#define CF_ANALYSIS_H

#include "cf_an_result.h"

CF_HIDDEN void cf_analysis_opts_init(cf_analysis_opts_t *opts);

/* Analyses p, which must outlive the analysis.  opts NULL: defaults.
 * CF_OK; CF_ERR_INVALID (NULL arguments, a half-given link);
 * CF_ERR_NOMEM.  Any content of p is accepted. */
CF_HIDDEN int cf_analysis_run(const cf_profile_t *p, const cf_analysis_opts_t *opts,
                              cf_analysis_t **a_p);
CF_HIDDEN void cf_analysis_free(cf_analysis_t *a);

#endif
