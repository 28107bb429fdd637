/* commfit diff: what changed between two profiles of the same program.
 *
 *   commfit diff per-tensor.json bucketed.json
 *   commfit diff --format json A.json B.json
 *
 * Per operation, communicator and path: calls and calls per step, time per
 * rank with its change, the fits side by side, and, where A's fusion advice
 * predicted a saving, how much of it B realised.
 *
 * Communicators are matched by identity where both profiles know it (world,
 * self, and any communicator whose id appears in both: ids derive from the
 * group's world ranks and creation order, so the same program makes the same
 * ids), otherwise by how they were made and their size, in the order each
 * profile lists them ("MPI_Comm_split" of 4 ranks, first with that name and
 * size in A, to the first in B). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cf_advice.h"
#include "cf_analysis.h"
#include "cf_bins.h"
#include "cf_common.h"
#include "cf_profile.h"
#include "cf_units.h"
#include "commfit.h"
#include "toolopts.h"

/* In the order of diff_formats. */
typedef enum { FMT_TEXT, FMT_JSON } diff_fmt_t;

typedef struct {
    diff_fmt_t fmt;
    cf_analysis_opts_t an;
    const char *path[2];
} diff_opts_t;

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

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: commfit diff [options] A.json B.json\n"
            "Compares two profiles per operation and communicator: calls and calls per step,\n"
            "time per rank (B - A), the fits T = alpha + M/B side by side, and, where A's\n"
            "fusion advice predicted a saving, the saving B realised.\n"
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
    if (args.nargs > 2)
        return cf_tool_usage_error(&diff_tool, "two profiles only: extra argument", args.args[2], "");
    o->path[0] = args.args[0];
    o->path[1] = args.args[1];
    return 0;
}

/* CF_OK, or CF_EXIT_USAGE (1 when the analysis failed) after one line on stderr. */
static int load(side_t *s, const cf_analysis_opts_t *an)
{
    return cf_tool_load(&diff_tool, s->path, an, &s->p, &s->a);
}

static uint64_t name_size_hash(const cf_comm_info_t *c)
{
    return cf_hash_bytes(cf_hash_str(CF_HASH_SEED, c->name), &c->size, sizeof(c->size));
}

/* A communicator that the other profile lacks (ids differ from run to run)
 * is matched by name, size and ordinal: ord[i] is how many communicators
 * before it in `self` have its name and size and are absent from `other`.
 * One pass with an index by (name, size). */
static int comm_ordinals(side_t *self, const side_t *other)
{
    const cf_profile_t *p = &self->p;
    cf_index_t x = {0, NULL};
    int *seen = calloc(p->ncomm ? p->ncomm : 1, sizeof(*seen));

    self->ord = calloc(p->ncomm ? p->ncomm : 1, sizeof(*self->ord));
    if (seen == NULL || self->ord == NULL || cf_index_init(&x, p->ncomm) != CF_OK) {
        free(seen);
        return CF_ERR_NOMEM;
    }
    for (size_t i = 0; i < p->ncomm; i++) {
        const cf_comm_info_t *c = &p->comm[i];
        size_t cur = 0, j;
        int found = 0;
        if (cf_profile_comm(&other->p, c->id) != NULL)
            continue;
        while (!found && cf_index_next(&x, name_size_hash(c), &cur, &j))
            found = p->comm[j].size == c->size && strcmp(p->comm[j].name, c->name) == 0;
        if (!found) {
            j = i;
            cf_index_put(&x, name_size_hash(c), i);
        }
        self->ord[i] = seen[j]++;
    }
    cf_index_free(&x);
    free(seen);
    return CF_OK;
}

/* The key that matches a communicator of `self` to one of `other`. */
static const char *comm_key(const side_t *self, const side_t *other, uint32_t id, char *buf,
                            size_t len)
{
    const cf_comm_info_t *c = cf_profile_comm(&self->p, id);

    if (id == CF_COMM_ID_WORLD || id == CF_COMM_ID_SELF || id == CF_COMM_ID_NONE || c == NULL ||
        cf_profile_comm(&other->p, id) != NULL)
        return cf_comm_label(id, buf, len);
    snprintf(buf, len, "%s/%d#%d", c->name, c->size, self->ord[c - self->p.comm]);
    return buf;
}

static void op_key(const side_t *self, const side_t *other, const cf_an_op_t *o, char *buf, size_t len)
{
    char ck[64];
    snprintf(buf, len, "%s|%s|%d", o->op, comm_key(self, other, o->comm, ck, sizeof(ck)), o->path);
}

static int build_rows(side_t s[2], row_t **rows_p, size_t *n_p)
{
    size_t cap = cf_analysis_nops(s[0].a) + cf_analysis_nops(s[1].a), n = 0;
    row_t *rows = calloc(cap ? cap : 1, sizeof(*rows));
    cf_index_t x = {0, NULL};

    if (rows == NULL || cf_index_init(&x, cap) != CF_OK || comm_ordinals(&s[0], &s[1]) != CF_OK ||
        comm_ordinals(&s[1], &s[0]) != CF_OK) {
        cf_index_free(&x);
        free(rows);
        return CF_ERR_NOMEM;
    }
    for (int side = 0; side < 2; side++) {
        for (size_t i = 0; i < cf_analysis_nops(s[side].a); i++) {
            const cf_an_op_t *o = cf_analysis_op(s[side].a, i);
            char key[192];
            size_t r, cur = 0;
            int found = 0;
            op_key(&s[side], &s[1 - side], o, key, sizeof(key));
            while (!found && cf_index_next(&x, cf_hash_str(CF_HASH_SEED, key), &cur, &r))
                found = strcmp(rows[r].key, key) == 0;
            if (!found) {
                r = n++;
                cf_strlcpy(rows[r].key, key, sizeof(rows[0].key));
                cf_index_put(&x, cf_hash_str(CF_HASH_SEED, rows[r].key), r);
            }
            rows[r].op[side] = o;
            rows[r].adv[side] = cf_analysis_fusion_find(s[side].a, o->op, o->comm, o->path);
        }
    }
    cf_index_free(&x);
    *rows_p = rows;
    *n_p = n;
    return CF_OK;
}

static double per_rank(const side_t *s, const cf_an_op_t *o)
{
    return o != NULL && s->p.ranks > 0 ? o->time_s / s->p.ranks : NAN;
}

/* A's predicted saving and the saving B realised, per rank on the slowest
 * rank over A's steps; NaN when A did not advise fusing or B lacks the stream. */
static void fusion_check(const row_t *r, double *pred_p, double *real_p)
{
    const cf_advice_t *a = r->adv[0], *b = r->adv[1];

    *pred_p = *real_p = NAN;
    if (a == NULL || a->verdict == NULL || strcmp(a->verdict, "fuse") != 0)
        return;
    *pred_p = a->predicted_saving_s;
    if (b != NULL && a->steps > 0 && b->steps > 0)
        *real_p = (a->current_s / (double)a->steps - b->current_s / (double)b->steps) * (double)a->steps;
}

/* ---- text ---- */

static const char *fmt_t(double v, char *buf)
{
    return cf_fmt_time(v, buf, CF_FMT_LEN);
}

static const char *fmt_pct(double v, char *buf)
{
    if (isfinite(v))
        snprintf(buf, CF_FMT_LEN, "%+.1f%%", 100.0 * v);
    else
        snprintf(buf, CF_FMT_LEN, "-");
    return buf;
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

static const cf_an_op_t *either(const row_t *r)
{
    return r->op[0] != NULL ? r->op[0] : r->op[1];
}

static void text_job(const char *tag, const side_t *s)
{
    const cf_an_ranks_t *rk = cf_analysis_ranks(s->a);
    char b1[CF_FMT_LEN], b2[CF_FMT_LEN];
    printf("%s  %s: %d rank%s on %d node%s, %s wall, %s in MPI per rank\n", tag, s->path, s->p.ranks,
           s->p.ranks == 1 ? "" : "s", s->p.nodes, s->p.nodes == 1 ? "" : "s", fmt_t(s->p.wall_s, b1),
           fmt_t(rk->mpi_mean_s, b2));
}

static void print_text(side_t s[2], const row_t *rows, size_t n)
{
    char label[24], name[CF_COMM_NAME_LEN], b[10][CF_FMT_LEN], cell[3][2 * CF_FMT_LEN + 8];
    int w = 9, any = 0;

    for (size_t i = 0; i < n; i++) {
        int len = (int)strlen(either(&rows[i])->op) + 1;
        w = len > w ? len : w;
    }
    printf("commfit diff: %s -> %s\n", s[0].path, s[1].path);
    text_job("A", &s[0]);
    text_job("B", &s[1]);
    printf("\nOPERATIONS  A -> B; time per rank = summed over ranks / ranks; calls/step per rank "
           "(steps as in the fusion advice)\n");
    printf("  %-*s %-9s %-10s %-23s %-17s %-23s %s\n", w, "operation", "comm", "path", "calls",
           "calls/step", "time/rank", "change");
    for (size_t i = 0; i < n; i++) {
        const row_t *r = &rows[i];
        const cf_an_op_t *o = either(r);
        double ta = per_rank(&s[0], r->op[0]), tb = per_rank(&s[1], r->op[1]);
        double d = (isfinite(ta) ? ta : 0) - (isfinite(tb) ? tb : 0);
        snprintf(cell[0], sizeof(cell[0]), "%s -> %s", fmt_u(r->op[0], b[0]), fmt_u(r->op[1], b[1]));
        snprintf(cell[1], sizeof(cell[1]), "%s -> %s", fmt_cps(r->adv[0], b[2]), fmt_cps(r->adv[1], b[3]));
        snprintf(cell[2], sizeof(cell[2]), "%s -> %s", r->op[0] ? fmt_t(ta, b[4]) : "-",
                 r->op[1] ? fmt_t(tb, b[5]) : "-");
        printf("  %-*s %-9s %-10s %-23s %-17s %-23s %s%s (%s)\n", w, o->op,
               cf_comm_label(o->comm, label, sizeof(label)), cf_path_name((unsigned)o->path), cell[0],
               cell[1], cell[2], d > 0 ? "-" : "+", fmt_t(fabs(d), b[6]),
               fmt_pct(isfinite(ta) && ta > 0 && isfinite(tb) ? (tb - ta) / ta : NAN, b[7]));
    }

    printf("\nFITS  T = alpha + M/B, A | B ('-': no fit)\n");
    for (size_t i = 0; i < n; i++) {
        const row_t *r = &rows[i];
        const cf_an_op_t *o = either(r);
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
        double pred, real;
        fusion_check(r, &pred, &real);
        if (!isfinite(pred))
            continue;
        if (!any++)
            printf("\nFUSION  A's advice against B, per rank on the slowest rank (transfer time where "
                   "sampled), over A's %llu steps\n",
                   (unsigned long long)aa->steps);
        printf("  %s on %s: A advised buckets of %s (%.4g -> %.4g calls/step); B makes %s calls/step\n",
               aa->op, cf_comm_name(&s[0].p, aa->comm, name, sizeof(name)),
               cf_fmt_size(aa->bucket_bytes, b[0], CF_FMT_LEN), aa->calls_per_step,
               aa->buckets_per_step, fmt_cps(ab, b[1]));
        if (isfinite(real))
            printf("    predicted saving %s, realised %s (%.0f%% of predicted); A %s -> B %s\n",
                   fmt_t(pred, b[2]), real < 0 ? "none" : fmt_t(real, b[3]),
                   pred > 0 ? 100.0 * real / pred : 0.0, fmt_t(aa->current_s, b[4]),
                   fmt_t(ab->current_s / (double)ab->steps * (double)aa->steps, b[5]));
        else
            printf("    predicted saving %s; B does not have this stream\n", fmt_t(pred, b[2]));
    }
}

/* ---- JSON ---- */

static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *pair(json_t *a, json_t *b)
{
    json_t *o = json_object();
    json_object_set_new(o, "a", a);
    json_object_set_new(o, "b", b);
    return o;
}

static json_t *jcalls(const cf_an_op_t *o)
{
    return o != NULL ? json_integer((json_int_t)o->calls) : json_null();
}

static json_t *jfit(const cf_an_op_t *o, int alpha)
{
    if (o == NULL || o->fit == NULL || !o->fit->fit.ok)
        return json_null();
    return jnum(alpha ? o->fit->fit.alpha_s : o->fit->fit.bandwidth_Bps);
}

static json_t *jside(const side_t *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "path", json_string(s->path));
    json_object_set_new(o, "ranks", json_integer(s->p.ranks));
    json_object_set_new(o, "nodes", json_integer(s->p.nodes));
    json_object_set_new(o, "wall_s", jnum(s->p.wall_s));
    json_object_set_new(o, "mpi_mean_s", jnum(cf_analysis_ranks(s->a)->mpi_mean_s));
    return o;
}

static int print_json(side_t s[2], const row_t *rows, size_t n)
{
    json_t *root = json_object(), *ops = json_array();
    char label[24], *text;

    json_object_set_new(root, "format", json_string("commfit-diff"));
    json_object_set_new(root, "version", json_integer(1));
    json_object_set_new(root, "a", jside(&s[0]));
    json_object_set_new(root, "b", jside(&s[1]));
    for (size_t i = 0; i < n; i++) {
        const row_t *r = &rows[i];
        const cf_an_op_t *o = either(r);
        json_t *j = json_object();
        double ta = per_rank(&s[0], r->op[0]), tb = per_rank(&s[1], r->op[1]), pred, real;
        json_object_set_new(j, "op", json_string(o->op));
        json_object_set_new(j, "kind", json_string(o->kind));
        json_object_set_new(j, "comm", pair(r->op[0] ? json_string(cf_comm_label(r->op[0]->comm, label, sizeof(label))) : json_null(),
                                            r->op[1] ? json_string(cf_comm_label(r->op[1]->comm, label, sizeof(label))) : json_null()));
        json_object_set_new(j, "comm_size", json_integer(o->comm_size));
        json_object_set_new(j, "path", json_string(cf_path_name((unsigned)o->path)));
        json_object_set_new(j, "calls", pair(jcalls(r->op[0]), jcalls(r->op[1])));
        json_object_set_new(j, "calls_per_step", pair(jnum(r->adv[0] ? r->adv[0]->calls_per_step : NAN),
                                                      jnum(r->adv[1] ? r->adv[1]->calls_per_step : NAN)));
        json_object_set_new(j, "steps", pair(r->adv[0] ? json_integer((json_int_t)r->adv[0]->steps) : json_null(),
                                             r->adv[1] ? json_integer((json_int_t)r->adv[1]->steps) : json_null()));
        json_object_set_new(j, "time_per_rank_s", pair(jnum(ta), jnum(tb)));
        json_object_set_new(j, "delta_s", jnum((isfinite(tb) ? tb : 0) - (isfinite(ta) ? ta : 0)));
        json_object_set_new(j, "delta_share", jnum(isfinite(ta) && ta > 0 && isfinite(tb) ? (tb - ta) / ta : NAN));
        json_object_set_new(j, "alpha_s", pair(jfit(r->op[0], 1), jfit(r->op[1], 1)));
        json_object_set_new(j, "bandwidth_Bps", pair(jfit(r->op[0], 0), jfit(r->op[1], 0)));
        fusion_check(r, &pred, &real);
        if (isfinite(pred)) {
            json_t *f = json_object();
            const cf_advice_t *aa = r->adv[0], *ab = r->adv[1];
            json_object_set_new(f, "bucket_bytes", jnum(aa->bucket_bytes));
            json_object_set_new(f, "buckets_per_step", jnum(aa->buckets_per_step));
            json_object_set_new(f, "current_s", pair(jnum(aa->current_s), jnum(ab ? ab->current_s : NAN)));
            json_object_set_new(f, "predicted_saving_s", jnum(pred));
            json_object_set_new(f, "realised_saving_s", jnum(real));
            json_object_set_new(f, "realised_share", jnum(pred > 0 ? real / pred : NAN));
            json_object_set_new(j, "fusion", f);
        } else {
            json_object_set_new(j, "fusion", json_null());
        }
        json_array_append_new(ops, j);
    }
    json_object_set_new(root, "operations", ops);
    text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
    json_decref(root);
    if (text == NULL)
        return CF_ERR_NOMEM;
    puts(text);
    free(text);
    return CF_OK;
}

int cf_cmd_diff(int argc, char **argv)
{
    diff_opts_t o;
    side_t s[2];
    row_t *rows = NULL;
    size_t n = 0;
    int rc;

    rc = parse_args(argc, argv, &o);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    memset(s, 0, sizeof(s));
    s[0].path = o.path[0];
    s[1].path = o.path[1];
    if ((rc = load(&s[0], &o.an)) != CF_OK)
        return rc;
    if ((rc = load(&s[1], &o.an)) != CF_OK) {
        cf_analysis_free(s[0].a);
        cf_profile_free(&s[0].p);
        return rc;
    }
    rc = build_rows(s, &rows, &n);
    if (rc == CF_OK) {
        if (o.fmt == FMT_JSON)
            rc = print_json(s, rows, n);
        else
            print_text(s, rows, n);
    }
    if (rc == CF_OK && fflush(stdout) != 0)
        rc = CF_ERR_IO;
    if (rc != CF_OK)
        fprintf(stderr, "commfit diff: %s\n", cf_status_str(rc));
    free(rows);
    for (int i = 0; i < 2; i++) {
        free(s[i].ord);
        cf_analysis_free(s[i].a);
        cf_profile_free(&s[i].p);
    }
    return rc == CF_OK ? 0 : 1;
}
