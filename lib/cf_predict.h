/* Predicting the time of one call of n bytes, measurement first.
 *
 * A predictor holds the times measured at some sizes (the program's own
 * per-bin medians, source "measured"; the calibration's sweep at
 * MPI_Finalize, source "calibration") and a line for beyond them (the
 * piecewise alpha + M/B fit, or a link under a collective's model).
 *
 * - At a measured size: the measured time.
 * - Between two measured sizes: interpolated in log-log, exact at both
 *   neighbours: the line times the log-log interpolation of the
 *   neighbours' measured / line ratios (the line's shape through both);
 *   without a line, a power law through both.  Source "measured" when
 *   both are the program's, else "calibration".
 * - Beyond the measured sizes: the line's growth from the nearest measured
 *   size, t(n) = t(edge) + line(n) - line(edge) above the largest (bytes
 *   cost what the line says they cost; the startup measured stays),
 *   t(edge) x line(n) / line(edge) below the smallest; source "model".
 * - Without any measured size: the line; source "model".
 *
 * Uncertainty (relative, one standard deviation of log t; unc_s is that
 * times the time):
 * - of a measured time: the scatter of a median, from the bin's p50..p99
 *   spread, 1.25 x ln(p99 / p50) / 2.33 / sqrt(calls), at least 3 % (the
 *   departures of real timings from any smooth curve, cf_fit.h); of a
 *   calibration time, ln(p50 / best), at least 3 %;
 * - between measured sizes: that of the neighbours (weighted by position)
 *   and the spread between the line's shape and the power law through
 *   both neighbours, added in quadrature;
 * - beyond: that of the edge plus, per doubling of the distance from it,
 *   the line's own rms error over its bins (at least 10 %).
 * The uncertainty is a price, not an interval: fusion advice withholds a
 * saving smaller than the uncertainty of the times it compares
 * (cf_advice.h). */
#ifndef CF_PREDICT_H
#define CF_PREDICT_H

#include <stddef.h>
#include <stdint.h>

#include "cf_common.h"
#include "cf_profile.h"

typedef enum {
    CF_PRED_NONE = 0,
    CF_PRED_MEASURED = 1,    /* the program's own median at this size, or interpolated */
    CF_PRED_CALIBRATION = 2, /* the calibration's, or interpolated with it */
    CF_PRED_MODEL = 3        /* the line, beyond every measured size */
} cf_pred_source_t;

/* "measured", "calibration", "model"; NULL for CF_PRED_NONE. */
CF_HIDDEN const char *cf_pred_source_name(cf_pred_source_t s);

#define CF_PRED_MAX_POINTS 96
#define CF_PRED_MIN_SPREAD 0.03 /* relative uncertainty of any measured time */
#define CF_PRED_EXT_PER_DOUBLING 0.10 /* beyond: at least this much per doubling */

typedef struct {
    double size, time_s;
    double spread; /* relative uncertainty */
    cf_pred_source_t source;
} cf_pred_point_t;

/* The line beyond the measured sizes: time of n bytes, and its startup in
 * *startup_p (never NULL); NaN where it has none. */
typedef double (*cf_pred_line_fn)(const void *ctx, double n, double *startup_p);

typedef struct {
    cf_pred_point_t pt[CF_PRED_MAX_POINTS]; /* ascending size */
    size_t n;
    cf_pred_line_fn line;
    const void *ctx;
    double line_err; /* rms relative error of the line over its bins; NaN: unknown */
} cf_predictor_t;

typedef struct {
    double time_s;    /* NaN: no prediction */
    double startup_s; /* the line's startup at this size, scaled as the time is; NaN: unknown */
    double unc_s;     /* absolute uncertainty */
    cf_pred_source_t source;
} cf_pred_t;

CF_HIDDEN void cf_pred_init(cf_predictor_t *pr, cf_pred_line_fn line, const void *ctx, double line_err);
/* Adds a measured time (size > 0, time > 0, else ignored).  A size within
 * 1 % of one held already replaces it only with a program measurement over
 * a calibration one.  spread: relative uncertainty (raised to
 * CF_PRED_MIN_SPREAD).  Points beyond CF_PRED_MAX_POINTS are dropped. */
CF_HIDDEN void cf_pred_add(cf_predictor_t *pr, double size, double time_s, double spread,
                           cf_pred_source_t source);
/* The relative uncertainty of a bin's median of `calls` calls from its p50
 * and p99 (the rule above). */
CF_HIDDEN double cf_pred_median_spread(double p50_s, double p99_s, double calls);
/* Prediction at size n >= 0; *out filled (may be NULL); returns out->time_s. */
CF_HIDDEN double cf_pred_at(const cf_predictor_t *pr, double n, cf_pred_t *out);

/* ---- the profile's "calibration" section (measured at MPI_Finalize) ---- */

#define CF_CALIB_MAX_SIZES 48
#define CF_CALIB_MAX_LINKS 8
#define CF_CALIB_MAX_COLLS 16

typedef struct {
    double bytes, best_s, p50_s; /* one way for links; slowest rank's per repetition for collectives */
    /* links: NetPIPE's figure, the best of five trials each the mean of a
     * fifth of the round trips; NaN where the profile has none (before it
     * was recorded, and for collectives) */
    double trial_s;
    int reps;
    int calls; /* in flight: calls posted at once, timed together (best_s, p50_s of the set); 0: one */
    /* in flight: minor page faults of a set (median over the reps, the
     * most on a rank); NaN: not recorded (profiles whose in-flight sets
     * were timed after the other sweeps, on a heap those had moved) */
    double faults;
} cf_calib_size_t;

/* The time a link's sweep states for a size: NetPIPE's figure where the
 * profile has it, else the median. */
static inline double cf_calib_link_time(const cf_calib_size_t *z)
{
    return z->trial_s > 0 ? z->trial_s : z->p50_s;
}

typedef struct {
    int path; /* cf_path_t */
    int ranks[2];
    char method[24];
    cf_calib_size_t size[CF_CALIB_MAX_SIZES]; /* ascending bytes */
    size_t nsize;
    size_t ntamed; /* sizes whose times were disturbed, and moved (cf_predict.c) */
} cf_calib_link_t;

typedef struct {
    char op[40], for_op[40]; /* what ran, and the program's operation it stands for */
    uint32_t comm;
    int comm_size;
    cf_calib_size_t size[CF_CALIB_MAX_SIZES];
    size_t nsize;
    size_t ntamed;
    /* a nonblocking stream's sizes with calls of each posted at once, then
     * one wait ("in_flight"), sized for in_flight_step_bytes per step */
    cf_calib_size_t inflight[CF_CALIB_MAX_SIZES];
    size_t ninflight;
    double inflight_step_bytes;
} cf_calib_coll_t;

typedef struct {
    int present;   /* the section was there and read */
    int malformed; /* the section was there but not as documented: no calibration */
    char why[120]; /* malformed: what */
    int complete;  /* the calibration finished within its budget */
    double budget_s, elapsed_s;
    size_t nskipped;
    /* seconds to fault in a fresh page on rank 0 (section's page_fault_s);
     * NaN: not measured (no in-flight sets, or an older profile) */
    double page_fault_s;
    cf_calib_link_t link[CF_CALIB_MAX_LINKS];
    size_t nlink;
    cf_calib_coll_t coll[CF_CALIB_MAX_COLLS];
    size_t ncoll;
} cf_calib_t;

/* Reads p's "calibration" section into *c (zeroed first).  Tolerant:
 * without the section, present = 0; with one that is not an object of the
 * documented members (version 1), malformed = 1 with why, and nothing else;
 * entries that are malformed alone are skipped.  Never fails. */
CF_HIDDEN void cf_calib_read(const cf_profile_t *p, cf_calib_t *c);
/* The calibration sweep of a path, the one with most sizes; NULL: none. */
CF_HIDDEN const cf_calib_link_t *cf_calib_link_of(const cf_calib_t *c, int path);
/* The calibration of a program's stream (for_op or op equal to op, on its
 * communicator); NULL: none. */
CF_HIDDEN const cf_calib_coll_t *cf_calib_coll_of(const cf_calib_t *c, const char *op, uint32_t comm);
/* In flight against one at a time, for m buckets of bytes posted
 * together: the time of the in-flight set at that size over its calls
 * times the one-at-a-time median there (both measured at bytes), for m
 * calls: 1 + (ratio - 1) (m - 1) / (calls - 1) up to the calls measured,
 * the ratio measured beyond.  *calls_p the calls measured, *unc_p the
 * ratio's relative uncertainty (the set's p50..best spread, at least
 * 3 %; beyond the calls measured, plus CF_PRED_EXT_PER_DOUBLING per
 * doubling of m over them, as for sizes beyond the measured ones).  NaN
 * where either was not measured at bytes, or m < 2.  *faults_p (may be
 * NULL) the set's page faults (NaN: not recorded). */
CF_HIDDEN double cf_calib_inflight_ratio(const cf_calib_coll_t *c, double bytes, double m, int *calls_p, double *faults_p,
                                         double *unc_p);

#endif
