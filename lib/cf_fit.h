/* Fitting the Hockney model T(M) = alpha + M/B to per-bin medians.
 *
 * - Relative error: weighted least squares with weights count / T^2, so the
 *   small sizes, whose times are short, still determine alpha when the
 *   large sizes dominate the total time.  T is the fitted time (iteratively
 *   reweighted), which avoids the bias that weights from the measured times
 *   give; the very first fit uses max(T_i, median of T_i and its two
 *   neighbours), under which neither a slow nor a fast outlier has leverage.
 * - Outliers: in each segment the worst point is dropped and the segment
 *   refitted while |log(T_measured / T_fit)| of that point exceeds both
 *   3 robust standard deviations (1.4826 x median |log residual|) and 0.05;
 *   at most a quarter of a segment's points, never below 3 sizes, and
 *   never a size next to a break (it would move the switch, see
 *   cf_fit_predict).
 * - Protocol switches: where and whether they are is decided with bounded
 *   bin weights u = c / (c + 16) instead of the call counts c, which
 *   sweeps make 10 to 100 times larger at small sizes: every size bin has
 *   a say, a bin of very few calls less.  The best segmentation into
 *   1..CF_FIT_MAX_SEG segments (each with >= 3 distinct sizes) is found by
 *   dynamic programming over the break positions, with a cheap robust cost
 *   in which the sizes next to a break are never outliers.  The fewest
 *   segments are kept that no finer segmentation beats: a finer one wins
 *   when the likelihood ratio of the log residuals, (n - p) ln(cost_coarse
 *   / cost_fine) with n the effective number of bins and p the finer
 *   model's parameters, exceeds 1.5 ln n per added parameter (3 per
 *   segment: startup, slope, break), and the coarser one misses by more
 *   than 2 % rms.  A bin that both miss by more than the finer model's
 *   outlier threshold costs both the same.  The segments' parameters are
 *   then fitted with the call counts.
 * - Constraints: alpha >= 0 (refit through the origin otherwise) and B > 0;
 *   a slope <= 0 gives B = INFINITY (time does not grow with size).
 * - Confidence intervals: centre +- t(0.975, n-2) x standard error of the
 *   weighted regression, with the residual variance estimated from the
 *   data; the B interval is the inverse of the 1/B interval.
 */
#ifndef CF_FIT_H
#define CF_FIT_H

#include <stddef.h>
#include "cf_common.h"

/* One message-size bin: mean payload (bytes), median time (s), call count.
 * Points with weight <= 0 or time_s == 0 are ignored. */
typedef struct {
    double size;
    double time_s;
    double weight;
} cf_point_t;

#define CF_FIT_MAX_SEG 4

typedef struct {
    double size_lo, size_hi; /* sizes of the kept points in this segment */
    double alpha_s, bandwidth_Bps;
    double alpha_ci[2], bandwidth_ci[2]; /* 95 % */
    int npoints;             /* kept points */
} cf_segment_t;

typedef struct {
    int ok; /* 1: numbers valid; 0: fewer than 3 distinct sizes */
    /* The overall fit: one line through every point the piecewise model
     * keeps (a summary that stays comparable whether or not a switch was
     * found).  With nseg == 1 it equals seg[0].  cf_fit_predict and
     * cf_fit_alpha_at give per-size numbers, which follow the segments.
     * r2 is that of the relative-error regression. */
    double alpha_s, bandwidth_Bps, n_half_bytes, r2;
    double alpha_ci[2], bandwidth_ci[2]; /* 95 %; an open upper end is INFINITY */
    double size_lo, size_hi;             /* size range that supports the fit */
    int npoints, noutliers, nseg;        /* npoints: kept points */
    cf_segment_t seg[CF_FIT_MAX_SEG];    /* ascending sizes */
} cf_fit_t;

/* CF_OK; CF_ERR_NODATA with fit_p->ok = 0 and size_lo, size_hi, npoints
 * (usable points) filled when there are fewer than 3 distinct sizes;
 * CF_ERR_INVALID for NULL, NaN or negative inputs; CF_ERR_NOMEM. */
CF_HIDDEN int cf_fit_hockney(const cf_point_t *pts, size_t n, cf_fit_t *fit_p);

/* cf_fit_hockney, and kept_p (may be NULL; n entries) says per input point
 * whether the fit kept it (0: an outlier, or no weight). */
CF_HIDDEN int cf_fit_run(const cf_point_t *pts, size_t n, cf_fit_t *fit_p, unsigned char *kept_p);
/* The segment whose model covers size (see cf_fit_predict); NULL when !fit->ok. */
CF_HIDDEN const cf_segment_t *cf_fit_segment_at(const cf_fit_t *fit, double size);

/* Predicted time of one message under the segment covering size (the
 * nearest segment outside the fitted range; between two segments the
 * switch is at the geometric mean of their edges).  NaN when !fit->ok. */
CF_HIDDEN double cf_fit_predict(const cf_fit_t *fit, double size);
/* Startup time (alpha) of that segment. */
CF_HIDDEN double cf_fit_alpha_at(const cf_fit_t *fit, double size);

/* sum_i w_i alpha(M_i) / sum_i w_i T(M_i) with T from the model, so the
 * share lies in [0, 1].  NaN when !fit->ok or no weight. */
CF_HIDDEN double cf_fit_startup_share(const cf_fit_t *fit, const cf_point_t *pts, size_t n);

/* "startup-bound" above 0.5, "bandwidth-bound" otherwise, "undetermined"
 * for NaN. */
CF_HIDDEN const char *cf_verdict(double startup_share);

#endif
