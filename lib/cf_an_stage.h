/* The analysis as a pipeline of stages, each in its own file, each reading
 * only what the stages before it wrote into the analysis:
 *
 *   cf_an_points.c  profile -> points: records grouped into fits and size
 *                   bins, with the time source and sample coverage per bin;
 *                   the cost ranking's rows
 *   cf_an_fits.c    points -> fits: piecewise alpha + M/B, per-bin model
 *                   error, verdicts with their uncertainty
 *   cf_an_links.c   fits -> reference link per path (blocking point to
 *                   point only, or --link), model times on it
 *   cf_an_coll.c    links -> collectives: busbw, ideal time, efficiency,
 *                   the wire algorithm beneath MPI
 *   cf_an_overlap.c nonblocking operations: blocked time against the same
 *                   calls run blocking, what the overlap hid
 *   cf_an_ranks.c   ranks, regions, late arrivals, oversubscription
 *   cf_advice.c     fusion advice: reads fits and links, never the reverse
 *   cf_an_verdict.c what to tell the user: breakdown, advice sentences
 *   cf_an_json.c    the JSON writer, the advice's too (computes nothing of
 *                   its own)
 *
 * cf_analysis.c runs them in that order; the stages read each other's
 * results through the accessors of cf_an_access.c, never through the
 * runner.  This header is the stages' own; tools use cf_analysis.h. */
#ifndef CF_AN_STAGE_H
#define CF_AN_STAGE_H

#include "cf_an_result.h"

#define CF_AN_NPATH 3

struct cf_analysis {
    const cf_profile_t *p;
    cf_analysis_opts_t opts;
    cf_an_fit_t *fit;
    size_t nfit;
    cf_index_t fit_index; /* by (op, comm, path), once the fits are sorted */
    cf_index_t op_index;  /* the same for the ranking, once sorted */
    cf_index_t fusion_index;
    cf_an_op_t *op;
    size_t nop;
    double total_s;          /* ranked (blocking and completion) time, summed over ranks */
    double span_s;           /* nonblocking post-to-completion spans, kept apart */
    int charged;             /* completion calls charged to requests (records' blocked_s) */
    cf_an_ranks_t ranks;
    cf_an_ref_t ref[CF_AN_NPATH];
    cf_calib_t calib;        /* the profile's calibration section (cf_predict.h) */
    cf_an_limits_t limits[CF_AN_NPATH];
    cf_an_breakdown_t split;
    cf_an_region_t *region;
    size_t nregion;
    cf_an_late_t *late;
    size_t nlate;
    cf_advice_t *fusion;
    size_t nfusion;
    cf_an_wire_t *wire;
    size_t nwire;
    cf_an_hop_t hop[CF_AN_NPATH]; /* paths with UCX sends, ascending */
    size_t nhop;
    char caveat[CF_AN_MAX_CAVEATS][320];
    size_t ncaveat;
};

/* The why of a fit that is not uncertain: every other why is its own
 * allocation (cf_an_fit_t is 160 bytes smaller for the 50 000 fits of a
 * large job, few of which are uncertain). */
CF_HIDDEN extern const char cf_an_no_why[];

/* A value that counts: finite and positive, else 0. */
CF_HIDDEN double cf_an_pos(double v);
CF_HIDDEN int cf_an_comm_size(const cf_profile_t *p, uint32_t comm);
/* A poll: an MPI_Test* record that completed nothing (no payload, no
 * blocked time charged to a request). */
CF_HIDDEN int cf_an_is_poll(const cf_record_t *r);

/* points */
CF_HIDDEN void cf_an_limits_build(cf_analysis_t *a);
CF_HIDDEN int cf_an_points_build(cf_analysis_t *a);
/* fits */
CF_HIDDEN int cf_an_fit_group(const cf_analysis_t *a, cf_an_fit_t *f);
/* links */
CF_HIDDEN void cf_an_links_build(cf_analysis_t *a);
CF_HIDDEN const cf_an_ref_t *cf_an_ref_of(const cf_analysis_t *a, int path);
CF_HIDDEN double cf_an_ref_model(const cf_an_ref_t *ref, cf_coll_t c, const char *algo, int p,
                                 double n, double *startup_p);
CF_HIDDEN void cf_an_verdict_from_model(const cf_analysis_t *a, cf_an_fit_t *f);
/* The source of the link's time per hop for an operation of n bytes
 * (cf_pred_source_t); CF_PRED_NONE without a reference. */
CF_HIDDEN int cf_an_ref_source_at(const cf_an_ref_t *ref, cf_coll_t c, int p, double n);
/* {"alpha_s", "bandwidth_Bps", "err_rms"} of the path's joint fit; null: none. */
CF_HIDDEN json_t *cf_an_ref_program_json(const cf_an_ref_t *ref);
/* The predictor of one call of a fit's operation (cf_predict.h): its bins,
 * the calibration of its stream, the blocking operation's bins on the same
 * communicator for a nonblocking one; beyond them its fit, else the
 * reference link under its model. */
typedef struct {
    const cf_analysis_t *a;
    const cf_an_fit_t *f; /* the fit whose line is used: the blocking one for a nonblocking stream */
    cf_coll_t coll;
    int comm_size, path;
} cf_an_line_t;
/* ctx: storage for the line, which must live as long as *pr is used. */
CF_HIDDEN void cf_an_predictor(const cf_analysis_t *a, const cf_an_fit_t *f, cf_an_line_t *ctx,
                               cf_predictor_t *pr);
/* Each bin's prediction_s and prediction_loo_s (cf_analysis.h). */
CF_HIDDEN void cf_an_bin_predictions(const cf_analysis_t *a, cf_an_fit_t *f);
/* The blocking operation a nonblocking one stands for on the same
 * communicator and path (MPI_Allreduce for MPI_Iallreduce); NULL: none. */
CF_HIDDEN const cf_an_fit_t *cf_an_blocking_twin(const cf_analysis_t *a, const cf_an_fit_t *f);
/* collectives */
CF_HIDDEN void cf_an_collective_figures(const cf_analysis_t *a, cf_an_fit_t *f);
CF_HIDDEN int cf_an_hops_build(cf_analysis_t *a);
CF_HIDDEN int cf_an_wire_build(cf_analysis_t *a);
/* ranks */
CF_HIDDEN void cf_an_rank_figures(const cf_profile_t *p, cf_an_ranks_t *rk);
CF_HIDDEN int cf_an_regions_build(cf_analysis_t *a);
CF_HIDDEN int cf_an_late_build(cf_analysis_t *a);
CF_HIDDEN void cf_an_caveats_build(cf_analysis_t *a);
/* verdicts */
CF_HIDDEN void cf_an_breakdown(cf_analysis_t *a);
/* overlap: nonblocking operations against the same calls run blocking */
CF_HIDDEN void cf_an_overlap_build(cf_analysis_t *a);

#endif
