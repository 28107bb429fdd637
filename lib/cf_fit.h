/* Fitting the Hockney model T(M) = alpha + M/B to per-bin medians.
 *
 * - Relative error: weighted least squares with weights u / T^2 (u =
 *   c / (c + 16) for a bin of c calls, see below), so the small sizes,
 *   whose times are short, still determine alpha when the large sizes
 *   dominate the total time.  T is the fitted time (iteratively
 *   reweighted), which avoids the bias that weights from the measured times
 *   give; the very first fit uses max(T_i, median of T_i and its two
 *   neighbours), under which neither a slow nor a fast outlier has leverage.
 * - Piecewise: up to CF_FIT_MAX_SEG segments (and one more per declared
 *   protocol limit, below), each a line over >= 3
 *   distinct sizes.  Only the first segment's intercept is a startup and
 *   held >= 0 (refit through the origin otherwise); a later segment's line
 *   may cross size 0 anywhere, below 0 too: above a token bucket's burst b
 *   at rate R, T = a + (M - b)/R has intercept a - b/R < 0, and clamping it
 *   would bias that segment's B.
 * - Flat segments: a segment has B = INFINITY (time does not measurably
 *   grow with size, its messages are startup-bound) when its fitted slope
 *   is <= 0, when the 95 % interval of its 1/B reaches 0 (unless its
 *   time grows by half or more across its own sizes: a 3-size segment
 *   has one degree of freedom, t = 12.7), or when the
 *   payload time over its own sizes, (size_hi - size_lo)/B, is below 10 %
 *   of its time at size_hi (MIN_GROWTH: per-bin medians scatter by about
 *   that much, so a smaller growth is noise, as in a segment of 1 to 5
 *   byte messages).  Its alpha is then the relative-error weighted mean
 *   time; its B interval is [1/(upper end of 1/B), INFINITY].
 * - Outliers: in each segment the worst interior point is dropped and the
 *   segment refitted while |log(T_measured / T_fit)| of that point exceeds
 *   both 3 robust standard deviations (1.4826 x median |log residual|) and
 *   0.10; at most a quarter of the segment's interior points, never below
 *   3 sizes.  The first and the last size of every segment are never
 *   dropped: at the ends of the sweep they are the startup and the
 *   asymptotic bandwidth the fit exists to give, next to a break they
 *   place the switch (see cf_fit_predict).
 * - Protocol switches: where and whether they are is decided with bounded
 *   bin weights u = c / (c + 16) instead of the call counts c, which
 *   sweeps make 10 to 100 times larger at small sizes: every size bin has
 *   a say, a bin of very few calls less.  The best segmentation into
 *   1..CF_FIT_MAX_SEG segments is found by dynamic programming over the
 *   break positions, with a cheap robust cost in which the end sizes of a
 *   segment are never outliers.  The fewest segments are kept that no
 *   finer segmentation beats: a finer one wins when the likelihood ratio
 *   of the log residuals, (n - p) ln(cost_coarse / cost_fine) with n the
 *   effective number of bins and p the finer model's parameters, exceeds
 *   SPLIT_PENALTY x ln n per added parameter (3 per segment: startup,
 *   slope, break), and the coarser one misses by more than 2 % rms.  A bin
 *   that both miss by more than the finer model's outlier threshold costs
 *   both the same.  The segments' parameters are then fitted with the same
 *   weights u (with the call counts, the frequent small sizes of a sweep
 *   pinned a segment's line to its lower end).
 * - Calibration of SPLIT_PENALTY (tests/unit/test_fit_sim.c).  Noise model,
 *   measured on this machine (Open MPI 4.1, ob1/vader, 2 ranks, shared
 *   2-core host; 6 runs each of examples/pingpong and coll_sweep
 *   --op allreduce, 8 B..4 MiB): between runs whole curves shift by up to
 *   x1.6 (load from other jobs), which moves every bin alike and does not
 *   matter to a split; within a run, bin medians scatter about a smooth
 *   curve log-normally with sigma 0.10 up to 2 KiB and 0.07 from 4 KiB to
 *   1 MiB (robust estimate from second differences of log T), plus a
 *   heavy tail: about 3 % of bins slow by x1.3 to x3; at 2 and 4 MiB runs
 *   differ by up to x30 (cache and memory contention), which no model of
 *   noise covers.  Simulated with that model (random alpha 1..50 us,
 *   B 0.1..20 GB/s, log-spaced sizes 8 B..4 MiB, sweep-like calls, fixed
 *   seed), SPLIT_PENALTY 1.5 and the refinement below: pure lines split
 *   in 3.2 / 4.7 / 4.0 % of sweeps of 10 / 15 / 23 sizes (5 sizes cannot
 *   split: a segment needs 3); a jump to k x the lower line above an
 *   interior size is found (2+ segments, break within one size) for
 *   k = 1.3 in 12 / 21 / 29 % of sweeps of 10 / 15 / 23 sizes, k = 2 in
 *   59 % (10) and 92 % (23), k = 3 in 80 / 92 / 97 %.  On a quiet machine
 *   (no other job; 6 runs each of pingpong, allreduce and TCP pingpong)
 *   the scatter is smaller, sigma 0.05 to 0.08, and the same rule finds
 *   x1.3 in 17 / 35 / 50 % and x3 in 87 / 95 / 98 %, pure lines split in
 *   2.8 / 3.4 / 4.0 %.  Finding 95 % of x1.3 jumps in 10 sizes is out of
 *   reach at this noise for any rule: the likelihood-ratio test knowing
 *   the noise exactly, without slow bins, at 5 % false splits, finds
 *   51 / 59 / 63 % in 10 / 15 / 23 sizes (test_bound_of_any_rule), and
 *   92 % in 10 sizes only at half the noise.  With the slow bins, a
 *   variant of this rule that finds even 20 % of them splits pure lines
 *   in more than 10 % of sweeps (a x1.3 step weighs like 3 bins of noise,
 *   and on the knee between startup- and bandwidth-bound sizes one line
 *   absorbs it to 4 % rms).  The rule keeps pure lines whole (< 5 %)
 *   and finds the eager -> rendezvous switches of this machine (x3.5 to
 *   x4).  Above a token bucket's burst (23 sizes) the asymptotic B is
 *   unbiased (mean error 0 %) and within 10 % of R in 82 % of single
 *   sweeps.
 * - Refinement, by how the model predicts: where the chosen segments miss
 *   two neighbouring kept bins on the same side by more than the report's
 *   tolerance (25 %; 15 % from 128 KiB), the fewest finer segments that
 *   bring every kept bin within it are taken.  Noise, even a slow bin,
 *   does not miss twice in a row; a switch left inside a segment does.
 *   Where no finer model brings every bin within it, or the sweep bends
 *   (its first and last kept bins missed on the same side, one beyond the
 *   tolerance, the other beyond half of it: a curve growing like M^0.72),
 *   the fewest finer segments that predict clearly better are taken: fewer
 *   bins beyond the tolerance, worst and rms bin errors each at most 0.6 of
 *   the coarser model's, and a likelihood ratio that pays the price of one
 *   parameter.  Simulated (test_fit_sim), pure lines still split in
 *   3.4 / 4.7 / 4.2 % of sweeps of 10 / 15 / 23 sizes (3.2 / 4.7 / 4.0 %
 *   before); a 10-size M^0.72 sweep from 32 KiB to 2 MiB with 8 % noise
 *   predicts 2 MiB within 25 % in 199 of 200 sweeps (128 before).
 * - Declared protocol limits (cf_fit_run_limits): where the MPI library
 *   states the size of a switch (an eager limit), the model is selected
 *   twice, once among segmentations with a break at every limit (the test
 *   above then decides only about further breaks; each limit adds a
 *   segment to the CF_FIT_MAX_SEG allowed, as far as 3 sizes a segment
 *   allow: a limit that changes nothing should not take the segment a
 *   shaper's knee needs), once without them.  The limits stand unless
 *   the model that ignores them is better by the test's price of a
 *   segment (SEG_PARAMS parameters).  Simulated with the noise above
 *   (test_declared_limit): a x1.3 jump at a declared limit is found in
 *   97.8 / 99.2 / 99.2 % of sweeps of 10 / 15 / 23 sizes; where nothing
 *   happens at the limit, the asymptotic B is within 25 % in 98.4 % of
 *   10-size sweeps (99.2 % without the limit).
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
/* Declared protocol limits a fit may break at; each may add a segment to
 * the CF_FIT_MAX_SEG the data can ask for. */
#define CF_FIT_MAX_LIMITS 3
#define CF_FIT_SEG_CAP (CF_FIT_MAX_SEG + CF_FIT_MAX_LIMITS)

typedef struct {
    double size_lo, size_hi; /* sizes of the kept points in this segment */
    /* The segment's line T = alpha_s + M / bandwidth_Bps.  Only seg[0]'s
     * alpha is a startup (>= 0); a later one is the line's value at size 0
     * and may be negative.  bandwidth_Bps > 0, INFINITY for a flat
     * segment (see above). */
    double alpha_s, bandwidth_Bps;
    double alpha_ci[2], bandwidth_ci[2]; /* 95 %; an open upper end is INFINITY */
    int npoints;                         /* kept points */
    int nsizes;                          /* distinct sizes among them */
} cf_segment_t;

typedef struct {
    int ok; /* 1: numbers valid; 0: fewer than 3 distinct sizes */
    /* Headline numbers, from the two ends of the curve where each term
     * dominates: alpha_s is the startup, seg[0].alpha_s (small sizes);
     * bandwidth_Bps the asymptotic bandwidth, seg[nseg-1].bandwidth_Bps
     * (largest sizes); their 95 % intervals are those segments'.
     * n_half_bytes: where the payload costs as much as the startup,
     * T(n_half) = 2 alpha_s under the piecewise model (alpha_s x
     * bandwidth_Bps with one segment; INFINITY when the curve never gets
     * there).  cf_fit_predict and cf_fit_alpha_at give per-size
     * numbers, which follow the segments. */
    double alpha_s, bandwidth_Bps, n_half_bytes;
    double alpha_ci[2], bandwidth_ci[2]; /* 95 %; an open upper end is INFINITY */
    /* How well the piecewise model predicts the kept points: r2 of the
     * weighted relative-error regression (weights u / T_pred^2);
     * err_rms and err_max the rms and the largest |T_pred / T_meas - 1|,
     * every kept bin counting once whatever its calls. */
    double r2, err_rms, err_max;
    /* For reference only: one line through every kept point (the old
     * headline); it can miss both ends when there are segments. */
    double line_alpha_s, line_bandwidth_Bps, line_r2;
    /* Whether the headline numbers can be quoted as measured, and why not
     * ("" when certain; static strings).  alpha_uncertain: its interval is
     * open, reaches 0 ("interval reaches 0": alpha is not told from 0), or
     * hi > 2 lo + 10 ns (timers do not resolve finer startups).
     * bandwidth_uncertain: B is infinite ("time does not grow with size"),
     * its interval is open, the last segment has fewer than 3 sizes or
     * spans less than a factor 4 in size, or hi > 2 lo.  Both are set
     * with "fewer than 3 sizes" when !ok. */
    int alpha_uncertain, bandwidth_uncertain;
    const char *alpha_why, *bandwidth_why;
    double size_lo, size_hi;          /* size range that supports the fit */
    int npoints, noutliers, nseg;     /* npoints: kept points */
    /* The declared protocol limits the segments break at (ascending; see
     * cf_fit_run_limits); 0 without them. */
    int nlimits;
    double limit_bytes[CF_FIT_MAX_LIMITS];
    /* Why limits given that fall inside the sizes are not among those
     * (static string), NULL when all are or none was given. */
    const char *limits_unused_why;
    cf_segment_t seg[CF_FIT_SEG_CAP]; /* ascending sizes */
} cf_fit_t;

/* CF_OK; CF_ERR_NODATA with fit_p->ok = 0 and size_lo, size_hi, npoints
 * (usable points) filled when there are fewer than 3 distinct sizes;
 * CF_ERR_INVALID for NULL, NaN or negative inputs; CF_ERR_NOMEM. */
CF_HIDDEN int cf_fit_hockney(const cf_point_t *pts, size_t n, cf_fit_t *fit_p);
/* cf_fit_hockney, and which inputs the fit used: kept_p (NULL or n bytes)
 * gets, per input index, 1 for a point in the final fit, 0 for one dropped
 * as an outlier or ignored (weight or time 0); all 0 on CF_ERR_NODATA,
 * untouched on CF_ERR_INVALID. */
CF_HIDDEN int cf_fit_run(const cf_point_t *pts, size_t n, cf_fit_t *fit_p, unsigned char *kept_p);
/* cf_fit_run with the sizes at which the library declares a protocol
 * switch (its eager limit, say): the fit prefers models in which no
 * segment spans one of them (a size below it and another above), so that
 * each protocol gets its own line however small the jump, without a test
 * that a sweep's few noisy sizes can fail; see above for when the data
 * overrule it.  A limit may count the transport's headers: a message of
 * the limit's size, or within 128 bytes below it, may go either way.  A limit outside the sizes
 * does not bind; where a side would keep fewer than 3 sizes, the limit
 * with the thinnest side is let go (fit_p->nlimits: those kept).  Segments
 * may still be added between limits as cf_fit_run adds them. */
CF_HIDDEN int cf_fit_run_limits(const cf_point_t *pts, size_t n, const double *limits, size_t nlimits,
                                cf_fit_t *fit_p, unsigned char *kept_p);
/* The segment whose line covers size (as cf_fit_predict picks it); NULL when !fit->ok. */
CF_HIDDEN const cf_segment_t *cf_fit_segment_at(const cf_fit_t *fit, double size);

/* Predicted time of one message under the segment covering size (the
 * nearest segment outside the fitted range; between two segments the
 * switch is at a declared limit that lies between their edges, else at the
 * geometric mean of the edges).  NaN when !fit->ok. */
CF_HIDDEN double cf_fit_predict(const cf_fit_t *fit, double size);
/* Startup time of a message of that size: its segment's alpha, or the
 * startup seg[0].alpha_s when that alpha is negative (a line above a
 * burst, not a startup); never more than cf_fit_predict. */
CF_HIDDEN double cf_fit_alpha_at(const cf_fit_t *fit, double size);

/* sum_i w_i alpha(M_i) / sum_i w_i T(M_i) with T from the model, so the
 * share lies in [0, 1].  NaN when !fit->ok or no weight. */
CF_HIDDEN double cf_fit_startup_share(const cf_fit_t *fit, const cf_point_t *pts, size_t n);

/* "startup-bound" above 0.5, "bandwidth-bound" otherwise, "undetermined"
 * for NaN. */
CF_HIDDEN const char *cf_verdict(double startup_share);

#endif
