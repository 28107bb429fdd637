/* commfit diff, text (diff.h). */
#include "diff.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cf_advice.h"
#include "cf_common.h"
#include "cf_units.h"

static const char *fmt_t(double v, char *buf)
{
    return cf_fmt_time(v, buf, CF_FMT_LEN);
}

static const char *fmt_u(const cf_an_op_t *o, char *buf)
{
    if (o == NULL)
        snprintf(buf, CF_FMT_LEN, "-");
    else
        snprintf(buf, CF_FMT_LEN, "%llu", (unsigned long long)o->calls);
    return buf;
}

static const char *fmt_cps(const cf_advice_t *ad, char *buf)
{
    if (ad == NULL || !isfinite(ad->calls_per_step))
        snprintf(buf, CF_FMT_LEN, "-");
    else
        snprintf(buf, CF_FMT_LEN, "%.4g", ad->calls_per_step);
    return buf;
}

static void text_job(const char *tag, const side_t *s)
{
    const cf_an_ranks_t *rk = cf_analysis_ranks(s->a);
    char b1[CF_FMT_LEN], b2[CF_FMT_LEN];
    printf("%s  %s: %d rank%s on %d node%s, %s wall, %s in MPI per rank\n", tag, s->path, s->p.ranks,
           s->p.ranks == 1 ? "" : "s", s->p.nodes, s->p.nodes == 1 ? "" : "s", fmt_t(s->p.wall_s, b1),
           fmt_t(rk->mpi_mean_s, b2));
}

/* What each side measured per step of a stream whose calls per step B
 * changed (cf_diff_settle): what settles an "uncertain". */
static void text_settle(const cf_advice_t *aa, const cf_diff_settle_t *st, const cf_diff_spread_t *sp)
{
    char b[6][CF_FMT_LEN];

    if (aa->nonblocking)
        printf("    measured: in MPI %s -> %s a step (posts, polls and blocked)", fmt_t(st->mpi_step[0], b[0]),
               fmt_t(st->mpi_step[1], b[1]));
    else
        printf("    measured: in MPI %s -> %s a step (%s time, as the advice counts it)", fmt_t(st->mpi_step[0], b[0]),
               fmt_t(st->mpi_step[1], b[1]), aa->current_source ? aa->current_source : "call");
    if (st->with_framework)
        printf(", outside MPI %s -> %s (the framework's time per call, measured, x calls%s)",
               fmt_t(st->fw_step[0], b[2]), fmt_t(st->fw_step[1], b[3]),
               st->gap_borrowed[1]   ? "; B's calls, too few a step to measure it, at A's"
               : st->gap_borrowed[0] ? "; A's calls, too few a step to measure it, at B's"
                                    : "");
    printf(": B %s %s a step", st->saving_step >= 0 ? "saves" : "costs", fmt_t(fabs(st->saving_step), b[4]));
    if (isfinite(st->saving_share))
        printf(" (%.1f%% of A's)", 100.0 * fabs(st->saving_share));
    printf("%s\n", st->with_framework ? "" : "; MPI time only: the framework's time per call is not measured on both");
    /* what the post gap leaves out, as the advice says it */
    if (st->lead_side >= 0)
        printf("    not counted: the framework's time before each post, which fewer posts save too: about %s a "
               "post at most by %s's profile (the shortest tenth of its times from a poll to the next post), so B %s "
               "up to %s a step more; the program's own timers around its calls see it\n",
               fmt_t(st->lead_s, b[0]), st->lead_side ? "B" : "A", st->lead_side ? "costs" : "saves",
               fmt_t(st->lead_step, b[1]));
    else if (aa->nonblocking && st->with_framework)
        printf("    not counted: the framework's time before each post, which fewer posts save too: the program's "
               "own timers around its calls see more\n");
    /* the saving is the buckets' only where B moves what A moved */
    if (isfinite(st->bytes_step[0]) && isfinite(st->bytes_step[1]) && st->bytes_step[0] > 0 &&
        fabs(st->bytes_step[1] / st->bytes_step[0] - 1.0) > 0.01)
        printf("    bytes: A moves %s a step, B %s (%+.1f%%): B does not exchange what A does, so the change is "
               "not the buckets' alone\n",
               cf_fmt_size(st->bytes_step[0], b[0], CF_FMT_LEN), cf_fmt_size(st->bytes_step[1], b[1], CF_FMT_LEN),
               100.0 * (st->bytes_step[1] / st->bytes_step[0] - 1.0));
    if (isfinite(st->step_s[0]) && isfinite(st->step_s[1]))
        printf("    the step's period (mean over ranks): %s -> %s (%s%s); it carries the compute's noise too\n",
               fmt_t(st->step_s[0], b[0]), fmt_t(st->step_s[1], b[1]), st->step_s[1] <= st->step_s[0] ? "-" : "+",
               fmt_t(fabs(st->step_s[1] - st->step_s[0]), b[2]));
    /* the range as the median says it: savings, or costs from the least */
    int cost = sp->median < 0;
    if (sp->n >= 2)
        printf("    over %zu pairs: B %s %s a step (the median; from %s to %s): how far runs of this machine "
               "differ%s\n",
               sp->n, cost ? "costs" : "saves", fmt_t(fabs(sp->median), b[0]), fmt_t(cost ? -sp->hi : sp->lo, b[1]),
               fmt_t(cost ? -sp->lo : sp->hi, b[2]),
               sp->missing ? "; the pairs without the stream at the first pair's calls and bytes a step are left out"
                           : "");
    else if (sp->missing)
        printf("    no other pair has the stream at the first pair's calls and bytes a step: one run each\n");
    else
        printf("    one run each: a second pair (commfit diff A B A2 B2) shows how far runs of this machine differ\n");
}

void cf_diff_text(side_t s[2], const row_t *rows, size_t n, const cf_diff_more_t *m)
{
    char label[24], name[CF_COMM_NAME_LEN], b[10][CF_FMT_LEN], cell[3][2 * CF_FMT_LEN + 8];
    int w = 9, any = 0;

    for (size_t i = 0; i < n; i++) {
        int len = (int)strlen(cf_diff_either(&rows[i])->op) + 1;
        w = len > w ? len : w;
    }
    printf("commfit diff: %s -> %s\n", s[0].path, s[1].path);
    for (size_t k = 0; m != NULL && k < m->n; k++)
        printf("  and %s -> %s (for the spread of what B saves a step)\n", m->s[2 * k].path, m->s[2 * k + 1].path);
    text_job("A", &s[0]);
    text_job("B", &s[1]);
    printf("\nOPERATIONS  A -> B; time per rank = summed over ranks / ranks; calls/step per rank "
           "(steps as in the fusion advice)\n");
    printf("  %-*s %-9s %-10s %-23s %-17s %-23s %s\n", w, "operation", "comm", "path", "calls",
           "calls/step", "time/rank", "change");
    for (size_t i = 0; i < n; i++) {
        const row_t *r = &rows[i];
        const cf_an_op_t *o = cf_diff_either(r);
        double ta = cf_diff_per_rank(&s[0], r->op[0]), tb = cf_diff_per_rank(&s[1], r->op[1]);
        double d = (isfinite(ta) ? ta : 0) - (isfinite(tb) ? tb : 0);
        snprintf(cell[0], sizeof(cell[0]), "%s -> %s", fmt_u(r->op[0], b[0]), fmt_u(r->op[1], b[1]));
        snprintf(cell[1], sizeof(cell[1]), "%s -> %s", fmt_cps(r->adv[0], b[2]), fmt_cps(r->adv[1], b[3]));
        snprintf(cell[2], sizeof(cell[2]), "%s -> %s", r->op[0] ? fmt_t(ta, b[4]) : "-",
                 r->op[1] ? fmt_t(tb, b[5]) : "-");
        printf("  %-*s %-9s %-10s %-23s %-17s %-23s %s%s (%s)\n", w, o->op,
               cf_comm_label(o->comm, label, sizeof(label)), cf_path_name((unsigned)o->path), cell[0],
               cell[1], cell[2], d > 0 ? "-" : "+", fmt_t(fabs(d), b[6]),
               cf_fmt_pct(isfinite(ta) && ta > 0 && isfinite(tb) ? (tb - ta) / ta : NAN, 1, b[7], CF_FMT_LEN));
    }

    printf("\nFITS  T = alpha + M/B, A | B ('-': no fit)\n");
    for (size_t i = 0; i < n; i++) {
        const row_t *r = &rows[i];
        const cf_an_op_t *o = cf_diff_either(r);
        const cf_an_fit_t *fa = r->op[0] ? r->op[0]->fit : NULL, *fb = r->op[1] ? r->op[1]->fit : NULL;
        int oka = fa != NULL && fa->fit.ok, okb = fb != NULL && fb->fit.ok;
        if (!oka && !okb)
            continue;
        if (!any++)
            printf("  %-*s %-9s %-25s %s\n", w, "operation", "comm", "alpha A | B", "B A | B");
        snprintf(cell[0], sizeof(cell[0]), "%s | %s", oka ? fmt_t(fa->fit.alpha_s, b[0]) : "-",
                 okb ? fmt_t(fb->fit.alpha_s, b[1]) : "-");
        printf("  %-*s %-9s %-25s %s | %s\n", w, o->op, cf_comm_label(o->comm, label, sizeof(label)),
               cell[0], oka ? cf_fmt_rate(fa->fit.bandwidth_Bps, b[2], CF_FMT_LEN) : "-",
               okb ? cf_fmt_rate(fb->fit.bandwidth_Bps, b[3], CF_FMT_LEN) : "-");
    }
    if (!any)
        printf("  none: no operation has enough sizes to fit in either profile\n");
    any = 0;

    for (size_t i = 0; i < n; i++) {
        const row_t *r = &rows[i];
        const cf_advice_t *aa = r->adv[0], *ab = r->adv[1];
        cf_diff_settle_t st;
        double pred, real;
        int settle = cf_diff_settle(s, r, &st);
        cf_diff_fusion_check(r, &pred, &real);
        if (!isfinite(pred) && !settle)
            continue;
        if (!any++)
            printf("\nFUSION  A's advice against what B measured, per step of one rank (mean over ranks; "
                   "transfer time where sampled)\n");
        if (isfinite(pred)) {
            printf("  %s on %s: A advised buckets of %s (%.4g -> %.4g calls/step); B makes %s calls/step\n",
                   aa->op, cf_comm_name(&s[0].p, aa->comm, name, sizeof(name)),
                   cf_fmt_size(aa->bucket_bytes, b[0], CF_FMT_LEN), aa->calls_per_step, aa->buckets_per_step,
                   fmt_cps(ab, b[1]));
            if (isfinite(real) && real < 0)
                printf("    predicted saving %s, realised none: B took %s more over A's %llu steps; A %s -> B %s\n",
                       fmt_t(pred, b[2]), fmt_t(-real, b[3]), (unsigned long long)aa->steps,
                       fmt_t(aa->current_s, b[4]), fmt_t(ab->current_s / (double)ab->steps * (double)aa->steps, b[5]));
            else if (isfinite(real))
                printf("    predicted saving %s, realised %s (%.0f%% of predicted) over A's %llu steps; A %s -> B %s\n",
                       fmt_t(pred, b[2]), fmt_t(real, b[3]), pred > 0 ? 100.0 * real / pred : 0.0,
                       (unsigned long long)aa->steps, fmt_t(aa->current_s, b[4]),
                       fmt_t(ab->current_s / (double)ab->steps * (double)aa->steps, b[5]));
            else
                printf("    predicted saving %s; B does not have this stream\n", fmt_t(pred, b[2]));
        } else {
            const char *why = aa->why != NULL && aa->why[0] ? aa->why : aa->reason;
            printf("  %s on %s: A %s%s%s; B makes %s calls/step (A %s), %s a call on average\n", aa->op,
                   cf_comm_name(&s[0].p, aa->comm, name, sizeof(name)), aa->verdict ? aa->verdict : "gave no verdict",
                   why != NULL ? ": " : "", why != NULL ? why : "", fmt_cps(ab, b[0]),
                   fmt_cps(aa, b[1]), cf_fmt_size(st.bytes_step[1] / st.calls_step[1], b[2], CF_FMT_LEN));
        }
        if (!settle)
            continue;
        cf_diff_spread_t sp;
        (void)cf_diff_spread(m, r, &st, &sp);
        text_settle(aa, &st, &sp);
    }
}
