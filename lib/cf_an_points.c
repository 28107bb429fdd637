/* Stage "points": records grouped into fits and size bins, and the rows of
 * the cost ranking.  See cf_an_stage.h for the pipeline. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cf_an_stage.h"

/* ---- grouping: records sorted so that one fit, then one bin, is a run ---- */

static int rec_usable(const cf_record_t *r)
{
    return r->layer == CF_LAYER_MPI && r->calls > 0;
}

static int is_kind(const cf_record_t *r, const char *kind)
{
    return strcmp(r->kind, kind) == 0;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
    return (a > b) - (a < b);
}

static int cmp_bin(const cf_record_t *a, const cf_record_t *b)
{
    int c = cmp_u64(a->size_lo, b->size_lo);
    return c ? c : cmp_u64(a->size_hi, b->size_hi);
}

/* (op, comm, path, bin) */
static int cmp_sep(const void *pa, const void *pb)
{
    const cf_record_t *a = *(const cf_record_t *const *)pa, *b = *(const cf_record_t *const *)pb;
    int c = strcmp(a->op, b->op);
    if (c == 0)
        c = cmp_u64(a->comm, b->comm);
    if (c == 0)
        c = (a->path > b->path) - (a->path < b->path);
    return c ? c : cmp_bin(a, b);
}

/* (path, bin) */
static int cmp_joint(const void *pa, const void *pb)
{
    const cf_record_t *a = *(const cf_record_t *const *)pa, *b = *(const cf_record_t *const *)pb;
    int c = (a->path > b->path) - (a->path < b->path);
    return c ? c : cmp_bin(a, b);
}

static int same_group(const cf_record_t *a, const cf_record_t *b, int joint)
{
    if (a->path != b->path)
        return 0;
    return joint || (strcmp(a->op, b->op) == 0 && a->comm == b->comm);
}

double cf_an_pos(double v)
{
    return isfinite(v) && v > 0 ? v : 0.0;
}

int cf_an_is_poll(const cf_record_t *r)
{
    return r->layer == CF_LAYER_MPI && strcmp(r->kind, "completion") == 0 && strncmp(r->op, "MPI_Test", 8) == 0 &&
           r->size_hi == 0 && !(r->blocked_s > 0);
}

/* A record's transfer time: the median of its samples, except for
 * messages whose samples fall in two modes, where the median sits in one
 * of them and the mean is what a ping-pong's half round trip is (a rate
 * shaper's burst lets every other message through at wire speed: at
 * 128 KiB the median was 16 times below the half round trip).  Two modes
 * show as a mean 1.5 times off the median either way.  A second mode of
 * a share w of the messages at about p99 makes the mean at least w x p99:
 * a mean below p99 / 5 (under a fifth of the messages slow) is a tail, a
 * few preemptions among fast messages (UCX ping-pong, 4 KiB: p50 0.93 us,
 * mean 1.71 us, p99 9.7 us, the program's own half round trip 0.78 us),
 * and keeps the median, as does a mean above p99: under 1 % of the
 * messages made it (the first messages between two ranks wait milliseconds
 * for the connection: 8 B, p50 200 ns, mean 45 us).  Shaped links' two
 * modes give 0.22 to 0.55. */
static double rec_transfer(const cf_record_t *r)
{
    double mean = r->xfer_n > 0 && isfinite(r->xfer_sum) ? r->xfer_sum / (double)r->xfer_n : NAN;
    if (!is_kind(r, "p2p") || !(mean > 0) || !(r->xfer_p50 > 0) ||
        fabs(log(mean / r->xfer_p50)) < log(1.5) ||
        (isfinite(r->xfer_p99) && (5.0 * mean < r->xfer_p99 || mean > r->xfer_p99)))
        return r->xfer_p50;
    return mean;
}

int cf_an_comm_size(const cf_profile_t *p, uint32_t comm)
{
    const cf_comm_info_t *c = cf_profile_comm(p, comm);
    return c != NULL && c->size > 0 ? c->size : 0;
}

const char cf_an_no_why[] = "";

static void fit_init(cf_an_fit_t *f)
{
    memset(f, 0, sizeof(*f));
    f->wait_share = f->startup_share = f->below_n_half = f->zero_p50_s = NAN;
    f->n_half_bytes = f->efficiency = NAN;
    f->hop_alpha_s = f->hop_Bps = NAN;
    f->startup_lo = f->startup_hi = f->err_rms = f->err_max = NAN;
    f->verdict = cf_verdict(NAN);
    f->why = cf_an_no_why;
}

static void bin_init(cf_an_bin_t *b)
{
    memset(b, 0, sizeof(*b));
    b->p50_s = b->duration_p50_s = b->p99_s = b->predicted_s = b->startup_share = NAN;
    b->algbw_Bps = b->busbw_Bps = b->ideal_s = b->ideal_busbw_Bps = b->efficiency = NAN;
    b->coverage = b->model_error = NAN;
    b->prediction_s = b->prediction_loo_s = NAN;
    b->verdict = cf_verdict(NAN);
}

/* A bin's medians come from one source: the sampled transfer times when the
 * bin has at least this many samples (or every call was sampled), else the
 * call durations.  One transfer sampled among a million calls says little
 * about them, and the first calls of a stream, which sampling favours,
 * are the coldest. */

/* The fit's operation, communicator, path and model of a group of records
 * e[0..]: the joint fit of a path, else e[0]'s operation. */
static void group_key(const cf_profile_t *p, const cf_record_t *const *e, int joint, cf_an_fit_t *f)
{
    fit_init(f);
    f->joint = joint;
    f->path = e[0]->path;
    if (joint) {
        f->kind = CF_AN_P2P;
        f->op = "p2p";
        f->comm = CF_COMM_ID_NONE;
        f->coll = CF_COLL_P2P;
    } else {
        f->kind = is_kind(e[0], "collective") ? CF_AN_COLLECTIVE : is_kind(e[0], "io") ? CF_AN_IO : CF_AN_P2P;
        f->op = e[0]->op;
        f->comm = e[0]->comm;
        f->comm_size = cf_an_comm_size(p, f->comm);
        f->coll = f->kind == CF_AN_P2P ? CF_COLL_P2P : f->kind == CF_AN_IO ? CF_COLL_NONE : cf_coll_from_name(f->op);
        f->nonblocking = cf_op_nonblocking(e[0]->op, e[0]->kind);
    }
}

/* The medians of bin b, records e[first..last], from the source its
 * samples allow. */
static void bin_medians(const cf_record_t *const *e, size_t first, size_t last, cf_an_fit_t *f, cf_an_bin_t *b)
{
    /* Messages are timed only when their receive was waiting; when
     * most chosen ones were not, the timed few are the exceptions. */
    int xfer = b->samples > 0 && (b->samples >= CF_AN_MIN_SAMPLES || b->samples >= b->calls) &&
               !(b->selected > 0 && 2 * b->samples < b->selected);
    double tw = 0, dw = 0, t = 0, d = 0;
    for (size_t m = first; m <= last; m++) {
        const cf_record_t *q = e[m];
        double c = (double)q->calls;
        d += c * cf_an_pos(q->t_p50);
        dw += c;
        if (xfer && q->xfer_n > 0 && isfinite(q->xfer_p50) && q->xfer_p50 > 0) {
            t += c * rec_transfer(q);
            tw += c;
        }
        b->p99_s = fmax(b->p99_s, cf_an_pos(xfer && q->xfer_n > 0 ? q->xfer_p99 : q->t_p99));
    }
    b->duration_p50_s = dw > 0 ? d / dw : 0.0;
    b->time_source = xfer ? CF_AN_TIME_TRANSFER : CF_AN_TIME_DURATION;
    b->p50_s = xfer ? t / tw : b->duration_p50_s;
    if (!xfer && b->samples > 0)
        f->few_sample_bins++;
    f->time_source |= b->time_source;
}

/* One operation's line is of one quantity: a send's duration (a local
 * copy when eager) and a message's one-way time differ by the transfer
 * itself, so a point-to-point operation short of transfers in some
 * sized bin is fitted on durations throughout.  The joint fit of a path
 * keeps its per-bin choice: its durations, sends and receives together,
 * average to the message time of an exchange. */
static void durations_throughout(const cf_record_t *const *e, size_t n, int joint, cf_an_fit_t *f)
{
    size_t nb = f->nbin;

    if (!joint && f->kind == CF_AN_P2P && (f->time_source & CF_AN_TIME_TRANSFER)) {
        int all = 1;
        for (size_t k = 0; k < nb; k++)
            all &= f->bin[k].time_source == CF_AN_TIME_TRANSFER || f->bin[k].bytes == 0;
        if (!all) {
            for (size_t i = 0, k = 0; i < n; i++) {
                if (i > 0 && cmp_bin(e[i - 1], e[i]) != 0)
                    k++;
                if (i == 0 || cmp_bin(e[i - 1], e[i]) != 0)
                    f->bin[k].p99_s = 0;
                f->bin[k].p99_s = fmax(f->bin[k].p99_s, cf_an_pos(e[i]->t_p99));
            }
            for (size_t k = 0; k < nb; k++) {
                f->bin[k].time_source = CF_AN_TIME_DURATION;
                f->bin[k].p50_s = f->bin[k].duration_p50_s;
            }
            f->time_source = CF_AN_TIME_DURATION;
        }
    }
}

/* The fit's totals over its bins. */
static void fit_totals(cf_an_fit_t *f)
{
    for (size_t k = 0; k < f->nbin; k++) {
        cf_an_bin_t *b = &f->bin[k];
        b->size = (double)b->bytes / (double)b->calls;
        b->coverage = (double)b->samples / (double)b->calls;
        f->calls += b->calls;
        f->bytes += b->bytes;
        f->time_s += b->time_s;
        f->samples += b->samples;
        if (b->time_source == CF_AN_TIME_TRANSFER)
            f->transfer_bins++;
    }
}

/* Bins and totals of one group of records (sorted by bin). */
static int collect(const cf_profile_t *p, const cf_record_t *const *e, size_t n, int joint,
                   cf_an_fit_t *f)
{
    size_t nb = 0;
    double wait_num = 0, wait_den = 0;
    int measured = 0;

    group_key(p, e, joint, f);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || cmp_bin(e[i - 1], e[i]) != 0)
            nb++;
    f->bin = calloc(nb, sizeof(*f->bin));
    if (f->bin == NULL)
        return CF_ERR_NOMEM;

    /* Two passes per bin: totals and samples first, then the medians of the
     * source the samples allow. */
    for (size_t i = 0, k = 0, first = 0; i < n; i++) {
        const cf_record_t *r = e[i];
        cf_an_bin_t *b;
        int last = i + 1 == n || cmp_bin(r, e[i + 1]) != 0;

        if (i > 0 && cmp_bin(e[i - 1], r) != 0) {
            k++;
            first = i;
        }
        b = &f->bin[k];
        if (b->calls == 0) {
            bin_init(b);
            b->size_lo = r->size_lo;
            b->size_hi = r->size_hi;
        }
        b->calls += r->calls;
        b->bytes += r->bytes;
        b->time_s += cf_an_pos(r->t_sum);
        if (r->xfer_n > 0 && isfinite(r->xfer_p50) && r->xfer_p50 > 0)
            b->samples += r->xfer_n;
        if (is_kind(r, "p2p"))
            b->selected += r->sample_selected;

        if (joint && (i == 0 || r->comm != e[i - 1]->comm)) {
            int cs = cf_an_comm_size(p, r->comm);
            f->comm_size = cs > f->comm_size ? cs : f->comm_size;
        }
        /* Sampled calls know their wait and transfer, which add up to their
         * duration; without samples a wait share cannot be told.  Of
         * point-to-point calls only a receive posted before its message
         * knows its wait (the sender's): a send's, never measured, is not
         * a wait of 0. */
        if (is_kind(r, "p2p") && strstr(r->op, "ecv") == NULL) {
            /* a send: not measured */
        } else if (r->xfer_n > 0) {
            wait_num += cf_an_pos(r->wait_s);
            wait_den += cf_an_pos(r->wait_s) + cf_an_pos(r->xfer_sum);
            measured = 1;
        } else if (cf_an_pos(r->wait_s) > 0) {
            wait_num += r->wait_s;
            wait_den += cf_an_pos(r->t_sum);
            measured = 1;
        }
        f->wait_s += cf_an_pos(r->wait_s);
        if (last)
            bin_medians(e, first, i, f, b);
    }
    f->nbin = nb;
    durations_throughout(e, n, joint, f);
    fit_totals(f);
    if (measured && wait_den > 0)
        f->wait_share = fmin(1.0, wait_num / wait_den);
    return CF_OK;
}

/* Upper bound of the fits and ranking rows a sorted array makes. */
static size_t runs(const cf_record_t *const *e, size_t n, int joint)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || !same_group(e[i - 1], e[i], joint))
            k++;
    return k;
}

/* The groups of a sorted array that are fitted (point to point,
 * collectives, file accesses): completion, probe and the rest are ranked,
 * never fitted, and the fits are held for the whole report. */
static size_t fitted_runs(const cf_record_t *const *e, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if ((i == 0 || !same_group(e[i - 1], e[i], 0)) &&
            (is_kind(e[i], "p2p") || is_kind(e[i], "collective") || is_kind(e[i], "io")))
            k++;
    return k;
}

/* The joint point-to-point fit of a path, the reference link of its
 * collectives, takes blocking calls only: a nonblocking span from post to
 * completion includes whatever the program did before it waited. */
static int joint_member(const cf_record_t *r)
{
    return is_kind(r, "p2p") && !cf_op_nonblocking(r->op, r->kind);
}

/* The protocol limits of each path, from the profile's "protocol" section
 * (Open MPI's BTL control variables: see plugin/cf_protocol.c).  They are
 * the BTLs' own, which carry point-to-point messages under the ob1 PML
 * only: they are not used when the section names another PML (UCX, cm
 * with an MTL), nor where the UCX layer saw tag messages on a path (UCX
 * carried them, with thresholds of its own that the profile does not
 * hold). */
void cf_an_limits_build(cf_analysis_t *a)
{
    const cf_profile_t *p = a->p;
    json_t *sec = p->extra != NULL ? json_object_get(p->extra, "protocol") : NULL;
    json_t *arr = sec != NULL ? json_object_get(sec, "limits") : NULL, *e;
    json_t *jpml = sec != NULL ? json_object_get(sec, "pml") : NULL;
    const char *pml = json_is_string(jpml) ? json_string_value(jpml) : NULL;
    int ucx[CF_AN_NPATH] = {0};
    size_t i;

    memset(a->limits, 0, sizeof(a->limits));
    if (!json_is_array(arr))
        return;
    if (pml != NULL && strcmp(pml, "ob1") != 0) {
        /* e.g. "ucx": no BTL carried a message */
        for (int path = 0; path < CF_AN_NPATH; path++)
            ucx[path] = 1;
    }
    for (size_t k = 0; k < p->nrec; k++) {
        const cf_record_t *r = &p->rec[k];
        if (r->layer == CF_LAYER_UCX && r->path >= 0 && r->path < CF_AN_NPATH && strstr(r->op, "_tag_"))
            ucx[r->path] = 1;
    }
    json_array_foreach(arr, i, e) {
        json_t *jb = json_object_get(e, "bytes"), *jp = json_object_get(e, "path"),
               *jn = json_object_get(e, "name");
        int path = json_is_string(jp) ? cf_path_from_name(json_string_value(jp)) : -1;
        cf_an_limits_t *l;
        if (!json_is_integer(jb) || json_integer_value(jb) <= 0 || path < 0 || path >= CF_AN_NPATH)
            continue;
        l = &a->limits[path];
        if (ucx[path]) {
            l->unused_why = pml != NULL && strcmp(pml, "ob1") != 0
                                ? "the job's PML is not ob1, so no BTL carried its messages"
                                : "the UCX layer carried this path's messages, not the BTL the limits belong to";
            continue;
        }
        if (l->n < CF_AN_MAX_LIMITS) {
            l->bytes[l->n] = (double)json_integer_value(jb);
            cf_strlcpy(l->name[l->n], json_is_string(jn) ? json_string_value(jn) : "", sizeof(l->name[0]));
            l->n++;
        }
    }
}

int cf_an_points_build(cf_analysis_t *a)
{
    const cf_profile_t *p = a->p;
    const cf_record_t **sep = NULL, **joint = NULL;
    size_t nsep = 0, njoint = 0;
    int rc = CF_ERR_NOMEM;

    sep = malloc((p->nrec ? p->nrec : 1) * sizeof(*sep));
    joint = malloc((p->nrec ? p->nrec : 1) * sizeof(*joint));
    if (sep == NULL || joint == NULL)
        goto out;
    for (size_t i = 0; i < p->nrec; i++) {
        const cf_record_t *r = &p->rec[i];
        if (!rec_usable(r))
            continue;
        sep[nsep++] = r;
        if (joint_member(r))
            joint[njoint++] = r;
    }
    /* Charged: some completion call recorded time charged to requests. */
    for (size_t i = 0; i < nsep; i++)
        if (is_kind(sep[i], "completion") && sep[i]->blocked_s > 0)
            a->charged = 1;
    qsort(sep, nsep, sizeof(*sep), cmp_sep);
    qsort(joint, njoint, sizeof(*joint), cmp_joint);

    a->nop = runs(sep, nsep, 0);
    a->fit = calloc(fitted_runs(sep, nsep) + runs(joint, njoint, 1) + 1, sizeof(*a->fit));
    a->op = calloc(a->nop ? a->nop : 1, sizeof(*a->op));
    if (a->fit == NULL || a->op == NULL)
        goto out;

    /* Joint p2p fits first: they are the reference links. */
    for (size_t i = 0, j; i < njoint; i = j) {
        for (j = i + 1; j < njoint && same_group(joint[j - 1], joint[j], 1); j++)
            ;
        a->nfit++;
        if ((rc = collect(p, joint + i, j - i, 1, &a->fit[a->nfit - 1])) != CF_OK)
            goto out;
    }
    for (size_t i = 0, j, k = 0; i < nsep; i = j, k++) {
        cf_an_op_t *o = &a->op[k];
        const cf_record_t *r = sep[i];
        for (j = i + 1; j < nsep && same_group(sep[j - 1], sep[j], 0); j++)
            ;
        o->op = r->op;
        o->kind = r->kind;
        o->comm = r->comm;
        o->comm_size = cf_an_comm_size(p, r->comm);
        o->path = r->path;
        o->nonblocking = cf_op_nonblocking(r->op, r->kind);
        double blocked = 0, posted = 0;
        for (size_t m = i; m < j; m++) {
            o->calls += sep[m]->calls;
            o->bytes += sep[m]->bytes;
            o->time_s += cf_an_pos(sep[m]->t_sum);
            blocked += cf_an_pos(sep[m]->blocked_s);
            posted += cf_an_pos(sep[m]->post_s);
            if (sep[m]->ranks_missing > o->ranks_missing)
                o->ranks_missing = sep[m]->ranks_missing;
        }
        o->blocking_s = o->hidden = o->polls_per_call = NAN;
        o->waits_charged = a->charged;
        /* A span overlaps other work: what it cost is the time blocked in
         * Wait/Test.  Where the profile charges that time to the requests,
         * the operation is ranked by it and the completion calls keep the
         * rest; otherwise the span is kept apart and the completion calls
         * are ranked whole. */
        if (o->nonblocking) {
            o->span_s = o->time_s;
            a->span_s += o->time_s;
            if (a->charged) {
                o->post_s = posted;
                o->blocked_s = blocked;
                o->time_s = posted + blocked;
            }
        } else if (is_kind(r, "completion") && a->charged) {
            o->charged_s = fmin(blocked, o->time_s);
            o->time_s -= o->charged_s;
        }
        if (!o->nonblocking || a->charged)
            a->total_s += o->time_s;
        if (!is_kind(r, "p2p") && !is_kind(r, "collective") && !is_kind(r, "io"))
            continue;
        a->nfit++;
        if ((rc = collect(p, sep + i, j - i, 0, &a->fit[a->nfit - 1])) != CF_OK)
            goto out;
    }
    rc = CF_OK;
out:
    free(joint);
    free(sep);
    return rc;
}
