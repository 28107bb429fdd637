#include "toolopts.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cf_common.h"
#include "cf_units.h"
#include "commfit.h"

#define CF_TOOL_MAX_FLAGS 8

int cf_tool_usage_error(const cf_tool_t *t, const char *what, const char *arg, const char *why)
{
    if (arg != NULL)
        fprintf(stderr, "commfit %s: %s '%s'%s\n", t->cmd, what, arg, why);
    else
        fprintf(stderr, "commfit %s: %s\n", t->cmd, what);
    t->usage(stderr);
    return CF_EXIT_USAGE;
}

/* ": text, json or csv" */
static const char *formats_text(const cf_tool_t *t, char *buf, size_t len)
{
    size_t n = 0, used;

    while (t->formats[n] != NULL)
        n++;
    used = (size_t)snprintf(buf, len, ":");
    for (size_t i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i == 0 ? " " : i + 1 == n ? " or " : ", ",
                                 t->formats[i]);
    return buf;
}

int cf_tool_parse(const cf_tool_t *t, int argc, char **argv, cf_tool_args_t *args_p)
{
    struct option longopts[4 + CF_TOOL_MAX_FLAGS] = {{"format", required_argument, NULL, 'f'},
                                                     {"link", required_argument, NULL, 'l'},
                                                     {"help", no_argument, NULL, 'h'}};
    char shortopts[8 + 2 * CF_TOOL_MAX_FLAGS] = ":f:l:h", why[128];
    size_t nlong = 3, nshort = strlen(shortopts);
    int opt;

    memset(args_p, 0, sizeof(*args_p));
    cf_analysis_opts_init(&args_p->an);
    for (const cf_tool_flag_t *fl = t->flags; fl != NULL && fl->name != NULL && nlong < 3 + CF_TOOL_MAX_FLAGS;
         fl++) {
        longopts[nlong++] = (struct option){fl->name, fl->value_p ? required_argument : no_argument, NULL,
                                            fl->letter};
        shortopts[nshort++] = (char)fl->letter;
        if (fl->value_p != NULL)
            shortopts[nshort++] = ':';
    }
    longopts[nlong] = (struct option){NULL, 0, NULL, 0};
    shortopts[nshort] = '\0';
#ifdef __GLIBC__
    optind = 0;
#else
    optind = 1;
#endif
    opterr = 0;
    while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        const cf_tool_flag_t *fl = NULL;
        switch (opt) {
        case 'f':
            for (args_p->format = 0; t->formats[args_p->format] != NULL; args_p->format++)
                if (strcmp(optarg, t->formats[args_p->format]) == 0)
                    break;
            if (t->formats[args_p->format] == NULL)
                return cf_tool_usage_error(t, "invalid --format", optarg, formats_text(t, why, sizeof(why)));
            break;
        case 'l':
            if (cf_parse_link(optarg, &args_p->an.link_Bps, &args_p->an.link_alpha_s) != CF_OK) {
                fprintf(stderr, "commfit %s: invalid --link '%s'\n  accepted: %s\n", t->cmd, optarg,
                        cf_units_link_forms);
                t->usage(stderr);
                return CF_EXIT_USAGE;
            }
            break;
        case 'h': t->usage(stdout); return -1;
        case ':': return cf_tool_usage_error(t, "option", argv[optind - 1], " needs a value");
        default:
            for (fl = t->flags; fl != NULL && fl->name != NULL && fl->letter != opt; fl++)
                ;
            if (fl == NULL || fl->name == NULL)
                return cf_tool_usage_error(t, "unknown option", argv[optind - 1], "");
            if (fl->value_p != NULL)
                *fl->value_p = optarg;
            else
                *fl->set_p = 1;
        }
    }
    args_p->nargs = argc - optind;
    args_p->args = argv + optind;
    return 0;
}

/* The sections read on demand (the matrix, the call sites) checked once
 * here: a bad one is a profile that cannot be read, said of the profile. */
static int cf_tool_check_sections(const cf_profile_t *p, char *err, size_t errlen)
{
    cf_pair_t *pairs = NULL;
    cf_callsites_t cs;
    size_t n;
    int rc = cf_profile_matrix(p, &pairs, &n, NULL, err, errlen);
    free(pairs);
    if (rc == CF_OK && (rc = cf_profile_callsites(p, &cs, err, errlen)) == CF_OK)
        free(cs.site);
    return rc;
}

/* The first 2000 rows of samples.collectives, which the fusion advice reads
 * for the framework's time between back-to-back calls (call_gap_s): a
 * bounded sample of what the reader leaves out.  The consecutive calls it
 * pairs are a rank's first sampled ones, which come first in the file.
 * Held through the analysis, at its peak: each row is kept as the columns
 * the advice reads (rank, comm, seq, op, t0, t1; not the wait), with the
 * rank, communicator and operation shared with the row before when they
 * are the same, which they mostly are (a rank's rows come together): 200
 * bytes of jansson's blocks a row instead of 400. */
#define GAP_ROWS_MAX 2000
#define GAP_COLS 6

typedef struct {
    json_t *rows;
    json_t *last; /* the row kept before, or NULL */
} gap_rows_t;

/* column I of E, or the same value of the row before */
static json_t *gap_col(const gap_rows_t *g, json_t *e, size_t i)
{
    json_t *v = json_array_get(e, i), *was = g->last != NULL ? json_array_get(g->last, i) : NULL;
    return was != NULL && json_equal(v, was) ? was : v;
}

static int keep_row(json_t *e, void *ctx)
{
    gap_rows_t *g = ctx;
    json_t *row = e;
    if (json_array_size(g->rows) >= GAP_ROWS_MAX)
        return CF_OK;
    /* a row of another shape is kept as it is: the advice judges it */
    if (json_is_array(e) && json_array_size(e) >= GAP_COLS) {
        if ((row = json_array()) == NULL)
            return CF_ERR_NOMEM;
        for (size_t i = 0; i < GAP_COLS; i++)
            if (json_array_append(row, i == 0 || i == 1 || i == 3 ? gap_col(g, e, i) : json_array_get(e, i)) != 0) {
                json_decref(row);
                return CF_ERR_NOMEM;
            }
        g->last = row;
    }
    int rc = json_array_append(g->rows, row) != 0 ? CF_ERR_NOMEM : CF_OK;
    if (row != e)
        json_decref(row);
    return rc;
}

static int keep_collective_samples(const char *path, cf_profile_t *p)
{
    gap_rows_t g = {json_array(), NULL};
    json_t *rows = g.rows, *sec;
    int rc = rows != NULL ? cf_profile_each(path, "samples", "collectives", keep_row, &g) : CF_ERR_NOMEM;
    if (rc != CF_OK || json_array_size(rows) == 0) {
        json_decref(rows);
        return rc == CF_ERR_NODATA ? CF_OK : rc;
    }
    if (p->extra == NULL)
        p->extra = json_object();
    sec = json_pack("{s:o}", "collectives", rows);
    if (p->extra == NULL || sec == NULL || json_object_set_new(p->extra, "samples", sec) != 0)
        return CF_ERR_NOMEM;
    return CF_OK;
}

int cf_tool_load(const cf_tool_t *t, const char *path, const cf_analysis_opts_t *an, cf_profile_t *p,
                 cf_analysis_t **a_p)
{
    struct stat st;
    char err[512];
    int rc;

    err[0] = '\0';
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "commfit %s: %s: is a directory, not a profile\n", t->cmd, path);
        return CF_EXIT_USAGE;
    }
    /* the sampled instances are trace's: checked, not held */
    static const char *const unread[] = {"samples", NULL};
    rc = cf_profile_read_without(path, unread, p, err, sizeof(err));
    if (rc == CF_OK && (rc = cf_tool_check_sections(p, err, sizeof(err))) != CF_OK)
        cf_profile_free(p);
    else if (rc == CF_OK && (rc = keep_collective_samples(path, p)) != CF_OK) {
        snprintf(err, sizeof(err), "samples.collectives: %s", cf_status_str(rc));
        cf_profile_free(p);
    }
    if (rc != CF_OK) {
        /* One printable line: the reader's message may quote the input. */
        for (unsigned char *s = (unsigned char *)err; *s; s++)
            if (*s < 0x20 || *s >= 0x7f)
                *s = '?';
        fprintf(stderr, "commfit %s: %s: %s\n", t->cmd, path, err[0] ? err : cf_status_str(rc));
        return CF_EXIT_USAGE;
    }
    rc = cf_analysis_run(p, an, a_p);
    if (rc != CF_OK) {
        fprintf(stderr, "commfit %s: %s: %s\n", t->cmd, path, cf_status_str(rc));
        cf_profile_free(p);
        return 1;
    }
    return CF_OK;
}
