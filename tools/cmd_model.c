/* commfit model: the latency-bandwidth calculator.
 *
 *   commfit model --alpha 5us --bandwidth 25GB/s --size 1MB
 *   commfit model --link 400Gb/s,5us --ranks 64 --op allreduce --size 25MiB
 *
 * This file parses the arguments, computes the rows and dispatches: text
 * model_text.c, json model_json.c. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_common.h"
#include "cf_fit.h"
#include "cf_models.h"
#include "cf_units.h"
#include "commfit.h"
#include "model.h"

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: commfit model [options]\n"
            "Time, startup share and bandwidth of a message or a collective under the\n"
            "latency-bandwidth model T = alpha + M/B.\n"
            "\n"
            "  -a, --alpha TIME        startup time per message, e.g. 5us\n"
            "  -b, --bandwidth RATE    sustained bandwidth, e.g. 25GB/s or 400Gb/s (bits)\n"
            "  -l, --link RATE,TIME    both at once, e.g. 400Gb/s,5us; --alpha and\n"
            "                          --bandwidth override its parts\n"
            "  -s, --size SIZE[,...]   payload, repeatable, e.g. 1MB or 1kB,64KiB,25MiB\n"
            "  -p, --ranks P           number of ranks: use a collective's algorithm model\n"
            "  -o, --op NAME           operation (default: allreduce with --ranks, else p2p)\n"
            "  -A, --algo NAME         algorithm of the operation (default: first listed)\n"
            "  -f, --format FMT        text (default) or json\n"
            "  -h, --help              this text\n"
            "\n"
            "Payload follows the nccl-tests convention: the vector for allreduce, bcast,\n"
            "reduce; all blocks together for allgather, gather, scatter, alltoall,\n"
            "reduce_scatter.  Units are decimal (1 MB = 1e6 B); KiB, MiB, GiB are binary.\n"
            "\n"
            "Operations and algorithms:\n");
    for (int c = 0; c < CF_COLL_COUNT; c++) {
        fprintf(f, "  %-21s", cf_coll_name((cf_coll_t)c));
        for (int i = 0; cf_model_algo_name((cf_coll_t)c, i) != NULL; i++)
            fprintf(f, "%s%s", i ? ", " : "", cf_model_algo_name((cf_coll_t)c, i));
        fputc('\n', f);
    }
}

static int bad_value(const char *opt, const char *val, const char *forms)
{
    fprintf(stderr, "commfit model: invalid %s '%s'\n  accepted: %s\n", opt, val, forms);
    return CF_EXIT_USAGE;
}

static int add_sizes(model_opts_t *o, const char *arg)
{
    char tok[128];
    int added = 0;

    for (const char *s = arg, *end; *s != '\0'; s = *end ? end + 1 : end) {
        size_t len;
        end = strchr(s, ',');
        if (end == NULL)
            end = s + strlen(s);
        len = (size_t)(end - s);
        if (len == 0)
            continue;
        if (len >= sizeof(tok))
            return bad_value("--size", arg, cf_units_size_forms);
        memcpy(tok, s, len);
        tok[len] = '\0';
        if (o->nsizes == MAX_SIZES) {
            fprintf(stderr, "commfit model: at most %d sizes\n", MAX_SIZES);
            return CF_EXIT_USAGE;
        }
        if (cf_parse_size(tok, &o->n[o->nsizes]) != CF_OK)
            return bad_value("--size", tok, cf_units_size_forms);
        o->nsizes++;
        added++;
    }
    if (added == 0)
        return bad_value("--size", arg, cf_units_size_forms);
    return 0;
}

static int parse_ranks(const char *s, int *p_p)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < 1 || v > 100000000)
        return -1;
    *p_p = (int)v;
    return 0;
}

static void list_ops(FILE *f)
{
    fprintf(f, "  operations:");
    for (int c = 0; c < CF_COLL_COUNT; c++)
        fprintf(f, " %s", cf_coll_name((cf_coll_t)c));
    fputc('\n', f);
}

static void list_algos(FILE *f, cf_coll_t c)
{
    fprintf(f, "  algorithms of %s:", cf_coll_name(c));
    for (int i = 0; cf_model_algo_name(c, i) != NULL; i++)
        fprintf(f, " %s", cf_model_algo_name(c, i));
    fputc('\n', f);
}

/* Returns 0, CF_EXIT_USAGE, or -1 when --help was printed. */
static int parse_args(int argc, char **argv, model_opts_t *o)
{
    static const struct option longopts[] = {
        {"alpha", required_argument, NULL, 'a'}, {"bandwidth", required_argument, NULL, 'b'},
        {"link", required_argument, NULL, 'l'},  {"size", required_argument, NULL, 's'},
        {"ranks", required_argument, NULL, 'p'}, {"op", required_argument, NULL, 'o'},
        {"algo", required_argument, NULL, 'A'},  {"format", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0}};
    double link_B = NAN, link_alpha = NAN, alpha = NAN, B = NAN;
    const char *op = NULL, *algo = NULL;
    int opt, rc;

    memset(o, 0, sizeof(*o));
    o->p = 0;
    /* May run more than once in a process (tests): reset getopt fully. */
#ifdef __GLIBC__
    optind = 0;
#else
    optind = 1;
#endif
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":a:b:l:s:p:o:A:f:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'a':
            if (cf_parse_time(optarg, &alpha) != CF_OK)
                return bad_value("--alpha", optarg, cf_units_time_forms);
            break;
        case 'b':
            if (cf_parse_rate(optarg, &B) != CF_OK)
                return bad_value("--bandwidth", optarg, cf_units_rate_forms);
            break;
        case 'l':
            if (cf_parse_link(optarg, &link_B, &link_alpha) != CF_OK)
                return bad_value("--link", optarg, cf_units_link_forms);
            break;
        case 's':
            if ((rc = add_sizes(o, optarg)) != 0)
                return rc;
            break;
        case 'p':
            if (parse_ranks(optarg, &o->p) != 0) {
                fprintf(stderr, "commfit model: invalid --ranks '%s': a whole number >= 1\n",
                        optarg);
                return CF_EXIT_USAGE;
            }
            break;
        case 'o': op = optarg; break;
        case 'A': algo = optarg; break;
        case 'f':
            if (strcmp(optarg, "json") == 0)
                o->json = 1;
            else if (strcmp(optarg, "text") == 0)
                o->json = 0;
            else {
                fprintf(stderr, "commfit model: invalid --format '%s': text or json\n", optarg);
                return CF_EXIT_USAGE;
            }
            break;
        case 'h': usage(stdout); return -1;
        case ':':
            fprintf(stderr, "commfit model: option '%s' needs a value\n", argv[optind - 1]);
            return CF_EXIT_USAGE;
        default:
            fprintf(stderr, "commfit model: unknown option '%s' (see commfit model --help)\n",
                    argv[optind - 1]);
            return CF_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "commfit model: unexpected argument '%s' (sizes go with --size)\n",
                argv[optind]);
        return CF_EXIT_USAGE;
    }

    o->alpha = !isnan(alpha) ? alpha : link_alpha;
    o->B = !isnan(B) ? B : link_B;
    if (isnan(o->alpha) || isnan(o->B)) {
        fprintf(stderr,
                "commfit model: need the link: --alpha TIME and --bandwidth RATE, or --link\n"
                "  time: %s\n  rate: %s\n  link: %s\n",
                cf_units_time_forms, cf_units_rate_forms, cf_units_link_forms);
        return CF_EXIT_USAGE;
    }

    if (op != NULL) {
        o->op = cf_coll_from_name(op);
        if (o->op == CF_COLL_NONE) {
            fprintf(stderr, "commfit model: unknown --op '%s'\n", op);
            list_ops(stderr);
            return CF_EXIT_USAGE;
        }
    } else {
        o->op = o->p > 0 ? CF_COLL_ALLREDUCE : CF_COLL_P2P;
    }
    if (o->op == CF_COLL_P2P) {
        o->p = 2;
    } else if (o->p == 0) {
        fprintf(stderr, "commfit model: --op %s needs --ranks P\n", cf_coll_name(o->op));
        return CF_EXIT_USAGE;
    }
    o->algo = cf_model_algo_canonical(o->op, algo);
    if (o->algo == NULL) {
        fprintf(stderr, "commfit model: unknown --algo '%s' for %s\n", algo, cf_coll_name(o->op));
        list_algos(stderr, o->op);
        return CF_EXIT_USAGE;
    }

    if (o->nsizes == 0) {
        if (o->op != CF_COLL_BARRIER) {
            fprintf(stderr, "commfit model: need --size SIZE\n  accepted: %s\n",
                    cf_units_size_forms);
            return CF_EXIT_USAGE;
        }
        o->n[o->nsizes++] = 0; /* a barrier carries no payload */
    }
    return 0;
}

static int compute(const model_opts_t *o, double n, model_row_t *r)
{
    double A, C, G;

    if (cf_model_coeffs(o->op, o->algo, o->p, &A, &C, &G) != CF_OK)
        return -1;
    r->n = n;
    r->startup = A * o->alpha;
    r->payload = (C == 0 || n == 0 || isinf(o->B)) ? 0.0 : C * n / o->B;
    r->time = r->startup + r->payload;
    r->share = r->time > 0 ? r->startup / r->time : NAN;
    r->n_half = cf_model_n_half(o->op, o->algo, o->p, o->alpha, o->B);
    r->algbw = r->time > 0 ? n / r->time : NAN;
    r->factor = cf_busbw_factor(o->op, o->p);
    r->busbw = r->algbw * r->factor;
    r->bound = cf_model_lower_bound(o->op, o->p, n, o->alpha, o->B);
    return 0;
}

int cf_cmd_model(int argc, char **argv)
{
    model_opts_t *o;
    model_row_t *rows;
    int rc;

    o = malloc(sizeof(*o));
    rows = malloc(MAX_SIZES * sizeof(*rows));
    if (o == NULL || rows == NULL) {
        fprintf(stderr, "commfit model: %s\n", cf_status_str(CF_ERR_NOMEM));
        rc = 1;
        goto out;
    }
    rc = parse_args(argc, argv, o);
    if (rc != 0) {
        rc = rc < 0 ? 0 : rc;
        goto out;
    }
    for (int i = 0; i < o->nsizes; i++) {
        if (compute(o, o->n[i], &rows[i]) != 0) {
            fprintf(stderr, "commfit model: %s\n", cf_status_str(CF_ERR_INVALID));
            rc = 1;
            goto out;
        }
    }
    if (o->json) {
        if (cf_model_json(o, rows) != 0) {
            fprintf(stderr, "commfit model: %s\n", cf_status_str(CF_ERR_NOMEM));
            rc = 1;
            goto out;
        }
    } else {
        cf_model_text(o, rows);
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "commfit model: %s\n", cf_status_str(CF_ERR_IO));
        rc = 1;
    }
out:
    free(rows);
    free(o);
    return rc;
}
