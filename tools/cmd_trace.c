/* commfit trace PROFILE > trace.json: the sampled collective instances in
 * the Chrome Trace Event format (one track per rank, open in Perfetto or
 * chrome://tracing).  Each instance is a slice with its waiting part nested
 * inside, on the synchronized clock, so late arrivals line up visibly. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cf_profile.h"
#include "commfit.h"

static void cf_trace_usage(FILE *out)
{
    fprintf(out, "usage: commfit trace [-o FILE] PROFILE\n"
                 "  writes the sampled collective instances as Chrome Trace Event JSON\n"
                 "  (stdout by default); open it in https://ui.perfetto.dev or chrome://tracing\n"
                 "  -o, --output FILE  write to FILE instead of stdout\n");
}

static json_t *cf_trace_event(const char *name, const char *cat, int rank, double ts_s, double dur_s, json_t *args)
{
    json_t *e = json_pack("{s:s, s:s, s:s, s:i, s:i, s:f, s:f}", "name", name, "cat", cat, "ph", "X", "pid", 0, "tid",
                          rank, "ts", ts_s * 1e6, "dur", dur_s * 1e6);
    if (args)
        json_object_set_new(e, "args", args);
    return e;
}

int cf_cmd_trace(int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *outpath = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': outpath = optarg; break;
        case 'h': cf_trace_usage(stdout); return 0;
        default: cf_trace_usage(stderr); return CF_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        cf_trace_usage(stderr);
        return CF_EXIT_USAGE;
    }
    const char *path = argv[optind];
    cf_profile_t p;
    char err[512];
    if (cf_profile_read(path, &p, err, sizeof(err)) != CF_OK) {
        fprintf(stderr, "commfit trace: %s: %s\n", path, err);
        return CF_EXIT_USAGE;
    }
    json_t *samples = p.extra ? json_object_get(p.extra, "samples") : NULL;
    json_t *inst = samples ? json_object_get(samples, "collectives") : NULL;
    if (!json_is_array(inst)) {
        fprintf(stderr, "commfit trace: %s: no sampled instances (the job ran with COMMFIT_TRACE=0 or "
                        "COMMFIT_SAMPLES=0)\n", path);
        cf_profile_free(&p);
        return CF_EXIT_USAGE;
    }
    json_t *events = json_array();
    for (size_t i = 0; i < p.nrank; i++) {
        char name[96];
        snprintf(name, sizeof(name), "rank %d (%s)", p.rank[i].rank, p.rank[i].host);
        json_array_append_new(events, json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", "thread_name", "ph", "M",
                                                "pid", 0, "tid", p.rank[i].rank, "args", "name", name));
    }
    size_t k;
    json_t *e;
    size_t bad = 0;
    json_array_foreach(inst, k, e) {
        json_int_t rank, comm, seq;
        const char *op;
        double enter, leave, wait;
        if (json_unpack(e, "[I, I, I, s, F, F, F]", &rank, &comm, &seq, &op, &enter, &leave, &wait) != 0) {
            bad++;
            continue;
        }
        char label[24], name[CF_COMM_NAME_LEN];
        cf_comm_label((uint32_t)comm, label, sizeof(label));
        cf_comm_name(&p, (uint32_t)comm, name, sizeof(name));
        json_array_append_new(events, cf_trace_event(op, "mpi", (int)rank, enter, leave - enter,
                                                     json_pack("{s:s, s:s, s:I, s:f}", "comm", label, "comm_name",
                                                               name, "seq", seq, "wait_us", wait * 1e6)));
        if (wait > 0)
            json_array_append_new(events, cf_trace_event("waiting for others", "wait", (int)rank, enter, wait, NULL));
    }
    if (bad)
        fprintf(stderr, "commfit trace: %s: %zu malformed instances skipped\n", path, bad);
    json_t *root = json_pack("{s:o, s:s, s:{s:s, s:i}}", "traceEvents", events, "displayTimeUnit", "ns", "otherData",
                             "source", path, "ranks", p.ranks);
    FILE *out = outpath ? fopen(outpath, "w") : stdout;
    int rc = 0;
    if (!out) {
        fprintf(stderr, "commfit trace: cannot write %s\n", outpath);
        rc = 1;
    } else {
        if (json_dumpf(root, out, JSON_COMPACT) != 0 || fputc('\n', out) == EOF)
            rc = 1;
        if (outpath && fclose(out) != 0)
            rc = 1;
        if (rc)
            fprintf(stderr, "commfit trace: write error\n");
    }
    json_decref(root);
    cf_profile_free(&p);
    return rc;
}
