/* commfit diff: the rows it compares (diff_rows.c) and its two formats,
 * text (diff_text.c) and JSON (diff_json.c); cmd_diff.c parses the
 * arguments and dispatches. */
#ifndef CF_TOOLS_DIFF_H
#define CF_TOOLS_DIFF_H

#include <stddef.h>

#include "cf_analysis.h"
#include "cf_profile.h"

/* One side of the comparison. */
typedef struct {
    const char *path;
    cf_profile_t p;
    cf_analysis_t *a;
    int *ord; /* per communicator: see comm_ordinals */
} side_t;

/* One row: an operation on matched communicators; either side may be missing. */
typedef struct {
    char key[192];
    const cf_an_op_t *op[2];
    const cf_advice_t *adv[2];
} row_t;

/* The rows of a diff: every operation of either side, matched by
 * operation, communicator (cmd_diff.c says how) and path, in A's order
 * then B's.  CF_OK or CF_ERR_NOMEM; *rows_p is freed by the caller. */
int cf_diff_rows(side_t s[2], row_t **rows_p, size_t *n_p);
/* An operation's time per rank on side s; NaN without it. */
double cf_diff_per_rank(const side_t *s, const cf_an_op_t *o);
/* A's predicted saving and the saving B realised, per rank on the slowest
 * rank over A's steps; NaN when A did not advise fusing or B lacks the stream. */
void cf_diff_fusion_check(const row_t *r, double *pred_p, double *real_p);
/* A stream whose calls per step B changed (B bucketed it, or unbucketed
 * it): what each side measured per step, mean per rank.  This is what
 * settles an "uncertain" verdict: one run with the buckets against one
 * without. */
typedef struct {
    double calls_step[2];  /* calls per step */
    double bytes_step[2];  /* bytes per step */
    double mpi_step[2];    /* its MPI time (nonblocking: posts, polls, blocked) */
    double fw_step[2];     /* the framework's time outside MPI: measured call gap x calls; NaN: not measured */
    double step_s[2];      /* the step's period (its region), mean over ranks; NaN: not recorded */
    double saving_step;    /* A - B, the MPI time plus the framework's where both sides measured it */
    double saving_share;   /* of A's */
    int with_framework;    /* both sides have the framework's time */
    /* 1 on a side whose calls are too few a step to measure the gap
     * between back-to-back calls (a blocking stream of under
     * CF_ADV_GAP_CALLS a step): its framework's time is the other side's
     * gap per call x its calls, the same framework's binding */
    int gap_borrowed[2];
    /* a nonblocking stream: the bound of the framework's time before each
     * post, which the saving does not count: the lead (post_lead_s) of the
     * side with more posts a step times the posts the other makes fewer;
     * lead_side, that side (0: A, whose fewer posts B saves at most this
     * much more; 1: B, which costs at most this much more); NaN and -1
     * where that side measured no lead */
    double lead_step, lead_s;
    int lead_side;
} cf_diff_settle_t;
/* Further pairs of runs of the same two configurations (commfit diff A B
 * A2 B2 ...): their sides, A2 B2 A3 B3 ..., and each pair's rows. */
typedef struct {
    size_t n; /* pairs beyond the first */
    side_t *s;
    row_t **rows;
    size_t *nrows;
} cf_diff_more_t;
#define CF_DIFF_PAIRS 8 /* pairs at most, the first included */
/* The measured saving per step of a settled stream (cf_diff_settle) over
 * every pair that has it, the first's (first) included. */
typedef struct {
    /* the pairs that settle it, and those that do not: without the stream
     * with a repeating step, or with other calls or bytes a step (beyond
     * half a call, 1 %) or the framework's time counted otherwise than in
     * the first pair: not runs again of the same two settings */
    size_t n, missing;
    double median, lo, hi;
} cf_diff_spread_t;
/* Row r of the first pair, first what it measured: 1 and *sp set where
 * more pairs were given; else 0. */
int cf_diff_spread(const cf_diff_more_t *m, const row_t *r, const cf_diff_settle_t *first, cf_diff_spread_t *sp);
/* 1 and *st set when both sides have the stream with a repeating step (2
 * steps or more, as the advice needs), and B makes
 * at least one call a step fewer or more than A; else 0. */
int cf_diff_settle(const side_t s[2], const row_t *r, cf_diff_settle_t *st);
/* The operation of a row, A's where it has one. */
const cf_an_op_t *cf_diff_either(const row_t *r);

/* To stdout; m: the further pairs (none: m->n 0). */
void cf_diff_text(side_t s[2], const row_t *rows, size_t n, const cf_diff_more_t *m);
/* CF_OK or CF_ERR_NOMEM. */
int cf_diff_json(side_t s[2], const row_t *rows, size_t n, const cf_diff_more_t *m);

#endif
