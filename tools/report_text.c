/* commfit report, text: the verdict and fusion advice first, then the
 * tables (report_text.h). */
#include "report_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_advice.h"
#include "cf_callsite_report.h"
#include "cf_common.h"
#include "cf_profile.h"
#include "cf_sched.h"
#include "cf_units.h"
#include "cf_wire.h"

#define TEXT_TOP_OPS 5
#define TEXT_RANKS_ALL 16
#define TEXT_RANKS_EDGE 5

static const char *fmt_t(double v, char *buf)
{
    return cf_fmt_time(v, buf, CF_FMT_LEN);
}

static const char *fmt_s(double v, char *buf)
{
    return cf_fmt_size(v, buf, CF_FMT_LEN);
}

static const char *fmt_r(double v, char *buf)
{
    return cf_fmt_rate(v, buf, CF_FMT_LEN);
}

/* A communicator in a sentence: "world (4 ranks)", "'halo' (2 ranks)",
 * "split of world, colour 3, 8 ranks" (cf_comm_name), with its label
 * when that is what the tables show. */
#define COMM_TEXT_LEN (CF_COMM_NAME_LEN + 40)
static const char *comm_text(const cf_profile_t *p, uint32_t id, int size, char *buf, size_t len)
{
    char name[CF_COMM_NAME_LEN], label[24];
    const cf_comm_info_t *c = cf_profile_comm(p, id);
    cf_comm_name(p, id, name, sizeof(name));
    cf_comm_label(id, label, sizeof(label));
    if (strcmp(name, label) == 0 || (c != NULL && c->user_name[0]))
        snprintf(buf, len, "%s (%d rank%s)", name, size, size == 1 ? "" : "s");
    else
        snprintf(buf, len, "%s (%s)", name, label);
    return buf;
}

static int op_width(const cf_analysis_t *a)
{
    int w = 9;
    for (size_t i = 0; i < cf_analysis_nops(a); i++) {
        int n = (int)strlen(cf_analysis_op(a, i)->op) + 1;
        w = n > w ? n : w;
    }
    return w;
}

static const char *verdict_text(const cf_an_fit_t *f, char *buf, size_t len)
{
    if (f == NULL)
        snprintf(buf, len, "not fitted");
    else if (f->basis != NULL && strcmp(f->basis, "no payload") == 0)
        snprintf(buf, len, "no payload");
    else if (f->basis == NULL)
        snprintf(buf, len, "%s", f->note ? f->note : "undetermined");
    else
        snprintf(buf, len, "%s%s", f->verdict, strcmp(f->basis, "model") == 0 ? " (link model)" : "");
    return buf;
}

/* ", startup-bound (startup 87% of its time)", ", uncertain: why (...)" */
static void print_verdict_clause(FILE *out, const cf_an_fit_t *f)
{
    char v[64];
    if (f != NULL && f->basis != NULL && strcmp(f->basis, "no payload") != 0) {
        if (f->leaning != NULL)
            fprintf(out, ", uncertain: %s (estimate: startup %.0f%%, %s)", f->why, 100.0 * f->startup_share,
                   f->leaning);
        else
            fprintf(out, ", %s (startup %.0f%% of its %stime%s)", f->verdict, 100.0 * f->startup_share,
                    cf_an_wait_split(f) > 0 ? "transfer " : "",
                    strcmp(f->basis, "model") == 0 ? ", from the link model" : "");
    } else if (f != NULL) {
        fprintf(out, ", %s", verdict_text(f, v, sizeof(v)));
    }
}

static void text_header(FILE *out, const cf_analysis_t *a, const char *path)
{
    const cf_profile_t *p = cf_analysis_profile(a);
    const cf_an_ranks_t *rk = cf_analysis_ranks(a);
    char b1[CF_FMT_LEN], b2[CF_FMT_LEN], b3[CF_FMT_LEN], b4[CF_FMT_LEN];

    fprintf(out, "commfit report: %s\n", path);
    fprintf(out, "job   %d rank%s on %d node%s, %s wall, %s%s%s\n", p->ranks, p->ranks == 1 ? "" : "s",
           p->nodes, p->nodes == 1 ? "" : "s", fmt_t(p->wall_s, b1),
           p->mpi_library[0] ? p->mpi_library : "MPI library unknown",
           p->start_time[0] ? ", started " : "", p->start_time);
    if (p->program[0] != '\0' || (p->frameworks & CF_FW_KNOWN)) {
        /* what the fusion advice names settings for (cf_advice_knobs):
         * "(loaded: torch)", "(loaded: none of torch, horovod)" */
        char fw[64] = "", all[64] = "";
#define CF_FW_NAME_(id, name, marker)                                                                                  \
    snprintf(all + strlen(all), sizeof(all) - strlen(all), "%s%s", all[0] ? ", " : "", name);                          \
    if (p->frameworks & CF_FW_BIT(id))                                                                                 \
        snprintf(fw + strlen(fw), sizeof(fw) - strlen(fw), "%s%s", fw[0] ? ", " : "", name);
        CF_FW_LIST(CF_FW_NAME_)
#undef CF_FW_NAME_
        fprintf(out, "prog  %s", p->program[0] ? p->program : "unknown");
        if (p->frameworks & CF_FW_KNOWN)
            fprintf(out, " (loaded: %s%s)", fw[0] ? "" : "none of ", fw[0] ? fw : all);
        fprintf(out, "\n");
    }
    char sched[1024];
    if (cf_sched_line(p->extra, sched, sizeof(sched)))
        fprintf(out, "batch %s\n", sched);
    if (rk->n > 0)
        fprintf(out, "MPI   %s of rank time in MPI calls: %s per rank on average, %s (rank %d) to %s "
               "(rank %d)\n",
               cf_fmt_pct(rk->mpi_fraction, 0, b1, CF_FMT_LEN), fmt_t(rk->mpi_mean_s, b2), fmt_t(rk->mpi_min_s, b3),
               rk->min_rank, fmt_t(rk->mpi_max_s, b4), rk->max_rank);
    for (size_t i = 0; i < cf_analysis_ncaveats(a); i++) {
        const char *c = cf_analysis_caveat(a, i);
        fprintf(out, "%s%s\n", c[0] == ' ' ? "        " : "WARNING: ", c[0] == ' ' ? c + 2 : c);
    }
}

static void text_verdict(FILE *out, const cf_analysis_t *a)
{
    size_t nops = cf_analysis_nops(a);
    char label[CF_COMM_NAME_LEN], pct[CF_FMT_LEN], advice[CF_AN_ADVICE_LEN];

    fprintf(out, "\nVERDICT\n");
    if (nops == 0) {
        fprintf(out, "  No MPI communication was recorded.\n");
        return;
    }
    {
        const cf_an_breakdown_t *bd = cf_analysis_breakdown(a);
        char b1[CF_FMT_LEN], b3[CF_FMT_LEN], b4[CF_FMT_LEN];
        fprintf(out, "  %s;\n", cf_analysis_headline(a, advice, sizeof(advice)));
        char b5[CF_FMT_LEN];
        fprintf(out,
                "  %s is calls without payload (synchronization), %s is not fitted (waits, probes, "
                "too few sizes)%s%s%s%s%s%s%s.\n",
                cf_fmt_pct(bd->no_payload, 0, b3, CF_FMT_LEN), cf_fmt_pct(bd->unexplained, 0, b4, CF_FMT_LEN),
                bd->uncertain > 0 ? ", " : "", bd->uncertain > 0 ? cf_fmt_pct(bd->uncertain, 0, b1, CF_FMT_LEN) : "",
                bd->uncertain > 0 ? " is in operations whose split cannot be told (uncertain)" : "",
                bd->blocked > 0 ? ", blocked in Wait/Test on nonblocking operations: " : "",
                bd->blocked > 0 ? cf_fmt_pct(bd->blocked, 0, pct, CF_FMT_LEN) : "",
                bd->waiting > 0 ? ", waiting inside collectives for the last rank (sampled): " : "",
                bd->waiting > 0 ? cf_fmt_pct(bd->waiting, 0, b5, CF_FMT_LEN) : "");
        if (bd->io > 0)
            printf("  %s is file I/O (MPI-IO), not network traffic.\n", cf_fmt_pct(bd->io, 0, b1, CF_FMT_LEN));
    }
    /* Costs only: a nonblocking span overlaps other work, and what it cost
     * is the blocked time in Wait/Test, ranked as such. */
    for (size_t i = 0, shown = 0; i < nops && shown < TEXT_TOP_OPS; i++) {
        const cf_an_op_t *o = cf_analysis_op(a, i);
        char line[768];
        if (!isfinite(o->share))
            break; /* an unranked span (a profile that does not charge waits) */
        /* Past the third, only what still matters. */
        if (shown >= 3 && !(o->share >= 0.01))
            break;
        if (cf_analysis_overlap_line(a, o, line, sizeof(line)) != NULL) {
            fprintf(out, "  %zu. %s of MPI time: %s.\n", ++shown, cf_fmt_pct(o->share, 0, pct, CF_FMT_LEN), line);
            continue;
        }
        fprintf(out, "  %zu. %s on %s: %s of MPI time", ++shown, o->op,
               cf_comm_name(cf_analysis_profile(a), o->comm, label, sizeof(label)), cf_fmt_pct(o->share, 0, pct, CF_FMT_LEN));
        print_verdict_clause(out, o->nonblocking ? NULL : o->fit);
        fprintf(out, ".\n     %s.\n", cf_analysis_advice(o, advice, sizeof(advice)));
    }
    /* The algorithm beneath a collective, when it costs notably more than another. */
    for (size_t i = 0; i < cf_analysis_nwire(a); i++) {
        const cf_an_wire_t *w = cf_analysis_wire(a, i);
        char line[512];
        if (w->share >= 0.01 && cf_analysis_wire_advice(a, w, line, sizeof(line)) != NULL)
            fprintf(out, "  Beneath MPI: %s.\n", line);
    }
}

static void text_ops(const cf_analysis_t *a)
{
    const cf_profile_t *p = cf_analysis_profile(a);
    int w = op_width(a), nb = 0, short_of = 0;
    char label[24], b1[CF_FMT_LEN], b2[CF_FMT_LEN], b3[CF_FMT_LEN], b4[CF_FMT_LEN], b5[CF_FMT_LEN];
    char b6[CF_FMT_LEN], v[64], calls[32];

    if (cf_analysis_nops(a) == 0)
        return;
    printf("\nOPERATIONS  time summed over ranks (/rank: divided by %d); share of all recorded MPI "
           "time\n",
           p->ranks > 0 ? p->ranks : 1);
    printf("  %-*s %-9s %-10s %10s %9s %9s %9s %6s  %-22s %7s %6s\n", w, "operation", "comm", "path",
           "calls", "bytes", "time", "/rank", "share", "verdict", "startup", "wait");
    for (size_t i = 0; i < cf_analysis_nops(a); i++) {
        const cf_an_op_t *o = cf_analysis_op(a, i);
        char name[48];
        snprintf(name, sizeof(name), "%s%s", o->op, o->nonblocking ? "*" : "");
        nb |= o->nonblocking;
        /* '+': some ranks' calls of it could not be kept; the count is the others' */
        snprintf(calls, sizeof(calls), "%llu%s", (unsigned long long)o->calls, o->ranks_missing ? "+" : "");
        short_of |= o->ranks_missing != 0;
        printf("  %-*s %-9s %-10s %10s %9s %9s %9s %6s  %-22s %7s %6s\n", w, name,
               cf_comm_label(o->comm, label, sizeof(label)), cf_path_name((unsigned)o->path),
               calls, fmt_s((double)o->bytes, b1), fmt_t(o->time_s, b2),
               fmt_t(p->ranks > 0 ? o->time_s / p->ranks : NAN, b3), cf_fmt_pct(o->share, 0, b4, CF_FMT_LEN),
               o->nonblocking ? (isfinite(o->share) ? "blocked in waits" : "span, not a cost")
                              : verdict_text(o->fit, v, sizeof(v)),
               o->fit && o->fit->basis && !o->nonblocking ? cf_fmt_pct(o->fit->startup_share, 0, b5, CF_FMT_LEN) : "-",
               cf_fmt_pct(o->fit ? o->fit->wait_share : NAN, 0, b6, CF_FMT_LEN));
    }
    if (nb && cf_analysis_charged(a))
        printf("  * nonblocking: time is what the program was blocked on it in Wait/Test (each completion "
               "call's time split among the requests it completed; the completion calls keep the rest); its "
               "spans from post to completion (%s in all) overlap other work and are not costs\n",
               fmt_t(cf_analysis_span_s(a), b1));
    else if (nb)
        printf("  * nonblocking: time from post to completion (%s in all), which overlaps other work: not a "
               "cost and not in the shares; what it cost is the time blocked in Wait/Test\n",
               fmt_t(cf_analysis_span_s(a), b1));
    if (short_of)
        printf("  +: the calls of some ranks could not be kept (their tables were full, or they left nothing): "
               "at least this many, exact for the other ranks (ranks_missing in the profile)\n");
    printf("  wait: share of the sampled calls' time spent waiting for late ranks (collectives: every sampled "
           "instance; point-to-point: the sampled receives posted before their message, a late sender's wait; "
           "- : not sampled)\n");
}

/* What the labels in the tables stand for, when there is more than world
 * and self. */
static void text_comms(const cf_analysis_t *a)
{
    const cf_profile_t *p = cf_analysis_profile(a);
    size_t other = 0;
    char label[24], name[CF_COMM_NAME_LEN];

    for (size_t i = 0; i < p->ncomm; i++)
        other += p->comm[i].id != CF_COMM_ID_WORLD && p->comm[i].id != CF_COMM_ID_SELF;
    if (other == 0)
        return;
    printf("\nCOMMUNICATORS  the labels of the tables; named by MPI_Comm_set_name, else by how they were made\n");
    printf("  %-9s %6s %5s  %-24s %s\n", "comm", "ranks", "nodes", "made by", "name");
    for (size_t i = 0; i < p->ncomm; i++) {
        const cf_comm_info_t *c = &p->comm[i];
        printf("  %-9s %6d %5d  %-24s %s%s%s%s\n", cf_comm_label(c->id, label, sizeof(label)), c->size, c->nodes,
               c->name, cf_comm_name(p, c->id, name, sizeof(name)), c->user_name[0] && c->desc[0] ? " (" : "",
               c->user_name[0] ? c->desc : "", c->user_name[0] && c->desc[0] ? ")" : "");
    }
}

/* Name of a fit in tables: the joint p2p fit of a path reads "p2p (all)". */
static const char *fit_name(const cf_an_fit_t *f, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s", f->op, f->joint ? " (all)" : "");
    return buf;
}

static int fit_width(const cf_analysis_t *a)
{
    int w = 9;
    char name[64];
    for (size_t i = 0; i < cf_analysis_nfits(a); i++) {
        int n = (int)strlen(fit_name(cf_analysis_fit(a, i), name, sizeof(name))) + 1;
        w = n > w ? n : w;
    }
    return w;
}

/* Per-bin tables list the joint fits and the fits of operations that take
 * at least TEXT_DETAIL_SHARE of the time; CSV and JSON list them all. */
#define TEXT_DETAIL_SHARE 0.01

static int fit_detailed(const cf_analysis_t *a, const cf_an_fit_t *f)
{
    double total = cf_analysis_total_s(a);
    return f->joint || !(total > 0) || f->time_s >= TEXT_DETAIL_SHARE * total;
}

static void text_left_out(const cf_analysis_t *a, int collectives_only)
{
    size_t n = 0;
    for (size_t i = 0; i < cf_analysis_nfits(a); i++) {
        const cf_an_fit_t *f = cf_analysis_fit(a, i);
        if ((!collectives_only || f->kind == CF_AN_COLLECTIVE) && !fit_detailed(a, f))
            n++;
    }
    if (n > 0)
        printf("  (%zu fit%s under %.0f%% of MPI time left out: --format csv lists every bin)\n", n,
               n == 1 ? "" : "s", 100.0 * TEXT_DETAIL_SHARE);
}

/* What a fit's wait_share measured: a collective's sampled instances
 * waiting for the last rank; point-to-point, the receives posted before
 * their message, waiting for the sender (a late receive is not timed). */
static const char *wait_label(const cf_an_fit_t *f)
{
    return f->kind == CF_AN_COLLECTIVE ? "wait for the last rank"
                                       : "receives posted before their message waited for it";
}

static void text_fits(const cf_analysis_t *a)
{
    int w = fit_width(a);
    char label[24], b[8][CF_FMT_LEN], range[80], name[64], kept[24];

    if (cf_analysis_nfits(a) == 0)
        return;
    printf("\nFITS  T = alpha + M/B, piecewise where the protocol changes, on per-bin medians (weight "
           "calls/(calls+16)), in relative error; alpha: startup (smallest sizes' segment), B: asymptotic bandwidth "
           "(largest sizes' segment), [95%% interval]; sizes: kept / distinct; err: rms |predicted / "
           "measured - 1| over the kept bins\n");
    for (int path = CF_PATH_SELF; path <= CF_PATH_INTER; path++) {
        const cf_an_limits_t *pl = cf_analysis_limits(a, path);
        if (pl == NULL || (pl->n == 0 && pl->unused_why == NULL))
            continue;
        printf("  protocol limits the library declares, %s:", cf_path_name((unsigned)path));
        for (size_t q = 0; q < pl->n; q++)
            printf("%s %s (%s)", q ? "," : "", fmt_s(pl->bytes[q], b[0]), pl->name[q]);
        if (pl->n > 0)
            printf("; the joint point-to-point fit may break at them (its lines say where it does)\n");
        else
            printf(" not used: %s\n", pl->unused_why);
    }
    printf("  %-*s %-6s %-10s %7s  %-19s %-28s %-32s %8s %6s %7s  %s\n", w, "op", "comm", "path",
           "sizes", "size range", "alpha", "B", "n_half", "err", "startup", "verdict");
    for (size_t i = 0; i < cf_analysis_nfits(a); i++) {
        const cf_an_fit_t *f = cf_analysis_fit(a, i);
        const cf_fit_t *ft = &f->fit;
        char ci_a[80], ci_b[80];

        fit_name(f, name, sizeof(name));
        cf_an_comm_label(f->comm, label, sizeof(label));
        if (!ft->ok) {
            printf("  %-*s %-6s %-10s %7d  %s", w, name, label, cf_path_name((unsigned)f->path), f->nsizes,
                   f->note ? f->note : "no fit");
            if (isfinite(f->zero_p50_s))
                printf(": %s per call (median)", fmt_t(f->zero_p50_s, b[0]));
            if (f->basis != NULL && strcmp(f->basis, "model") == 0)
                printf("; under the link model: startup %s, %s", cf_fmt_pct(f->startup_share, 0, b[1], CF_FMT_LEN),
                       f->verdict);
            putchar('\n');
        } else if (f->nonblocking) {
            /* a span's line would read as a startup and a bandwidth (the HTML
             * draws its medians only, too) */
            snprintf(range, sizeof(range), "%s .. %s", fmt_s(ft->size_lo, b[0]), fmt_s(ft->size_hi, b[1]));
            printf("  %-*s %-6s %-10s %7d  %-19s %-85s  span, not a cost\n", w, name, label,
                   cf_path_name((unsigned)f->path), f->nsizes, range,
                   "post-to-completion spans: no alpha or B (the program's work is in them)");
        } else {
            snprintf(kept, sizeof(kept), "%d/%d", ft->npoints, f->nsizes);
            snprintf(range, sizeof(range), "%s .. %s", fmt_s(ft->size_lo, b[0]), fmt_s(ft->size_hi, b[1]));
            snprintf(ci_a, sizeof(ci_a), "%s [%s, %s]", fmt_t(ft->alpha_s, b[2]),
                     fmt_t(ft->alpha_ci[0], b[3]), fmt_t(ft->alpha_ci[1], b[4]));
            snprintf(ci_b, sizeof(ci_b), "%s [%s, %s]", fmt_r(ft->bandwidth_Bps, b[2]),
                     fmt_r(ft->bandwidth_ci[0], b[3]), fmt_r(ft->bandwidth_ci[1], b[4]));
            printf("  %-*s %-6s %-10s %7s  %-19s %-28s %-32s %8s %6s %7s  %s\n", w, name, label,
                   cf_path_name((unsigned)f->path), kept, range, ci_a, ci_b,
                   fmt_s(ft->n_half_bytes, b[5]), cf_fmt_pct(f->err_rms, 0, b[7], CF_FMT_LEN),
                   cf_fmt_pct(f->nonblocking ? NAN : f->startup_share, 0, b[6], CF_FMT_LEN), f->nonblocking ? "span, not a cost" : f->verdict);
            if (f->leaning != NULL && !f->nonblocking)
                printf("  %-*s %-17s uncertain: %s; the estimate leans %s\n", w, "", "", f->why, f->leaning);
        }
        for (int k = 0; ft->ok && !f->nonblocking && ft->nseg > 1 && k < ft->nseg; k++) {
            const cf_segment_t *g = &ft->seg[k];
            char head[32];
            snprintf(head, sizeof(head), "segment %d", k + 1);
            snprintf(range, sizeof(range), "%s .. %s", fmt_s(g->size_lo, b[0]), fmt_s(g->size_hi, b[1]));
            snprintf(ci_a, sizeof(ci_a), "%s%s", k == 0 ? "" : "line at 0: ", fmt_t(g->alpha_s, b[2]));
            snprintf(ci_b, sizeof(ci_b), "%s [%s, %s]", fmt_r(g->bandwidth_Bps, b[3]),
                     fmt_r(g->bandwidth_ci[0], b[5]), fmt_r(g->bandwidth_ci[1], b[6]));
            printf("  %-*s %-17s %7d  %-19s %-28s %-32s %8s\n", w, "", head, g->npoints, range, ci_a, ci_b,
                   fmt_s(k == 0 && !isinf(g->bandwidth_Bps) ? g->alpha_s * g->bandwidth_Bps : NAN, b[4]));
        }
        if (ft->ok && ft->nlimits > 0) {
            const cf_an_limits_t *pl = cf_analysis_limits(a, f->path);
            printf("  %-*s %-17s breaks at the library's protocol limits:", w, "", "");
            for (int j = 0; j < ft->nlimits; j++) {
                const char *nm = "";
                for (size_t q = 0; pl != NULL && q < pl->n; q++)
                    if (pl->bytes[q] == ft->limit_bytes[j])
                        nm = pl->name[q];
                printf("%s %s (%s)", j ? "," : "", fmt_s(ft->limit_bytes[j], b[0]), nm);
            }
            putchar('\n');
        }
        if (ft->ok && ft->limits_unused_why != NULL)
            printf("  %-*s %-17s declared protocol limits not broken at: %s\n", w, "", "", ft->limits_unused_why);
        if (ft->ok) {
            int nb = 0, nx = 0;
            for (size_t k = 0; k < f->nbin; k++) {
                nb += f->bin[k].in_fit || f->bin[k].outlier;
                nx += (f->bin[k].in_fit || f->bin[k].outlier) && f->bin[k].time_source == CF_AN_TIME_TRANSFER;
            }
            if (nx == 0 && f->samples > 0)
                printf("  %-*s %-17s medians: call durations (transfer times in only some bins: one "
                       "quantity per line)", w, "", "");
            else if (nx == 0)
                printf("  %-*s %-17s medians: call durations (no transfer samples)", w, "", "");
            else if (nx >= nb)
                printf("  %-*s %-17s medians: transfer times (%llu samples)", w, "", "",
                       (unsigned long long)f->samples);
            else
                printf("  %-*s %-17s medians: transfer times in %d of %d bins, call durations in the rest",
                       w, "", "", nx, nb);
            if (f->few_sample_bins > 0)
                printf(" (%d bin%s with too few timed transfers: fewer than %d, or most receives late)", f->few_sample_bins,
                       f->few_sample_bins == 1 ? "" : "s", CF_AN_MIN_SAMPLES);
            if (isfinite(f->wait_share))
                printf("; %s: %s of the sampled time", wait_label(f), cf_fmt_pct(f->wait_share, 0, b[0], CF_FMT_LEN));
            putchar('\n');
        } else if (isfinite(f->wait_share)) {
            printf("  %-*s %-17s %s: %s of the sampled time\n", w, "", "", wait_label(f),
                   cf_fmt_pct(f->wait_share, 0, b[0], CF_FMT_LEN));
        }
    }
}

static void text_bins(const cf_analysis_t *a)
{
    int w = fit_width(a);
    char label[24], b[7][CF_FMT_LEN], name[64];

    if (cf_analysis_nfits(a) == 0)
        return;
    printf("\nSIZE BINS  per call: median time (p50; src: xfer = sampled transfer time, dur = call "
           "duration; cover: calls sampled), the fit's prediction and its error (predicted / p50 - 1; "
           "! = left out as an outlier); startup = alpha / T\n");
    printf("  %-*s %-6s %-10s %9s %10s %9s %4s %6s %9s %9s %7s %7s  %s\n", w, "op", "comm", "path", "size",
           "calls", "p50", "src", "cover", "p99", "predicted", "error", "startup", "verdict");
    for (size_t i = 0; i < cf_analysis_nfits(a); i++) {
        const cf_an_fit_t *f = cf_analysis_fit(a, i);
        if (!fit_detailed(a, f))
            continue;
        fit_name(f, name, sizeof(name));
        for (size_t k = 0; k < f->nbin; k++) {
            const cf_an_bin_t *bn = &f->bin[k];
            char err[CF_FMT_LEN + 2];
            /* a span has no line to predict it (FITS) */
            double model_error = f->nonblocking ? NAN : bn->model_error;
            snprintf(err, sizeof(err), "%s%s", isfinite(model_error) && model_error >= 0 ? "+" : "",
                     cf_fmt_pct(model_error, 0, b[5], CF_FMT_LEN));
            if (bn->outlier && !f->nonblocking)
                cf_strlcpy(err + strlen(err), "!", sizeof(err) - strlen(err));
            printf("  %-*s %-6s %-10s %9s %10llu %9s %4s %6s %9s %9s %7s %7s  %s\n", w, k == 0 ? name : "",
                   k == 0 ? cf_an_comm_label(f->comm, label, sizeof(label)) : "",
                   k == 0 ? cf_path_name((unsigned)f->path) : "", fmt_s(bn->size, b[0]), (unsigned long long)bn->calls,
                   fmt_t(bn->p50_s, b[1]), bn->time_source == CF_AN_TIME_TRANSFER ? "xfer" : "dur",
                   cf_fmt_pct(bn->coverage, 0, b[6], CF_FMT_LEN), fmt_t(bn->p99_s, b[2]),
                   fmt_t(f->nonblocking ? NAN : bn->predicted_s, b[3]), err,
                   cf_fmt_pct(f->nonblocking ? NAN : bn->startup_share, 0, b[4], CF_FMT_LEN),
                   f->nonblocking ? "span" : bn->verdict);
        }
    }
    text_left_out(a, 0);
}

/* A collective whose times are its calls' own: a nonblocking span is no bus bandwidth. */
static int busbw_fit(const cf_an_fit_t *f)
{
    return f->kind == CF_AN_COLLECTIVE && !f->nonblocking;
}

static void text_collectives(const cf_analysis_t *a)
{
    int w = op_width(a), any = 0;
    char label[24], b[8][CF_FMT_LEN];

    for (size_t i = 0; i < cf_analysis_nfits(a); i++)
        any |= busbw_fit(cf_analysis_fit(a, i));
    if (!any)
        return;
    printf("\nCOLLECTIVES  nccl-tests convention: algbw = size / time, busbw = algbw x factor; "
           "ideal: default algorithm (ring for allreduce)\n");
    for (int path = CF_PATH_SELF; path <= CF_PATH_INTER; path++) {
        const cf_an_ref_t *ref = cf_analysis_ref(a, path);
        int used = 0;
        for (size_t i = 0; i < cf_analysis_nfits(a); i++)
            used |= busbw_fit(cf_analysis_fit(a, i)) && cf_analysis_fit(a, i)->path == path;
        if (!used)
            continue;
        if (ref->source != NULL) {
            printf("  ideal on %s from the %s: alpha %s, B %s%s%s%s", cf_path_name((unsigned)path),
                   ref->source, fmt_t(ref->alpha_s, b[0]), fmt_r(ref->bandwidth_Bps, b[1]),
                   ref->why[0] ? " (uncertain: " : "", ref->why, ref->why[0] ? ")" : "");
            /* the program's own fit of its blocking point to point, beside it */
            if (ref->joint != NULL && ref->fit != &ref->joint->fit && isfinite(ref->program_Bps))
                printf("; the program's p2p fit: alpha %s, B %s, misses its bins by %s rms",
                       fmt_t(ref->program_alpha_s, b[2]), fmt_r(ref->program_Bps, b[3]),
                       cf_fmt_pct(ref->program_err_rms, 0, b[4], CF_FMT_LEN));
            printf("\n");
        } else
            printf("  ideal on %s: none, no point-to-point fit on this path (give --link RATE,TIME)\n",
                   cf_path_name((unsigned)path));
    }
    printf("  %-*s %-6s %5s %9s %10s %9s %11s %11s %9s %6s\n", w, "op", "comm", "p", "size", "calls",
           "time", "algbw", "busbw", "ideal", "eff");
    for (size_t i = 0; i < cf_analysis_nfits(a); i++) {
        const cf_an_fit_t *f = cf_analysis_fit(a, i);
        if (!busbw_fit(f) || !fit_detailed(a, f))
            continue;
        for (size_t k = 0; k < f->nbin; k++) {
            const cf_an_bin_t *bn = &f->bin[k];
            printf("  %-*s %-6s %5d %9s %10llu %9s %11s %11s %9s %6s\n", w, k == 0 ? f->op : "",
                   k == 0 ? cf_comm_label(f->comm, label, sizeof(label)) : "", f->comm_size,
                   fmt_s(bn->size, b[0]), (unsigned long long)bn->calls, fmt_t(bn->p50_s, b[1]),
                   bn->size > 0 ? fmt_r(bn->algbw_Bps, b[2]) : "-",
                   bn->size > 0 ? fmt_r(bn->busbw_Bps, b[3]) : "-", fmt_t(bn->ideal_s, b[4]),
                   cf_fmt_pct(bn->efficiency, 0, b[5], CF_FMT_LEN));
        }
        if (f->fit.ok && f->hop_algo != NULL)
            printf("  %-*s per hop under %s: alpha %s, B %s (fit of the collective: alpha %s, B %s); "
                   "efficiency over all calls %s\n",
                   w, "", f->hop_algo, fmt_t(f->hop_alpha_s, b[0]), fmt_r(f->hop_Bps, b[1]),
                   fmt_t(f->fit.alpha_s, b[2]), fmt_r(f->fit.bandwidth_Bps, b[3]),
                   cf_fmt_pct(f->efficiency, 0, b[4], CF_FMT_LEN));
    }
    text_left_out(a, 1);
}

static const char *cost_source_text(const char *source)
{
    if (strcmp(source, "collective fit") == 0)
        return "the collective's own fit under that algorithm";
    if (strcmp(source, "link") == 0)
        return "the given link";
    if (strcmp(source, "p2p fit") == 0)
        return "the path's point-to-point fit";
    if (strcmp(source, "p2p best case") == 0)
        return "the path's best-case point-to-point transfers";
    if (strcmp(source, "calibration") == 0)
        return "the calibration's link sweep";
    return "the path's UCX per-hop fit";
}

static void text_wire(const cf_analysis_t *a)
{
    const cf_profile_t *p = cf_analysis_profile(a);
    json_t *tr = cf_wire_transports(p);
    int w = 9, ncoll = 0, nother = 0;
    char label[24], b[8][CF_FMT_LEN], payload[2 * CF_FMT_LEN + 8], algo[64];

    if (cf_analysis_nwire(a) == 0 && cf_analysis_nhops(a) == 0)
        return;
    for (size_t i = 0; i < cf_analysis_nwire(a); i++) {
        const cf_an_wire_t *x = cf_analysis_wire(a, i);
        int n = (int)strlen(x->w.op) + 1;
        w = n > w ? n : w;
        ncoll += x->collective;
        nother += !x->collective;
    }
    printf("\nBENEATH MPI (UCX)  messages each rank sent per MPI call (UCX sends and puts posted under "
           "it), held against each algorithm's message-level model\n");
    if (ncoll > 0)
        printf("  %-*s %-6s %4s %-21s %8s %9s %10s %-15s %-19s %s\n", w, "op", "comm", "p", "payload n",
               "calls", "msgs/call", "bytes/call", "message", "algorithm", "model (msgs/call expected)");
    for (size_t i = 0; i < cf_analysis_nwire(a); i++) {
        const cf_an_wire_t *x = cf_analysis_wire(a, i);
        char msg[2 * CF_FMT_LEN + 4];
        if (!x->collective)
            continue;
        if (cf_size_bin(x->w.size_lo) == cf_size_bin(x->w.size_hi))
            snprintf(payload, sizeof(payload), "%s", fmt_s(x->w.payload, b[0]));
        else
            snprintf(payload, sizeof(payload), "%s .. %s", fmt_s(x->w.payload_lo, b[0]),
                     fmt_s(x->w.payload_hi, b[1]));
        snprintf(msg, sizeof(msg), "%s %s", fmt_s(x->msg_size, b[2]),
                 x->w.payload > 0 ? cf_an_fmt_share_n(x->msg_size / x->w.payload, b[3], CF_FMT_LEN) : "");
        snprintf(algo, sizeof(algo), "%s", !x->inferred ? "-" : x->inf.algo != NULL ? x->inf.algo : "none");
        printf("  %-*s %-6s %4d %-21s %8llu %9.3g %10s %-15s %-19s ", w, x->w.op,
               cf_comm_label(x->w.comm, label, sizeof(label)), x->w.comm_size, payload,
               (unsigned long long)x->w.mpi_calls, x->w.msgs_per_call, fmt_s(x->w.bytes_per_call, b[4]), msg,
               algo);
        if (x->inferred)
            printf("%s%s%s%s (%.3g)\n", x->inf.algo == NULL ? "nearest " : "",
                   x->inf.algo == NULL ? x->inf.closest : "", x->inf.algo == NULL ? ": " : "",
                   x->inf.expected.shape, x->inf.expected.msgs);
        else
            printf("-\n");
        if (x->note != NULL)
            printf("  %-*s %s\n", w, "", x->note);
        if (x->cost_source != NULL && isfinite(x->model_s)) {
            printf("  %-*s cost per call at its sizes, per hop alpha %s and B %s from %s: %s %s", w, "",
                   fmt_t(x->cost_alpha_s, b[0]), fmt_r(x->cost_Bps, b[1]), cost_source_text(x->cost_source),
                   x->inf.algo, fmt_t(x->model_s, b[2]));
            if (strcmp(x->best_algo, x->inf.algo) != 0)
                printf(", cheapest %s %s", x->best_algo, fmt_t(x->best_s, b[3]));
            else
                printf(", the cheapest modelled");
            printf("; measured %s\n", fmt_t(x->measured_s, b[5]));
        }
    }
    if (nother > 0) {
        printf("  other traffic:");
        for (size_t i = 0, k = 0; i < cf_analysis_nwire(a); i++) {
            const cf_an_wire_t *x = cf_analysis_wire(a, i);
            if (x->collective)
                continue;
            printf("%s %s %llu message%s (%s on average", k++ ? ";" : "",
                   x->w.op[0] ? x->w.op : "outside MPI calls", (unsigned long long)x->w.msgs,
                   x->w.msgs == 1 ? "" : "s", fmt_s(x->msg_size, b[0]));
            if (isfinite(x->w.msgs_per_call))
                printf(", %.3g per call", x->w.msgs_per_call);
            printf(")");
        }
        printf("\n");
    }
    if (cf_analysis_nhops(a) > 0)
        printf("  per-hop fits  T = alpha + M/B on the UCX sends of each path, post to completion (an eager "
               "send completes once copied out)\n");
    for (size_t i = 0; i < cf_analysis_nhops(a); i++) {
        const cf_an_hop_t *h = cf_analysis_hop(a, i);
        const cf_an_ref_t *ref = cf_analysis_ref(a, h->path);
        const cf_fit_t *ft = &h->fit;
        printf("    %-10s ", cf_path_name((unsigned)h->path));
        if (!ft->ok) {
            printf("%s (%d size%s, %llu messages)\n", h->note, h->nsizes, h->nsizes == 1 ? "" : "s",
                   (unsigned long long)h->msgs);
            continue;
        }
        printf("alpha %s, B %s, n_half %s, R^2 %.3f, sizes %d/%d kept, %s .. %s", fmt_t(ft->alpha_s, b[0]),
               fmt_r(ft->bandwidth_Bps, b[1]), fmt_s(ft->n_half_bytes, b[2]), ft->r2, ft->npoints, h->nsizes,
               fmt_s(ft->size_lo, b[3]), fmt_s(ft->size_hi, b[4]));
        if (ft->nseg > 1)
            printf(", %d segments", ft->nseg);
        if (ref->fit == ft)
            printf("; the reference link of the path (no MPI point-to-point fit there)");
        printf("\n");
    }
    if (tr != NULL && json_object_size(tr) > 0) {
        const char *path;
        json_t *list;
        int k = 0;
        printf("  transports  ");
        json_object_foreach(tr, path, list) {
            size_t j;
            json_t *t;
            printf("%s%s:", k++ ? "; " : "", path);
            json_array_foreach(list, j, t)
                printf("%s %s", j ? "," : "", json_is_string(t) ? json_string_value(t) : "?");
        }
        printf("\n");
    }
}

static void text_rank_row(const cf_rank_info_t *r)
{
    char b1[CF_FMT_LEN], b2[CF_FMT_LEN], b3[CF_FMT_LEN], b4[CF_FMT_LEN], b5[CF_FMT_LEN],
        b6[CF_FMT_LEN];
    double sampled = r->wait_s + r->xfer_s;
    printf("  %6d %5d %-16.16s %9s %9s %7s %9s %9s %7s\n", r->rank, r->node, r->host,
           fmt_t(r->wall_s, b1), fmt_t(r->mpi_s, b2),
           cf_fmt_pct(r->wall_s > 0 ? r->mpi_s / r->wall_s : NAN, 0, b3, CF_FMT_LEN), fmt_t(r->wait_s, b4),
           fmt_t(r->xfer_s, b5), cf_fmt_pct(sampled > 0 ? r->wait_s / sampled : NAN, 0, b6, CF_FMT_LEN));
}

static int cmp_rank_mpi(const void *pa, const void *pb)
{
    const cf_rank_info_t *a = *(const cf_rank_info_t *const *)pa, *b = *(const cf_rank_info_t *const *)pb;
    return (a->mpi_s < b->mpi_s) - (a->mpi_s > b->mpi_s);
}

static int text_ranks(const cf_analysis_t *a)
{
    const cf_profile_t *p = cf_analysis_profile(a);
    const cf_an_ranks_t *rk = cf_analysis_ranks(a);
    char b1[CF_FMT_LEN], b2[CF_FMT_LEN], b3[CF_FMT_LEN], b4[CF_FMT_LEN];

    if (rk->n == 0)
        return 0;
    printf("\nRANKS  time inside MPI calls per rank; wait and transfer over its sampled collective calls\n");
    printf("  %6s %5s %-16s %9s %9s %7s %9s %9s %7s\n", "rank", "node", "host", "wall", "MPI", "MPI %",
           "wait", "transfer", "wait %");
    if (p->nrank <= TEXT_RANKS_ALL) {
        for (size_t i = 0; i < p->nrank; i++)
            text_rank_row(&p->rank[i]);
    } else {
        const cf_rank_info_t **order = malloc(p->nrank * sizeof(*order));
        if (order == NULL)
            return CF_ERR_NOMEM;
        for (size_t i = 0; i < p->nrank; i++)
            order[i] = &p->rank[i];
        qsort(order, p->nrank, sizeof(*order), cmp_rank_mpi);
        printf("  (the %d ranks with the most and the least MPI time of %zu)\n", TEXT_RANKS_EDGE, p->nrank);
        for (size_t i = 0; i < TEXT_RANKS_EDGE; i++)
            text_rank_row(order[i]);
        printf("  %6s\n", "...");
        for (size_t i = p->nrank - TEXT_RANKS_EDGE; i < p->nrank; i++)
            text_rank_row(order[i]);
        free(order);
    }
    printf("  MPI time: min %s (rank %d), mean %s, max %s (rank %d); imbalance max/mean - 1 = %s\n",
           fmt_t(rk->mpi_min_s, b1), rk->min_rank, fmt_t(rk->mpi_mean_s, b2), fmt_t(rk->mpi_max_s, b3),
           rk->max_rank, cf_fmt_pct(rk->imbalance, 0, b4, CF_FMT_LEN));
    return 0;
}

/* Every stream of at least this share of the MPI time gets its fusion
 * advice in text (a nonblocking stream's share is its time blocked in
 * Wait/Test). */
#define TEXT_FUSION_SHARE 0.01

static const char *pred_src(int s)
{
    const char *n = cf_pred_source_name((cf_pred_source_t)s);
    return n != NULL ? n : "-";
}

/* A run that measured more than its calls' own time: said, with what
 * the advice does with it (cf_advice.h). */
static void text_disturbed(FILE *out, const cf_advice_t *ad)
{
    char note[CF_ADV_NOTE_LEN];
    /* a run that measured more than its calls' own time (cf_advice_disturbed_note) */
    if (cf_advice_disturbed_note(ad, note, sizeof(note)))
        fprintf(out, "    %s\n", note);
    /* the polls' tails (cf_advice_polls_note) */
    if (cf_advice_polls_note(ad, note, sizeof(note)))
        fprintf(out, "    polls beyond their median: %s\n", note);
    /* memory the kernel mapped in afresh every step (cf_advice_memory_note) */
    if (cf_advice_memory_note(ad, note, sizeof(note)))
        fprintf(out, "    memory: %s\n", note);
}

/* An advised nonblocking stream's buckets in flight together: their
 * price, and what the program's allocator adds to it */
static void text_in_flight(FILE *out, const cf_advice_t *ad)
{
    char note[CF_ADV_IN_FLIGHT_LINES][CF_ADV_NOTE_LEN];
    int n = cf_advice_in_flight_notes(ad, note);
    for (int k = 0; k < n; k++)
        fprintf(out, "          %s\n", note[k]);
}

static void text_fusion(FILE *out, const cf_analysis_t *a)
{
    size_t shown = 0;
    char label[COMM_TEXT_LEN], b[8][CF_FMT_LEN], note[CF_ADV_NOTE_LEN];

    for (size_t i = 0; i < cf_analysis_nfusion(a); i++) {
        const cf_advice_t *ad = cf_analysis_fusion(a, i);
        /* a nonblocking stream of a profile that does not charge waits has
         * no share to judge it by: listed, with the reason */
        if (!(ad->share >= TEXT_FUSION_SHARE) && !(ad->nonblocking && isnan(ad->share)))
            continue;
        if (shown++ == 0)
            fprintf(out, "\nFUSION ADVICE  per step of one rank: T(S) = sum over buckets of S bytes of t(bucket) "
                   "+ 2 x fused bytes / copy bandwidth; t measured where the program or the calibration "
                   "measured the size, interpolated between, the line beyond\n");
        comm_text(cf_analysis_profile(a), ad->comm, ad->comm_size, label, sizeof(label));
        fprintf(out, "  %s on %s: %.4g call%s/step, %s/step; %llu step%s (%s%s%s); %s of the MPI time%s\n", ad->op,
                label, ad->calls_per_step, ad->calls_per_step == 1 ? "" : "s", fmt_s(ad->bytes_per_step, b[0]),
                (unsigned long long)ad->steps, ad->steps == 1 ? "" : "s",
                strcmp(ad->steps_source, "region") == 0 ? "entries of region '" : "repeating call pattern",
                ad->steps_region, strcmp(ad->steps_source, "region") == 0 ? "'" : "",
                isnan(ad->share) ? "unknown share" : cf_fmt_pct(ad->share, 0, b[1], CF_FMT_LEN),
                ad->nonblocking ? " (blocked in Wait/Test)" : "");
        if (ad->verdict == NULL || ad->model_source[0] == '\0') {
            fprintf(out, "    no advice: %s\n", ad->reason);
            continue;
        }
        if (isfinite(ad->alpha_s))
            fprintf(out, "    line beyond the measured sizes: %s, alpha %s, B %s; startup %s of the time; packing "
                   "copies at %s\n",
                   ad->model_source, fmt_t(ad->alpha_s, b[0]), fmt_r(ad->bandwidth_Bps, b[1]),
                   cf_fmt_pct(ad->startup_share, 0, b[2], CF_FMT_LEN),
                   isfinite(ad->memcpy_Bps) ? fmt_r(ad->memcpy_Bps, b[3]) : "no cost (copy bandwidth unknown)");
        else
            fprintf(out, "    no line beyond the measured sizes; packing copies at %s\n",
                   isfinite(ad->memcpy_Bps) ? fmt_r(ad->memcpy_Bps, b[3]) : "no cost (copy bandwidth unknown)");
        if (ad->nonblocking && strcmp(ad->current_source, "blocked") == 0)
            fprintf(out, "    now: %s over the run, mean per rank (posting %s, blocked in Wait/Test %s, polls %s%s), "
                   "%s/step; the same calls blocking: %s/step (+-%s, %s)\n",
                   fmt_t(ad->current_s, b[0]), fmt_t(ad->post_s, b[4]), fmt_t(ad->blocked_s, b[5]),
                   fmt_t(ad->poll_s, b[6]), ad->polls_with_posts ? ", about one a post: paid per call at their median" : "",
                   fmt_t(ad->current_s / (double)ad->steps, b[1]), fmt_t(ad->model_current_s, b[2]),
                   fmt_t(ad->model_current_unc_s, b[3]), pred_src(ad->current_pred_source));
        else
        fprintf(out, "    now: %s over the run, mean per rank (%s), %s/step; predicted %s/step (+-%s, %s)\n",
               fmt_t(ad->current_s, b[0]),
               strcmp(ad->current_source, "transfer") == 0   ? "transfer time"
               : strcmp(ad->current_source, "duration") == 0 ? "call durations"
               : strcmp(ad->current_source, "blocked") == 0  ? "time blocked in Wait/Test"
                                                             : "transfer time where sampled",
               fmt_t(ad->current_s / (double)ad->steps, b[1]), fmt_t(ad->model_current_s, b[2]),
               fmt_t(ad->model_current_unc_s, b[3]), pred_src(ad->current_pred_source));
        text_disturbed(out, ad);
        if (strcmp(ad->verdict, "fuse") == 0) {
            const cf_adv_cand_t *cd = NULL;
            for (size_t c = 0; c < ad->ncand; c++)
                if (ad->cand[c].bucket_bytes == ad->bucket_bytes)
                    cd = &ad->cand[c];
            fprintf(out, "    fuse: buckets of %s (%.0f B): %.0f call%s/step, %s/step predicted (copies %s; %s); "
                   "saves %s of %s (%s); saving per step %s, uncertainty %s\n",
                   fmt_s(ad->bucket_bytes, b[0]), ad->bucket_bytes, ad->buckets_per_step,
                   ad->buckets_per_step == 1 ? "" : "s",
                   fmt_t(ad->nonblocking ? ad->predicted_s / (double)ad->steps : ad->model_s, b[1]),
                   fmt_t(cd != NULL ? cd->copy_s : NAN, b[5]), pred_src(cd != NULL ? cd->source : 0),
                   fmt_t(ad->predicted_saving_s, b[2]), fmt_t(ad->current_s, b[3]),
                   cf_fmt_pct(ad->current_s > 0 ? ad->predicted_saving_s / ad->current_s : NAN, 0, b[4], CF_FMT_LEN),
                   fmt_t(ad->saving_step_s, b[6]), fmt_t(ad->saving_unc_step_s, b[7]));
            fprintf(out, "          %s%s\n", cf_advice_how(ad, 0, note, sizeof(note)),
                    cf_advice_keeps_heap(ad)
                        ? "   the heap kept (the price assumes it; memory above): " CF_ADV_KEEP_HEAP
                        : "");
            if (cf_advice_hidden_note(ad, note, sizeof(note)))
                fprintf(out, "          %s\n", note);
            if (cf_advice_outside_note(ad, note, sizeof(note)))
                fprintf(out, "          %s\n", note);
            text_in_flight(out, ad);
        } else if (strcmp(ad->verdict, "uncertain") == 0) {
            fprintf(out, "    uncertain: %s%s%s\n", ad->why, ad->why[0] ? "; " : "", ad->reason);
        } else {
            fprintf(out, "    no gain: %s%s%s (best bucket size saves %s)\n", ad->reason, ad->why[0] ? ": " : "",
                   ad->why, cf_fmt_pct(ad->best_saving_share, 0, b[0], CF_FMT_LEN));
        }
        if (ad->runs > 1 && isfinite(ad->run_spread_step_s))
            fprintf(out, "    over %d runs of the program: the verdict and the saving above are their medians; half "
                    "the range between them (%s/step) is in its uncertainty; the sizes below are this profile's\n",
                    ad->runs, fmt_t(ad->run_spread_step_s, b[0]));
        else if (ad->runs > 1)
            fprintf(out, "    over %d runs of the program: none advises fusion (or not every run prices the sizes): "
                    "this profile's advice and figures\n", ad->runs);
        for (size_t c = 0; c < ad->ncand; c++) {
            const cf_adv_cand_t *cd = &ad->cand[c];
            if (cd->name == NULL || !(ad->model_current_s > 0))
                continue;
            /* nonblocking: of the measured time, posts and polls included */
            double gain = ad->nonblocking ? 1.0 - cf_advice_cand_predicted_s(ad, cd) / ad->current_s
                                          : (ad->model_current_s - cd->model_s) / ad->model_current_s;
            double unc = ad->nonblocking ? cd->unc_s * (double)ad->steps / ad->current_s
                                         : cd->unc_s / ad->model_current_s;
            /* a figure its own uncertainty swamps is no figure: said so, with what measures it */
            int vague = !(unc < fabs(gain));
            /* of the MPI time; the framework's time it removes beside (the verdict counts both) */
            double fw = cf_advice_cand_framework(ad, cd);
            char fws[CF_FMT_LEN + 32] = "";
            if (fw > 0)
                snprintf(fws, sizeof(fws), ", and %s/step outside MPI", fmt_t(fw, b[3]));
            fprintf(out, "    %s: %.0f call%s/step, %s%s %s (+-%s, %s)%s%s\n", cd->name, cd->buckets,
                   cd->buckets == 1 ? "" : "s", vague ? "uncertain: " : "", gain >= 0 ? "saves" : "adds",
                   cf_fmt_pct(fabs(gain), 0, b[1], CF_FMT_LEN), cf_fmt_pct(unc, 0, b[2], CF_FMT_LEN),
                   pred_src(cd->source), fws,
                   !vague ? ""
                   : cd->source == CF_PRED_MODEL ? "; beyond the sizes measured: the calibration measures them where "
                                                   "its budget and memory allow (calibration.skipped says why not)"
                                                 : "; the run's spread: a longer or quieter run settles it");
        }
    }
}

void cf_report_text_top(FILE *out, const cf_analysis_t *a, const char *path)
{
    text_header(out, a, path);
    text_verdict(out, a);
    text_fusion(out, a);
}

static void text_regions(const cf_analysis_t *a)
{
    const cf_profile_t *p = cf_analysis_profile(a);
    double ranks = p->ranks > 0 ? p->ranks : 1;
    int w = op_width(a);
    char label[24], b[4][CF_FMT_LEN], entries[24];

    printf("\nREGIONS  MPI time by MPI_Pcontrol region: own (calls whose innermost open region it is) "
           "and inclusive, per rank (summed over ranks / %d); share of all recorded MPI time\n",
           p->ranks > 0 ? p->ranks : 1);
    if (cf_analysis_nregions(a) == 0) {
        printf("  No regions: the program opened none with MPI_Pcontrol(1, \"name\").\n");
        return;
    }
    printf("  %-32s %8s %10s %10s %6s\n", "region", "entries", "own/rank", "incl/rank", "share");
    for (size_t i = 0; i < cf_analysis_nregions(a); i++) {
        const cf_an_region_t *g = cf_analysis_region(a, i);
        if (g->entries >= 0)
            snprintf(entries, sizeof(entries), "%lld", g->entries);
        else
            snprintf(entries, sizeof(entries), "-");
        printf("  %-32s %8s %10s %10s %6s\n", g->name ? g->name : "(outside regions)", entries,
               fmt_t(g->time_s / ranks, b[0]), fmt_t(g->inclusive_s / ranks, b[1]),
               cf_fmt_pct(g->share, 0, b[2], CF_FMT_LEN));
        for (size_t k = 0; k < g->nop; k++) {
            const cf_an_region_op_t *o = &g->op[k];
            printf("    %-*s %-9s %10llu calls %10s %6s of the region\n", w, o->op,
                   cf_comm_label(o->comm, label, sizeof(label)), (unsigned long long)o->calls,
                   fmt_t(o->time_s / ranks, b[0]), cf_fmt_pct(o->share, 0, b[1], CF_FMT_LEN));
        }
    }
}

#define TEXT_LATE_TOP 5

static void text_late(const cf_analysis_t *a)
{
    char label[COMM_TEXT_LEN], b1[CF_FMT_LEN];

    if (cf_analysis_nlate(a) == 0)
        return;
    printf("\nLATE ARRIVALS  which rank entered last at the sampled collective instances, per communicator\n");
    for (size_t i = 0; i < cf_analysis_nlate(a); i++) {
        const cf_an_late_t *l = cf_analysis_late(a, i);
        printf("  %s", comm_text(cf_analysis_profile(a), l->comm, l->comm_size, label, sizeof(label)));
        if (l->comm_size > 0)
            printf(" (evenly spread, each would be last in %s)", cf_fmt_pct(1.0 / l->comm_size, 0, b1, CF_FMT_LEN));
        printf(": %llu instances\n", l->instances);
        for (size_t k = 0; k < l->nlast && k < TEXT_LATE_TOP; k++)
            printf("    rank %6d  last %8llu times  %6s\n", l->last[k].rank, l->last[k].count,
                   cf_fmt_pct(l->instances > 0 ? (double)l->last[k].count / (double)l->instances : NAN, 0, b1, CF_FMT_LEN));
        if (l->nlast > TEXT_LATE_TOP)
            printf("    ... %zu more ranks\n", l->nlast - TEXT_LATE_TOP);
    }
}

#define TEXT_MATRIX_TOP 20
#define TEXT_MATRIX_GROUPS 8

static int cmp_pair_ends(const void *pa, const void *pb)
{
    const cf_pair_t *a = pa, *b = pb;
    return a->src != b->src ? a->src - b->src : a->dst - b->dst;
}

/* Distinct (sender, receiver) pairs among the point-to-point ones, and
 * their messages and bytes; sorts pairs. */
static size_t matrix_ends(cf_pair_t *pairs, size_t n, uint64_t *msgs_p, uint64_t *bytes_p)
{
    size_t ends = 0;
    *msgs_p = *bytes_p = 0;
    qsort(pairs, n, sizeof(*pairs), cmp_pair_ends);
    for (size_t i = 0; i < n; i++) {
        if (pairs[i].source != CF_PAIR_MPI)
            continue;
        *msgs_p += pairs[i].msgs;
        *bytes_p += pairs[i].bytes;
        ends += i == 0 || cmp_pair_ends(&pairs[i - 1], &pairs[i]) != 0 || pairs[i - 1].source != CF_PAIR_MPI;
    }
    return ends;
}

/* The total, then per communicator (the busiest first) the pairs that sent
 * the most; CF_OK, or an error after a message. */
static int text_matrix(const cf_analysis_t *a)
{
    const cf_profile_t *p = cf_analysis_profile(a);
    cf_pair_t *pairs;
    cf_pair_group_t *g = NULL;
    size_t n, ng = 0;
    uint64_t lost, msgs, bytes;
    char err[256], b1[CF_FMT_LEN], b2[CF_FMT_LEN], name[CF_COMM_NAME_LEN];
    int rc = cf_profile_matrix(p, &pairs, &n, &lost, err, sizeof(err));

    if (rc != CF_OK) {
        fprintf(stderr, "commfit report: %s\n", rc == CF_ERR_FORMAT ? err : cf_status_str(rc));
        return rc;
    }
    printf("\nCOMMUNICATION MATRIX  messages sent, by world rank of sender and receiver, per communicator\n");
    if (pairs == NULL) {
        printf("  Not recorded: the profile has no matrix (recorded by an older commfit).\n");
        return CF_OK;
    }
    size_t ends = matrix_ends(pairs, n, &msgs, &bytes);
    printf("  point-to-point, all communicators: %zu pairs of %d ranks sent %llu messages, %s\n", ends, p->ranks,
           (unsigned long long)msgs, fmt_s((double)bytes, b1));
    if (cf_matrix_groups(pairs, n, &g, &ng) != CF_OK) {
        free(pairs);
        fprintf(stderr, "commfit report: %s\n", cf_status_str(CF_ERR_NOMEM));
        return CF_ERR_NOMEM;
    }
    for (size_t k = 0; k < ng && k < TEXT_MATRIX_GROUPS; k++) {
        const cf_pair_group_t *x = &g[k];
        if (x->comm == CF_COMM_ID_NONE)
            snprintf(name, sizeof(name), "%s", x->source == CF_PAIR_UCX ? "all communicators"
                                                : "all communicators (a profile from before the communicator column)");
        else
            cf_comm_name(p, x->comm, name, sizeof(name));
        printf("\n  %s%s: %zu pairs sent %llu messages, %s%s\n",
               x->source == CF_PAIR_UCX ? "beneath collectives, as UCX sent them, " : "", name, x->n,
               (unsigned long long)x->msgs, fmt_s((double)x->bytes, b1),
               x->n > TEXT_MATRIX_TOP ? "; the pairs that sent most bytes:" : "");
        printf("  %6s %6s %12s %10s %10s\n", "from", "to", "messages", "bytes", "mean");
        for (size_t i = x->first; i < x->first + x->n && i < x->first + TEXT_MATRIX_TOP; i++)
            printf("  %6d %6d %12llu %10s %10s\n", pairs[i].src, pairs[i].dst, (unsigned long long)pairs[i].msgs,
                   fmt_s((double)pairs[i].bytes, b1),
                   fmt_s(pairs[i].msgs ? (double)pairs[i].bytes / (double)pairs[i].msgs : NAN, b2));
        if (x->n > TEXT_MATRIX_TOP)
            printf("  ... %zu more pairs: --matrix --format csv lists them all\n", x->n - TEXT_MATRIX_TOP);
    }
    if (ng > TEXT_MATRIX_GROUPS)
        printf("\n  ... %zu more communicators: --matrix --format csv lists them all\n", ng - TEXT_MATRIX_GROUPS);
    if (lost > 0)
        printf("  WARNING: %llu messages went to peers beyond the plugin's table (%d peers per thread) and are "
               "not in the matrix\n",
               (unsigned long long)lost, 1024);
    free(g);
    free(pairs);
    return CF_OK;
}

int cf_report_text(const cf_analysis_t *a, const char *path, int by_region, int matrix, int by_callsite)
{
    int rc;

    cf_report_text_top(stdout, a, path);
    text_ops(a);
    text_comms(a);
    if (by_region)
        text_regions(a);
    text_fits(a);
    text_bins(a);
    text_collectives(a);
    text_wire(a);
    text_late(a);
    rc = text_ranks(a);
    if (rc == CF_OK && matrix)
        rc = text_matrix(a);
    if (rc == CF_OK && by_callsite)
        rc = cf_callsite_text(stdout, cf_analysis_profile(a));
    return rc;
}
