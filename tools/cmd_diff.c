/* commfit diff: what changed between two profiles of the same program.
 *
 *   commfit diff per-tensor.json bucketed.json
 *   commfit diff --format json A.json B.json
 *   commfit diff A.json B.json A2.json B2.json   (the spread over pairs)
 *
 * Per operation, communicator and path: calls and calls per step, time per
 * rank with its change, the fits side by side, and, where A's fusion advice
 * predicted a saving, how much of it B realised; where B changed a stream's
 * calls per step, what each side measured per step (cf_diff_settle).
 *
 * Communicators are matched by identity where both profiles know it (world,
 * self, and any communicator whose id appears in both: ids derive from the
 * group's world ranks and creation order, so the same program makes the same
 * ids), otherwise by how they were made and their size, in the order each
 * profile lists them ("MPI_Comm_split" of 4 ranks, first with that name and
 * size in A, to the first in B).
 *
 * This file parses the arguments and dispatches: the rows diff_rows.c,
 * text diff_text.c, json diff_json.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_analysis.h"
#include "cf_common.h"
#include "cf_profile.h"
#include "commfit.h"
#include "diff.h"
#include "toolopts.h"

/* In the order of diff_formats. */
typedef enum { FMT_TEXT, FMT_JSON } diff_fmt_t;

typedef struct {
    diff_fmt_t fmt;
    cf_analysis_opts_t an;
    const char *path[2 * CF_DIFF_PAIRS];
    size_t npath;
} diff_opts_t;

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: commfit diff [options] A.json B.json [A2.json B2.json ...]\n"
            "Compares two profiles per operation and communicator: calls and calls per step,\n"
            "time per rank (B - A), the fits T = alpha + M/B side by side, and, where A's\n"
            "fusion advice predicted a saving, the saving B realised; where B changed a\n"
            "stream's calls per step (buckets), what each side measured per step.  Further\n"
            "pairs (runs again of A's and B's settings, up to 8 pairs in all) give the\n"
            "median and range of that saving over the pairs.\n"
            "\n"
            "  -f, --format FMT        text (default) or json\n"
            "  -l, --link RATE,TIME    link for operations without a fit (as in report)\n"
            "  -h, --help              this text\n"
            "\n"
            "Communicators match by id (world, self, and ids both profiles know), else by\n"
            "how they were made and their size, in the order each profile lists them.\n"
            "Exit status: 0 done, 2 bad usage or a profile that cannot be read.\n");
}

static const char *const diff_formats[] = {"text", "json", NULL};
static const cf_tool_t diff_tool = {"diff", diff_formats, NULL, usage};

/* 0, CF_EXIT_USAGE, or -1 when --help was printed. */
static int parse_args(int argc, char **argv, diff_opts_t *o)
{
    cf_tool_args_t args;
    int rc;

    memset(o, 0, sizeof(*o));
    if ((rc = cf_tool_parse(&diff_tool, argc, argv, &args)) != 0)
        return rc;
    o->fmt = (diff_fmt_t)args.format;
    o->an = args.an;
    if (args.nargs < 2)
        return cf_tool_usage_error(&diff_tool, "need two profiles, A and B", NULL, NULL);
    if (args.nargs % 2)
        return cf_tool_usage_error(&diff_tool, "profiles come in pairs, A B [A2 B2 ...]: no B for",
                                   args.args[args.nargs - 1], "");
    if (args.nargs > 2 * CF_DIFF_PAIRS)
        return cf_tool_usage_error(&diff_tool, "8 pairs at most: extra argument", args.args[2 * CF_DIFF_PAIRS], "");
    for (int i = 0; i < args.nargs; i++)
        o->path[i] = args.args[i];
    o->npath = (size_t)args.nargs;
    return 0;
}

/* CF_OK, or CF_EXIT_USAGE (1 when the analysis failed) after one line on stderr. */
static int load(side_t *s, const cf_analysis_opts_t *an)
{
    return cf_tool_load(&diff_tool, s->path, an, &s->p, &s->a);
}

static void free_sides(side_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(s[i].ord);
        cf_analysis_free(s[i].a);
        cf_profile_free(&s[i].p);
    }
}

int cf_cmd_diff(int argc, char **argv)
{
    diff_opts_t o;
    side_t s[2 * CF_DIFF_PAIRS];
    row_t *rows[CF_DIFF_PAIRS] = {NULL};
    size_t n[CF_DIFF_PAIRS] = {0}, pairs;
    int rc;

    rc = parse_args(argc, argv, &o);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    memset(s, 0, sizeof(s));
    for (size_t i = 0; i < o.npath; i++) {
        s[i].path = o.path[i];
        if ((rc = load(&s[i], &o.an)) != CF_OK) { /* it said why */
            free_sides(s, i);
            return rc;
        }
    }
    pairs = o.npath / 2;
    for (size_t k = 0; k < pairs && rc == CF_OK; k++)
        rc = cf_diff_rows(&s[2 * k], &rows[k], &n[k]);
    if (rc == CF_OK) {
        cf_diff_more_t m = {pairs - 1, &s[2], &rows[1], &n[1]};
        if (o.fmt == FMT_JSON)
            rc = cf_diff_json(s, rows[0], n[0], &m);
        else
            cf_diff_text(s, rows[0], n[0], &m);
    }
    if (rc == CF_OK && fflush(stdout) != 0)
        rc = CF_ERR_IO;
    if (rc != CF_OK)
        fprintf(stderr, "commfit diff: %s\n", cf_status_str(rc));
    for (size_t k = 0; k < pairs; k++)
        free(rows[k]);
    free_sides(s, o.npath);
    return rc == CF_OK ? 0 : 1;
}
