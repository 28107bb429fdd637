#include "cf_fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Robust scale: 1.4826 x median absolute deviation estimates a Gaussian
 * sigma; 3 sigma keeps ordinary jitter, flags a preempted or cold bin. */
#define OUTLIER_K 3.0
#define MAD_TO_SIGMA 1.4826
/* Per-bin medians on this machine scatter by 7 to 10 % (see cf_fit.h), so
 * a point this close to its line is never an outlier, even when the rest
 * of a short segment happen to fit more closely. */
#define OUTLIER_FLOOR 0.10
#define MIN_DISTINCT 3
/* Growth of time across a segment below which its slope is noise (the
 * per-bin scatter is 7 to 10 %), see slope_significant. */
#define MIN_GROWTH 0.10
/* Parameters a segment adds: startup, slope and the break before it. */
#define SEG_PARAMS 3.0
/* The split rule, calibrated by simulation (tests/unit/test_fit_sim.c, the
 * numbers are in cf_fit.h).  Overridable at compile time only so that a
 * calibration build can sweep them. */
#ifndef SPLIT_PENALTY
#define SPLIT_PENALTY 1.5
#endif
/* A finer model taken by how it predicts halves neither error, but cuts
 * both its worst and its rms bin error to at most this share. */
#define REFINE_GAIN 0.6
/* and pays the likelihood-ratio price of this many parameters */
#define REFINE_PARAMS 1.0
#ifndef SPLIT_FLOOR
#define SPLIT_FLOOR 0.02
#endif
/* Calls at which a bin's median is as uncertain as the model itself, see
 * decision_weight. */
#define CALLS_HALF 16.0
/* Share of the median bin's calls under which a bin is a stray, see
 * set_param_weights. */
#define STRAY_SHARE 0.01
/* Startups closer than this are not told apart by timers (MPI_Wtime
 * resolves 1 to 30 ns), so an alpha interval is not called wide for it. */
#define ALPHA_SLACK_S 10e-9

/* What a fit is for: deciding the segmentation (lines as they fit) or
 * the reported parameters (a slope that says nothing about payload time
 * refitted flat).  Both weight a bin by its bounded weight u, see
 * decision_weight. */
typedef enum { W_PARAMS, W_DECIDE } wkind_t;

/* What the intercept of a line may do.  The first segment's intercept is
 * the startup and cannot be negative; a later segment's is only where its
 * line meets size 0 (negative above a token bucket's burst, larger than
 * the startup above a rendezvous switch).  A flat line has no slope at
 * all: its size range shows no measurable payload time. */
typedef enum { A_STARTUP, A_FREE, A_FLAT } acon_t;

typedef struct {
    double x, y, c; /* size, time, call count */
    double u;       /* bounded weight of the bin, see decision_weight */
    double up;      /* its weight in the parameters, see set_param_weights */
    double s0;      /* 1 / T^2 before any line exists, see set_start_scale */
    size_t idx;     /* index of the input point */
} obs_t;

/* Weighted line with its uncertainty.  b is 1/B in s/byte, 0 when the
 * line is flat.  The confidence interval of each coefficient is centre +-
 * t(dof) * se, taken from the constrained fit when that coefficient was
 * estimated, from the unconstrained one when it was pinned at its bound
 * (so the interval shows how far the data push past it). */
typedef struct {
    double a, b;
    double a_c, se_a, b_c, se_b;
    int dof_a, dof_b;
    double r2;
} line_t;

typedef struct {
    size_t lo, hi; /* index range into the sorted observations */
    line_t line;
    double thr;    /* outlier threshold in |log| units */
} seg_t;

/* Two-sided 95 % Student t quantiles. */
static double t975(int dof)
{
    static const double tab[] = {
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
        2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    static const struct {
        double dof, t;
    } tail[] = {{30, 2.042}, {40, 2.021}, {60, 2.000}, {120, 1.980}};

    if (dof < 1)
        return INFINITY;
    if (dof <= 30)
        return tab[dof - 1];
    /* t is close to linear in 1/dof. */
    for (size_t i = 0; i + 1 < CF_ARRAY_LEN(tail); i++) {
        if (dof <= tail[i + 1].dof) {
            double u0 = 1.0 / tail[i].dof, u1 = 1.0 / tail[i + 1].dof, u = 1.0 / dof;
            return tail[i].t + (tail[i + 1].t - tail[i].t) * (u - u0) / (u1 - u0);
        }
    }
    return 1.960 + (1.980 - 1.960) * 120.0 / dof;
}

static int cmp_obs(const void *pa, const void *pb)
{
    const obs_t *a = pa, *b = pb;
    return (a->x > b->x) - (a->x < b->x);
}

static size_t count_distinct(const obs_t *o, const unsigned char *keep, size_t lo, size_t hi,
                             size_t skip)
{
    size_t nd = 0;
    double last = -1.0;
    for (size_t i = lo; i < hi; i++) {
        if (!keep[i] || i == skip)
            continue;
        if (nd == 0 || o[i].x != last)
            nd++;
        last = o[i].x;
    }
    return nd;
}

static double line_at(const line_t *L, double x)
{
    return L->a + L->b * x;
}

/* Log residual: symmetric for slow and fast outliers, unlike the relative
 * error, which is bounded by 1 on the slow side. */
static double log_resid(double y, double pred)
{
    if (!(pred > 0.0))
        return 1e3;
    return log(y / pred);
}

static double weight(const obs_t *o, size_t i, const line_t *ref, wkind_t wk)
{
    double base = wk == W_PARAMS ? o[i].up : o[i].u, t;
    if (ref == NULL)
        return base * o[i].s0;
    t = line_at(ref, o[i].x);
    if (!(t > 0))
        return base * o[i].s0;
    return base / (t * t);
}

/* Least squares of y = a + b x in relative error: weights u / t^2 (up /
 * t^2 for the parameters) with t the reference line's time, or the start scale without
 * one; the intercept as ac allows. */
static int wls_once(const obs_t *o, const unsigned char *keep, size_t lo, size_t hi,
                    const line_t *ref, wkind_t wk, acon_t ac, line_t *L)
{
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0, xm, ym;
    double au, bu, sse_u = 0, s2u, se_au, se_bu;
    size_t nk = 0;

    for (size_t i = lo; i < hi; i++) {
        if (!keep[i])
            continue;
        double w = weight(o, i, ref, wk);
        sw += w;
        sx += w * o[i].x;
        sy += w * o[i].y;
        nk++;
    }
    if (nk < 3 || !(sw > 0))
        return -1;
    xm = sx / sw;
    ym = sy / sw;
    /* Centred sums: sizes span eight decades. */
    for (size_t i = lo; i < hi; i++) {
        if (!keep[i])
            continue;
        double w = weight(o, i, ref, wk), dx = o[i].x - xm, dy = o[i].y - ym;
        sxx += w * dx * dx;
        sxy += w * dx * dy;
        syy += w * dy * dy;
    }
    if (!(sxx > 0))
        return -1;
    bu = sxy / sxx;
    au = ym - bu * xm;
    for (size_t i = lo; i < hi; i++) {
        if (!keep[i])
            continue;
        double w = weight(o, i, ref, wk), r = o[i].y - au - bu * o[i].x;
        sse_u += w * r * r;
    }
    s2u = sse_u / (double)(nk - 2);
    se_bu = sqrt(s2u / sxx);
    se_au = sqrt(s2u * (1.0 / sw + xm * xm / sxx));

    if (bu <= 0 || ac == A_FLAT) {
        /* Constant time, unbounded B; the slope's interval stays that of
         * the free line, so its B interval shows what the data allow. */
        L->a = ym;
        L->b = 0;
        L->a_c = ym;
        L->se_a = sqrt(syy / (double)(nk - 1) / sw);
        L->dof_a = (int)nk - 1;
        L->b_c = bu;
        L->se_b = se_bu;
        L->dof_b = (int)nk - 2;
    } else if (au < 0 && ac == A_STARTUP) {
        /* A negative startup is unphysical: line through the origin. */
        double s0xx = 0, s0xy = 0, sse0 = 0, b0;
        for (size_t i = lo; i < hi; i++) {
            if (!keep[i])
                continue;
            double w = weight(o, i, ref, wk);
            s0xx += w * o[i].x * o[i].x;
            s0xy += w * o[i].x * o[i].y;
        }
        b0 = s0xy / s0xx;
        for (size_t i = lo; i < hi; i++) {
            if (!keep[i])
                continue;
            double w = weight(o, i, ref, wk), r = o[i].y - b0 * o[i].x;
            sse0 += w * r * r;
        }
        L->a = 0;
        L->b = b0;
        L->a_c = au;
        L->se_a = se_au;
        L->dof_a = (int)nk - 2;
        L->b_c = b0;
        L->se_b = sqrt(sse0 / (double)(nk - 1) / s0xx);
        L->dof_b = (int)nk - 1;
    } else {
        L->a = au;
        L->b = bu;
        L->a_c = au;
        L->se_a = se_au;
        L->b_c = bu;
        L->se_b = se_bu;
        L->dof_a = L->dof_b = (int)nk - 2;
    }

    {
        double sse = 0;
        for (size_t i = lo; i < hi; i++) {
            if (!keep[i])
                continue;
            double w = weight(o, i, ref, wk), r = o[i].y - line_at(L, o[i].x);
            sse += w * r * r;
        }
        L->r2 = syy > 0 ? 1.0 - sse / syy : 1.0;
    }
    return 0;
}

/* Weights from measured times favour the points that happened to come out
 * fast and bias B upwards by about the noise variance; reweighting with the
 * fitted times (iteratively reweighted least squares) removes that. */
static int wls(const obs_t *o, const unsigned char *keep, size_t lo, size_t hi, wkind_t wk,
               acon_t ac, line_t *L)
{
    line_t ref;
    if (wls_once(o, keep, lo, hi, NULL, wk, ac, L) != 0)
        return -1;
    for (int it = 0; it < 3; it++) {
        ref = *L;
        if (wls_once(o, keep, lo, hi, &ref, wk, ac, L) != 0)
            return -1;
    }
    return 0;
}

/* Whether a fitted slope says that time grows with size.  It does not
 * when the payload time over the segment's own sizes is below MIN_GROWTH
 * of the time (timings do not resolve it: the slope of a segment over 1 to
 * 5 byte messages is noise, however small its standard error), nor when
 * the 95 % interval of 1/B reaches 0 (the data allow a flat line) unless
 * the time at least doubles across the segment: with 3 sizes the interval
 * has one degree of freedom (t = 12.7) and would call flat what plainly
 * grows; its width still shows in the B interval. */
static int slope_significant(const line_t *L, double x_lo, double x_hi)
{
    double t_hi = line_at(L, x_hi), growth;
    if (!(L->b > 0) || !(t_hi > 0))
        return 0;
    growth = L->b * (x_hi - x_lo) / t_hi;
    if (growth < MIN_GROWTH)
        return 0;
    return L->b_c - t975(L->dof_b) * L->se_b > 0 || growth >= 0.5;
}

/* k-th smallest of v[0..n) (quickselect; reorders v). */
static double select_kth(double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        double pivot = v[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                double t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            break;
    }
    return v[k];
}

static double median_inplace(double *v, size_t n)
{
    double hi = select_kth(v, n, n / 2);
    if (n % 2)
        return hi;
    double lo = v[0]; /* selection left everything below n/2 at most hi */
    for (size_t i = 1; i < n / 2; i++)
        lo = fmax(lo, v[i]);
    return 0.5 * (lo + hi);
}

/* Robust scale threshold of the kept residuals of the given lines. */
static double noise_threshold(const obs_t *o, const unsigned char *keep, const seg_t *segs,
                              size_t nseg, double *scratch)
{
    size_t m = 0;
    for (size_t s = 0; s < nseg; s++)
        for (size_t i = segs[s].lo; i < segs[s].hi; i++)
            if (keep[i])
                scratch[m++] = fabs(log_resid(o[i].y, line_at(&segs[s].line, o[i].x)));
    if (m == 0)
        return OUTLIER_FLOOR;
    return fmax(OUTLIER_K * MAD_TO_SIGMA * median_inplace(scratch, m), OUTLIER_FLOOR);
}

typedef struct {
    size_t nseg;
    seg_t seg[CF_FIT_SEG_CAP];
} model_t;

/* Log residual of every point under the model (its segments cover all). */
static void model_resid(const obs_t *o, const model_t *mod, double *r)
{
    for (size_t s = 0; s < mod->nseg; s++)
        for (size_t i = mod->seg[s].lo; i < mod->seg[s].hi; i++)
            r[i] = log_resid(o[i].y, line_at(&mod->seg[s].line, o[i].x));
}

/* Fit [lo, hi), dropping the worst interior point while it is beyond the
 * threshold; writes keep[lo..hi).  Trimming starts with the
 * outlier-resistant start weights (set_start_scale); once nothing stands
 * out, it goes on with the unbiased weights from the fitted times.
 *
 * Only the points in [pin_lo, pin_hi) can be dropped: never the first or
 * the last size of a segment.  At the ends of the whole sweep those are
 * the numbers the fit exists to give (the smallest sizes the startup, the
 * largest the asymptotic bandwidth); next to a break the break search
 * gave them to this line (see seg_cost), and without them the switch
 * between the segments (cf_fit_predict) would move and put them under the
 * other line.  At most a quarter of the interior can go, and never below
 * MIN_DISTINCT sizes. */
static int fit_robust(const obs_t *o, size_t lo, size_t hi, size_t pin_lo, size_t pin_hi,
                      wkind_t wk, acon_t ac, unsigned char *keep, double *scratch, seg_t *seg)
{
    size_t maxdrop = (pin_hi > pin_lo ? pin_hi - pin_lo : 0) / 4, ndrop = 0;
    int reweighted = 0;

    memset(keep + lo, 1, hi - lo);
    seg->lo = lo;
    seg->hi = hi;
    for (;;) {
        size_t worst = hi;
        double rworst = -1;
        int rc = reweighted ? wls(o, keep, lo, hi, wk, ac, &seg->line)
                            : wls_once(o, keep, lo, hi, NULL, wk, ac, &seg->line);

        if (rc != 0)
            return -1;
        seg->thr = noise_threshold(o, keep, seg, 1, scratch);
        for (size_t i = pin_lo; i < pin_hi; i++) {
            if (!keep[i])
                continue;
            double r = fabs(log_resid(o[i].y, line_at(&seg->line, o[i].x)));
            if (r > rworst) {
                rworst = r;
                worst = i;
            }
        }
        if (ndrop < maxdrop && rworst > seg->thr &&
            count_distinct(o, keep, lo, hi, worst) >= MIN_DISTINCT) {
            keep[worst] = 0;
            ndrop++;
            continue;
        }
        if (reweighted)
            break;
        reweighted = 1;
    }
    /* A slope that says nothing about payload time would turn the noise
     * of a flat stretch into a bandwidth: refit as a constant.  Only for
     * the parameters: the segmentation compares lines as they fit. */
    if (wk == W_PARAMS && !slope_significant(&seg->line, o[lo].x, o[hi - 1].x))
        return wls(o, keep, lo, hi, wk, A_FLAT, &seg->line);
    return 0;
}

typedef struct {
    const obs_t *o;
    size_t m, d;          /* points, distinct sizes */
    size_t *grp;          /* grp[u]: first point of the u-th distinct size; grp[d] = m */
    double *cost;         /* (d+1)^2 cache of segment costs, NaN until computed */
    double *best;         /* best[k * (d+1) + v]: k+1 segments over sizes [0, v) */
    size_t *arg;          /* where the last of those segments starts */
    unsigned char *tkeep; /* scratch flags */
    double *scratch;
    double *res;          /* 2 m: log residuals of two models */
    const double *lim;    /* the protocol limits a segment may not straddle */
    size_t nlim;
} work_t;

/* A transport's limit may or may not count its own headers (Open MPI's
 * eager limits do: a message of exactly 4096 bytes is past vader's 4096),
 * so a size within a header's length below a limit L, or equal to it, may
 * join either side: within LIMIT_HEADER bytes, a quarter of L for small
 * limits.  One further below is below it, one over L above. */
#define LIMIT_HEADER 128.0

static int below_limit(double x, double L)
{
    return x < L - fmin(LIMIT_HEADER, 0.25 * L);
}

/* Whether the distinct sizes [u, v) straddle a limit: one of them is
 * below it, another above. */
static int straddles(const work_t *w, size_t u, size_t v)
{
    double lo = w->o[w->grp[u]].x, hi = w->o[w->grp[v - 1]].x;

    for (size_t j = 0; j < w->nlim; j++)
        if (below_limit(lo, w->lim[j]) && hi > w->lim[j])
            return 1;
    return 0;
}

/* Cost of one segment over the distinct sizes [u, v) for the break search,
 * which looks at O(d^2) segments: bounded start weights and two rounds of
 * clipping at the robust threshold (at most a quarter of the points),
 * O(length) instead of the one-by-one trimming of fit_robust.  The first
 * and last size of the segment are never clipped and cost in full, as in
 * fit_robust: otherwise a segment that fits its own points closely could
 * take the first bin of the next protocol as a cheap outlier and put the
 * break one size off; now the bin goes to the side whose line explains
 * it.  Only the first segment's intercept is held >= 0. */
static double seg_cost(work_t *w, size_t u, size_t v)
{
    double *c = &w->cost[u * (w->d + 1) + v];
    const obs_t *o = w->o;
    size_t lo, hi, len, pin_lo, pin_hi;
    acon_t ac = u == 0 ? A_STARTUP : A_FREE;
    line_t L;
    double thr = OUTLIER_FLOOR, cost = 0;

    if (!isnan(*c))
        return *c;
    if (v < u + MIN_DISTINCT || straddles(w, u, v)) {
        *c = INFINITY;
        return *c;
    }
    lo = w->grp[u];
    hi = w->grp[v];
    len = hi - lo;
    pin_lo = w->grp[u + 1]; /* [lo, pin_lo) and [pin_hi, hi) are never clipped */
    pin_hi = w->grp[v - 1];
    memset(w->tkeep + lo, 1, len);
    for (int round = 0; round < 2; round++) {
        double cut;
        if (wls_once(o, w->tkeep, lo, hi, NULL, W_DECIDE, ac, &L) != 0) {
            *c = INFINITY;
            return *c;
        }
        for (size_t i = lo; i < hi; i++)
            w->scratch[i - lo] = fabs(log_resid(o[i].y, line_at(&L, o[i].x)));
        thr = fmax(OUTLIER_K * MAD_TO_SIGMA * median_inplace(w->scratch, len), OUTLIER_FLOOR);
        if (round == 1)
            break;
        cut = fmax(thr, select_kth(w->scratch, len, len - 1 - len / 4));
        for (size_t i = lo; i < hi; i++)
            w->tkeep[i] = i < pin_lo || i >= pin_hi ||
                          fabs(log_resid(o[i].y, line_at(&L, o[i].x))) <= cut;
        if (count_distinct(o, w->tkeep, lo, hi, (size_t)-1) < MIN_DISTINCT)
            memset(w->tkeep + lo, 1, len);
    }
    for (size_t i = lo; i < hi; i++) {
        double r = log_resid(o[i].y, line_at(&L, o[i].x));
        cost += o[i].u * (i < pin_lo || i >= pin_hi ? r * r : fmin(r * r, thr * thr));
    }
    *c = cost;
    return *c;
}

/* Optimal segmentations into 1..kmax segments by dynamic programming;
 * unlike greedy splitting, a first cut in the wrong place (between two
 * protocols that look alike) cannot spoil the later ones. */
static void segment_all(work_t *w, size_t kmax)
{
    size_t d = w->d;

    for (size_t v = 0; v <= d; v++) {
        w->best[v] = seg_cost(w, 0, v);
        w->arg[v] = 0;
    }
    for (size_t k = 1; k < kmax; k++) {
        for (size_t v = 0; v <= d; v++) {
            double *b = &w->best[k * (d + 1) + v];
            *b = INFINITY;
            w->arg[k * (d + 1) + v] = 0;
            /* The last segment needs MIN_DISTINCT sizes, the k before it as many each. */
            for (size_t u = k * MIN_DISTINCT; u + MIN_DISTINCT <= v; u++) {
                double c = w->best[(k - 1) * (d + 1) + u];
                if (isinf(c))
                    continue;
                c += seg_cost(w, u, v);
                if (c < *b) {
                    *b = c;
                    w->arg[k * (d + 1) + v] = u;
                }
            }
        }
    }
}

/* Refits the optimal (k+1)-segment model for the purpose wk; writes
 * keep[0..m). */
static int build_model(work_t *w, size_t k, wkind_t wk, model_t *mod, unsigned char *keep)
{
    size_t v = w->d;

    if (isinf(w->best[k * (w->d + 1) + v]))
        return -1;
    mod->nseg = k + 1;
    for (size_t s = k + 1; s-- > 0;) {
        size_t u = w->arg[s * (w->d + 1) + v];
        if (fit_robust(w->o, w->grp[u], w->grp[v], w->grp[u + 1], w->grp[v - 1], wk,
                       s == 0 ? A_STARTUP : A_FREE, keep, w->scratch, &mod->seg[s]) != 0)
            return -1;
        v = u;
    }
    return 0;
}

/* Whether the finer model fine explains the data significantly better
 * than coarse, both fitted with the bounded weights u.
 *
 * Cost: sum of u x (log residual)^2 over every bin.  A bin that both
 * models miss by more than the finer model's outlier threshold costs both
 * the threshold: it says nothing about which is better, and one wild bin
 * cannot buy a segment.  A bin that only one of them misses counts in
 * full, however far off: a protocol switch that the coarser model can only
 * absorb by trimming a run of bins as outliers weighs what it is off.
 *
 * Test: likelihood ratio of Gaussian log residuals with unknown variance,
 * (n - p) ln(cost_coarse / cost_fine) with n the effective number of bins,
 * (sum u)^2 / sum u^2, and p the finer model's parameters (a startup and a
 * slope per segment, a position per break): n - p, the residual degrees of
 * freedom, keeps the test as strict with 10 sizes as with 50.  Each added
 * segment must pay SPLIT_PENALTY x ln n per parameter, and the coarser
 * model must miss by more than SPLIT_FLOOR rms; both were calibrated by
 * simulating sweeps with this machine's noise (cf_fit.h). */
static int model_pays(work_t *w, const model_t *coarse, const model_t *fine, const unsigned char *fine_keep,
                      double extra)
{
    const obs_t *o = w->o;
    double thr = noise_threshold(o, fine_keep, fine->seg, fine->nseg, w->scratch);
    double *rc = w->res, *rf = w->res + w->m;
    double cc = 0, cf = 0, su = 0, su2 = 0, n, dof;

    model_resid(o, coarse, rc);
    model_resid(o, fine, rf);
    for (size_t i = 0; i < w->m; i++) {
        double ec = rc[i] * rc[i], ef = rf[i] * rf[i];
        if (ec > thr * thr && ef > thr * thr)
            ec = ef = thr * thr;
        cc += o[i].u * ec;
        cf += o[i].u * ef;
        su += o[i].u;
        su2 += o[i].u * o[i].u;
    }
    if (!(su > 0) || !(sqrt(cc / su) > SPLIT_FLOOR))
        return 0;
    n = su * su / su2;
    dof = n - (SEG_PARAMS * (double)fine->nseg - 1.0);
    if (!(dof > 0))
        return 0;
    if (!(cf > 0))
        return 1;
    return dof * log(cc / cf) > SPLIT_PENALTY * extra * log(n);
}

static int finer_pays(work_t *w, const model_t *coarse, const model_t *fine, const unsigned char *fine_keep)
{
    return model_pays(w, coarse, fine, fine_keep, SEG_PARAMS * (double)(fine->nseg - coarse->nseg));
}

/* How far a bin's prediction may be off, as the report is held to it:
 * 25 %, 15 % from 128 KiB, where timings are steadier. */
static double tolerance(double size)
{
    return log(size >= 131072.0 ? 1.15 : 1.25);
}

/* Two neighbouring kept bins (by size) off by more than the tolerance on
 * the same side. */
static int misses_run(work_t *w, const model_t *mod, const unsigned char *keep)
{
    const obs_t *o = w->o;
    double *r = w->res, prev = 0;
    int have = 0;

    model_resid(o, mod, r);
    for (size_t i = 0; i < w->m; i++) {
        double cur;
        if (!keep[i])
            continue;
        cur = fabs(r[i]) > tolerance(o[i].x) ? (r[i] > 0 ? 1 : -1) : 0;
        if (have && cur != 0 && cur == prev)
            return 1;
        prev = cur;
        have = 1;
    }
    return 0;
}

/* The first and the last kept bins off on the same side, one by more than
 * the tolerance, the other by more than half of it: the sweep bends away from any one line of the segments,
 * as T growing like M^0.72 does (over at both ends, under in between). */
static int misses_ends(work_t *w, const model_t *mod, const unsigned char *keep)
{
    const obs_t *o = w->o;
    double *r = w->res;
    size_t first = w->m, last = w->m;

    model_resid(o, mod, r);
    for (size_t i = 0; i < w->m; i++)
        if (keep[i]) {
            if (first == w->m)
                first = i;
            last = i;
        }
    if (first == w->m || first == last)
        return 0;
    /* one end beyond the tolerance, the other beyond half of it */
    return (r[first] > 0) == (r[last] > 0) &&
           fmax(fabs(r[first]) / tolerance(o[first].x), fabs(r[last]) / tolerance(o[last].x)) > 1.0 &&
           fmin(fabs(r[first]) / tolerance(o[first].x), fabs(r[last]) / tolerance(o[last].x)) > 0.5;
}

/* Kept bins off by more than the tolerance. */
static size_t misses_any(work_t *w, const model_t *mod, const unsigned char *keep)
{
    const obs_t *o = w->o;
    double *r = w->res;
    size_t n = 0;

    model_resid(o, mod, r);
    for (size_t i = 0; i < w->m; i++)
        n += keep[i] && fabs(r[i]) > tolerance(o[i].x);
    return n;
}

/* Worst and rms |log residual| over the kept bins. */
static void miss_stats(work_t *w, const model_t *mod, const unsigned char *keep, double *worst_p,
                       double *rms_p)
{
    double *r = w->res, worst = 0, e2 = 0;
    size_t n = 0;

    model_resid(w->o, mod, r);
    for (size_t i = 0; i < w->m; i++) {
        if (!keep[i])
            continue;
        worst = fmax(worst, fabs(r[i]));
        e2 += r[i] * r[i];
        n++;
    }
    *worst_p = worst;
    *rms_p = n > 0 ? sqrt(e2 / (double)n) : 0.0;
}

/* A finer model that predicts clearly better overall, though it may still
 * miss a bin: its worst and its rms bin errors both at most REFINE_GAIN of
 * the coarser model's, fewer bins beyond the tolerance, and the likelihood
 * ratio paying the price of one segment (a curve that bends smoothly, like
 * a shared-memory all-reduce growing as M^0.72, is fitted better by every
 * added segment and never exactly by any). */
static int predicts_better(work_t *w, const model_t *coarse, const unsigned char *ckeep,
                           const model_t *fine, const unsigned char *fkeep)
{
    double cw, cr, fw, fr;
    size_t cm = misses_any(w, coarse, ckeep), fm = misses_any(w, fine, fkeep);

    miss_stats(w, coarse, ckeep, &cw, &cr);
    miss_stats(w, fine, fkeep, &fw, &fr);
    return fm < cm && fw <= REFINE_GAIN * cw && fr <= REFINE_GAIN * cr &&
           model_pays(w, coarse, fine, fkeep, REFINE_PARAMS);
}

static double median3(double a, double b, double c)
{
    return fmax(fmin(a, b), fmin(fmax(a, b), c));
}

/* Before any line exists, weight by the larger of a point's time and the
 * median of it and its neighbours: a slow outlier then weighs little (its
 * own time is large) and a fast one no more than its neighbours, so
 * neither drags the first line towards itself. */
static void set_start_scale(obs_t *o, size_t m)
{
    for (size_t i = 0; i < m; i++) {
        double med;
        if (m < 3)
            med = o[i].y;
        else if (i == 0)
            med = median3(o[0].y, o[1].y, o[2].y);
        else if (i == m - 1)
            med = median3(o[m - 3].y, o[m - 2].y, o[m - 1].y);
        else
            med = median3(o[i - 1].y, o[i].y, o[i + 1].y);
        med = fmax(o[i].y, med);
        o[i].s0 = 1.0 / (med * med);
    }
}

/* The log of a bin's median time scatters by about 1.25 s / sqrt(calls)
 * from the jitter s of single calls (about 0.15 in sweeps), on top of the
 * few per cent by which real timings depart from any piecewise line
 * however many calls are timed.  The inverse of that variance, c / (c +
 * CALLS_HALF) up to a constant (the two parts are equal at about 16
 * calls), is the weight of a bin in the segmentation: it grows with the
 * calls but is bounded, so the small sizes, which sweeps repeat 10 to 100
 * times more often, do not decide alone whether and where the protocol
 * switches, while a bin of a few calls still counts less.  Equal calls
 * give equal weights. */
static double decision_weight(double calls)
{
    return calls / (calls + CALLS_HALF);
}

/* The weights of the reported parameters: u, except that a bin of under
 * STRAY_SHARE of the median bin's calls counts in proportion to its calls.
 * Such a bin is a stray (a benchmark's warm-up messages, the last calls of
 * a run), not a noisier median: NetPIPE's 78 first 4-byte messages, slow
 * by x7 next to bins of 3 to 4 million calls, would otherwise set the
 * startup of the whole path as the sweep's first size, which is never an
 * outlier.  Its miss still shows in the bin's model error. */
static void set_param_weights(obs_t *o, size_t m, double *scratch)
{
    double ref;

    if (m == 0)
        return;
    for (size_t i = 0; i < m; i++)
        scratch[i] = o[i].c;
    ref = fmax(CALLS_HALF, STRAY_SHARE * median_inplace(scratch, m));
    for (size_t i = 0; i < m; i++)
        o[i].up = o[i].c / (o[i].c + ref);
}

static int validate(const cf_point_t *pts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(pts[i].size) || pts[i].size < 0 || !isfinite(pts[i].time_s) ||
            pts[i].time_s < 0 || !isfinite(pts[i].weight) || pts[i].weight < 0)
            return CF_ERR_INVALID;
    }
    return CF_OK;
}

static double inv_or_inf(double b)
{
    return b > 0 ? 1.0 / b : INFINITY;
}

/* 95 % intervals of a line's alpha and B; the startup (first segment)
 * cannot be negative, a later intercept can. */
static void line_cis(const line_t *L, int startup, double alpha_ci[2], double bw_ci[2])
{
    double t = t975(L->dof_a);
    alpha_ci[0] = L->a_c - t * L->se_a;
    alpha_ci[1] = L->a_c + t * L->se_a;
    if (startup) {
        alpha_ci[0] = fmax(0.0, alpha_ci[0]);
        alpha_ci[1] = fmax(0.0, alpha_ci[1]);
    }
    t = t975(L->dof_b);
    bw_ci[0] = inv_or_inf(L->b_c + t * L->se_b);
    /* A flat line's B is infinite: its interval stays open above. */
    bw_ci[1] = L->b > 0 ? inv_or_inf(L->b_c - t * L->se_b) : INFINITY;
}

/* The uncertainty rules of cf_fit.h. */
static void set_uncertainty(cf_fit_t *f)
{
    const cf_segment_t *last = &f->seg[f->nseg - 1];
    double lo = f->alpha_ci[0], hi = f->alpha_ci[1];

    f->alpha_why = "";
    if (!isfinite(hi))
        f->alpha_why = "interval open";
    else if (!(lo > 0))
        f->alpha_why = "interval reaches 0";
    else if (hi > 2.0 * lo + ALPHA_SLACK_S)
        f->alpha_why = "interval wider than a factor 2";
    f->alpha_uncertain = f->alpha_why[0] != '\0';

    lo = f->bandwidth_ci[0];
    hi = f->bandwidth_ci[1];
    f->bandwidth_why = "";
    if (isinf(f->bandwidth_Bps))
        f->bandwidth_why = "time does not grow with size";
    else if (!isfinite(hi) || !(lo > 0))
        f->bandwidth_why = "interval open";
    else if (last->nsizes < 3)
        f->bandwidth_why = "last segment spans fewer than 3 sizes";
    else if (last->size_hi < 4.0 * last->size_lo)
        f->bandwidth_why = "last segment spans less than a factor 4 in size";
    else if (hi > 2.0 * lo)
        f->bandwidth_why = "interval wider than a factor 2";
    f->bandwidth_uncertain = f->bandwidth_why[0] != '\0';
}

/* Quality of the piecewise model over the kept points: rms and largest
 * |T_pred / T_meas - 1| (each kept bin counts once, so that a bin of few
 * calls that the model misses shows), and r2 of the weighted
 * relative-error regression (weights up / T_pred^2, as in the fit). */
static void set_quality(const obs_t *o, const model_t *mod, const unsigned char *keep,
                        cf_fit_t *f)
{
    double se2 = 0, emax = 0, sw = 0, swy = 0, sse = 0, sst = 0, ym;
    size_t nk = 0;

    for (size_t s = 0; s < mod->nseg; s++)
        for (size_t i = mod->seg[s].lo; i < mod->seg[s].hi; i++) {
            if (!keep[i])
                continue;
            double pred = line_at(&mod->seg[s].line, o[i].x), e = pred / o[i].y - 1.0;
            double w = pred > 0 ? o[i].up / (pred * pred) : 0.0;
            se2 += e * e;
            emax = fmax(emax, fabs(e));
            sw += w;
            swy += w * o[i].y;
            sse += w * (o[i].y - pred) * (o[i].y - pred);
            nk++;
        }
    ym = sw > 0 ? swy / sw : 0.0;
    for (size_t s = 0; s < mod->nseg; s++)
        for (size_t i = mod->seg[s].lo; i < mod->seg[s].hi; i++) {
            if (!keep[i])
                continue;
            double pred = line_at(&mod->seg[s].line, o[i].x);
            double w = pred > 0 ? o[i].up / (pred * pred) : 0.0;
            sst += w * (o[i].y - ym) * (o[i].y - ym);
        }
    f->err_rms = nk > 0 ? sqrt(se2 / (double)nk) : NAN;
    f->err_max = nk > 0 ? emax : NAN;
    f->r2 = sst > 0 ? 1.0 - sse / sst : 1.0;
}

/* n_half: the size at which the payload costs as much as the startup,
 * T(n_half) = 2 alpha under the piecewise model, the first time the
 * curve reaches it.  With one segment that is alpha B; with segments it
 * is where the measured curve crosses, not alpha times the asymptotic B
 * (on a shaped link whose burst lets messages below it run at wire speed,
 * alpha x B would name a size a hundred times too small).  Beyond the
 * largest size the last segment is extrapolated; INFINITY when it is flat
 * and never gets there. */
static double crossover(const cf_fit_t *fit)
{
    double target = 2.0 * fit->seg[0].alpha_s;

    if (!(fit->seg[0].alpha_s > 0))
        return 0.0;
    for (int k = 0; k < fit->nseg; k++) {
        const cf_segment_t *g = &fit->seg[k];
        double lo = 0, hi = INFINITY, m;
        if (k > 0) {
            double a = fit->seg[k - 1].size_hi, b = g->size_lo;
            lo = a > 0 ? sqrt(a * b) : 0.5 * (a + b);
        }
        if (k + 1 < fit->nseg) {
            double a = g->size_hi, b = fit->seg[k + 1].size_lo;
            hi = a > 0 ? sqrt(a * b) : 0.5 * (a + b);
        }
        /* A switch that jumps past the target crosses at the edge. */
        if (k > 0 && g->alpha_s + (isinf(g->bandwidth_Bps) ? 0.0 : lo / g->bandwidth_Bps) >= target)
            return lo;
        if (isinf(g->bandwidth_Bps))
            continue;
        m = (target - g->alpha_s) * g->bandwidth_Bps;
        if (m >= lo && m < hi)
            return m;
    }
    return INFINITY;
}

/* The limits that bind on these sizes (some size below, another above), ascending, at most CF_FIT_MAX_LIMITS; then, while no
 * segmentation can honour them all (a segment needs MIN_DISTINCT sizes),
 * the one with the fewest sizes on its thinner side is let go. */
static size_t binding_limits(const obs_t *o, size_t m, const double *limits, size_t nlimits, double *lim)
{
    size_t n = 0;

    for (size_t j = 0; j < nlimits; j++) {
        double L = limits[j];
        int below = 0, above = 0, dup = 0;
        if (!(L > 0) || !isfinite(L))
            continue;
        for (size_t i = 0; i < m; i++) {
            below |= below_limit(o[i].x, L);
            above |= o[i].x > L;
        }
        for (size_t k = 0; k < n; k++)
            dup |= fabs(lim[k] / L - 1.0) < 1e-9;
        if (below && above && !dup && n < CF_FIT_MAX_LIMITS) {
            size_t k = n++;
            while (k > 0 && lim[k - 1] > L) {
                lim[k] = lim[k - 1];
                k--;
            }
            lim[k] = L;
        }
    }
    return n;
}

/* Distinct sizes between two limits (0 and INFINITY at the ends). */
static size_t sizes_between(const work_t *w, double lo, double hi)
{
    size_t n = 0;
    for (size_t u = 0; u < w->d; u++) {
        double x = w->o[w->grp[u]].x;
        n += x > lo && below_limit(x, hi);
    }
    return n;
}

/* Segments the sizes can hold: CF_FIT_MAX_SEG, one more per limit, and
 * MIN_DISTINCT sizes each. */
static size_t seg_room(size_t d, size_t nlim)
{
    size_t cap = CF_FIT_MAX_SEG + nlim;
    return d / MIN_DISTINCT < cap ? d / MIN_DISTINCT : cap;
}

/* Runs the segmentation, letting limits go until it is feasible; the
 * fewest segments any segmentation then needs, and in *kmax_p how many
 * it may have. */
static size_t segment_within_limits(work_t *w, double *lim, size_t *kmax_p)
{
    for (;;) {
        size_t k, kmax = seg_room(w->d, w->nlim);
        for (size_t i = 0; i < (w->d + 1) * (w->d + 1); i++)
            w->cost[i] = NAN;
        w->lim = lim;
        segment_all(w, kmax);
        *kmax_p = kmax;
        for (k = 0; k < kmax && isinf(w->best[k * (w->d + 1) + w->d]); k++)
            ;
        if (k < kmax || w->nlim == 0)
            return k;
        size_t drop = 0, fewest = (size_t)-1;
        for (size_t j = 0; j < w->nlim; j++) {
            size_t a = sizes_between(w, j ? lim[j - 1] : 0, lim[j]);
            size_t b = sizes_between(w, lim[j], j + 1 < w->nlim ? lim[j + 1] : INFINITY);
            if ((a < b ? a : b) < fewest) {
                fewest = a < b ? a : b;
                drop = j;
            }
        }
        memmove(lim + drop, lim + drop + 1, (w->nlim - drop - 1) * sizeof(*lim));
        w->nlim--;
    }
}

/* The segmentation (with the limits w->nlim of lim), the fewest segments
 * that no finer model beats, then refinement by how it predicts; cur and
 * keep[0] get the model.  -1: no model. */
static int select_model(work_t *w, double *lim, model_t *cur, unsigned char **keep)
{
    model_t cand;
    size_t kmax, kmin = segment_within_limits(w, lim, &kmax);

    if (kmin >= kmax || build_model(w, kmin, W_DECIDE, cur, keep[0]) != 0)
        return -1;
    /* Fewest segments that no finer model beats significantly. */
    for (size_t k = kmin + 1; k < kmax; k++) {
        if (build_model(w, k, W_DECIDE, &cand, keep[1]) == 0 &&
            finer_pays(w, cur, &cand, keep[1])) {
            unsigned char *swap = keep[0];
            *cur = cand;
            keep[0] = keep[1];
            keep[1] = swap;
        }
    }
    /* Judged by how it predicts: a model that misses two neighbouring kept
     * bins on the same side by more than the tolerance has left a switch
     * or a knee inside a segment (noise, even a slow bin, does not do that
     * twice in a row); the fewest finer segments that bring every kept bin
     * within the tolerance are taken, when there are such. */
    if (misses_run(w, cur, keep[0])) {
        int taken = 0;
        for (size_t k = cur->nseg; k < kmax && !taken; k++) {
            if (build_model(w, k, W_DECIDE, &cand, keep[1]) == 0 && misses_any(w, &cand, keep[1]) == 0) {
                unsigned char *swap = keep[0];
                *cur = cand;
                keep[0] = keep[1];
                keep[1] = swap;
                taken = 1;
            }
        }
    }
    /* Where none brings every bin within it, or the misses are apart (a
     * bending curve's line misses both ends), the fewest finer segments
     * that predict clearly better overall (predicts_better), rather than
     * keeping the worst model. */
    if (misses_run(w, cur, keep[0]) || misses_ends(w, cur, keep[0])) {
        int taken = 0;
        for (size_t k = cur->nseg; k < kmax && !taken; k++) {
            if (build_model(w, k, W_DECIDE, &cand, keep[1]) == 0 &&
                predicts_better(w, cur, keep[0], &cand, keep[1])) {
                unsigned char *swap = keep[0];
                *cur = cand;
                keep[0] = keep[1];
                keep[1] = swap;
                taken = 1;
            }
        }
    }
    return 0;
}

int cf_fit_run(const cf_point_t *pts, size_t n, cf_fit_t *fit_p, unsigned char *kept_p)
{
    return cf_fit_run_limits(pts, n, NULL, 0, fit_p, kept_p);
}

/* A fit with no line yet: NaN numbers, every verdict uncertain. */
static void fit_blank(cf_fit_t *fit)
{
    memset(fit, 0, sizeof(*fit));
    fit->alpha_s = fit->bandwidth_Bps = fit->n_half_bytes = fit->r2 = NAN;
    fit->alpha_ci[0] = fit->alpha_ci[1] = fit->bandwidth_ci[0] = fit->bandwidth_ci[1] = NAN;
    fit->err_rms = fit->err_max = NAN;
    fit->line_alpha_s = fit->line_bandwidth_Bps = fit->line_r2 = NAN;
    fit->alpha_uncertain = fit->bandwidth_uncertain = 1;
    fit->alpha_why = fit->bandwidth_why = "fewer than 3 sizes";
}

/* The points that carry weight, ascending by size, into *o_p (*m_p of
 * them); CF_OK or CF_ERR_NOMEM. */
static int observations(const cf_point_t *pts, size_t n, obs_t **o_p, size_t *m_p)
{
    obs_t *o = NULL;
    size_t m = 0;

    if (n > 0 && (o = malloc(n * sizeof(*o))) == NULL)
        return CF_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        if (pts[i].weight > 0 && pts[i].time_s > 0) {
            o[m].x = pts[i].size;
            o[m].y = pts[i].time_s;
            o[m].c = pts[i].weight;
            o[m].u = decision_weight(pts[i].weight);
            o[m].idx = i;
            m++;
        }
    }
    if (m > 0)
        qsort(o, m, sizeof(*o), cmp_obs);
    set_start_scale(o, m);
    *o_p = o;
    *m_p = m;
    return CF_OK;
}

/* The segmentation's tables for the w->m points of w->o (w->d distinct
 * sizes) and three keep flags of m; CF_OK or CF_ERR_NOMEM. */
static int work_alloc(work_t *w, unsigned char **keep)
{
    size_t m = w->m, kmax = seg_room(w->d, CF_FIT_MAX_LIMITS);

    w->grp = malloc((w->d + 1) * sizeof(*w->grp));
    w->cost = malloc((w->d + 1) * (w->d + 1) * sizeof(*w->cost));
    w->best = malloc(kmax * (w->d + 1) * sizeof(*w->best));
    w->arg = malloc(kmax * (w->d + 1) * sizeof(*w->arg));
    w->tkeep = malloc(m);
    w->scratch = malloc(m * sizeof(*w->scratch));
    w->res = malloc(2 * m * sizeof(*w->res));
    keep[0] = malloc(m);
    keep[1] = malloc(m);
    keep[2] = malloc(m);
    if (w->grp == NULL || w->cost == NULL || w->best == NULL || w->arg == NULL || w->tkeep == NULL ||
        w->scratch == NULL || w->res == NULL || keep[0] == NULL || keep[1] == NULL ||
        keep[2] == NULL)
        return CF_ERR_NOMEM;
    return CF_OK;
}

static void work_free(work_t *w, unsigned char **keep)
{
    free(keep[2]);
    free(keep[1]);
    free(keep[0]);
    free(w->res);
    free(w->scratch);
    free(w->tkeep);
    free(w->arg);
    free(w->best);
    free(w->cost);
    free(w->grp);
}

/* The segmentation without the limits, then with them: a declared
 * limit stands unless the model that ignores it predicts
 * significantly better, by more than a break's position is worth (a
 * shaper's knee near the limit, more regimes than segments).  lim gets
 * the limits that bind, w->nlim those used; -1: no model. */
static int segment_with_limits(work_t *w, const double *limits, size_t nlimits, double *lim, model_t *cur,
                               unsigned char **keep, cf_fit_t *fit)
{
    size_t m = w->m, nbind = binding_limits(w->o, m, limits, nlimits, lim);

    w->nlim = 0;
    if (select_model(w, lim, cur, keep) != 0)
        return -1;
    if (nbind > 0) {
        model_t free_m = *cur;
        memcpy(keep[2], keep[0], m);
        w->nlim = nbind;
        if (select_model(w, lim, cur, keep) != 0 ||
            model_pays(w, cur, &free_m, keep[2],
                       SEG_PARAMS * (free_m.nseg > cur->nseg ? (double)(free_m.nseg - cur->nseg) : 1.0))) {
            fit->limits_unused_why = w->nlim > 0 ? "the fit without them predicts better (by more than a "
                                                   "segment's price in the likelihood-ratio test)"
                                                 : "each leaves fewer than 3 sizes on a side";
            w->nlim = 0;
            if (select_model(w, lim, cur, keep) != 0)
                return -1;
        } else if (w->nlim < nbind) {
            fit->limits_unused_why = w->nlim == 0 ? "each leaves fewer than 3 sizes on a side"
                                                  : "some leave fewer than 3 sizes on a side";
        }
    }
    return 0;
}

/* The fit's segments, headline, quality and reference line from model
 * cur over the kept points; returns the points kept. */
static size_t fit_from_model(const work_t *w, const model_t *cur, const unsigned char *keep, const double *lim,
                             cf_fit_t *fit)
{
    const obs_t *o = w->o;
    size_t nkept = 0;
    line_t all;

    fit->size_lo = INFINITY;
    fit->size_hi = -INFINITY;
    for (size_t s = 0; s < cur->nseg; s++) {
        cf_segment_t *g = &fit->seg[s];
        const line_t *L = &cur->seg[s].line;
        g->size_lo = INFINITY;
        g->size_hi = -INFINITY;
        g->npoints = 0;
        for (size_t i = cur->seg[s].lo; i < cur->seg[s].hi; i++) {
            if (!keep[i])
                continue;
            if (g->npoints == 0 || o[i].x != g->size_hi)
                g->nsizes++;
            g->size_lo = fmin(g->size_lo, o[i].x);
            g->size_hi = fmax(g->size_hi, o[i].x);
            g->npoints++;
        }
        g->alpha_s = L->a;
        g->bandwidth_Bps = inv_or_inf(L->b);
        line_cis(L, s == 0, g->alpha_ci, g->bandwidth_ci);
        fit->size_lo = fmin(fit->size_lo, g->size_lo);
        fit->size_hi = fmax(fit->size_hi, g->size_hi);
        nkept += (size_t)g->npoints;
    }
    fit->nseg = (int)cur->nseg;
    fit->nlimits = (int)w->nlim;
    for (size_t j = 0; j < w->nlim; j++)
        fit->limit_bytes[j] = lim[j];

    /* Headline: startup from the small sizes, bandwidth from the large. */
    fit->alpha_s = fit->seg[0].alpha_s;
    fit->alpha_ci[0] = fit->seg[0].alpha_ci[0];
    fit->alpha_ci[1] = fit->seg[0].alpha_ci[1];
    fit->bandwidth_Bps = fit->seg[fit->nseg - 1].bandwidth_Bps;
    fit->bandwidth_ci[0] = fit->seg[fit->nseg - 1].bandwidth_ci[0];
    fit->bandwidth_ci[1] = fit->seg[fit->nseg - 1].bandwidth_ci[1];
    fit->n_half_bytes = crossover(fit);
    set_quality(o, cur, keep, fit);
    set_uncertainty(fit);

    /* For reference: one line through every kept point. */
    if (wls(o, keep, 0, w->m, W_PARAMS, A_STARTUP, &all) == 0) {
        fit->line_alpha_s = all.a;
        fit->line_bandwidth_Bps = inv_or_inf(all.b);
        fit->line_r2 = all.r2;
    }
    return nkept;
}

int cf_fit_run_limits(const cf_point_t *pts, size_t n, const double *limits, size_t nlimits, cf_fit_t *fit_p,
                      unsigned char *kept_p)
{
    cf_fit_t fit;
    work_t w;
    obs_t *o = NULL;
    model_t cur;
    unsigned char *keep[3] = {NULL, NULL, NULL};
    size_t m = 0, nkept;
    double lim[CF_FIT_MAX_LIMITS];
    int rc;

    if ((pts == NULL && n > 0) || (limits == NULL && nlimits > 0))
        return CF_ERR_INVALID;
    if (fit_p == NULL || (rc = validate(pts, n)) != CF_OK)
        return CF_ERR_INVALID;

    fit_blank(&fit);
    memset(&w, 0, sizeof(w));
    if (kept_p != NULL && n > 0)
        memset(kept_p, 0, n);
    if (observations(pts, n, &o, &m) != CF_OK)
        return CF_ERR_NOMEM;

    w.o = o;
    w.m = m;
    for (size_t i = 0; i < m; i++)
        if (i == 0 || o[i].x != o[i - 1].x)
            w.d++;
    if (m > 0) {
        fit.size_lo = o[0].x;
        fit.size_hi = o[m - 1].x;
    }
    fit.npoints = (int)m;
    if (w.d < MIN_DISTINCT)
        goto nodata;

    if (work_alloc(&w, keep) != CF_OK) {
        rc = CF_ERR_NOMEM;
        goto out;
    }
    set_param_weights(o, m, w.scratch);
    for (size_t i = 0, u = 0; i < m; i++)
        if (i == 0 || o[i].x != o[i - 1].x)
            w.grp[u++] = i;
    w.grp[w.d] = m;

    if (segment_with_limits(&w, limits, nlimits, lim, &cur, keep, &fit) != 0)
        goto nodata;
    /* The parameters of those segments, with the same bounded weights:
     * weighting by calls let the 10 to 100 times more frequent small
     * sizes of a sweep pin a segment's line to its lower end, so that it
     * missed its largest sizes by 30 to 50 % (UCX ping-pong, 8 KiB to
     * 4 MiB in one segment) and the asymptotic B was that of the small
     * end. */
    if (build_model(&w, cur.nseg - 1, W_PARAMS, &cur, keep[0]) != 0)
        goto nodata;
    nkept = fit_from_model(&w, &cur, keep[0], lim, &fit);

    if (kept_p != NULL)
        for (size_t i = 0; i < m; i++)
            kept_p[o[i].idx] = keep[0][i];
    fit.npoints = (int)nkept;
    fit.noutliers = (int)(m - nkept);
    fit.ok = 1;
    *fit_p = fit;
    rc = CF_OK;
    goto out;
nodata:
    /* Fewer than 3 distinct sizes carry weight: no line to fit. */
    memset(&fit.seg, 0, sizeof(fit.seg));
    fit.nseg = 0;
    fit.ok = 0;
    *fit_p = fit;
    rc = CF_ERR_NODATA;
out:
    work_free(&w, keep);
    free(o);
    return rc;
}

int cf_fit_hockney(const cf_point_t *pts, size_t n, cf_fit_t *fit_p)
{
    return cf_fit_run(pts, n, fit_p, NULL);
}

const cf_segment_t *cf_fit_segment_at(const cf_fit_t *fit, double size)
{
    if (fit == NULL || !fit->ok || fit->nseg < 1)
        return NULL;
    for (int k = 0; k + 1 < fit->nseg; k++) {
        double hi = fit->seg[k].size_hi, lo = fit->seg[k + 1].size_lo;
        /* Sizes are spaced geometrically, so the switch between two
         * segments is put at the geometric mean of their edges; at a
         * declared limit between them, at the limit (a message of the
         * limit's size is past an eager limit that counts the headers,
         * unless the fit put that size in the lower segment). */
        double edge = hi > 0 ? sqrt(hi * lo) : 0.5 * (hi + lo);
        for (int j = 0; j < fit->nlimits; j++)
            if (fit->limit_bytes[j] >= hi && fit->limit_bytes[j] <= lo)
                edge = fit->limit_bytes[j];
        /* the sizes the segment was fitted on are its own */
        if (size <= hi || size < edge)
            return &fit->seg[k];
    }
    return &fit->seg[fit->nseg - 1];
}

double cf_fit_predict(const cf_fit_t *fit, double size)
{
    const cf_segment_t *g;
    if (fit == NULL || !fit->ok || fit->nseg < 1)
        return NAN;
    g = cf_fit_segment_at(fit, size);
    return g->alpha_s + (isinf(g->bandwidth_Bps) ? 0.0 : size / g->bandwidth_Bps);
}

double cf_fit_alpha_at(const cf_fit_t *fit, double size)
{
    const cf_segment_t *g;
    double a;
    if (fit == NULL || !fit->ok || fit->nseg < 1)
        return NAN;
    g = cf_fit_segment_at(fit, size);
    /* A negative intercept is no startup (the line of a token bucket's
     * rate above its burst): the message still pays the startup of the
     * small sizes.  Never more than the whole predicted time. */
    a = g->alpha_s >= 0 ? g->alpha_s : fit->seg[0].alpha_s;
    return fmin(a, fmax(cf_fit_predict(fit, size), 0.0));
}

double cf_fit_startup_share(const cf_fit_t *fit, const cf_point_t *pts, size_t n)
{
    double num = 0, den = 0;
    if (fit == NULL || !fit->ok || (pts == NULL && n > 0))
        return NAN;
    for (size_t i = 0; i < n; i++) {
        if (!(pts[i].weight > 0))
            continue;
        num += pts[i].weight * cf_fit_alpha_at(fit, pts[i].size);
        den += pts[i].weight * cf_fit_predict(fit, pts[i].size);
    }
    return den > 0 ? num / den : NAN;
}

const char *cf_verdict(double startup_share)
{
    if (isnan(startup_share))
        return "undetermined";
    return startup_share > 0.5 ? "startup-bound" : "bandwidth-bound";
}
