#define _GNU_SOURCE /* qsort_r */
#include "cf_advice.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cf_an_stage.h"
#include "cf_bins.h"
#include "cf_units.h"

/* More calls per step than this are not packed one by one. */
#define MAX_TENSORS ((size_t)1 << 22)

/* ---- packing ---- */

/* Time of one call of n bytes; *unc_p its uncertainty, *src_p its source
 * (cf_pred_source_t). */
typedef double (*call_time_fn)(const void *ctx, double n, double *unc_p, int *src_p);

/* The packing in progress. */
typedef struct {
    call_time_fn t;
    const void *ctx;
    double total, unc, fused, cur, buckets;
    double last;       /* T of the bucket closed last */
    double member_unc; /* the current bucket's tensors' own, each alone */
    double diff_unc;   /* of the fused buckets and of their tensors alone */
    size_t in_bucket;
    int source; /* the least measured source of its buckets */
} packer_t;

static double finite0(double v)
{
    return isfinite(v) ? v : 0.0;
}

/* Every bucket, fused or a tensor alone, is costed by the same predictor,
 * so that a misfit at some size cannot pass for a saving.  A tensor alone
 * costs what it costs unfused: its uncertainty cancels in the saving. */
static void close_bucket(packer_t *k)
{
    double unc = 0;
    int src = CF_PRED_NONE;
    k->last = k->t(k->ctx, k->cur, &unc, &src);
    k->total += k->last;
    k->unc += finite0(unc);
    if (src > k->source)
        k->source = src;
    if (k->in_bucket > 1) {
        k->fused += k->cur;
        k->diff_unc += finite0(unc) + k->member_unc;
    }
    k->buckets++;
    k->cur = 0;
    k->member_unc = 0;
    k->in_bucket = 0;
}

static void add_tensor(packer_t *k, double size, int fusing)
{
    if (fusing) {
        double unc = 0;
        int src;
        k->t(k->ctx, size, &unc, &src);
        k->member_unc += finite0(unc);
    }
    k->in_bucket++;
    k->cur += size;
}

typedef struct {
    double buckets, fused, copy, unc, diff_unc, last;
    int source;
} pack_out_t;

/* T(S) per step for tensors in order; see cf_advice.h. */
static double pack(const double *sizes, size_t n, double S, call_time_fn t, const void *ctx,
                   double memcpy_Bps, pack_out_t *out)
{
    packer_t k = {.t = t, .ctx = ctx};
    double copy;

    for (size_t i = 0; i < n; i++) {
        if (k.in_bucket > 0 && (!(S > 0) || k.cur + sizes[i] > S))
            close_bucket(&k);
        add_tensor(&k, sizes[i], S > 0);
        if (S > 0 && k.cur >= S)
            close_bucket(&k);
    }
    if (k.in_bucket > 0)
        close_bucket(&k);
    copy = isfinite(memcpy_Bps) && memcpy_Bps > 0 ? 2.0 * k.fused / memcpy_Bps : 0.0;
    if (out != NULL)
        *out = (pack_out_t){k.buckets, k.fused, copy, k.unc, k.diff_unc, k.last, k.source};
    return k.total + copy;
}

typedef struct {
    double alpha_s, Bps;
} line_t;

static double line_time(const void *ctx, double n, double *unc_p, int *src_p)
{
    const line_t *l = ctx;
    *unc_p = 0;
    *src_p = CF_PRED_MODEL;
    return l->alpha_s + (isinf(l->Bps) ? 0.0 : n / l->Bps);
}

double cf_advice_step_time(const double *sizes, size_t n, double S, double alpha_s, double Bps,
                           double memcpy_Bps, double *buckets_p, double *fused_p, double *copy_p)
{
    line_t l = {alpha_s, Bps};
    pack_out_t o;
    double t;

    if ((n > 0 && sizes == NULL) || !(alpha_s >= 0) || !(Bps > 0) || isnan(S))
        return NAN;
    for (size_t i = 0; i < n; i++)
        if (!(sizes[i] >= 0) || !isfinite(sizes[i]))
            return NAN;
    t = pack(sizes, n, S, line_time, &l, memcpy_Bps, &o);
    if (buckets_p != NULL)
        *buckets_p = o.buckets;
    if (fused_p != NULL)
        *fused_p = o.fused;
    if (copy_p != NULL)
        *copy_p = o.copy;
    return t;
}

static double pred_time(const void *ctx, double n, double *unc_p, int *src_p)
{
    cf_pred_t r;
    cf_pred_at(ctx, n, &r);
    *unc_p = r.unc_s;
    *src_p = (int)r.source;
    return r.time_s;
}

/* Largest, smallest, second largest, second smallest, ... */
static int cmp_desc(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a < b) - (a > b);
}

static void spread(double *sizes, double *tmp, size_t n)
{
    size_t lo = 0, hi = n;
    memcpy(tmp, sizes, n * sizeof(*tmp));
    qsort(tmp, n, sizeof(*tmp), cmp_desc);
    for (size_t i = 0; i < n; i++)
        sizes[i] = i % 2 == 0 ? tmp[lo++] : tmp[--hi];
}

/* ---- steps ---- */

static int named_like_step(const char *name, size_t len)
{
    static const char *const words[] = {"step", "iter"};
    for (size_t w = 0; w < CF_ARRAY_LEN(words); w++) {
        size_t k = strlen(words[w]);
        for (size_t i = 0; i + k <= len; i++)
            if (strncasecmp(name + i, words[w], k) == 0)
                return 1;
    }
    return 0;
}

static json_int_t region_entries(const cf_profile_t *p, const char *path)
{
    json_t *e = p->extra != NULL ? json_object_get(p->extra, "region_entries") : NULL;
    json_t *v = json_is_object(e) ? json_object_get(e, path) : NULL;
    return json_is_integer(v) ? json_integer_value(v) : 0;
}

/* The profile's MPI records by stream (op, comm, path): each stream finds
 * its own records without a pass over all of them. */
static int stream_index(const cf_profile_t *p, cf_index_t *x)
{
    if (cf_index_init(x, p->nrec) != CF_OK)
        return CF_ERR_NOMEM;
    for (size_t i = 0; i < p->nrec; i++)
        if (p->rec[i].layer == CF_LAYER_MPI)
            cf_index_put(x, cf_stream_hash(p->rec[i].op, p->rec[i].comm, p->rec[i].path), i);
    return CF_OK;
}

/* The next record of the stream f with calls; NULL after the last. */
static const cf_record_t *stream_next(const cf_profile_t *p, const cf_index_t *x,
                                      const cf_an_fit_t *f, size_t *cursor)
{
    size_t i;
    while (cf_index_next(x, cf_stream_hash(f->op, f->comm, f->path), cursor, &i)) {
        const cf_record_t *r = &p->rec[i];
        if (r->layer == CF_LAYER_MPI && r->calls > 0 && r->comm == f->comm && r->path == f->path &&
            strcmp(r->op, f->op) == 0)
            return r;
    }
    return NULL;
}

/* Steps from the regions enclosing every call of the stream; 0: none. */
static uint64_t steps_from_regions(const cf_profile_t *p, const cf_index_t *x,
                                   const cf_an_fit_t *f, char *path, size_t len)
{
    const char *common = NULL;
    const cf_record_t *r;
    size_t clen = 0, cur = 0;

    while ((r = stream_next(p, x, f, &cur)) != NULL) {
        const char *name;
        size_t k;
        if (r->region == 0 || r->region > p->nregion || p->region[r->region - 1] == NULL)
            return 0; /* calls outside regions */
        name = p->region[r->region - 1];
        if (common == NULL) {
            common = name;
            clen = strlen(name);
            continue;
        }
        /* Common prefix of whole components. */
        for (k = 0; k < clen && name[k] == common[k]; k++)
            ;
        if (!(k == clen && (name[k] == '\0' || name[k] == '/'))) {
            while (k > 0 && common[k] != '/')
                k--;
            clen = k;
        }
        if (clen == 0)
            return 0;
    }
    if (common == NULL || clen == 0)
        return 0;
    /* Outermost component named like a step, else the outermost entered more than once. */
    for (int pass = 0; pass < 2; pass++) {
        size_t end = 0, start = 0;
        while (end < clen) {
            json_int_t n;
            start = end;
            while (end < clen && common[end] != '/')
                end++;
            if (end >= len)
                return 0;
            memcpy(path, common, end);
            path[end] = '\0';
            n = region_entries(p, path);
            if (n > 0 && (pass == 0 ? named_like_step(common + start, end - start) : n > 1))
                return (uint64_t)n;
            end++; /* past '/' */
        }
    }
    path[0] = '\0';
    return 0;
}

/* Steps from the repeating pattern: gcd of the per-rank counts of the bins. */
static uint64_t steps_from_pattern(const cf_an_fit_t *f)
{
    uint64_t g = 0;
    for (size_t k = 0; k < f->nbin; k++) {
        uint64_t c = (uint64_t)llround((double)f->bin[k].calls / (double)f->comm_size);
        if (c > 0)
            g = cf_gcd_u64(c, g);
    }
    return g > 0 ? g : 1;
}

/* ---- one stream ---- */

static const char *join_source(int s)
{
    return s == (CF_AN_TIME_DURATION | CF_AN_TIME_TRANSFER) ? "mixed"
           : s == CF_AN_TIME_TRANSFER                       ? "transfer"
                                                            : "duration";
}

/* Measured time, the mean per rank: transfer where sampled. */
static void measured(const cf_profile_t *p, const cf_index_t *x, const cf_an_fit_t *f,
                     cf_advice_t *ad)
{
    const cf_record_t *r;
    double sum = 0;
    int source = 0;
    size_t cur = 0;
    while ((r = stream_next(p, x, f, &cur)) != NULL) {
        double t = isfinite(r->t_sum) && r->t_sum > 0 ? r->t_sum : 0.0;
        double w = isfinite(r->wait_s) && r->wait_s > 0 ? r->wait_s : 0.0;
        if (r->xfer_n > 0 && isfinite(r->xfer_sum) && r->xfer_sum >= 0 && r->xfer_sum + w > 0) {
            /* The transfer share of the sampled calls, applied to every call:
             * the samples (first calls of a stream, then 1 in N) are not a
             * uniform draw, and a share suffers less from that than a mean. */
            sum += t * r->xfer_sum / (r->xfer_sum + w);
            source |= CF_AN_TIME_TRANSFER;
        } else {
            sum += t;
            source |= CF_AN_TIME_DURATION;
        }
    }
    ad->current_s = sum / (double)f->comm_size;
    ad->current_source = join_source(source ? source : CF_AN_TIME_DURATION);
}

/* The report holds one per stream of a job of 10 000 communicators within
 * 3 times its profile's size (tests/tools/test_heap.sh, a few kB to spare):
 * a field more goes into a padding. */
#if defined(__x86_64__)
_Static_assert(sizeof(cf_advice_t) <= 480, "cf_advice_t grew past 480 bytes");
#endif

/* A nonblocking stream's cost: the time inside its posts and the time
 * blocked in Wait/Test charged to its requests (records' post_s and
 * blocked_s), summed over ranks; NaN when the profile does not charge
 * completion calls (older profiles). */
static double stream_blocked(const cf_analysis_t *a, const cf_index_t *x, const cf_an_fit_t *f,
                             double *post_p)
{
    const cf_record_t *r;
    double sum = 0, post = 0;
    size_t cur = 0;

    if (!cf_analysis_charged(a))
        return NAN;
    while ((r = stream_next(cf_analysis_profile(a), x, f, &cur)) != NULL) {
        sum += cf_an_pos(r->blocked_s) + cf_an_pos(r->post_s);
        post += cf_an_pos(r->post_s);
    }
    *post_p = post;
    return sum;
}

/* The time of the Test calls that completed nothing beyond their calls
 * times their median duration, summed over ranks: their tails (a poll
 * descheduled on a busy machine, or one that did progress work the fused
 * buckets' final wait will do instead), which polling less is not counted
 * on to save: the conservative side, as for the blocked excess; *longest_p
 * the longest of them. */
static double polls_over_median(const cf_profile_t *p, double *longest_p)
{
    double excess = 0;
    *longest_p = NAN;
    for (size_t i = 0; i < p->nrec; i++) {
        const cf_record_t *r = &p->rec[i];
        if (!cf_an_is_poll(r) || !(r->t_p50 > 0) || !(r->t_sum > 0))
            continue;
        excess += fmax(0.0, r->t_sum - (double)r->calls * r->t_p50);
        if (r->t_max > 0 && !(r->t_max <= *longest_p))
            *longest_p = r->t_max;
    }
    return excess;
}

/* The stream's share of the polls: the time of the Test calls that
 * completed nothing (the completion operations' uncharged time, summed
 * over ranks), divided among the nonblocking operations by their posts;
 * *excess_p its share of their time beyond their median (polls_over_median).
 * *with_posts_p: about one poll per post (0.5 to 2); *longest_p: the
 * longest poll (NaN: none). */
static double stream_polls(const cf_analysis_t *a, const cf_an_fit_t *f, int *with_posts_p, double *excess_p,
                           double *longest_p)
{
    double polls = 0, tests = 0, posted = 0;

    *with_posts_p = 0;
    *excess_p = 0;
    *longest_p = NAN;
    for (size_t k = 0; k < a->nop; k++) {
        const cf_an_op_t *o = &a->op[k];
        if (strcmp(o->kind, "completion") == 0 && strncmp(o->op, "MPI_Test", 8) == 0) {
            polls += cf_an_pos(o->time_s);
            tests += (double)o->calls;
        } else if (o->nonblocking && strcmp(o->kind, "io") != 0) {
            posted += (double)o->calls;
        }
    }
    if (!(posted > 0) || !(polls > 0))
        return 0.0;
    *with_posts_p = tests >= 0.5 * posted && tests <= 2.0 * posted;
    *excess_p = fmin(polls, polls_over_median(cf_analysis_profile(a), longest_p)) * (double)f->calls / posted;
    return polls * (double)f->calls / posted;
}

typedef struct {
    long long rank, seq;
    double t0, t1;
} gap_row_t;

static int cmp_gap_row(const void *pa, const void *pb)
{
    const gap_row_t *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

/* call_gap_s of a blocking stream from the profile's sampled collectives
 * (samples.collectives rows: rank, comm, seq, op, t0, t1, wait); see
 * cf_advice.h. */
static void stream_gap(const cf_profile_t *p, cf_advice_t *ad)
{
    json_t *sec = p->extra != NULL ? json_object_get(p->extra, "samples") : NULL;
    json_t *rows = sec != NULL ? json_object_get(sec, "collectives") : NULL, *e;
    gap_row_t *g;
    double *gap, *dur;
    size_t n = 0, ng = 0, i;

    ad->call_gap_s = NAN;
    if (!json_is_array(rows) || json_array_size(rows) < 9)
        return;
    g = malloc(json_array_size(rows) * sizeof(*g));
    gap = malloc(json_array_size(rows) * sizeof(*gap));
    dur = malloc(json_array_size(rows) * sizeof(*dur));
    if (g == NULL || gap == NULL || dur == NULL)
        goto out;
    json_array_foreach(rows, i, e) {
        json_t *op = json_array_get(e, 3);
        double t0 = json_number_value(json_array_get(e, 4)), t1 = json_number_value(json_array_get(e, 5));
        if (!json_is_array(e) || !json_is_integer(json_array_get(e, 0)) || !json_is_integer(json_array_get(e, 2)) ||
            json_integer_value(json_array_get(e, 1)) != (json_int_t)ad->comm || !json_is_string(op) ||
            strcmp(json_string_value(op), ad->op) != 0 || !isfinite(t0) || !(t1 >= t0) || !isfinite(t1))
            continue;
        g[n] = (gap_row_t){json_integer_value(json_array_get(e, 0)), json_integer_value(json_array_get(e, 2)), t0, t1};
        dur[n++] = t1 - t0;
    }
    qsort(g, n, sizeof(*g), cmp_gap_row);
    for (i = 1; i < n; i++)
        if (g[i].rank == g[i - 1].rank && g[i].seq == g[i - 1].seq + 1 && g[i].t0 >= g[i - 1].t1)
            gap[ng++] = g[i].t0 - g[i - 1].t1;
    ad->call_gap_pairs = ng < UINT32_MAX ? (uint32_t)ng : UINT32_MAX;
    /* with under 3 calls a step, half the consecutive pairs or more span the
     * step's compute: their median is no gap between back-to-back calls */
    if (ng >= 8 && ad->calls_per_step >= CF_ADV_GAP_CALLS) {
        double gm = cf_median(gap, ng), dm = cf_median(dur, n);
        if (gm < dm)
            ad->call_gap_s = gm;
    }
out:
    free(g);
    free(gap);
    free(dur);
}

/* call_gap_s of a nonblocking stream: the framework's time from a post to
 * the completion call that follows it (the profile's post_gap_s, median
 * over the ranks), where at least 8 gaps were measured and the gap is under
 * the stream's MPI time per post (its post and polls, the calls a hook
 * makes back to back); post_lead_s, the bound of its time before a post,
 * where at least 8 were measured; see cf_advice.h. */
static void post_gap(const cf_profile_t *p, cf_advice_t *ad)
{
    double per_rank = ad->comm_size > 0 ? (double)ad->calls / (double)ad->comm_size : 0;
    ad->call_gap_s = NAN;
    ad->post_lead_s = NAN;
    /* a persistent stream's MPI_Start marks no post: the job's figures
     * are other streams' */
    if (strstr(ad->op, "_init") != NULL)
        return;
    ad->call_gap_pairs = p->post_gaps < UINT32_MAX ? (uint32_t)p->post_gaps : UINT32_MAX;
    if (p->post_gaps >= 8 && per_rank > 0 && isfinite(p->post_gap_s) &&
        p->post_gap_s < (ad->post_s + ad->poll_s) / per_rank)
        ad->call_gap_s = p->post_gap_s;
    ad->post_leads = p->post_leads < UINT32_MAX ? (uint32_t)p->post_leads : UINT32_MAX;
    ad->post_lead_s = p->post_leads >= 8 && isfinite(p->post_lead_s) ? (float)p->post_lead_s : NAN;
}

/* A nonblocking stream of the whole world: the ranks' wait, per step on
 * average, for the last one to arrive, from their MPI times (the last
 * waits least: the mean of each minus the least, over the steps); the
 * fused buckets' final wait pays it as the stream's waits pay it now, so
 * it is no more than the time blocked per step.  0 where not known (a
 * part of the world). */
static double arrival_skew(const cf_profile_t *p, const cf_advice_t *ad)
{
    double lo = INFINITY, sum = 0;
    size_t n = 0;
    if ((size_t)ad->comm_size != p->nrank || p->nrank < 2 || ad->steps < 1)
        return 0;
    for (size_t r = 0; r < p->nrank; r++)
        if (isfinite(p->rank[r].mpi_s) && p->rank[r].mpi_s < lo)
            lo = p->rank[r].mpi_s;
    for (size_t r = 0; r < p->nrank; r++)
        if (isfinite(p->rank[r].mpi_s)) {
            sum += p->rank[r].mpi_s - lo;
            n++;
        }
    return n == p->nrank ? fmin(sum / (double)n / (double)ad->steps, ad->blocked_s / (double)ad->steps) : 0;
}

/* The ranks' involuntary context switches per step of region, mean over
 * the ranks that recorded them with the steps' period (step_preempt); the
 * highest rate of them in *rate_p, per second, at the upper end of each
 * rank's count over steps entries (N + 2 sqrt(N + 1) + 1, about its 97.5 %
 * Poisson limit: a rank that counted none may still have been preempted).
 * NaN where none did. */
static double step_load(const cf_profile_t *p, const char *region, uint64_t steps, double *rate_p)
{
    double sp = 0, rate = NAN;
    size_t n = 0;
    for (size_t i = 0; i < p->nrank; i++) {
        const char *sr;
        double s, c = cf_profile_rank_load(p, i, &s);
        (void)cf_profile_rank_faults(p, i, &sr);
        if (sr != NULL && strcmp(sr, region) == 0 && c >= 0 && s > 0) {
            double N = c * (double)steps, up = (N + 2.0 * sqrt(N + 1.0) + 1.0) / ((double)steps * s);
            sp += c;
            if (!(up <= rate))
                rate = up;
            n++;
        }
    }
    *rate_p = rate;
    return n ? sp / (double)n : NAN;
}

/* The part of the polls' tails load can hold (cf_advice.h, "The polls'
 * tails"): the preemptions that land in the stream's polls where they come
 * at times that do not depend on them, at the highest rank's rate (upper
 * end of its count, step_load) times poll_s over the run, each adding at
 * most the longest poll; NaN where the profile did not record them (all
 * of the tails count as load). */
static float poll_load(const cf_profile_t *p, const cf_advice_t *ad, double longest)
{
    double rate = NAN;
    if (ad->steps_source != NULL && strcmp(ad->steps_source, "region") == 0 && ad->steps > 0)
        (void)step_load(p, ad->steps_region, ad->steps, &rate);
    if (!(rate >= 0) || !(longest > 0) || !(ad->poll_excess_s >= 0))
        return NAN;
    return (float)fmin(ad->poll_excess_s, rate * ad->poll_s * longest);
}

/* What the load in the polls' tails (poll_load_s, else all of
 * poll_excess_s) would leave of itself per step with S's buckets, under
 * the rule of predict_nb, against keeping it whole: added to S's
 * uncertainty (price_in_flight, hidden_saving).  The rest of the tails is
 * progress work, which the buckets' measured time holds. */
static double poll_tail_gap(const cf_advice_t *ad, const cf_adv_cand_t *cd)
{
    double load = isfinite(ad->poll_load_s) ? (double)ad->poll_load_s : ad->poll_excess_s;
    if (!ad->polls_with_posts || !(load > 0) || !(ad->steps > 0) || !(ad->calls_per_step > 0))
        return 0.0;
    return load * (1.0 - fmin(1.0, cd->buckets / ad->calls_per_step)) / (double)ad->steps;
}

/* The run's time, per rank, with the calls in buckets: a candidate's T(S)
 * against T(calls as they are) = now (cf_advice.h).  A nonblocking
 * stream's blocked time is priced as the fused buckets expose it (hidden
 * 0: nothing hidden, steps x T(S)) or as the overlap hides it now (hidden
 * 1: the blocked time scaled by T(S) / now, at least the last bucket);
 * either way what it blocked beyond its calls' own time stays
 * (nonblocking_excess). */
static double predict_nb(const cf_advice_t *ad, const cf_adv_cand_t *cd, double now, int hidden)
{
    /* the polls are paid per call where they go with the posts, their tails
     * beyond the median too: a tail is a poll's (progress work inside it,
     * which the fused buckets' exposed time holds, or a poll descheduled),
     * and fewer calls make fewer polls; keeping the tails whole is S's
     * uncertainty (poll_tail_gap) */
    double per_call = ad->post_s + (ad->polls_with_posts ? ad->poll_s : 0.0);
    double fixed = ad->polls_with_posts ? 0.0 : ad->poll_s, blocked;

    if (hidden) {
        blocked = now > 0 ? (ad->blocked_s - ad->blocked_excess_s) * cd->model_s / now : NAN;
        if (isfinite(cd->last_s) && (cd->last_s + ad->skew_s) * (double)ad->steps > blocked)
            blocked = (cd->last_s + ad->skew_s) * (double)ad->steps;
    } else {
        blocked = (cd->exposed_s + ad->skew_s) * (double)ad->steps;
    }
    return per_call * (ad->calls_per_step > 0 ? cd->buckets / ad->calls_per_step : NAN) + blocked + fixed +
           ad->blocked_excess_s;
}

/* A run measured over CF_ADV_DISTURBED times its predictor, where that
 * predictor is one to trust (trusted), is disturbed: the one rule of
 * blocking and nonblocking streams. */
static void judge_disturbed(cf_advice_t *ad, double measured, double predicted, int trusted)
{
    ad->measured_over_model = measured / predicted;
    ad->disturbed = ad->measured_over_model > CF_ADV_DISTURBED && trusted;
}

/* A nonblocking stream's time blocked beyond what its calls as they are
 * take one at a time, exposed, with the ranks' wait for the last (steps x
 * (now + skew_s)): a disturbed run or a partner late, which fused buckets
 * would wait out as well, so it stays in every prediction and is never
 * counted as a saving (the blocking rule's, predict_run).  Its measured
 * over that time, and over twice it, disturbed. */
static void nonblocking_excess(cf_advice_t *ad, double now)
{
    double exposed = (now + ad->skew_s) * (double)ad->steps;
    if (!(exposed > 0))
        return;
    ad->blocked_excess_s = fmax(0.0, ad->blocked_s - exposed);
    /* over a model's price, the algorithm may be slower than the line */
    judge_disturbed(ad, ad->blocked_s, exposed, ad->current_pred_source != CF_PRED_MODEL);
}

/* The run's time with the calls in buckets (cf_advice.h): for a blocking
 * stream the larger of the predictor's relative saving applied to the
 * measured time and its saving per step taken off it, so that a gap
 * between the two is never counted as a saving, either way. */
static double predict_run(const cf_advice_t *ad, const cf_adv_cand_t *cd, double now)
{
    if (ad->nonblocking)
        return predict_nb(ad, cd, now, 0);
    if (!(now > 0))
        return NAN;
    double scaled = ad->current_s * cd->model_s / now, less = ad->current_s - (now - cd->model_s) * (double)ad->steps;
    return fmax(scaled, less);
}

static void model_line(const cf_analysis_t *a, const cf_an_line_t *l, cf_advice_t *ad)
{
    const cf_an_ref_t *ref;
    double A, C, G;

    if (l->f != NULL && l->f->fit.ok) {
        if (strcmp(l->f->op, ad->op) == 0)
            cf_strlcpy(ad->model_source, "collective fit", sizeof(ad->model_source));
        else
            snprintf(ad->model_source, sizeof(ad->model_source), "%s fit", l->f->op);
        ad->alpha_s = l->f->fit.alpha_s;
        ad->bandwidth_Bps = l->f->fit.bandwidth_Bps;
        return;
    }
    ref = cf_analysis_ref(a, l->path);
    if (ref->source == NULL || l->coll == CF_COLL_NONE ||
        cf_model_coeffs(l->coll, NULL, l->comm_size, &A, &C, &G) != CF_OK || !(A > 0))
        return;
    snprintf(ad->model_source, sizeof(ad->model_source), "%s, %s model", ref->source,
             cf_model_default_algo(l->coll));
    ad->alpha_s = A * ref->alpha_s;
    ad->bandwidth_Bps = C > 0 ? ref->bandwidth_Bps / C : INFINITY;
}

/* the why of a stream without a model, the steps_region of one counted
 * by pattern: never written */
static char no_text[1];

static void advice_init(cf_advice_t *ad)
{
    memset(ad, 0, sizeof(*ad));
    ad->why = no_text;
    ad->steps_region = no_text;
    ad->calls_per_step = ad->bytes_per_step = NAN;
    ad->alpha_s = ad->bandwidth_Bps = ad->startup_share = ad->memcpy_Bps = NAN;
    ad->current_s = ad->model_current_s = ad->model_current_unc_s = NAN;
    ad->bucket_bytes = ad->buckets_per_step = ad->model_s = NAN;
    ad->predicted_s = ad->predicted_saving_s = ad->best_saving_share = NAN;
    ad->saving_step_s = ad->saving_unc_step_s = NAN;
    ad->share = NAN;
    ad->call_gap_s = ad->framework_saving_s = NAN;
    ad->post_lead_s = NAN;
    ad->hidden_saving_step_s = ad->hidden_saving_unc_step_s = NAN;
    ad->runs = 1;
    ad->run_spread_step_s = NAN;
    ad->inflight_ratio = ad->inflight_faults = ad->step_faults = NAN;
    ad->step_preempt = ad->poll_load_s = NAN;
    ad->page_fault_s = ad->refault_pages = NAN;
    ad->measured_over_model = NAN;
    ad->blocked_excess_s = 0;
    ad->poll_excess_s = 0;
}

/* Whether framework fw (a CF_FW_BIT) fuses collective coll by its setting:
 * DDP's bucket_cap_mb the gradients' all-reduce, Horovod's threshold its
 * all-reduces and all-gathers. */
static int fw_fuses(unsigned fw, cf_coll_t coll)
{
    if (fw == CF_FW_BIT(TORCH))
        return coll == CF_COLL_ALLREDUCE;
    if (fw == CF_FW_BIT(HOROVOD))
        return coll == CF_COLL_ALLREDUCE || coll == CF_COLL_ALLGATHER;
    return 0;
}

void cf_advice_knobs(cf_advice_t *ad, cf_coll_t coll, unsigned frameworks)
{
    int known = (frameworks & CF_FW_KNOWN) != 0;
    ad->named_ddp = fw_fuses(CF_FW_BIT(TORCH), coll) && (!known || (frameworks & CF_FW_BIT(TORCH)));
    ad->named_horovod = fw_fuses(CF_FW_BIT(HOROVOD), coll) && (!known || (frameworks & CF_FW_BIT(HOROVOD)));
    ad->knob_ddp = ad->named_ddp;
    ad->knob_horovod = ad->named_horovod;
}

/* ---- who makes a stream's calls: its call sites' innermost frames ---- */

/* The call sites with calls, as indexes into the profile's
 * (cf_profile_callsite), sorted by communicator, operation and the file of
 * their innermost frame: 4 bytes a site, the report's peak being the
 * analysis (tests/tools/test_heap.sh). */
typedef struct {
    const cf_profile_t *p;
    uint32_t *v;
    size_t n;
} site_callers_t;

static int strcmp_null(const char *a, const char *b)
{
    return a == b ? 0 : a == NULL ? -1 : b == NULL ? 1 : strcmp(a, b);
}

/* Site i's communicator, operation and innermost file into *c; 0: a bad
 * site (not counted: cf_profile_callsite read it before). */
static int site_key(const site_callers_t *sc, uint32_t i, cf_callsite_t *c)
{
    const cf_callsite_t *s = cf_profile_callsite(sc->p, i, c);
    if (s == NULL)
        return 0;
    if (s != c)
        *c = *s;
    return 1;
}

static int cmp_site(const cf_callsite_t *a, uint32_t comm, const char *op, const char *module, int by_module)
{
    int r;
    if (a->comm != comm)
        return a->comm < comm ? -1 : 1;
    if ((r = strcmp(a->op, op)) != 0 || !by_module)
        return r;
    return strcmp_null(a->frame[0].module, module);
}

static int cmp_caller(const void *pa, const void *pb, void *arg)
{
    cf_callsite_t a, b;
    if (!site_key(arg, *(const uint32_t *)pa, &a) || !site_key(arg, *(const uint32_t *)pb, &b))
        return 0;
    return cmp_site(&a, b.comm, b.op, b.frame[0].module, 1);
}

/* None where the profile has no call sites or they cannot be read (the
 * frameworks loaded decide alone then). */
static void callers_of(const cf_profile_t *p, site_callers_t *sc)
{
    size_t n = cf_profile_ncallsites(p), k = 0;
    cf_callsite_t tmp;
    sc->p = p;
    sc->n = 0;
    if (n == 0 || n > UINT32_MAX || (sc->v = malloc(n * sizeof(*sc->v))) == NULL)
        return;
    for (size_t i = 0; i < n; i++) {
        const cf_callsite_t *s = cf_profile_callsite(p, i, &tmp);
        if (s == NULL) { /* a bad section: none */
            k = 0;
            break;
        }
        if (s->calls > 0 && s->nframe > 0 && s->op != NULL)
            sc->v[k++] = (uint32_t)i;
    }
    sc->n = k;
    if (k > 1)
        qsort_r(sc->v, k, sizeof(*sc->v), cmp_caller, sc);
}

/* The stream's callers (cf_advice_t.caller): a framework whose setting is
 * named must make most of its calls where the call sites say who makes
 * them (a program that loaded PyTorch and sums its gradients through
 * mpi4py sets no bucket_cap_mb of DDP's; a setting that fuses a third of
 * the calls does not bring the saving priced for all of them). */
static void stream_callers(const site_callers_t *sc, const cf_an_fit_t *f, cf_advice_t *ad)
{
    cf_callsite_t c, next;
    size_t lo = 0, hi = sc->n;
    while (lo < hi) { /* the first site of the stream */
        size_t mid = lo + (hi - lo) / 2;
        if (site_key(sc, sc->v[mid], &c) && cmp_site(&c, f->comm, f->op, NULL, 0) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t best = 0, run = 0;
    double all = 0, torch = 0, horovod = 0; /* doubles: a profile's counts may sum past 64 bits */
    const char *best_mod = NULL;
    size_t i = lo;
    int more = i < sc->n && site_key(sc, sc->v[i], &c) && cmp_site(&c, f->comm, f->op, NULL, 0) == 0;
    if (!more)
        return; /* no call site of the stream */
    for (; more; i++) {
        unsigned fw = cf_fw_of_path(c.frame[0].module);
        torch += fw == CF_FW_BIT(TORCH) ? (double)c.calls : 0;
        horovod += fw == CF_FW_BIT(HOROVOD) ? (double)c.calls : 0;
        all += (double)c.calls;
        run += c.calls;
        more = i + 1 < sc->n && site_key(sc, sc->v[i + 1], &next) && cmp_site(&next, f->comm, f->op, NULL, 0) == 0;
        if (!more || strcmp_null(next.frame[0].module, c.frame[0].module) != 0) {
            if (run > best)
                best = run, best_mod = c.frame[0].module;
            run = 0;
        }
        c = next;
    }
    ad->caller = best_mod;
    ad->callers_seen = 1;
    torch = ad->named_ddp ? torch : 0;
    horovod = ad->named_horovod ? horovod : 0;
    ad->share_horovod = horovod > torch;
    ad->knob_ddp &= 2 * torch > all;
    ad->knob_horovod &= 2 * horovod > all;
    double pct = all > 0 ? floor((horovod > torch ? horovod : torch) * 100.0 / all + 0.5) : 0;
    ad->fw_pct6 = (uint8_t)(ad->knob_ddp || ad->knob_horovod ? 100.0 - fmax(pct, 51.0) : fmin(pct, 50.0));
}

/* The bucket sizes priced: powers of two from 64 KiB to 1 GiB, and the
 * defaults of the frameworks whose setting fuses the stream, named. */
static int candidates(cf_advice_t *ad)
{
    size_t n = 0;
    int ddp_done = !ad->named_ddp;
    if ((ad->cand = calloc(1, CF_ADV_MAX_CAND * sizeof(*ad->cand) + CF_ADV_WHY_LEN)) == NULL)
        return CF_ERR_NOMEM;
    ad->why = (char *)(ad->cand + CF_ADV_MAX_CAND);
    for (int e = 16; e <= 30 && n < CF_ADV_MAX_CAND; e++) {
        double S = ldexp(1.0, e);
        if (!ddp_done && CF_ADV_DDP_BYTES < S && n + 1 < CF_ADV_MAX_CAND) {
            ad->cand[n].bucket_bytes = CF_ADV_DDP_BYTES;
            ad->cand[n++].name = "DDP default (25 MiB)";
            ddp_done = 1;
        }
        ad->cand[n].bucket_bytes = S;
        ad->cand[n++].name = !ad->named_horovod              ? NULL
                             : S == CF_ADV_HOROVOD_BYTES     ? "Horovod default (64 MiB)"
                             : S == CF_ADV_HOROVOD_NEW_BYTES ? "Horovod recent default (128 MiB)"
                                                             : NULL;
    }
    ad->ncand = (uint32_t)n;
    return CF_OK;
}

/* Largest size the stream's predictor measured (program or calibration). */
static double measured_hi(const cf_predictor_t *pr)
{
    return pr->n > 0 ? pr->pt[pr->n - 1].size : NAN;
}

/* The calibration budget that would reach a candidate's buckets: sizes
 * doubling up to S cost about twice T(S), each measured at least four
 * times with a guard of twice that, in the collectives' half of the
 * budget: 32 T(S), rounded up to one significant digit.  NaN: unknown. */
static double budget_to_reach(const cf_adv_cand_t *cd)
{
    if (!(cd->buckets > 0) || !isfinite(cd->model_s) || !(cd->model_s > 0))
        return NAN;
    double need = 32 * cd->model_s / cd->buckets;
    double p = pow(10, floor(log10(need)));
    return ceil(need / p) * p;
}

int cf_advice_refaulted(const cf_advice_t *ad, int in_flight)
{
    double faults = in_flight ? ad->inflight_faults : ad->step_faults;
    double bytes = in_flight ? ad->inflight_calls * ad->bucket_bytes : ad->bytes_per_step;
    if (!isfinite(faults) || !(bytes > 0) || (in_flight && !isfinite(ad->inflight_ratio)))
        return -1;
    return faults >= CF_ADV_REFAULT_SHARE * bytes / CF_ADV_PAGE_BYTES;
}

double cf_advice_cand_predicted_s(const cf_advice_t *ad, const cf_adv_cand_t *cd)
{
    return ad->model_current_s > 0 ? predict_run(ad, cd, ad->model_current_s) : NAN;
}

/* The framework's time outside MPI that n calls a step cost, at the
 * measured gap each (call_gap_s; 0 where none was measured): the time a
 * step pays for the stream beside its MPI time, which fewer calls pay
 * less of (cf_advice.h, "Time outside MPI"). */
double cf_advice_framework_step(const cf_advice_t *ad, double n)
{
    return isfinite(ad->call_gap_s) && n > 0 ? ad->call_gap_s * n : 0.0;
}

/* A candidate judged per step: blocking streams in the predictor's times
 * (T(S) against now), nonblocking ones in measured time (predict_run over
 * the steps against current_s over the steps), since only their blocked
 * part follows the predictor; both with the framework's time per call.
 * The reference time, a candidate's time and its saving with the
 * saving's uncertainty. */
static double judge_ref(const cf_advice_t *ad, double now)
{
    return (ad->nonblocking ? ad->current_s / (double)ad->steps : now) +
           cf_advice_framework_step(ad, ad->calls_per_step);
}

static double judge_time(const cf_advice_t *ad, const cf_adv_cand_t *cd, double now)
{
    return (ad->nonblocking ? predict_run(ad, cd, now) / (double)ad->steps : cd->model_s) +
           cf_advice_framework_step(ad, fmin(cd->buckets, ad->calls_per_step));
}

double cf_advice_cand_framework(const cf_advice_t *ad, const cf_adv_cand_t *cd)
{
    return cf_advice_framework_step(ad, ad->calls_per_step) -
           cf_advice_framework_step(ad, fmin(cd->buckets, ad->calls_per_step));
}

static double judge_saving(const cf_advice_t *ad, const cf_adv_cand_t *cd, double now, double *unc_p)
{
    /* blocking: the predictor's difference, its uncertainty; nonblocking:
     * measured now against the fused buckets' T(S), the latter's */
    *unc_p = ad->nonblocking ? cd->unc_s : cd->saving_unc_s;
    return judge_ref(ad, now) - judge_time(ad, cd, now);
}

double cf_advice_cand_saving(const cf_advice_t *ad, const cf_adv_cand_t *cd, double *unc_p)
{
    *unc_p = NAN;
    return ad->model_current_s > 0 && ad->steps > 0 ? judge_saving(ad, cd, ad->model_current_s, unc_p) : NAN;
}

double cf_advice_ref_step(const cf_advice_t *ad)
{
    return ad->model_current_s > 0 && ad->steps > 0 ? judge_ref(ad, ad->model_current_s) : NAN;
}

/* A nonblocking stream's saving per step if the overlap hid the fused
 * buckets as it hides the calls now, the framework's time outside MPI
 * they remove included, with its uncertainty (the predictor's, scaled as
 * the blocked time is). */
static double hidden_saving(const cf_advice_t *ad, const cf_adv_cand_t *cd, double now, double *unc_p)
{
    /* the polls' tails kept whole, as for the exposed end (poll_tail_gap) */
    *unc_p = now > 0 ? cd->saving_unc_s * ad->blocked_s / (double)ad->steps / now + poll_tail_gap(ad, cd) : NAN;
    return (ad->current_s - predict_nb(ad, cd, now, 1)) / (double)ad->steps + cf_advice_cand_framework(ad, cd);
}

/* What a nonblocking stream costs the step: the time blocked on it in
 * Wait/Test, its posts and its polls (cf_advice.h); its spans from post to
 * completion overlap each other and compute, and add up to nothing it
 * costs.  0 where the profile does not charge the blocked time. */
static int nonblocking_cost(const cf_analysis_t *a, const cf_index_t *x, const cf_an_fit_t *f, cf_advice_t *ad)
{
    double post = 0, blocked = stream_blocked(a, x, f, &post), longest;
    int with_posts = 0;
    if (!isfinite(blocked))
        return 0;
    ad->post_s = post / (double)f->comm_size;
    ad->blocked_s = (blocked - post) / (double)f->comm_size;
    ad->poll_s = stream_polls(a, f, &with_posts, &ad->poll_excess_s, &longest) / (double)f->comm_size;
    ad->polls_with_posts = with_posts != 0;
    ad->poll_excess_s /= (double)f->comm_size;
    ad->poll_load_s = poll_load(cf_analysis_profile(a), ad, longest);
    ad->skew_s = arrival_skew(cf_analysis_profile(a), ad);
    ad->current_s = ad->post_s + ad->blocked_s + ad->poll_s;
    ad->current_source = "blocked";
    ad->share = cf_analysis_total_s(a) > 0 ? blocked / cf_analysis_total_s(a) : NAN;
    return 1;
}

/* A nonblocking stream none of whose buckets saves with its time exposed:
 * "uncertain" where one saves if the overlap hid it as it hides the calls
 * now, saying both ends; 0 where none does. */
static int hidden_verdict(cf_advice_t *ad, double now, double ref)
{
    size_t hc = (size_t)-1;
    double hbest = 0, hunc = NAN, eunc, exposed;
    char b1[CF_FMT_LEN], b2[CF_FMT_LEN], b3[CF_FMT_LEN], b4[CF_FMT_LEN];

    for (size_t c = 0; c < ad->ncand; c++) {
        double unc, sv = hidden_saving(ad, &ad->cand[c], now, &unc);
        if (sv > unc && sv >= CF_ADV_MIN_GAIN * ref && sv > hbest * (1.0 + CF_ADV_NEAR_BEST)) {
            hbest = sv;
            hunc = unc;
            hc = c;
        }
    }
    if (hc == (size_t)-1)
        return 0;
    exposed = judge_saving(ad, &ad->cand[hc], now, &eunc);
    ad->verdict = "uncertain";
    ad->reason = "the saving depends on the overlap: MPI moves a nonblocking collective only inside MPI calls "
                 "unless it has a progress thread, and fused buckets leave few; run once with the buckets "
                 "and compare the two profiles with commfit diff to settle it";
    ad->hidden_saving_step_s = hbest;
    ad->hidden_saving_unc_step_s = hunc;
    snprintf(ad->why, CF_ADV_WHY_LEN,
             "buckets of %s: saving %s per step if the overlap hides them as it hides the calls now "
             "(uncertainty %s), %s if their time is exposed",
             cf_fmt_size(ad->cand[hc].bucket_bytes, b1, sizeof(b1)), cf_fmt_time(hbest, b2, sizeof(b2)),
             cf_fmt_time(hunc, b3, sizeof(b3)), cf_fmt_time(exposed, b4, sizeof(b4)));
    return 1;
}

/* The stream's operation and steps (cf_advice.h); CF_ERR_NOMEM. */
static int stream_steps(const cf_profile_t *p, const cf_index_t *x, const site_callers_t *sc, const cf_an_fit_t *f,
                        cf_advice_t *ad)
{
    char region[128];

    advice_init(ad);
    ad->op = f->op;
    ad->comm = f->comm;
    ad->comm_size = f->comm_size;
    ad->path = f->path;
    ad->coll = f->coll;
    cf_advice_knobs(ad, f->coll, p->frameworks);
    stream_callers(sc, f, ad);
    ad->nonblocking = (strncmp(f->op, "MPI_I", 5) == 0 && islower((unsigned char)f->op[5])) ||
                      strstr(f->op, "_init") != NULL;
    ad->calls = f->calls;
    ad->bytes = f->bytes;
    ad->memcpy_Bps = isfinite(p->memcpy_Bps) && p->memcpy_Bps > 0 ? p->memcpy_Bps : NAN;
    ad->steps = steps_from_regions(p, x, f, region, sizeof(region));
    if (ad->steps > 0) {
        double sum = 0;
        size_t n = 0;
        ad->steps_source = "region";
        if ((ad->steps_region = strdup(region)) == NULL) {
            ad->steps_region = no_text;
            return CF_ERR_NOMEM;
        }
        for (size_t i = 0; i < p->nrank; i++) {
            const char *sr;
            double pf = cf_profile_rank_faults(p, i, &sr);
            if (isfinite(pf) && strcmp(sr, region) == 0) {
                sum += pf;
                n++;
            }
        }
        ad->step_faults = n ? (float)(sum / (double)n) : NAN;
        double rate;
        ad->step_preempt = (float)step_load(p, region, ad->steps, &rate);
    } else {
        ad->steps = steps_from_pattern(f);
        ad->steps_source = "pattern";
    }
    ad->calls_per_step = (double)f->calls / ((double)f->comm_size * (double)ad->steps);
    ad->bytes_per_step = (double)f->bytes / ((double)f->comm_size * (double)ad->steps);
    return CF_OK;
}

/* What the stream costs, measured (cf_advice.h, "Measured time"); 0 with
 * the reason set where no advice is given. */
static int stream_cost(const cf_analysis_t *a, const cf_index_t *x, const cf_an_fit_t *f, cf_advice_t *ad)
{
    if (ad->nonblocking) {
        if (!nonblocking_cost(a, x, f, ad)) {
            ad->reason = "nonblocking: the profile does not charge the time blocked in Wait/Test to "
                         "its requests (an older plugin), and spans from post to completion do not add "
                         "up to a cost";
            return 0;
        }
        post_gap(cf_analysis_profile(a), ad);
    } else {
        measured(cf_analysis_profile(a), x, f, ad);
        stream_gap(cf_analysis_profile(a), ad);
        ad->share = cf_analysis_total_s(a) > 0 ? f->time_s / cf_analysis_total_s(a) : NAN;
    }
    /* Fusing joins the calls of one step: without steps there is nothing
     * to join them within, and a stream that costs next to nothing is not
     * worth a change. */
    if (ad->steps < 2) {
        ad->reason = "no repeating step found: mark each step with MPI_Pcontrol(1, \"step\") ... "
                     "MPI_Pcontrol(-1, \"step\") for fusion advice";
        return 0;
    }
    if (!(ad->share >= CF_ADV_MIN_SHARE)) {
        ad->reason = ad->nonblocking ? "blocked in Wait/Test under 1% of the MPI time: fusing it cannot matter"
                                     : "under 1% of the MPI time: fusing it cannot matter";
        return 0;
    }
    return 1;
}

/* The tensors of one step, spread as the packing expects (cf_advice.h):
 * whole calls per step and rank, per bin.  CF_OK with *ts_p (free it),
 * CF_ERR_NOMEM, or 1 with the reason set: too many to model. */
static int step_tensors(const cf_an_fit_t *f, cf_advice_t *ad, double **ts_p, size_t *nt_p)
{
    size_t nt = 0, rec = 0;
    double *ts, *tmp;

    for (size_t k = 0; k < f->nbin; k++) {
        double c = (double)f->bin[k].calls / ((double)f->comm_size * (double)ad->steps);
        double m = llround(c) > 0 ? (double)llround(c) : 1.0;
        if (nt + (size_t)m > MAX_TENSORS) {
            ad->model_source[0] = '\0';
            ad->reason = "too many calls per step to model one by one";
            return 1;
        }
        nt += (size_t)m;
    }
    ad->tensors = nt;
    ts = malloc((nt ? nt : 1) * sizeof(*ts));
    tmp = malloc((nt ? nt : 1) * sizeof(*tmp));
    if (ts == NULL || tmp == NULL) {
        free(ts);
        free(tmp);
        return CF_ERR_NOMEM;
    }
    for (size_t k = 0; k < f->nbin; k++) {
        const cf_an_bin_t *b = &f->bin[k];
        double c = (double)b->calls / ((double)f->comm_size * (double)ad->steps);
        long long m = llround(c);
        for (long long j = 0; j < (m > 0 ? m : 1); j++)
            ts[rec++] = m > 0 ? b->size : c * b->size;
    }
    spread(ts, tmp, nt);
    free(tmp);
    *ts_p = ts;
    *nt_p = nt;
    return CF_OK;
}

/* A nonblocking candidate's refaults (cf_advice.h, "Refaults"): where
 * the program faults a quarter of the stream's pages or more afresh every
 * step, the share of the stream's pages the program refaulted (at most
 * all) less those the calibration's set faulted (in its ratio already),
 * at the calibration's fresh-page cost, added to its exposed time and half
 * of it to its uncertainty; one bucket a step, half of them, uncertain by
 * as much (none to all). */
/* Whether a candidate's refaults are to be worked out: the ranks refault
 * a quarter of the stream's pages or more a step and the fresh page's cost
 * is known; else they are none (0) or unknown (NaN). */
static int refaults_known(const cf_advice_t *ad, cf_adv_cand_t *cd)
{
    cd->refault_pages = cd->refault_s = 0;
    if (cf_advice_refaulted(ad, 0) != 1)
        return 0;
    if (!isfinite(ad->page_fault_s) || !(ad->page_fault_s > 0)) {
        cd->refault_pages = cd->refault_s = NAN;
        return 0;
    }
    return 1;
}

static void price_refaults(const cf_advice_t *ad, cf_adv_cand_t *cd)
{
    double pages = ad->bytes_per_step / CF_ADV_PAGE_BYTES, priced = 0;
    if (!refaults_known(ad, cd))
        return;
    if (isfinite(cd->inflight_ratio) && isfinite(cd->inflight_faults) && cd->inflight_calls > 0)
        priced = cd->inflight_faults * cd->buckets / cd->inflight_calls;
    double all = fmax(0.0, fmin(1.0, ad->step_faults / pages) * pages - priced);
    cd->refault_pages = cd->buckets >= 2 ? all : 0.5 * all;
    cd->refault_s = cd->refault_pages * ad->page_fault_s;
    cd->exposed_s += cd->refault_s;
    cd->unc_s += 0.5 * all * ad->page_fault_s;
}

/* A blocking candidate's refaults, stated and not priced (cf_advice.h,
 * "Refaults"): where the ranks fault a quarter of the stream's pages or
 * more afresh every step, one bucket's temporary buffer (the bucket's
 * bytes, at most the stream's, and no more pages than the ranks faulted
 * in a step) faulted in again each step, at the
 * calibration's fresh-page cost.  Its price leaves them out: the
 * calibration's calls, one after another, kept their block, as a heap the
 * program keeps (MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_) does. */
static void bound_refaults(const cf_advice_t *ad, cf_adv_cand_t *cd)
{
    if (!refaults_known(ad, cd))
        return;
    cd->refault_pages = fmin(fmin(cd->bucket_bytes, ad->bytes_per_step) / CF_ADV_PAGE_BYTES, ad->step_faults);
    cd->refault_s = cd->refault_pages * ad->page_fault_s;
}

/* A nonblocking candidate's exposed T(S): its buckets in flight together,
 * as the calibration measured them where it did (cf_adv_cand_t), and the
 * memory they would fault in again. */
static void price_in_flight(const cf_advice_t *ad, cf_adv_cand_t *cd, const cf_calib_coll_t *cc)
{
    double unc, faults;
    cd->inflight_ratio = cf_calib_inflight_ratio(cc, cd->bucket_bytes, cd->buckets, &cd->inflight_calls, &faults, &unc);
    cd->inflight_faults = (float)faults;
    cd->exposed_s = cd->model_s;
    if (isfinite(cd->inflight_ratio)) {
        cd->exposed_s = (cd->model_s - cd->copy_s) * cd->inflight_ratio + cd->copy_s;
        cd->unc_s = cd->unc_s * cd->inflight_ratio + (cd->model_s - cd->copy_s) * cd->inflight_ratio * unc;
    }
    price_refaults(ad, cd);
    cd->unc_s += poll_tail_gap(ad, cd);
}

/* T(calls as they are), returned, and every candidate's T(S) under the
 * predictor (exposed in flight for a nonblocking stream, from cc); *bi_p
 * the candidate judged fastest, *best_p its time. */
static double price_candidates(cf_advice_t *ad, const double *ts, size_t nt, const cf_predictor_t *pr,
                               const cf_calib_coll_t *cc, size_t *bi_p, double *best_p)
{
    pack_out_t po;
    double now = pack(ts, nt, 0, pred_time, pr, NAN, &po), s_now = 0, best;

    ad->model_current_unc_s = po.unc;
    ad->current_pred_source = po.source;
    for (size_t i = 0; i < nt; i++) {
        cf_pred_t r;
        cf_pred_at(pr, ts[i], &r);
        s_now += r.startup_s >= 0 ? r.startup_s : NAN; /* unknown without a line */
    }
    ad->model_current_s = now;
    ad->startup_share = now > 0 ? s_now / now : NAN;
    if (ad->nonblocking)
        nonblocking_excess(ad, now);
    best = judge_ref(ad, now);
    *bi_p = 0;
    for (size_t c = 0; c < ad->ncand; c++) {
        cf_adv_cand_t *cd = &ad->cand[c];
        cd->model_s = pack(ts, nt, cd->bucket_bytes, pred_time, pr, ad->memcpy_Bps, &po);
        cd->buckets = po.buckets;
        cd->fused_bytes = po.fused;
        cd->copy_s = po.copy;
        cd->unc_s = po.unc;
        cd->saving_unc_s = po.diff_unc;
        cd->source = po.source;
        cd->last_s = po.last;
        cd->inflight_ratio = cd->inflight_faults = NAN;
        cd->refault_pages = cd->refault_s = 0;
        cd->exposed_s = cd->model_s;
        if (ad->nonblocking)
            price_in_flight(ad, cd, cc);
        else
            bound_refaults(ad, cd);
        if (judge_time(ad, cd, now) < best) {
            best = judge_time(ad, cd, now);
            *bi_p = c;
        }
    }
    *best_p = best;
    return now;
}

/* "fuse" into cd, which saves sv per step (uncertainty unc). */
static void advise_fuse(cf_advice_t *ad, const cf_adv_cand_t *cd, double sv, double unc, double now)
{
    ad->verdict = "fuse";
    ad->reason = cf_advice_cand_framework(ad, cd) > 0
                     ? "fewer calls pay fewer startups, and less of the framework's time per call, than packing costs"
                     : "fewer calls pay fewer startups than packing costs";
    ad->bucket_bytes = cd->bucket_bytes;
    ad->buckets_per_step = cd->buckets;
    ad->model_s = cd->model_s;
    ad->inflight_ratio = cd->inflight_ratio;
    ad->inflight_calls = cd->inflight_calls;
    ad->inflight_faults = cd->inflight_faults;
    ad->refault_pages = (float)cd->refault_pages;
    ad->predicted_s = predict_run(ad, cd, now);
    ad->predicted_saving_s = ad->current_s - ad->predicted_s;
    ad->saving_step_s = sv;
    ad->saving_unc_step_s = unc;
    ad->extrapolated = cd->source == CF_PRED_MODEL;
    if (isfinite(ad->call_gap_s))
        ad->framework_saving_s = ad->call_gap_s * fmax(0.0, ad->calls_per_step - cd->buckets) * (double)ad->steps;
    ad->hidden_saving_step_s = ad->nonblocking ? hidden_saving(ad, cd, now, &unc) : NAN;
    ad->hidden_saving_unc_step_s = ad->nonblocking ? unc : NAN;
}

void cf_advice_set_fuse(cf_advice_t *ad, const cf_adv_cand_t *cd, double sv, double unc)
{
    advise_fuse(ad, cd, sv, unc, ad->model_current_s);
}

double cf_advice_eligible(double sv, double fw)
{
    /* the framework's time rests on one measured median: it makes a
     * saving larger, never an MPI loss into a gain */
    return sv - fw < 0 ? sv - fw : sv;
}

size_t cf_advice_pick(const double *sv, const double *unc, size_t n, double ref)
{
    size_t ti = (size_t)-1;
    for (size_t c = 0; c < n; c++)
        if (sv[c] > unc[c] && sv[c] >= CF_ADV_MIN_GAIN * ref && (ti == (size_t)-1 || sv[c] > sv[ti]))
            ti = c;
    for (size_t c = 0; ti != (size_t)-1 && c < n; c++)
        if (sv[c] > unc[c] && ref - sv[c] <= (ref - sv[ti]) * (1.0 + CF_ADV_NEAR_BEST))
            return c;
    return ti;
}

/* Trusted: the candidate cf_advice_pick names, on this run's savings.
 * 0: none. */
static int advise_trusted(cf_advice_t *ad, double now, double ref)
{
    double sv[CF_ADV_MAX_CAND], unc[CF_ADV_MAX_CAND];
    for (size_t c = 0; c < ad->ncand; c++)
        sv[c] = cf_advice_eligible(judge_saving(ad, &ad->cand[c], now, &unc[c]), cf_advice_cand_framework(ad, &ad->cand[c]));
    size_t c = cf_advice_pick(sv, unc, ad->ncand, ref);
    if (c == (size_t)-1)
        return 0;
    advise_fuse(ad, &ad->cand[c], sv[c], unc[c], now);
    return 1;
}

/* How many times slower the calibration's points above the program's
 * largest measured size ran than that size's time scaled up by the bytes,
 * the most a cost alpha + M/B grows (T(S) <= T(M) S / M for S >= M): the
 * largest such ratio, 0 where either side is missing. */
static double calib_slowdown(const cf_predictor_t *pr)
{
    const cf_pred_point_t *top = NULL;
    double worst = 0;
    for (size_t i = 0; i < pr->n; i++) /* ascending: the last is the largest */
        if (pr->pt[i].source == CF_PRED_MEASURED)
            top = &pr->pt[i];
    for (size_t i = 0; top != NULL && i < pr->n; i++) {
        const cf_pred_point_t *q = &pr->pt[i];
        if (q->source == CF_PRED_CALIBRATION && q->size > top->size && top->time_s > 0)
            worst = fmax(worst, q->time_s / (top->time_s * q->size / top->size));
    }
    return worst;
}

/* The why of a verdict without a trusted saving: what the best buckets
 * save per step, after lead (the measured ground, or NULL). */
static void best_buckets_why(cf_advice_t *ad, const cf_adv_cand_t *cb, double ref, const char *lead)
{
    char b1[CF_FMT_LEN], b2[CF_FMT_LEN], b3[CF_FMT_LEN], b4[CF_FMT_LEN];
    snprintf(ad->why, CF_ADV_WHY_LEN, "%s%sthe best buckets, %s, save %s of %s per step (uncertainty %s)",
             lead != NULL ? lead : "", lead != NULL ? "; " : "", cf_fmt_size(cb->bucket_bytes, b1, sizeof(b1)),
             cf_fmt_time(ad->saving_step_s, b2, sizeof(b2)), cf_fmt_time(ref, b3, sizeof(b3)),
             cf_fmt_time(ad->saving_unc_step_s, b4, sizeof(b4)));
}

/* No trusted saving: "no gain" or "uncertain", with what would settle it;
 * bi is the candidate judged fastest. */
static void advise_untrusted(const cf_analysis_t *a, const cf_an_fit_t *f, const cf_predictor_t *pr,
                             cf_advice_t *ad, double now, double ref, size_t bi)
{
    const cf_adv_cand_t *cb = &ad->cand[bi];
    double gain = ad->saving_step_s + ad->saving_unc_step_s;
    char b1[CF_FMT_LEN], b2[CF_FMT_LEN], b3[CF_FMT_LEN], b4[CF_FMT_LEN], lead[CF_ADV_WHY_LEN];

    if (!isfinite(cb->model_s) || cb->model_s >= now) {
        /* no candidate predicted, or none below the calls as they are:
         * nothing beyond the measured sizes to tell */
        size_t c;
        for (c = 0; c < ad->ncand && isfinite(ad->cand[c].model_s); c++)
            ;
        if (c < ad->ncand) {
            ad->verdict = "uncertain";
            ad->reason = "the bucket sizes lie beyond the sizes measured and no line extends them: run with "
                         "COMMFIT_CALIBRATE=2s to measure them";
            return;
        }
    }
    double fw = cf_advice_cand_framework(ad, cb);
    if (ad->saving_step_s > ad->saving_unc_step_s && ad->saving_step_s >= CF_ADV_MIN_GAIN * ref &&
        ad->saving_step_s - fw < 0) {
        /* a saving beyond its uncertainty that the framework's time per
         * call makes, the buckets' MPI time higher (cf_advice_eligible) */
        char b5[CF_FMT_LEN];
        ad->verdict = "uncertain";
        ad->reason = "the saving rests on the framework's time per call alone, and the buckets' MPI time rises: "
                     "run once with the buckets and compare the two profiles with commfit diff to settle it";
        snprintf(ad->why, CF_ADV_WHY_LEN, "buckets of %s: saving %s per step (uncertainty %s), of which %s is the "
                 "framework's time per call; their MPI time %s more per step",
                 cf_fmt_size(cb->bucket_bytes, b1, sizeof(b1)), cf_fmt_time(ad->saving_step_s, b2, sizeof(b2)),
                 cf_fmt_time(ad->saving_unc_step_s, b3, sizeof(b3)), cf_fmt_time(fw, b4, sizeof(b4)),
                 cf_fmt_time(fw - ad->saving_step_s, b5, sizeof(b5)));
        return;
    }
    double slow = calib_slowdown(pr);
    if (gain < CF_ADV_MIN_GAIN * ref && cb->source == CF_PRED_CALIBRATION && slow > CF_ADV_CAL_SLOW) {
        /* the buckets priced by a calibration that ran slower than any
         * linear cost of the program's own calls allows: a disturbed
         * machine, whose "no gain" no one could defend */
        ad->verdict = "uncertain";
        ad->reason = "the calibration ran slower than the program's own calls allow (a machine busy while it "
                     "measured): a run on a quiet machine settles it";
        snprintf(lead, sizeof(lead), "the calibration's sizes took up to %.0fx the program's largest size "
                 "scaled by the bytes", slow);
        best_buckets_why(ad, cb, ref, lead);
        return;
    }
    if (gain < CF_ADV_MIN_GAIN * ref && ad->disturbed) {
        /* a run measured over twice its predictor: its prices (and a
         * calibration timed on the same machine) are no ground for "no gain" */
        ad->verdict = "uncertain";
        ad->reason = "the run was disturbed (its steps took over twice what the medians predict): a run on a "
                     "quiet machine settles it";
        snprintf(lead, sizeof(lead), "the run measured %.1fx what the medians predict per step",
                 ad->measured_over_model);
        best_buckets_why(ad, cb, ref, lead);
        return;
    }
    if (gain < CF_ADV_MIN_GAIN * ref ||
        (!ad->nonblocking &&
         ad->startup_share * now + cf_advice_framework_step(ad, ad->calls_per_step) < CF_ADV_MIN_GAIN * ref)) {
        /* even at the end of its uncertainty the best saves under 5 %, or
         * the startups and the framework's time per call, all that fusing
         * can save, are under 5 % */
        ad->verdict = "no gain";
        ad->reason = ad->startup_share < 0.5 ? "bandwidth-bound: fusing saves under 5%" : "fusing saves under 5%";
        best_buckets_why(ad, cb, ref, NULL);
        return;
    }
    ad->verdict = "uncertain";
    if (cb->source == CF_PRED_MODEL && !(cb->bucket_bytes <= measured_hi(pr))) {
        const cf_calib_t *cal = &a->calib;
        const cf_calib_coll_t *cc = cf_calib_coll_of(cal, f->op, f->comm);
        double need = budget_to_reach(cb);
        char b5[32] = "";
        ad->reason = cc != NULL || cal->present ? "the calibration's budget did not reach the bucket sizes: give it "
                                                  "the budget named to measure them"
                                                : "the bucket sizes lie beyond the sizes measured: give the "
                                                  "calibration the budget named to measure them";
        if (isfinite(need))
            snprintf(b5, sizeof(b5), "COMMFIT_CALIBRATE=%gs", need);
        snprintf(ad->why, CF_ADV_WHY_LEN,
                 "buckets of %s, measured up to %s: saving %s per step, uncertainty %s; budget: %s",
                 cf_fmt_size(cb->bucket_bytes, b1, sizeof(b1)), cf_fmt_size(measured_hi(pr), b2, sizeof(b2)),
                 cf_fmt_time(ad->saving_step_s, b3, sizeof(b3)), cf_fmt_time(ad->saving_unc_step_s, b4, sizeof(b4)),
                 b5[0] ? b5 : "COMMFIT_CALIBRATE=2s or more");
        return;
    }
    if (cb->source == CF_PRED_MODEL && ad->nonblocking) {
        /* a nonblocking stream's spans are no call times: only the
         * calibration, which times the nonblocking operation itself at
         * its sizes, measures them */
        double need = budget_to_reach(cb);
        char b5[32] = "COMMFIT_CALIBRATE=2s or more";
        ad->reason = "the saving is within the prediction's uncertainty: sizes of its buckets are priced on the "
                     "link model (a nonblocking stream's spans are no call times): give the calibration, which "
                     "times the nonblocking operation itself, the budget named to measure them";
        if (isfinite(need))
            snprintf(b5, sizeof(b5), "COMMFIT_CALIBRATE=%gs", need);
        snprintf(ad->why, CF_ADV_WHY_LEN, "buckets of %s: saving %s per step, uncertainty %s; budget: %s",
                 cf_fmt_size(cb->bucket_bytes, b1, sizeof(b1)), cf_fmt_time(ad->saving_step_s, b2, sizeof(b2)),
                 cf_fmt_time(ad->saving_unc_step_s, b3, sizeof(b3)), b5);
        return;
    }
    ad->reason = cb->source != CF_PRED_MODEL ? "the saving is within the prediction's uncertainty: profile more steps"
                                             : "the saving is within the prediction's uncertainty: the calls' own "
                                               "sizes are priced on the line; profile more steps";
    snprintf(ad->why, CF_ADV_WHY_LEN, "buckets of %s: saving %s per step, uncertainty %s",
             cf_fmt_size(cb->bucket_bytes, b1, sizeof(b1)), cf_fmt_time(ad->saving_step_s, b2, sizeof(b2)),
             cf_fmt_time(ad->saving_unc_step_s, b3, sizeof(b3)));
}

static int advise(const cf_analysis_t *a, const cf_index_t *x, const site_callers_t *sc, const cf_an_fit_t *f,
                  cf_advice_t *ad)
{
    cf_an_line_t line;
    cf_predictor_t *pr = NULL;
    double *ts = NULL, now, best, ref;
    size_t nt = 0, bi = 0;
    int rc;

    if ((rc = stream_steps(cf_analysis_profile(a), x, sc, f, ad)) != CF_OK || !stream_cost(a, x, f, ad))
        return rc;
    if ((pr = malloc(sizeof(*pr))) == NULL)
        return CF_ERR_NOMEM;
    cf_an_predictor(a, f, &line, pr);
    model_line(a, &line, ad);
    if (ad->model_source[0] == '\0' && pr->n == 0) {
        free(pr);
        ad->reason = ad->nonblocking ? "no time for its calls: no blocking twin measured, no calibration, "
                                       "and no point-to-point link (give --link)"
                                     : "no model: too few sizes to fit and no point-to-point link (give --link)";
        return CF_OK;
    }
    if (ad->model_source[0] == '\0')
        cf_strlcpy(ad->model_source, "measured sizes only", sizeof(ad->model_source));
    if ((rc = step_tensors(f, ad, &ts, &nt)) != CF_OK || (rc = candidates(ad)) != CF_OK) {
        free(ts);
        free(pr);
        return rc == 1 ? CF_OK : rc;
    }
    ad->page_fault_s = (float)a->calib.page_fault_s;
    now = price_candidates(ad, ts, nt, pr, cf_calib_coll_of(&a->calib, f->op, f->comm), &bi, &best);
    free(ts);
    if (!(now > 0) || !isfinite(now) || !isfinite(best)) {
        free(pr);
        ad->model_source[0] = '\0';
        ad->reason = "no model: the model gives no time for these sizes";
        return CF_OK;
    }
    ref = judge_ref(ad, now);
    if (!ad->nonblocking) {
        double step = ad->current_s / (double)ad->steps;
        /* beyond twice the predictor's own uncertainty */
        judge_disturbed(ad, step, now, step - now > 2.0 * ad->model_current_unc_s);
    }
    ad->best_saving_share = (ref - best) / ref;
    ad->predicted_s = ad->current_s;
    ad->predicted_saving_s = 0.0;
    ad->saving_step_s = judge_saving(ad, &ad->cand[bi], now, &ad->saving_unc_step_s);
    ad->refault_pages = (float)ad->cand[bi].refault_pages;
    ad->extrapolated = ad->cand[bi].source == CF_PRED_MODEL;
    if (nt <= 1 || ad->calls_per_step < 1.5) {
        ad->verdict = "no gain";
        ad->reason = "already one call per step";
    } else if (!advise_trusted(ad, now, ref) && !(ad->nonblocking && hidden_verdict(ad, now, ref))) {
        advise_untrusted(a, f, pr, ad, now, ref, bi);
    }
    free(pr);
    return CF_OK;
}

static int cmp_advice(const void *pa, const void *pb)
{
    const cf_advice_t *a = pa, *b = pb;
    double x = isfinite(a->current_s) ? a->current_s : -1, y = isfinite(b->current_s) ? b->current_s : -1;
    if (x != y)
        return x < y ? 1 : -1;
    return strcmp(a->op, b->op);
}

int cf_advice_run(const cf_analysis_t *a, cf_advice_t **adv_p, size_t *n_p)
{
    cf_advice_t *adv = NULL;
    cf_index_t x = {0, NULL};
    site_callers_t sc = {NULL, NULL, 0};
    size_t n = 0, cap = 0;

    if (a == NULL || adv_p == NULL || n_p == NULL)
        return CF_ERR_INVALID;
    for (size_t i = 0; i < cf_analysis_nfits(a); i++) {
        const cf_an_fit_t *f = cf_analysis_fit(a, i);
        if (f->kind == CF_AN_COLLECTIVE && !f->joint && f->coll != CF_COLL_NONE &&
            f->coll != CF_COLL_BARRIER && f->bytes > 0 && f->comm_size >= 1 && f->nbin > 0)
            cap++;
    }
    if (cap > 0 && ((adv = calloc(cap, sizeof(*adv))) == NULL ||
                    stream_index(cf_analysis_profile(a), &x) != CF_OK)) {
        free(adv);
        return CF_ERR_NOMEM;
    }
    if (cap > 0)
        callers_of(cf_analysis_profile(a), &sc);
    for (size_t i = 0; i < cf_analysis_nfits(a) && n < cap; i++) {
        const cf_an_fit_t *f = cf_analysis_fit(a, i);
        if (!(f->kind == CF_AN_COLLECTIVE && !f->joint && f->coll != CF_COLL_NONE &&
              f->coll != CF_COLL_BARRIER && f->bytes > 0 && f->comm_size >= 1 && f->nbin > 0))
            continue;
        if (advise(a, &x, &sc, f, &adv[n]) != CF_OK) {
            free(sc.v);
            cf_index_free(&x);
            cf_advice_free(adv, n + 1);
            return CF_ERR_NOMEM;
        }
        n++;
    }
    free(sc.v);
    cf_index_free(&x);
    if (n > 1)
        qsort(adv, n, sizeof(*adv), cmp_advice);
    *adv_p = adv;
    *n_p = n;
    return CF_OK;
}

void cf_advice_free(cf_advice_t *adv, size_t n)
{
    for (size_t i = 0; adv != NULL && i < n; i++) {
        free(adv[i].cand);
        if (adv[i].steps_region != no_text)
            free((char *)adv[i].steps_region);
    }
    free(adv);
}

int cf_advice_keeps_heap(const cf_advice_t *ad)
{
    return !ad->nonblocking && ad->verdict != NULL && strcmp(ad->verdict, "fuse") == 0 &&
           cf_advice_refaulted(ad, 0) == 1;
}

/* The memory line (cf_advice.h): memory the kernel mapped in afresh every
 * step, a quarter of the stream's bytes or more.  What MPI allocates per
 * call (in flight, or a blocking all-reduce's temporary buffer) may be
 * among it; a blocking stream's buckets were timed on a heap the
 * calibration's calls kept, a nonblocking stream's are priced with the
 * calibration's fresh page where its set in flight did not fault. */
int cf_advice_memory_note(const cf_advice_t *ad, char *buf, size_t len)
{
    char priced[200] = "", b[3][CF_FMT_LEN];
    double refault_s = (double)ad->refault_pages * ad->page_fault_s;
    int in;

    if (cf_advice_refaulted(ad, 0) != 1)
        return 0;
    in = cf_advice_refaulted(ad, 1);
    if (ad->nonblocking && in != 1 && isfinite(refault_s))
        snprintf(priced, sizeof(priced), "; the buckets are priced with it: %.0f pages a step at %s a page "
                 "(the calibration's fresh page), %s a step", ad->refault_pages,
                 cf_fmt_time(ad->page_fault_s, b[0], CF_FMT_LEN), cf_fmt_time(refault_s, b[1], CF_FMT_LEN));
    else if (!ad->nonblocking && refault_s > 0) /* one bucket's temporary buffer, stated */
        snprintf(priced, sizeof(priced), "; refaulted, one bucket's temporary buffer would cost %.0f pages a "
                 "step at %s a page (the calibration's fresh page), %s a step", ad->refault_pages,
                 cf_fmt_time(ad->page_fault_s, b[0], CF_FMT_LEN), cf_fmt_time(refault_s, b[1], CF_FMT_LEN));
    snprintf(buf, len,
             "%.0f minor page faults a step (%s mapped in afresh, mean per rank; %.1fx the stream's bytes): "
             "where the program's malloc hands back %s, %s; " CF_ADV_KEEP_HEAP " keeps it%s%s",
             ad->step_faults, cf_fmt_size(ad->step_faults * CF_ADV_PAGE_BYTES, b[2], CF_FMT_LEN),
             ad->step_faults * CF_ADV_PAGE_BYTES / ad->bytes_per_step,
             ad->nonblocking ? "the memory MPI takes per call in flight"
                             : "between steps the memory MPI takes per call (an all-reduce's temporary buffer, a "
                               "bucket's size)",
             !ad->nonblocking ? "the buckets pay to fault it in again each step, which their price leaves out "
                                "(the calibration's calls, one after another, kept it)"
             : in == 0 ? (priced[0] ? "the calls pay to fault it in again, now and in buckets (the calibration's "
                                      "buckets in flight, after the program, took few)"
                                    : "the calls pay to fault it in again, now and in buckets (the calibration's "
                                      "buckets in flight, after the program, took few: not in their price)")
             : in == 1 ? "the calls pay to fault it in again, now and in buckets (the calibration's buckets in "
                         "flight faulted too: in their price)"
                       : "the calls pay to fault it in again, now and in buckets",
             ad->nonblocking && in != 1 && !priced[0] ? ": profile with them to price the buckets" : "", priced);
    return 1;
}

/* The hidden end's line (cf_advice.h): an advised nonblocking stream
 * priced exposed, and what it saves if the overlap hid its buckets. */
int cf_advice_hidden_note(const cf_advice_t *ad, char *buf, size_t len)
{
    char b[3][CF_FMT_LEN];
    if (ad->verdict == NULL || strcmp(ad->verdict, "fuse") != 0 || !isfinite(ad->hidden_saving_step_s))
        return 0;
    snprintf(buf, len, "priced with the buckets' time exposed (no progress thread) and the ranks' wait for the "
             "last, %s/step; if the overlap hid them as it hides the calls now: saving %s per step, uncertainty %s",
             cf_fmt_time(ad->skew_s, b[0], CF_FMT_LEN), cf_fmt_time(ad->hidden_saving_step_s, b[1], CF_FMT_LEN),
             cf_fmt_time(ad->hidden_saving_unc_step_s, b[2], CF_FMT_LEN));
    return 1;
}

/* The in-flight lines (cf_advice.h): an advised nonblocking stream's
 * buckets posted together, and the memory MPI takes per bucket. */
int cf_advice_in_flight_notes(const cf_advice_t *ad, char note[CF_ADV_IN_FLIGHT_LINES][CF_ADV_NOTE_LEN])
{
    char b[CF_FMT_LEN];
    int n = 0;
    if (!ad->nonblocking || ad->verdict == NULL || strcmp(ad->verdict, "fuse") != 0 || !(ad->buckets_per_step >= 2))
        return 0;
    if (!isfinite(ad->inflight_ratio)) {
        snprintf(note[n++], CF_ADV_NOTE_LEN, "not priced: the calibration times one bucket at a time; %.0f in "
                 "flight together at the final wait can take longer, so the saving may be smaller",
                 ad->buckets_per_step);
        return n;
    }
    snprintf(note[n++], CF_ADV_NOTE_LEN, "in flight: %.0f buckets posted together priced at %.2fx their time one "
             "at a time (calibration: %d calls of %s posted at once%s)", ad->buckets_per_step, ad->inflight_ratio,
             ad->inflight_calls, cf_fmt_size(ad->bucket_bytes, b, CF_FMT_LEN),
             ad->buckets_per_step > ad->inflight_calls ? "; more buckets than that: its ratio, uncertain by 10 % "
                                                         "more per doubling"
                                                       : "");
    if (!isfinite(ad->inflight_faults))
        snprintf(note[n++], CF_ADV_NOTE_LEN, "not priced: the memory MPI takes per bucket, if the program's malloc "
                 "hands it back and faults it in afresh (this profile's calibration timed the buckets in flight "
                 "after its other sweeps, on a heap they had moved); " CF_ADV_KEEP_HEAP " keeps it");
    else if (cf_advice_refaulted(ad, 1) == 1)
        snprintf(note[n++], CF_ADV_NOTE_LEN, "priced in: the program's malloc hands back the memory MPI takes per "
                 "bucket and faults it in afresh, %.0f page faults a set of %d calls (%.0f pages); " CF_ADV_KEEP_HEAP
                 " keeps it, and makes buckets in flight cheaper",
                 ad->inflight_faults, ad->inflight_calls, (double)ad->inflight_calls * ad->bucket_bytes / CF_ADV_PAGE_BYTES);
    return n;
}

/* The disturbed line (cf_advice.h): a run that measured more than its
 * calls' own time, and what the advice does with it. */
int cf_advice_disturbed_note(const cf_advice_t *ad, char *buf, size_t len)
{
    char b[CF_FMT_LEN];
    if (ad->nonblocking && ad->blocked_excess_s > 0) {
        if (!(ad->steps > 0))
            return 0;
        snprintf(buf, len, "%s: blocked %.1fx what the calls as they are take one at a time, exposed, with the "
                 "ranks' wait for the last (%s/step more; load on the machine, a partner late%s): kept in every "
                 "prediction, not counted as a saving",
                 ad->disturbed ? "disturbed" : "blocked beyond the calls' time", ad->measured_over_model,
                 cf_fmt_time(ad->blocked_excess_s / (double)ad->steps, b, CF_FMT_LEN),
                 ad->current_pred_source == CF_PRED_MODEL ? ", or a nonblocking algorithm slower than the line" : "");
    } else if (ad->disturbed)
        snprintf(buf, len, "disturbed: the run measured %.1fx what the medians predict per step (tails the "
                 "medians leave out: load on the machine, a partner late to the calls): the saving counted is "
                 "the predictor's, not scaled to this run; a run on a quiet machine settles it",
                 ad->measured_over_model);
    else
        return 0;
    return 1;
}

/* The polls' tails line (cf_advice.h, "The polls' tails"). */
int cf_advice_polls_note(const cf_advice_t *ad, char *buf, size_t len)
{
    char b[3][CF_FMT_LEN], load[480];
    if (!ad->nonblocking || !ad->polls_with_posts || !(ad->poll_excess_s > 0) ||
        !(ad->poll_excess_s >= 0.1 * ad->poll_s) || !(ad->steps > 0))
        return 0;
    if (isfinite(ad->poll_load_s))
        snprintf(load, sizeof(load), "of the tails, about %s/step is CPU contention if the processes' %.1f "
                 "involuntary context switches a step (mean per rank) fall at times that do not depend on the "
                 "polls (those landing in polls, each at most the longest poll), kept whole in the uncertainty; "
                 "the rest counts as progress work inside the polls, which the buckets' measured time holds",
                 cf_fmt_time((double)ad->poll_load_s / (double)ad->steps, b[2], CF_FMT_LEN), (double)ad->step_preempt);
    else
        snprintf(load, sizeof(load), "the profile does not record context switches per step (no step region, or "
                 "an older plugin), so all of them count as CPU contention, kept whole in the uncertainty");
    snprintf(buf, len, "%s/step of the polls' %s/step (their mean %.1fx their median: CPU contention, or progress "
             "work inside a poll): fewer calls make fewer polls, so the buckets pay them per bucket; %s",
             cf_fmt_time(ad->poll_excess_s / (double)ad->steps, b[0], CF_FMT_LEN),
             cf_fmt_time(ad->poll_s / (double)ad->steps, b[1], CF_FMT_LEN), ad->poll_s / (ad->poll_s - ad->poll_excess_s),
             load);
    return 1;
}

double cf_advice_lead_step(const cf_advice_t *ad)
{
    if (!ad->nonblocking || !isfinite(ad->post_lead_s) || ad->verdict == NULL || strcmp(ad->verdict, "fuse") != 0 ||
        !isfinite(ad->buckets_per_step))
        return NAN;
    return ad->post_lead_s * fmax(0.0, ad->calls_per_step - ad->buckets_per_step);
}

/* The outside-MPI line (cf_advice.h "Time outside MPI"). */
int cf_advice_outside_note(const cf_advice_t *ad, char *buf, size_t len)
{
    char b[3][CF_FMT_LEN];
    if (ad->verdict == NULL || strcmp(ad->verdict, "fuse") != 0)
        return 0;
    char lead[256] = "";
    if (isfinite(cf_advice_lead_step(ad)))
        snprintf(lead, sizeof(lead), ": about %s a post at most (the shortest tenth of %zu times from a poll to the next "
                 "post, the hook's own work and any computation between included), up to %s more over the run "
                 "(%s a step)",
                 cf_fmt_time(ad->post_lead_s, b[0], CF_FMT_LEN), (size_t)ad->post_leads,
                 cf_fmt_time(cf_advice_lead_step(ad) * (double)ad->steps, b[1], CF_FMT_LEN),
                 cf_fmt_time(cf_advice_lead_step(ad), b[2], CF_FMT_LEN));
    if (isfinite(ad->framework_saving_s) && ad->nonblocking)
        snprintf(buf, len, "outside MPI, %s more, counted in the saving per step: %s from a post to the completion call after it (median over the "
                 "ranks, %zu gaps), the framework's cost per post; not priced: its time before each post, which "
                 "fewer posts also save%s",
                 cf_fmt_time(ad->framework_saving_s, b[0], CF_FMT_LEN), cf_fmt_time(ad->call_gap_s, b[1], CF_FMT_LEN),
                 (size_t)ad->call_gap_pairs, lead);
    else if (isfinite(ad->framework_saving_s))
        snprintf(buf, len, "outside MPI, %s more, counted in the saving per step: the calls go back to back, %s apart (median of %zu sampled pairs), "
                 "the framework's cost per call",
                 cf_fmt_time(ad->framework_saving_s, b[0], CF_FMT_LEN), cf_fmt_time(ad->call_gap_s, b[1], CF_FMT_LEN),
                 (size_t)ad->call_gap_pairs);
    else if (ad->nonblocking)
        snprintf(buf, len, "not priced: the program's own time around each post outside MPI (bindings, request "
                 "lists), which fewer posts also save%s", lead);
    else
        return 0;
    return 1;
}

char *cf_advice_how(const cf_advice_t *ad, int brief, char *buf, size_t len)
{
    char ddp[48] = "", hvd[64] = "", b[CF_FMT_LEN];
    if (ad->knob_ddp)
        snprintf(ddp, sizeof(ddp), "%sbucket_cap_mb=%g",
                 brief ? "DDP " : "PyTorch DDP: ", ad->bucket_bytes / 1048576.0);
    if (ad->knob_horovod)
        snprintf(hvd, sizeof(hvd), "%sHOROVOD_FUSION_THRESHOLD=%.0f", brief ? "" : "Horovod: ", ad->bucket_bytes);
    /* the share of the calls the framework's files make, where the call sites tell it */
    int pct = ad->knob_ddp || ad->knob_horovod ? 100 - (int)ad->fw_pct6 : (int)ad->fw_pct6;
    const char *fw_name = ad->share_horovod ? "Horovod" : "PyTorch";
    if (ddp[0] != '\0' || hvd[0] != '\0') {
        char part[256] = "";
        if (!brief && !ad->callers_seen)
            snprintf(part, sizeof(part),
                     "   (where the calls go through it: the profile has no call sites of the "
                     "stream to say what makes them; calls made through mpi4py or by the program "
                     "itself are merged in the program)");
        else if (!brief && ad->fw_pct6 > 0)
            snprintf(part, sizeof(part),
                     "   (its files make about %d%% of the stream's calls: the others, merged by "
                     "no setting, save less than priced)",
                     pct);
        snprintf(buf, len, "%s%s%s%s", ddp, ddp[0] != '\0' && hvd[0] != '\0' ? (brief ? ", " : "   ") : "", hvd, part);
    } else if (brief)
        snprintf(buf, len, "merge in the program");
    else {
        char who[416], mod[160];
        const char *base = ad->caller != NULL ? strrchr(ad->caller, '/') : NULL;
        /* the file's name; mpi4py's module named as the package it is */
        snprintf(mod, sizeof(mod), "%s%s%s", ad->caller != NULL && strstr(ad->caller, "/mpi4py/") ? "mpi4py (" : "",
                 ad->caller == NULL ? ""
                 : base != NULL     ? base + 1
                                    : ad->caller,
                 ad->caller != NULL && strstr(ad->caller, "/mpi4py/") ? ")" : "");
        if ((ad->named_ddp || ad->named_horovod) && ad->fw_pct6 > 0) /* a framework makes some, not most */
            snprintf(who, sizeof(who),
                     "%s's files make about %d%% of its calls, too few for its setting to bring "
                     "this saving (the file that makes the most of them: %s)",
                     fw_name, pct, ad->caller == NULL ? "code in no mapped file" : mod);
        else if (ad->named_ddp || ad->named_horovod) /* its call sites show no framework making the calls */
            snprintf(who, sizeof(who), "its calls come from %s, not through a framework that fuses %s",
                     ad->caller == NULL ? "code in no mapped file" : mod, ad->op);
        else
            snprintf(who, sizeof(who), "%s %s%s%s",
                     fw_fuses(CF_FW_BIT(TORCH), ad->coll) || fw_fuses(CF_FW_BIT(HOROVOD), ad->coll)
                         ? "the job loaded no framework that fuses"
                         : "no framework setting fuses",
                     ad->op, ad->caller != NULL ? ", whose calls come from " : "", mod);
        snprintf(buf, len,
                 "%s: the program would merge a step's calls into calls of up to %s where none waits on "
                 "another's result (the profile shows sizes and times, not that)",
                 who, cf_fmt_size(ad->bucket_bytes, b, sizeof(b)));
    }
    return buf;
}

char *cf_advice_line(const cf_advice_t *ad, char *buf, size_t len)
{
    char label[24], b1[CF_FMT_LEN], b2[CF_FMT_LEN], b3[CF_FMT_LEN], fw[CF_FMT_LEN + 40] = "", how[128];

    cf_comm_label(ad->comm, label, sizeof(label));
    if (isfinite(ad->framework_saving_s) && ad->framework_saving_s > 0) /* counted in the verdict */
        snprintf(fw, sizeof(fw), ", and %s outside MPI", cf_fmt_time(ad->framework_saving_s, b1, sizeof(b1)));
    if (ad->verdict == NULL)
        snprintf(buf, len, "%s on %s: no fusion advice (%s)", ad->op, label, ad->reason);
    else if (strcmp(ad->verdict, "fuse") == 0)
        snprintf(buf, len,
                 "%s on %s, %.0f call%s/step: fuse into buckets of %s (%.0f/step; %s%s%s) to save %s of %s per rank "
                 "(%.0f%%)%s",
                 ad->op, label, ad->calls_per_step, ad->calls_per_step < 1.5 ? "" : "s",
                 cf_fmt_size(ad->bucket_bytes, b1, sizeof(b1)), ad->buckets_per_step,
                 cf_advice_how(ad, 1, how, sizeof(how)), cf_advice_keeps_heap(ad) ? "; the heap kept: " : "",
                 cf_advice_keeps_heap(ad) ? CF_ADV_KEEP_HEAP : "", cf_fmt_time(ad->predicted_saving_s, b2, sizeof(b2)),
                 cf_fmt_time(ad->current_s, b3, sizeof(b3)),
                 ad->current_s > 0 ? 100.0 * ad->predicted_saving_s / ad->current_s : 0.0, fw);
    else if (strcmp(ad->verdict, "uncertain") == 0)
        snprintf(buf, len, "%s on %s, %.0f call%s/step: fusion gain uncertain (%s%s%s)", ad->op, label,
                 ad->calls_per_step, ad->calls_per_step < 1.5 ? "" : "s", ad->why, ad->why[0] ? "; " : "", ad->reason);
    else
        snprintf(buf, len, "%s on %s, %.0f call%s/step: fusion buckets gain nothing (%s%s%s)", ad->op,
                 label, ad->calls_per_step, ad->calls_per_step < 1.5 ? "" : "s", ad->reason,
                 ad->why[0] ? ": " : "", ad->why);
    return buf;
}
