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
/* The operation of a row, A's where it has one. */
const cf_an_op_t *cf_diff_either(const row_t *r);

/* To stdout. */
void cf_diff_text(side_t s[2], const row_t *rows, size_t n);
/* CF_OK or CF_ERR_NOMEM. */
int cf_diff_json(side_t s[2], const row_t *rows, size_t n);

#endif
