/* Stage "verdicts": what to tell the user, from the fits, the links and
 * the fusion advice: where the time goes, and one sentence per operation.
 * See cf_an_stage.h for the pipeline. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cf_an_stage.h"
#include "cf_units.h"

double cf_an_wait_split(const cf_an_fit_t *f)
{
    if (f == NULL || f->kind != CF_AN_COLLECTIVE || !isfinite(f->wait_share) ||
        (f->basis != NULL && strcmp(f->basis, "no payload") == 0) ||
        !(f->leaning != NULL || (f->basis != NULL && isfinite(f->startup_share))))
        return 0;
    return f->wait_share;
}

void cf_an_breakdown(cf_analysis_t *a)
{
    cf_an_breakdown_t *b = &a->split;

    memset(b, 0, sizeof(*b));
    for (size_t k = 0; k < a->nop; k++) {
        const cf_an_op_t *o = &a->op[k];
        const cf_an_fit_t *f = o->fit;
        if (o->nonblocking && !a->charged)
            continue; /* a span is not a cost: the ranked time leaves it out */
        if (strcmp(o->kind, "io") == 0)
            b->io += o->time_s;
        else if (o->nonblocking)
            b->blocked += o->time_s; /* blocked in Wait/Test on it: no startup or payload split */
        else if (strcmp(o->kind, "io") == 0)
            b->io += o->time_s;
        else if (f != NULL && f->basis != NULL && strcmp(f->basis, "no payload") == 0)
            b->no_payload += o->time_s;
        else if (f != NULL && (f->leaning != NULL || (f->basis != NULL && isfinite(f->startup_share)))) {
            /* the fit prices the transfer; the waits a collective's sampled
             * instances measured are the last rank's lateness, not the network's */
            double w = o->time_s * cf_an_wait_split(f), rest = o->time_s - w;
            b->waiting += w;
            if (f->leaning != NULL)
                b->uncertain += rest;
            else {
                b->startup += rest * f->startup_share;
                b->payload += rest * (1.0 - f->startup_share);
            }
        } else
            b->unexplained += o->time_s;
    }
    if (a->total_s > 0) {
        b->startup /= a->total_s;
        b->payload /= a->total_s;
        b->no_payload /= a->total_s;
        b->unexplained /= a->total_s;
        b->uncertain /= a->total_s;
        b->io /= a->total_s;
        b->blocked /= a->total_s;
        b->waiting /= a->total_s;
    } else {
        b->startup = b->payload = b->no_payload = b->unexplained = b->uncertain = b->io = b->blocked = NAN;
        b->waiting = NAN;
    }
}

/* The fitted operations explain a real part of the MPI time when their
 * startup and payload together are at least this share of it. */
#define CF_AN_EXPLAINED_MIN 0.25

char *cf_analysis_headline(const cf_analysis_t *a, char *buf, size_t len)
{
    const cf_an_breakdown_t *b = &a->split;
    char b1[CF_FMT_LEN], b2[CF_FMT_LEN], b3[CF_FMT_LEN];
    double explained = b->startup + b->payload;
    double other = fmax(fmax(fmax(b->blocked, b->uncertain), fmax(b->no_payload, b->unexplained)), b->waiting);

    if (!isfinite(explained)) {
        snprintf(buf, len, "No MPI time was recorded");
        return buf;
    }
    cf_fmt_pct(b->startup, 0, b1, sizeof(b1));
    cf_fmt_pct(b->payload, 0, b2, sizeof(b2));
    if (explained >= CF_AN_EXPLAINED_MIN && explained >= other) {
        if (b->startup > b->payload)
            snprintf(buf, len, "Startup dominates: of the recorded MPI time, %s is startup and %s payload", b1, b2);
        else
            snprintf(buf, len, "Bandwidth dominates: of the recorded MPI time, %s is payload and %s startup", b2,
                     b1);
        return buf;
    }
    /* what the time is, where the fits do not explain it */
    if (b->waiting >= other)
        snprintf(buf, len,
                 "Waiting dominates: %s of the recorded MPI time is ranks waiting inside collectives for "
                 "the last rank to arrive (measured on their sampled instances): work out of balance "
                 "before the calls, or a rank delayed by its node or its own communication; %s is "
                 "startup and %s payload",
                 cf_fmt_pct(b->waiting, 0, b3, sizeof(b3)), b1, b2);
    else if (b->blocked >= other) {
        char b4[CF_FMT_LEN];
        snprintf(buf, len, "Blocked in waits: %s of the recorded MPI time is blocked in Wait/Test on nonblocking "
                           "operations (below: how much of each exchange the overlap hid); the fitted operations "
                           "explain %s (%s startup, %s payload)",
                 cf_fmt_pct(b->blocked, 0, b3, sizeof(b3)), cf_fmt_pct(explained, 0, b4, sizeof(b4)), b1, b2);
    } else if (b->uncertain >= other)
        snprintf(buf, len, "Uncertain: %s of the recorded MPI time is in operations whose startup and payload "
                           "cannot be told apart (below); %s is startup and %s payload",
                 cf_fmt_pct(b->uncertain, 0, b3, sizeof(b3)), b1, b2);
    else if (b->no_payload >= other)
        snprintf(buf, len, "Synchronization dominates: %s of the recorded MPI time is in calls without payload "
                           "(waiting for the slowest rank); %s is startup and %s payload",
                 cf_fmt_pct(b->no_payload, 0, b3, sizeof(b3)), b1, b2);
    else
        snprintf(buf, len, "Not explained: %s of the recorded MPI time is in calls that are not fitted (waits, "
                           "probes, too few sizes); %s is startup and %s payload",
                 cf_fmt_pct(b->unexplained, 0, b3, sizeof(b3)), b1, b2);
    return buf;
}


const char *cf_an_fmt_share_n(double frac, char *buf, size_t len)
{
    double inv = frac > 0 ? 1.0 / frac : NAN;
    if (!isfinite(frac))
        snprintf(buf, len, "?");
    else if (fabs(frac - 1.0) < 0.05)
        snprintf(buf, len, "n");
    else if (frac < 1 && fabs(inv - round(inv)) < 0.05 * inv)
        snprintf(buf, len, "n/%.0f", round(inv));
    else
        snprintf(buf, len, "%.2g n", frac);
    return buf;
}

const char *cf_analysis_wire_advice(const cf_analysis_t *a, const cf_an_wire_t *w, char *buf, size_t len)
{
    char label[CF_COMM_NAME_LEN], sz[CF_FMT_LEN], t1[CF_FMT_LEN], t2[CF_FMT_LEN], set[160];
    const char *ompi = NULL, *on;

    if (w == NULL || !w->collective || w->inf.algo == NULL || w->best_algo == NULL ||
        !(w->excess >= CF_AN_WIRE_EXCESS) || strcmp(w->best_algo, w->inf.algo) == 0 || w->cost_source == NULL)
        return NULL;
    if (strstr(a->p->mpi_library, "Open MPI") != NULL)
        ompi = cf_wire_ompi_setting(w->w.coll, w->best_algo, set, sizeof(set));
    on = strcmp(w->cost_source, "collective fit") == 0 ? "with the per-hop alpha and B of its own fit"
         : strcmp(w->cost_source, "link") == 0        ? "on the given link"
         : strcmp(w->cost_source, "p2p fit") == 0     ? "on the point-to-point fit of its path"
         : strcmp(w->cost_source, "p2p best case") == 0 ? "on the best-case point-to-point transfers of its path"
         : strcmp(w->cost_source, "calibration") == 0  ? "on the calibration's link sweep of its path"
                                                      : "on the UCX per-hop fit of its path";
    snprintf(buf, len,
             "%s on %s runs %s (%s: %.3g per rank and call, of %s on average); at its sizes %s would "
             "take %.0f%% less time %s: %s instead of %s per call%s%s",
             w->w.op, cf_comm_name(a->p, w->w.comm, label, sizeof(label)), w->inf.algo, w->inf.expected.shape,
             w->w.msgs_per_call, cf_an_fmt_share_n(w->msg_size / w->w.payload, sz, sizeof(sz)), w->best_algo,
             100.0 * (1.0 - w->best_s / w->model_s), on, cf_fmt_time(w->best_s, t1, sizeof(t1)),
             cf_fmt_time(w->model_s, t2, sizeof(t2)), ompi ? "; Open MPI: " : "", ompi ? ompi : "");
    return buf;
}

/* Operations that are no fitted transfer: completion, probe, one-sided,
 * local, file I/O without a fit, nonblocking spans.  1: buf says it. */
static int advice_unfitted(const cf_an_op_t *o, char *buf, size_t len)
{
    const cf_an_fit_t *f = o->fit;

    if (strcmp(o->kind, "completion") == 0) {
        if (o->waits_charged)
            snprintf(buf, len, "time in completion calls that completed no tracked request (polls that found "
                               "nothing done, requests the profiler did not see posted); the time of those "
                               "that completed requests is charged to the operations above");
        else
            snprintf(buf, len, "time blocked waiting for nonblocking operations to complete: post "
                               "them earlier or overlap more work with them");
        return 1;
    }
    if (strcmp(o->kind, "probe") == 0) {
        snprintf(buf, len, "probing for messages, not a transfer");
        return 1;
    }
    if (strcmp(o->kind, "rma") == 0) {
        snprintf(buf, len, "one-sided: the call starts the transfer, which completes at the window's "
                           "synchronisation (fence, unlock, flush, complete), where its time is recorded");
        return 1;
    }
    if (strcmp(o->kind, "sync") == 0) {
        snprintf(buf, len, "one-sided synchronisation or window set-up: waiting for the epoch's transfers and "
                           "for the other ranks; fewer epochs, or passive target with flushes, wait less");
        return 1;
    }
    if (strcmp(o->kind, "local") == 0) {
        snprintf(buf, len, "local computation in the MPI library, no communication");
        return 1;
    }
    if (strcmp(o->kind, "io") == 0 && (f == NULL || f->basis == NULL || o->nonblocking)) {
        snprintf(buf, len, "file I/O, not network traffic%s",
                 f == NULL ? "" : o->nonblocking ? ": its span from post to completion overlaps other work"
                                                 : ": not enough size range to fit the file system");
        return 1;
    }
    if (o->nonblocking && strcmp(o->kind, "io") != 0) {
        if (isfinite(o->hidden))
            snprintf(buf, len, "nonblocking: its time is what the program was blocked on it in Wait/Test; "
                               "the overlap hid %.0f%% of what the same calls would take blocking",
                     100.0 * o->hidden);
        else
            snprintf(buf, len, "nonblocking: its span from post to completion overlaps other work and is "
                               "not a cost; the time blocked on it is %s",
                     isfinite(o->share) ? "its time here (charged from Wait/Test)" : "in Wait/Test");
        return 1;
    }
    if (f == NULL) {
        snprintf(buf, len, "not a transfer: not fitted");
        return 1;
    }
    return 0;
}

/* Fits that cannot say which term dominates: file I/O, no payload, no
 * line, an uncertain verdict.  1: buf says it. */
static int advice_undecided(const cf_an_op_t *o, const cf_an_fit_t *f, char *buf, size_t len)
{
    char sz[CF_FMT_LEN] = "";

    if (f->kind == CF_AN_IO) {
        if (f->basis != NULL && strcmp(f->basis, "no payload") == 0)
            snprintf(buf, len, "file I/O without payload (open, close, view, sync): file system metadata and "
                               "waiting for the other ranks");
        else if (f->leaning != NULL)
            snprintf(buf, len, "file I/O: the data cannot tell the file system's startup from its bandwidth "
                               "here (%s)", f->why);
        else if (f->startup_share > 0.5)
            snprintf(buf, len, "file I/O, startup dominates (per access latency of the file system): make "
                               "fewer, larger accesses (collective I/O, larger buffers)");
        else
            snprintf(buf, len, "file I/O, the file system's bandwidth dominates: read or write fewer bytes, or "
                               "spread the file over more storage targets and aggregators");
        return 1;
    }
    if (f->basis != NULL && strcmp(f->basis, "no payload") == 0) {
        snprintf(buf, len, "no payload: its time is synchronization (waiting for the slowest "
                           "rank, then startup); balance the work before it or drop the call");
        return 1;
    }
    if (f->basis == NULL) {
        snprintf(buf, len, "%s (%d size%s); give --link RATE,TIME to judge it against a link",
                 f->note != NULL && strcmp(f->note, "no line fits these sizes") == 0 ? "no line fits these sizes"
                                                                                   : "not enough size range to fit",
                 f->nsizes, f->nsizes == 1 ? "" : "s");
        return 1;
    }
    if (f->leaning != NULL) {
        /* The fusion advice models the calls as measured, whichever term
         * dominates them: it stands where the verdict cannot. */
        if (o->fusion != NULL && o->fusion->verdict != NULL && strcmp(o->fusion->verdict, "fuse") == 0)
            snprintf(buf, len, "fuse them into buckets of %s (see the fusion advice, which models the "
                               "calls as measured); which of startup and payload dominates cannot be "
                               "told here (%s)",
                     cf_fmt_size(o->fusion->bucket_bytes, sz, sizeof(sz)), f->why);
        else
            snprintf(buf, len, "the data cannot tell startup from payload here (%s): measure more "
                               "sizes or more calls per size, or judge it against a known link with "
                               "--link RATE,TIME",
                     f->why);
        return 1;
    }
    return 0;
}

/* A verdict: startup or payload dominates, with what the fusion advice says. */
static void advice_verdict(const cf_an_op_t *o, const cf_an_fit_t *f, char *buf, size_t len)
{
    char nh[CF_FMT_LEN], sz[CF_FMT_LEN] = "", what[192];
    int coll = f->kind == CF_AN_COLLECTIVE, fuse, no_gain, unsure;

    cf_fmt_size(f->n_half_bytes, nh, sizeof(nh));
    /* The fusion advice, where there is one, says whether fusing pays. */
    fuse = o->fusion != NULL && o->fusion->verdict != NULL && strcmp(o->fusion->verdict, "fuse") == 0;
    no_gain = o->fusion != NULL && o->fusion->verdict != NULL && strcmp(o->fusion->verdict, "no gain") == 0;
    unsure = o->fusion != NULL && o->fusion->verdict != NULL && strcmp(o->fusion->verdict, "uncertain") == 0;
    if (unsure)
        snprintf(what, sizeof(what), "whether fusing them pays is uncertain (%s)", o->fusion->reason);
    else if (fuse)
        snprintf(what, sizeof(what), "fuse them into buckets of %s (see the fusion advice)",
                 cf_fmt_size(o->fusion->bucket_bytes, sz, sizeof(sz)));
    else if (no_gain)
        snprintf(what, sizeof(what), "yet fusing them gains nothing (%s)", o->fusion->reason);
    else
        snprintf(what, sizeof(what), "%s", coll ? "fuse them into fewer, larger calls (buckets)"
                                                : "aggregate messages into fewer, larger ones");
    if (f->startup_share > 0.5) {
        if (isfinite(f->below_n_half) && isfinite(f->n_half_bytes))
            snprintf(buf, len, "%.0f%% of the calls are below n_half = %s: %s", 100.0 * f->below_n_half,
                     nh, what);
        else
            snprintf(buf, len, "startup dominates: %s", what);
        return;
    }
    if (fuse && isfinite(f->below_n_half) && isfinite(f->n_half_bytes))
        snprintf(buf, len, "payload dominates the time, though %.0f%% of the calls are below "
                           "n_half = %s: move fewer bytes or use faster links, and fuse the small "
                           "calls into buckets of %s (see the fusion advice)",
                 100.0 * f->below_n_half, nh, sz);
    else if (!no_gain && !unsure && isfinite(f->below_n_half) && f->below_n_half >= 0.5 &&
             isfinite(f->n_half_bytes))
        snprintf(buf, len, "payload dominates the time, though %.0f%% of the calls are below "
                           "n_half = %s: move fewer bytes or use faster links, and %s",
                 100.0 * f->below_n_half, nh,
                 coll ? "fuse the small calls into buckets" : "aggregate the small messages");
    else if (coll && isfinite(f->efficiency) && f->efficiency < 0.5)
        snprintf(buf, len, "payload dominates and it runs at %.0f%% of the ideal %s: check the "
                           "algorithm the MPI library picks, then move fewer bytes",
                 100.0 * f->efficiency, f->coll == CF_COLL_ALLREDUCE ? "ring" : "model");
    else
        snprintf(buf, len, "payload dominates: move fewer bytes (compression, lower precision) "
                           "or use faster links");
}

/* Most of an operation's time waiting for a late partner: said first,
 * before what the startup and payload split of the rest advises. */
#define CF_AN_WAIT_MOST 0.5

char *cf_analysis_advice(const cf_an_op_t *o, char *buf, size_t len)
{
    const cf_an_fit_t *f = o->fit;
    char rest[CF_AN_ADVICE_LEN];
    if (!advice_unfitted(o, buf, len) && !advice_undecided(o, f, buf, len))
        advice_verdict(o, f, buf, len);
    if (o->nonblocking || f == NULL || len == 0 || !isfinite(f->wait_share) || f->wait_share < CF_AN_WAIT_MOST)
        return buf;
    cf_strlcpy(rest, buf, sizeof(rest));
    if (cf_an_wait_split(f) > 0)
        snprintf(buf, len,
                 "it waits for the last rank to arrive %.0f%% of its time (its sampled instances): balance the "
                 "work before it, or find what delays the late rank, first; of the rest, %s",
                 100.0 * f->wait_share, rest);
    else if (f->kind == CF_AN_P2P && (f->leaning != NULL || (f->basis != NULL && isfinite(f->startup_share))))
        /* only a receive posted before its message is timed: what they
         * waited, not a share of every call */
        snprintf(buf, len,
                 "its sampled receives posted before their message waited for the sender %.0f%% of their time "
                 "(late senders: balance the work before the sends, or find what delays them); its transfer: %s",
                 100.0 * f->wait_share, rest);
    return buf;
}

