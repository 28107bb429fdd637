/* Measurement-first prediction and the calibration section; see
 * cf_predict.h. */
#include "cf_predict.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cf_bins.h"

#define SAME_SIZE 0.01 /* points within 1 % are one */
#define AT_SIZE 1e-6   /* a prediction at a point's size is its time */

const char *cf_pred_source_name(cf_pred_source_t s)
{
    return s == CF_PRED_MEASURED      ? "measured"
           : s == CF_PRED_CALIBRATION ? "calibration"
           : s == CF_PRED_MODEL       ? "model"
                                      : NULL;
}

void cf_pred_init(cf_predictor_t *pr, cf_pred_line_fn line, const void *ctx, double line_err)
{
    memset(pr, 0, sizeof(*pr));
    pr->line = line;
    pr->ctx = ctx;
    pr->line_err = line_err;
}

void cf_pred_add(cf_predictor_t *pr, double size, double time_s, double spread, cf_pred_source_t source)
{
    size_t i;

    if (!(size > 0) || !isfinite(size) || !(time_s > 0) || !isfinite(time_s))
        return;
    spread = isfinite(spread) && spread > CF_PRED_MIN_SPREAD ? spread : CF_PRED_MIN_SPREAD;
    for (i = 0; i < pr->n && pr->pt[i].size < size * (1.0 - SAME_SIZE); i++)
        ;
    if (i < pr->n && pr->pt[i].size <= size * (1.0 + SAME_SIZE)) {
        /* the program's own time over the calibration's */
        if (source == CF_PRED_MEASURED && pr->pt[i].source != CF_PRED_MEASURED)
            pr->pt[i] = (cf_pred_point_t){size, time_s, spread, source};
        return;
    }
    if (pr->n >= CF_PRED_MAX_POINTS)
        return;
    memmove(&pr->pt[i + 1], &pr->pt[i], (pr->n - i) * sizeof(pr->pt[0]));
    pr->pt[i] = (cf_pred_point_t){size, time_s, spread, source};
    pr->n++;
}

double cf_pred_median_spread(double p50_s, double p99_s, double calls)
{
    double s = CF_PRED_MIN_SPREAD;
    if (p50_s > 0 && p99_s > p50_s && isfinite(p99_s) && calls >= 1)
        s = fmax(s, 1.25 * log(p99_s / p50_s) / 2.33 / sqrt(calls));
    return s;
}

static double line_at(const cf_predictor_t *pr, double n, double *startup_p)
{
    double s = NAN, t = pr->line != NULL ? pr->line(pr->ctx, n, &s) : NAN;
    *startup_p = isfinite(s) ? s : NAN;
    return isfinite(t) && t > 0 ? t : NAN;
}

static double ext_rate(const cf_predictor_t *pr)
{
    return isfinite(pr->line_err) && pr->line_err > CF_PRED_EXT_PER_DOUBLING ? pr->line_err
                                                                             : CF_PRED_EXT_PER_DOUBLING;
}

double cf_pred_at(const cf_predictor_t *pr, double n, cf_pred_t *out)
{
    cf_pred_t r = {NAN, NAN, NAN, CF_PRED_NONE};
    double s, l;
    size_t i;

    if (out == NULL)
        out = &r;
    *out = r;
    if (pr == NULL || !(n >= 0) || !isfinite(n))
        return NAN;
    if (pr->n == 0) {
        l = line_at(pr, n, &s);
        if (isfinite(l)) {
            r.time_s = l;
            r.startup_s = s;
            r.unc_s = ext_rate(pr) * l;
            r.source = CF_PRED_MODEL;
        }
        *out = r;
        return r.time_s;
    }
    for (i = 0; i < pr->n && pr->pt[i].size < n * (1.0 - AT_SIZE); i++)
        ;
    if (i < pr->n && pr->pt[i].size <= n * (1.0 + AT_SIZE)) {
        /* measured here */
        const cf_pred_point_t *p = &pr->pt[i];
        l = line_at(pr, p->size, &s);
        r.time_s = p->time_s;
        r.startup_s = isfinite(l) && isfinite(s) ? fmin(p->time_s, s * p->time_s / l) : NAN;
        r.unc_s = p->spread * p->time_s;
        r.source = p->source;
    } else if (i > 0 && i < pr->n) {
        /* between pt[i - 1] and pt[i]: a power law through both */
        const cf_pred_point_t *a = &pr->pt[i - 1], *b = &pr->pt[i];
        double u = log(n / a->size) / log(b->size / a->size);
        double lt = (1.0 - u) * log(a->time_s) + u * log(b->time_s);
        double la, lb, sa, sb, spread = (1.0 - u) * a->spread + u * b->spread, gap = 0;
        r.time_s = exp(lt);
        l = line_at(pr, n, &s);
        la = line_at(pr, a->size, &sa);
        lb = line_at(pr, b->size, &sb);
        if (isfinite(l) && isfinite(la) && isfinite(lb)) {
            /* the line's shape through both neighbours: its log ratio to the
             * measured times interpolated in log-log; the power law's
             * distance from it is the uncertainty */
            double shaped = log(l) + (1.0 - u) * log(a->time_s / la) + u * log(b->time_s / lb);
            gap = fabs(shaped - lt);
            r.time_s = exp(shaped);
            r.startup_s = isfinite(s) ? fmin(r.time_s, s * r.time_s / l) : NAN;
        }
        r.unc_s = sqrt(spread * spread + gap * gap) * r.time_s;
        r.source = a->source == CF_PRED_MEASURED && b->source == CF_PRED_MEASURED ? CF_PRED_MEASURED
                                                                                   : CF_PRED_CALIBRATION;
    } else {
        /* beyond: the line's growth from the nearest measured size */
        const cf_pred_point_t *e = i == 0 ? &pr->pt[0] : &pr->pt[pr->n - 1];
        double le, se, d = fabs(log2(n > 0 ? n / e->size : 1.0 / e->size)), rel;
        l = line_at(pr, n, &s);
        le = line_at(pr, e->size, &se);
        if (isfinite(l) && isfinite(le)) {
            r.time_s = i == 0 ? e->time_s * l / le : fmax(e->time_s, e->time_s + l - le);
            r.startup_s = isfinite(se) ? fmin(r.time_s, se * e->time_s / le) : NAN;
        } else if (i == 0) {
            r.time_s = e->time_s; /* below the smallest size, without a line: no less */
        }
        rel = e->spread + ext_rate(pr) * (n > 0 ? d : 1.0);
        r.unc_s = rel * r.time_s;
        r.source = isfinite(r.time_s) ? CF_PRED_MODEL : CF_PRED_NONE;
    }
    *out = r;
    return r.time_s;
}

/* ---- calibration ---- */

static int num(json_t *o, const char *k, double *v)
{
    json_t *j = json_object_get(o, k);
    if (!json_is_number(j))
        return 0;
    *v = json_number_value(j);
    return isfinite(*v);
}

/* A sweep is measured at MPI_Finalize on a machine the job may share:
 * another process that runs for a few milliseconds delays every trial of
 * one or two sizes (seen here: 1 MiB on shared memory at 5.2 ms median
 * between 0.3 ms at 786 KiB and 0.5 ms best at 1.5 MiB), and a fit of the
 * sweep then takes a bandwidth thirty times too low from them.  A size
 * whose median is more than CF_CALIB_DISTURBED times its best above the
 * sweep's usual ratio of median to best (the median over its sizes) had
 * most of its trials delayed, and maybe all: its median becomes its best
 * times the usual ratio, and neither may exceed the next larger size's (a
 * message can always be sent as a larger one).  A size measured
 * consistently keeps its times, even where they fall as the size grows
 * (TCP here: 384 KiB slower than 512 KiB in 48 trials of each), since that
 * is what the path does.  Returns the number of sizes moved. */
#define CF_CALIB_DISTURBED 2.0
static size_t tame_disturbed(cf_calib_size_t *s, size_t n)
{
    double ratio[CF_CALIB_MAX_SIZES], usual;
    unsigned char hit[CF_CALIB_MAX_SIZES] = {0};
    size_t moved = 0;

    if (n < 3)
        return 0;
    for (size_t k = 0; k < n; k++)
        ratio[k] = s[k].p50_s / s[k].best_s;
    usual = cf_median(ratio, n);
    for (size_t k = 0; k < n; k++)
        if (s[k].p50_s > CF_CALIB_DISTURBED * usual * s[k].best_s) {
            s[k].p50_s = usual * s[k].best_s;
            hit[k] = 1;
            moved++;
        }
    /* from the top down, so that the next larger size is final */
    for (size_t k = n - 1; k-- > 0;)
        if (hit[k]) {
            s[k].best_s = fmin(s[k].best_s, s[k + 1].best_s);
            s[k].p50_s = fmax(s[k].best_s, fmin(s[k].p50_s, s[k + 1].p50_s));
        }
    /* a moved size's trials were delayed too: no slower than its median */
    for (size_t k = 0; k < n; k++)
        if (hit[k] && s[k].trial_s > 0)
            s[k].trial_s = fmax(s[k].best_s, fmin(s[k].trial_s, s[k].p50_s));
    return moved;
}

/* The sizes of one sweep, ascending; malformed entries skipped. */
static size_t read_sizes(json_t *arr, cf_calib_size_t *out)
{
    size_t n = 0, i;
    json_t *e;

    if (!json_is_array(arr))
        return 0;
    json_array_foreach(arr, i, e) {
        cf_calib_size_t z = {NAN, NAN, NAN, NAN, 0, 0, NAN};
        double reps = 0, calls = 0;
        size_t k;
        if (n >= CF_CALIB_MAX_SIZES || !json_is_object(e) || !num(e, "bytes", &z.bytes) || !(z.bytes > 0) ||
            !num(e, "best_s", &z.best_s) || !(z.best_s > 0))
            continue;
        if (!num(e, "p50_s", &z.p50_s) || !(z.p50_s >= z.best_s))
            z.p50_s = z.best_s;
        if (!num(e, "trial_s", &z.trial_s) || !(z.trial_s >= z.best_s))
            z.trial_s = NAN;
        if (num(e, "reps", &reps) && reps >= 1 && reps < 1e9)
            z.reps = (int)reps;
        if (num(e, "calls", &calls) && calls >= 2 && calls < 1e6)
            z.calls = (int)calls;
        if (z.calls && (!num(e, "page_faults", &z.faults) || !(z.faults >= 0)))
            z.faults = NAN;
        for (k = n; k > 0 && out[k - 1].bytes > z.bytes; k--)
            out[k] = out[k - 1];
        out[k] = z;
        n++;
    }
    return n;
}

static void copy_str(json_t *o, const char *k, char *dst, size_t len)
{
    json_t *j = json_object_get(o, k);
    cf_strlcpy(dst, json_is_string(j) ? json_string_value(j) : "", len);
}

void cf_calib_read(const cf_profile_t *p, cf_calib_t *c)
{
    json_t *sec = p != NULL && p->extra != NULL ? json_object_get(p->extra, "calibration") : NULL;
    json_t *links, *colls, *skipped, *jv, *e;
    size_t i;

    memset(c, 0, sizeof(*c));
    c->budget_s = c->elapsed_s = c->page_fault_s = NAN;
    if (sec == NULL)
        return;
    jv = json_object_get(sec, "version");
    links = json_object_get(sec, "links");
    colls = json_object_get(sec, "collectives");
    if (!json_is_object(sec))
        snprintf(c->why, sizeof(c->why), "not an object");
    else if (!json_is_integer(jv) || json_integer_value(jv) != 1)
        snprintf(c->why, sizeof(c->why), "version not 1");
    else if ((links != NULL && !json_is_array(links)) || (colls != NULL && !json_is_array(colls)))
        snprintf(c->why, sizeof(c->why), "links or collectives not an array");
    if (c->why[0] != '\0') {
        c->malformed = 1;
        return;
    }
    c->present = 1;
    c->complete = json_is_true(json_object_get(sec, "complete"));
    num(sec, "budget_s", &c->budget_s);
    num(sec, "elapsed_s", &c->elapsed_s);
    if (!num(sec, "page_fault_s", &c->page_fault_s) || !(c->page_fault_s > 0) || !(c->page_fault_s < 1))
        c->page_fault_s = NAN;
    skipped = json_object_get(sec, "skipped");
    c->nskipped = json_is_array(skipped) ? json_array_size(skipped) : 0;
    json_array_foreach(links, i, e) {
        cf_calib_link_t *l;
        json_t *jp = json_object_get(e, "path"), *jr = json_object_get(e, "ranks");
        int path = json_is_string(jp) ? cf_path_from_name(json_string_value(jp)) : -1;
        if (c->nlink >= CF_CALIB_MAX_LINKS || !json_is_object(e) || path < 0)
            continue;
        l = &c->link[c->nlink];
        memset(l, 0, sizeof(*l));
        l->path = path;
        l->ranks[0] = l->ranks[1] = -1;
        if (json_is_array(jr) && json_array_size(jr) == 2 && json_is_integer(json_array_get(jr, 0)) &&
            json_is_integer(json_array_get(jr, 1))) {
            l->ranks[0] = (int)json_integer_value(json_array_get(jr, 0));
            l->ranks[1] = (int)json_integer_value(json_array_get(jr, 1));
        }
        copy_str(e, "method", l->method, sizeof(l->method));
        l->nsize = read_sizes(json_object_get(e, "sizes"), l->size);
        l->ntamed = tame_disturbed(l->size, l->nsize);
        if (l->nsize > 0)
            c->nlink++;
    }
    json_array_foreach(colls, i, e) {
        cf_calib_coll_t *k;
        json_t *jc = json_object_get(e, "comm"), *js = json_object_get(e, "comm_size");
        if (c->ncoll >= CF_CALIB_MAX_COLLS || !json_is_object(e) || !json_is_integer(jc) ||
            json_integer_value(jc) < 0 || json_integer_value(jc) > (json_int_t)UINT32_MAX)
            continue;
        k = &c->coll[c->ncoll];
        memset(k, 0, sizeof(*k));
        copy_str(e, "op", k->op, sizeof(k->op));
        copy_str(e, "for_op", k->for_op, sizeof(k->for_op));
        if (k->op[0] == '\0')
            continue;
        if (k->for_op[0] == '\0')
            cf_strlcpy(k->for_op, k->op, sizeof(k->for_op));
        k->comm = (uint32_t)json_integer_value(jc);
        k->comm_size = json_is_integer(js) ? (int)json_integer_value(js) : 0;
        k->nsize = read_sizes(json_object_get(e, "sizes"), k->size);
        k->ntamed = tame_disturbed(k->size, k->nsize);
        k->ninflight = read_sizes(json_object_get(e, "in_flight"), k->inflight);
        k->inflight_step_bytes = NAN;
        num(e, "in_flight_step_bytes", &k->inflight_step_bytes);
        if (k->nsize > 0)
            c->ncoll++;
    }
}

const cf_calib_link_t *cf_calib_link_of(const cf_calib_t *c, int path)
{
    const cf_calib_link_t *best = NULL;
    for (size_t i = 0; c != NULL && i < c->nlink; i++)
        if (c->link[i].path == path && (best == NULL || c->link[i].nsize > best->nsize))
            best = &c->link[i];
    return best;
}

const cf_calib_coll_t *cf_calib_coll_of(const cf_calib_t *c, const char *op, uint32_t comm)
{
    const cf_calib_coll_t *alt = NULL;
    for (size_t i = 0; c != NULL && i < c->ncoll; i++) {
        if (c->coll[i].comm != comm)
            continue;
        if (strcmp(c->coll[i].for_op, op) == 0)
            return &c->coll[i];
        if (strcmp(c->coll[i].op, op) == 0)
            alt = &c->coll[i];
    }
    return alt;
}

double cf_calib_inflight_ratio(const cf_calib_coll_t *c, double bytes, double m, int *calls_p, double *faults_p,
                               double *unc_p)
{
    const cf_calib_size_t *one = NULL, *set = NULL;
    *calls_p = 0;
    *unc_p = NAN;
    if (faults_p != NULL)
        *faults_p = NAN;
    if (c == NULL || !(m >= 2))
        return NAN;
    for (size_t i = 0; i < c->nsize; i++)
        if (c->size[i].bytes == bytes)
            one = &c->size[i];
    for (size_t i = 0; i < c->ninflight; i++)
        if (c->inflight[i].bytes == bytes && c->inflight[i].calls >= 2)
            set = &c->inflight[i];
    if (one == NULL || set == NULL || !(one->p50_s > 0))
        return NAN;
    double r = set->p50_s / ((double)set->calls * one->p50_s);
    *calls_p = set->calls;
    if (faults_p != NULL)
        *faults_p = set->faults;
    *unc_p = fmax(CF_PRED_MIN_SPREAD, (set->p50_s - set->best_s) / set->p50_s);
    if (m > set->calls)
        *unc_p += CF_PRED_EXT_PER_DOUBLING * log2(m / (double)set->calls);
    return m >= set->calls ? r : 1.0 + (r - 1.0) * (m - 1.0) / ((double)set->calls - 1.0);
}
