#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cf_advice.h"
#include "cf_analysis.h"
#include "cf_summary.h"
#include "cf_units.h"

#define CF_SUMMARY_ROWS 8
#define CF_SUMMARY_STREAMS 4 /* overlap and fusion lines at most */

static void cf_summary_header(const cf_profile_t *p, const cf_an_ranks_t *rk, FILE *out)
{
    char frac[32] = "";

    if (rk != NULL && isfinite(rk->mpi_fraction))
        snprintf(frac, sizeof(frac), ", %.1f %% of rank time in MPI", 100.0 * rk->mpi_fraction);
    fprintf(out, "commfit: %d rank%s on %d node%s, %.3g s wall%s\n", p->ranks,
            p->ranks == 1 ? "" : "s", p->nodes, p->nodes == 1 ? "" : "s",
            isfinite(p->wall_s) ? p->wall_s : 0.0, frac);
}

static void cf_summary_caveats(const cf_analysis_t *a, FILE *out)
{
    for (size_t i = 0; i < cf_analysis_ncaveats(a); i++) {
        const char *c = cf_analysis_caveat(a, i);
        fprintf(out, "commfit: %s%s\n", c[0] == ' ' ? "         " : "WARNING: ", c[0] == ' ' ? c + 2 : c);
    }
}

/* "startup-bound 87%", "no payload", "few sizes", "-" */
static const char *cf_summary_verdict(const cf_an_fit_t *f, char *buf, size_t len)
{
    if (f == NULL)
        snprintf(buf, len, "-");
    else if (f->basis != NULL && strcmp(f->basis, "no payload") == 0)
        snprintf(buf, len, "no payload");
    else if (f->basis == NULL)
        snprintf(buf, len, "few sizes");
    else
        snprintf(buf, len, "%s %.0f%%%s", f->verdict, 100.0 * f->startup_share,
                 strcmp(f->basis, "model") == 0 ? "*" : "");
    return buf;
}

/* A nonblocking operation's column: its cost is blocked time, and no verdict. */
static char *cf_summary_blocked(const cf_an_op_t *o, char *buf, size_t len)
{
    if (isfinite(o->hidden))
        snprintf(buf, len, "blocked, %.0f%% hidden", 100.0 * o->hidden);
    else
        snprintf(buf, len, "blocked in waits");
    return buf;
}

void cf_summary_print(const cf_profile_t *p, FILE *out)
{
    cf_analysis_t *a = NULL;
    size_t nops;
    int model_used = 0;

    if (p == NULL || out == NULL)
        return;
    if (cf_analysis_run(p, NULL, &a) != CF_OK) {
        cf_summary_header(p, NULL, out);
        fprintf(out, "commfit: no analysis (%s)\n", cf_status_str(CF_ERR_NOMEM));
        return;
    }
    cf_summary_header(p, cf_analysis_ranks(a), out);
    cf_summary_caveats(a, out);
    nops = cf_analysis_nops(a);
    if (nops == 0) {
        fprintf(out, "commfit: no MPI communication was recorded\n");
        cf_analysis_free(a);
        return;
    }
    fprintf(out, "commfit: %-22s %-9s %10s %9s %10s %6s  %-21s %9s %10s\n", "operation", "comm",
            "calls", "bytes", "time/rank", "share", "verdict (startup)", "alpha", "B");
    for (size_t i = 0; i < nops && i < CF_SUMMARY_ROWS; i++) {
        const cf_an_op_t *o = cf_analysis_op(a, i);
        const cf_an_fit_t *f = o->fit;
        char label[24], bytes[CF_FMT_LEN], t[CF_FMT_LEN], al[CF_FMT_LEN], bw[CF_FMT_LEN], v[40], calls[32];
        int fitted = f != NULL && f->fit.ok;

        if (!isfinite(o->share))
            break; /* spans are not costs: the ranking ends before them */
        if (f != NULL && f->basis != NULL && strcmp(f->basis, "model") == 0)
            model_used = 1;
        /* '+': some ranks' calls of it could not be kept (as in the report) */
        snprintf(calls, sizeof(calls), "%llu%s", (unsigned long long)o->calls, o->ranks_missing ? "+" : "");
        fprintf(out, "commfit: %-22s %-9s %10s %9s %10s %5.1f%%  %-21s %9s %10s\n", o->op,
                cf_comm_label(o->comm, label, sizeof(label)), calls,
                cf_fmt_size((double)o->bytes, bytes, sizeof(bytes)),
                cf_fmt_time(p->ranks > 0 ? o->time_s / p->ranks : o->time_s, t, sizeof(t)),
                isfinite(o->share) ? 100.0 * o->share : 0.0,
                o->nonblocking ? cf_summary_blocked(o, v, sizeof(v)) : cf_summary_verdict(f, v, sizeof(v)),
                fitted && !o->nonblocking ? cf_fmt_time(f->fit.alpha_s, al, sizeof(al)) : "-",
                fitted && !o->nonblocking ? cf_fmt_rate(f->fit.bandwidth_Bps, bw, sizeof(bw)) : "-");
    }
    if (nops > CF_SUMMARY_ROWS)
        fprintf(out, "commfit: ... %zu more operations\n", nops - CF_SUMMARY_ROWS);
    {
        const cf_an_op_t *top = cf_analysis_op(a, 0);
        char label[CF_COMM_NAME_LEN], advice[CF_AN_ADVICE_LEN];
        fprintf(out, "commfit: %s\n", cf_analysis_headline(a, advice, sizeof(advice)));
        fprintf(out, "commfit: %s on %s: %s\n", top->op,
                cf_comm_name(cf_analysis_profile(a), top->comm, label, sizeof(label)),
                cf_analysis_advice(top, advice, sizeof(advice)));
    }
    /* What the overlap hid, for the nonblocking operations that cost */
    for (size_t i = 0, shown = 0; i < nops && shown < CF_SUMMARY_STREAMS; i++) {
        const cf_an_op_t *o = cf_analysis_op(a, i);
        char line[768];
        if (o->share >= CF_ADV_MIN_SHARE && cf_analysis_overlap_line(a, o, line, sizeof(line)) != NULL) {
            fprintf(out, "commfit: overlap: %s\n", line);
            shown++;
        }
    }
    /* Fusion advice for every stream of at least 1 % of the MPI time, the
     * costliest first: the report says more. */
    for (size_t i = 0, shown = 0; i < nops && shown < CF_SUMMARY_STREAMS; i++) {
        const cf_an_op_t *o = cf_analysis_op(a, i);
        const cf_advice_t *ad = cf_analysis_fusion_find(a, o->op, o->comm, o->path);
        char line[512];
        if (ad == NULL || !(o->share >= CF_ADV_MIN_SHARE))
            continue;
        if (ad->verdict == NULL && ad->reason == NULL)
            continue;
        fprintf(out, "commfit: fusion: %s\n", cf_advice_line(ad, line, sizeof(line)));
        shown++;
    }
    /* The algorithm beneath a collective, when another would cost notably less. */
    for (size_t i = 0, shown = 0; i < cf_analysis_nwire(a) && shown < 2; i++) {
        const cf_an_wire_t *w = cf_analysis_wire(a, i);
        char line[512];
        if (w->share >= 0.01 && cf_analysis_wire_advice(a, w, line, sizeof(line)) != NULL) {
            fprintf(out, "commfit: beneath MPI: %s\n", line);
            shown++;
        }
    }
    fprintf(out, "commfit: time/rank is summed over ranks / %d; share is of all recorded MPI time%s\n",
            p->ranks > 0 ? p->ranks : 1,
            model_used ? "; * from the path's link (p2p or UCX fit), not its own fit" : "");
    cf_analysis_free(a);
}
