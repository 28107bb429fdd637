/* commfit report: fits, verdicts and collective efficiency of a profile.
 *
 *   commfit report train.json
 *   commfit report --format json --link 400Gb/s,5us train.json
 *   commfit report train.json train-2.json     (fusion advice over both runs)
 *
 * This file parses the arguments and dispatches; each format has its own
 * file: text report_text.c, csv report_csv.c, json report_json.c, html
 * cf_html.c, call sites cf_callsite_report.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cf_advice.h"
#include "cf_analysis.h"
#include "cf_callsite_report.h"
#include "cf_common.h"
#include "cf_html.h"
#include "cf_profile.h"
#include "commfit.h"
#include "report_csv.h"
#include "report_json.h"
#include "report_text.h"
#include "toolopts.h"

/* In the order of report_formats. */
typedef enum { FMT_TEXT, FMT_JSON, FMT_CSV, FMT_HTML } report_fmt_t;

typedef struct {
    report_fmt_t fmt;
    cf_analysis_opts_t an;
    int by_region;
    int matrix;
    int by_callsite;
    const char *output; /* NULL: stdout */
    const char *path;
    char **more; /* other runs of the program (their fusion advice) */
    size_t nmore;
} report_opts_t;

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: commfit report [options] PROFILE [RUN...]\n"
            "Fits T = alpha + M/B to every operation of a profile, says whether startup or\n"
            "bandwidth dominates, holds collectives against their ideal models, and says\n"
            "what fusion bucket size each collective needs.\n"
            "RUN: other profiles of the same program (another run, same job size): the\n"
            "fusion advice takes each bucket size's median saving over PROFILE and them,\n"
            "and counts their spread in its uncertainty; the rest reports PROFILE alone.\n"
            "\n"
            "  -f, --format FMT        text (default), json, csv or html\n"
            "  -o, --output FILE       write the report to FILE instead of stdout\n"
            "  -m, --matrix            the communication matrix: text, the pairs that sent most;\n"
            "                          csv, every pair as src,dst,messages,bytes (world ranks)\n"
            "                          instead of the fits (json and html always have it)\n"
            "  -l, --link RATE,TIME    hold collectives against this link, e.g. 400Gb/s,5us,\n"
            "                          instead of the point-to-point fit of their path\n"
            "  -r, --by-region         text: MPI time by MPI_Pcontrol region and operation\n"
            "                          (json always has 'regions')\n"
            "  -s, --by-callsite       where the program called MPI: calls, time and bytes per\n"
            "                          call site, with function, file and line (addr2line);\n"
            "                          text: a table after the fits; json: 'callsites';\n"
            "                          csv: one row per site and frame instead of the fits\n"
            "  -h, --help              this text\n"
            "\n"
            "text: the verdict and the fusion advice first, then tables of operations,\n"
            "fits, size bins, collectives (nccl-tests' algbw and busbw), the UCX messages\n"
            "beneath MPI when the profile has them, late arrivals and MPI time, wait and\n"
            "transfer per rank.\n"
            "json: the same numbers (fields: README.md, \"Reading the report\").\n"
            "csv: one row per fit and per size bin (column 'row': fit or bin; with UCX\n"
            "records also wire, per collective, and hop, per path).\n"
            "html: one self-contained page (charts inlined, nothing loaded at view time):\n"
            "the verdict and fusion advice, time against size per fit with its model,\n"
            "busbw of the collectives, MPI time per rank, regions, operations.\n"
            "Exit status: 0 done, 2 bad usage or a profile that cannot be read.\n");
}

static const char *const report_formats[] = {"text", "json", "csv", "html", NULL};
static const cf_tool_t report_tool = {"report", report_formats, NULL, usage};

/* 0, CF_EXIT_USAGE, or -1 when --help was printed. */
static int parse_args(int argc, char **argv, report_opts_t *o)
{
    const cf_tool_flag_t flags[] = {{"by-region", 'r', &o->by_region, NULL},
                                    {"matrix", 'm', &o->matrix, NULL},
                                    {"by-callsite", 's', &o->by_callsite, NULL},
                                    {"output", 'o', NULL, &o->output},
                                    {NULL, 0, NULL, NULL}};
    cf_tool_t tool = report_tool;
    cf_tool_args_t args;
    int rc;

    tool.flags = flags;
    memset(o, 0, sizeof(*o));
    if ((rc = cf_tool_parse(&tool, argc, argv, &args)) != 0)
        return rc;
    o->fmt = (report_fmt_t)args.format;
    o->an = args.an;
    if (args.nargs == 0)
        return cf_tool_usage_error(&tool, "need a PROFILE", NULL, NULL);
    if (args.nargs > 64)
        return cf_tool_usage_error(&tool, "at most 63 other runs", NULL, NULL);
    o->path = args.args[0];
    o->more = args.args + 1;
    o->nmore = args.nargs - 1;
    /* a run counted twice would move the medians */
    for (int i = 1; i < args.nargs; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(args.args[i], args.args[j]) == 0)
                return cf_tool_usage_error(&tool, "a profile given twice", args.args[i], "");
    return 0;
}

/* The other runs' analyses into o->an.runs; *p_p and *a_p hold them for
 * runs_free.  CF_OK or the exit status of a profile that cannot be read. */
static int runs_load(report_opts_t *o, cf_profile_t **p_p, cf_analysis_t ***a_p)
{
    cf_analysis_opts_t an = o->an; /* the others alone */
    int rc = CF_OK;

    *p_p = NULL;
    *a_p = NULL;
    if (o->nmore == 0)
        return CF_OK;
    if ((*p_p = calloc(o->nmore, sizeof(**p_p))) == NULL || (*a_p = calloc(o->nmore, sizeof(**a_p))) == NULL) {
        fprintf(stderr, "commfit report: %s\n", cf_status_str(CF_ERR_NOMEM));
        return 1;
    }
    for (size_t k = 0; k < o->nmore && rc == CF_OK; k++)
        rc = cf_tool_load(&report_tool, o->more[k], &an, &(*p_p)[k], &(*a_p)[k]);
    o->an.runs = (const cf_analysis_t *const *)*a_p;
    o->an.nruns = o->nmore;
    return rc;
}

static void runs_free(report_opts_t *o, cf_profile_t *p, cf_analysis_t **a)
{
    for (size_t k = 0; a != NULL && k < o->nmore && a[k] != NULL; k++) {
        cf_analysis_free(a[k]);
        cf_profile_free(&p[k]);
    }
    free(a);
    free(p);
}

/* A run given that has none of the profile's advised streams is said so
 * on stderr: its advice is the profile's alone (another program, or
 * another job size). */
static void runs_unmatched(const report_opts_t *o, const cf_analysis_t *a, cf_analysis_t **ra)
{
    for (size_t k = 0; k < o->nmore; k++) {
        int any = 0, streams = 0;
        for (size_t i = 0; i < cf_analysis_nfusion(a) && !any; i++) {
            const cf_advice_t *ad = cf_analysis_fusion(a, i);
            if (ad->verdict == NULL)
                continue;
            streams = 1;
            any = cf_advice_same_stream(ra[k], ad) != NULL;
        }
        if (streams && !any)
            fprintf(stderr, "commfit report: %s: none of its collective streams is one of %s's (operation, "
                            "communicator, size, calls per step): the fusion advice is %s's alone\n",
                    o->more[k], o->path, o->path);
    }
}

int cf_cmd_report(int argc, char **argv)
{
    report_opts_t o;
    cf_profile_t p, *rp = NULL;
    cf_analysis_t *a = NULL, **ra = NULL;
    int rc;

    rc = parse_args(argc, argv, &o);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    if (o.fmt == FMT_HTML && !cf_html_available()) {
        fprintf(stderr, "commfit report: --format html is not available: this commfit was built without "
                        "Chart.js (Debian: libjs-chart.js; configure --with-chartjs=FILE)\n");
        return CF_EXIT_USAGE;
    }
    if ((rc = runs_load(&o, &rp, &ra)) != CF_OK || (rc = cf_tool_load(&report_tool, o.path, &o.an, &p, &a)) != CF_OK) {
        runs_free(&o, rp, ra);
        return rc;
    }
    runs_unmatched(&o, a, ra);
    if (o.output != NULL && freopen(o.output, "w", stdout) == NULL) {
        fprintf(stderr, "commfit report: cannot write '%s': %s\n", o.output, strerror(errno));
        cf_analysis_free(a);
        cf_profile_free(&p);
        runs_free(&o, rp, ra);
        return CF_EXIT_USAGE;
    }
    switch (o.fmt) {
    case FMT_TEXT: rc = cf_report_text(a, o.path, o.by_region, o.matrix, o.by_callsite); break;
    case FMT_JSON: rc = cf_report_json(a, o.by_callsite); break;
    case FMT_CSV:
        if (o.by_callsite)
            rc = cf_callsite_csv(stdout, cf_analysis_profile(a));
        else if (o.matrix)
            rc = cf_report_csv_matrix(a);
        else
            cf_report_csv(a);
        break;
    case FMT_HTML: rc = cf_report_html(stdout, a, o.path); break;
    }
    if (rc == CF_OK && fflush(stdout) != 0)
        rc = CF_ERR_IO;
    if (o.output != NULL && fclose(stdout) != 0)
        rc = rc == CF_OK ? CF_ERR_IO : rc;
    /* no half-written report left behind (a device or FIFO is left alone) */
    if (rc != CF_OK && o.output != NULL) {
        struct stat st;
        if (stat(o.output, &st) == 0 && S_ISREG(st.st_mode))
            remove(o.output);
    }
    if (rc != CF_OK)
        fprintf(stderr, "commfit report: %s%s%s\n", o.output ? o.output : "", o.output ? ": " : "",
                cf_status_str(rc));
    cf_analysis_free(a);
    cf_profile_free(&p);
    runs_free(&o, rp, ra);
    return rc == CF_OK ? 0 : 1;
}
